package db_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestUnsafeContained checks that only the SQLite fast path (db/lite)
// imports unsafe or drives SQLite below its driver (modernc.org/libc,
// modernc.org/sqlite/lib), the zero-copy string of robotstxt aside.
func TestUnsafeContained(t *testing.T) {
	allowed := map[string]string{"robotstxt/robots.go": "unsafe"}
	sourceFiles(t, token.NewFileSet(), "db/lite", parser.ImportsOnly, func(rel string, f *ast.File) {
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p != "unsafe" && p != "modernc.org/sqlite/lib" && p != "modernc.org/libc" && !strings.HasPrefix(p, "modernc.org/libc/") {
				continue
			}
			if allowed[rel] != p {
				t.Errorf("%s imports %s: only db/lite may", rel, p)
			}
		}
	})
}
