package crawler_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCrawlerSeesNoEngine keeps the database engines out of the crawler:
// it writes through db.Writer and lists through db.Lister (db/engine picks
// them), so it imports neither database/sql, a driver, gorm, the SQLite
// fast path nor an engine's own package.
func TestCrawlerSeesNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	forbidden := []string{"database/sql", "gorm.io/", "github.com/libtnb/", "github.com/glebarez/", "modernc.org/", "github.com/ncruces/",
		"github.com/jackc/", "github.com/lib/pq", "github.com/mattn/",
		"github.com/lohisoft/lohibot/db/lite", "github.com/lohisoft/lohibot/db/sqlite", "github.com/lohisoft/lohibot/db/postgres"}
	for _, p := range imports {
		for _, bad := range forbidden {
			if p == bad || strings.HasPrefix(p, strings.TrimSuffix(bad, "/")+"/") {
				t.Errorf("crawler imports %s", p)
			}
		}
	}
	if !strings.Contains(string(out), "github.com/lohisoft/lohibot/db/engine") {
		t.Errorf("crawler does not import db/engine: is the list complete?\n%s", out)
	}
}
