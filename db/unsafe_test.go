package db_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestUnsafeContained checks that only the SQLite fast path (db/lite)
// imports unsafe or drives SQLite below its driver (modernc.org/libc,
// modernc.org/sqlite/lib), the zero-copy string of policy/robots aside
// (issue 12).
func TestUnsafeContained(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]string{"policy/robots/robots.go": "unsafe"}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "db/lite" || rel == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p != "unsafe" && p != "modernc.org/sqlite/lib" && p != "modernc.org/libc" && !strings.HasPrefix(p, "modernc.org/libc/") {
				continue
			}
			if allowed[rel] != p {
				t.Errorf("%s imports %s: only db/lite may", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
