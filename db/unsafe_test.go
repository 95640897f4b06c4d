package db_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestUnsafeContained checks that no package imports unsafe or drives
// SQLite below its driver's public API (modernc.org/libc,
// modernc.org/sqlite/lib), the zero-copy string of robotstxt aside: the
// storage layer, its fast path (db/lite) included, reaches SQLite only
// through the driver, so go.mod may take any version of it.
func TestUnsafeContained(t *testing.T) {
	allowed := map[string]string{"robotstxt/robots.go": "unsafe"}
	sourceFiles(t, token.NewFileSet(), "", parser.ImportsOnly, func(rel string, f *ast.File) {
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p != "unsafe" && p != "modernc.org/sqlite/lib" && p != "modernc.org/libc" && !strings.HasPrefix(p, "modernc.org/libc/") {
				continue
			}
			if allowed[rel] != p {
				t.Errorf("%s imports %s: only the driver may", rel, p)
			}
		}
	})
}
