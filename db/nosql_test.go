package db_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// notMoved lists the files outside db that still hold SQL or a database
// handle. It is empty now, and no file may be added.
var notMoved = map[string]bool{}

// sqlText matches a string literal that looks like SQL.
var sqlText = regexp.MustCompile(`(?i)\b(SELECT\s.+\sFROM\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX)\s|BEGIN\s+IMMEDIATE|PRAGMA\s)|^\s*SELECT\s+1\s*$`)

// dbImports are the packages only db may import.
var dbImports = []string{"database/sql", "gorm.io/", "github.com/libtnb/", "modernc.org/sqlite", "github.com/jackc/pgx"}

// sourceFiles parses, with mode, every non-test Go file of the module
// outside the folder skip (and testdata and hidden folders), and calls
// visit with its slash path from the module's root.
func sourceFiles(t *testing.T, fset *token.FileSet, skip string, mode parser.Mode, visit func(rel string, f *ast.File)) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == skip || rel == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		visit(rel, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoSQLOutsideDB checks that no non-test Go file outside db holds an SQL
// string, imports a database driver, database/sql or gorm, or reaches the
// Store's handles, except the files listed in notMoved and the test
// fixtures (internal/testenv).
func TestNoSQLOutsideDB(t *testing.T) {
	fset := token.NewFileSet()
	dirty := map[string][]string{}
	sourceFiles(t, fset, "db", parser.SkipObjectResolution, func(rel string, f *ast.File) {
		if strings.HasPrefix(rel, "internal/testenv/") {
			return // test fixtures, never linked into the binary: dbtest hands tests the store's handles
		}
		var why []string
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			for _, bad := range dbImports {
				if p == bad || strings.HasPrefix(p, bad) && strings.HasSuffix(bad, "/") || strings.HasPrefix(p, bad+"/") {
					why = append(why, "imports "+p)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if s, err := strconv.Unquote(n.Value); err == nil && sqlText.MatchString(s) {
						why = append(why, fset.Position(n.Pos()).String()+": SQL "+strconv.Quote(firstLine(s)))
					}
				}
			case *ast.SelectorExpr:
				if inner, ok := n.X.(*ast.SelectorExpr); ok && (inner.Sel.Name == "DB" || inner.Sel.Name == "SQL") && isStore(inner.X) {
					why = append(why, fset.Position(n.Pos()).String()+": store handle ."+inner.Sel.Name)
				}
			}
			return true
		})
		if len(why) > 0 {
			dirty[rel] = why
		}
	})
	var files []string
	for f := range dirty {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if !notMoved[f] {
			t.Errorf("%s holds SQL outside db (move it into db):\n\t%s", f, strings.Join(dirty[f], "\n\t"))
		}
	}
	for f := range notMoved {
		if dirty[f] == nil {
			t.Errorf("%s is clean now: remove it from notMoved", f)
		}
	}
}

// isStore reports whether x looks like a db.Store value: an identifier or
// field named store, Store(), s.store, ...
func isStore(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return strings.Contains(strings.ToLower(x.Name), "store")
	case *ast.SelectorExpr:
		return strings.Contains(strings.ToLower(x.Sel.Name), "store")
	case *ast.CallExpr:
		return isStore(x.Fun)
	}
	return false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
