package main

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestCrawlSealsAtEnd: when lohibot crawl returns, every request it logged
// and every robots.txt it kept is sealed (its last seal runs as the crawl
// ends, while the crawler closes: the store has nothing left to seal).
func TestCrawlSealsAtEnd(t *testing.T) {
	web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		args := []string{"--db", dsn, "--resolver", web.DNSAddr, "crawl", "--add", "--allow-private", "--delay", "10ms"}
		for _, s := range web.Plain() {
			args = append(args, s.StartURL)
		}
		if r := runCLI(t, nil, args...); r.code != 0 {
			t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		s := dbtest.OpenDSN(t, dsn)
		for _, table := range []string{"requests", "robots_snapshots"} {
			var rows, unsealed int64
			if err := s.SQL.QueryRow(`SELECT COUNT(*), COUNT(*) - COUNT(s.row_id) FROM `+table+` r
				LEFT JOIN seal_rows s ON s.tbl = '`+table+`' AND s.row_id = r.id`).Scan(&rows, &unsealed); err != nil {
				t.Fatal(err)
			}
			if rows == 0 || unsealed != 0 {
				t.Errorf("%s after the crawl: %d rows, %d not sealed; want rows, all sealed", table, rows, unsealed)
			}
		}
	})
}

// TestAuditIntegrity writes an exclusion history and a mailbox through the
// commands (which seal what they write), checks that audit passes and that a
// report's chain head checks out, then tampers with the records and checks
// that audit exits 1 naming the table and row, and that the head no longer
// checks out.
func TestAuditIntegrity(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	mailDir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "mail")
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		s := dbtest.OpenDSN(t, dsn)
		env := []string{"LOHIBOT_DB=" + dsn}
		for _, args := range [][]string{
			{"exclude", "add", "a-shop.example", "--by", "staff", "--reason", "asked by phone"},
			{"sites", "add", "b-shop.example"},
			{"exclude", "remove", "a-shop.example", "--by", "staff", "--reason", "changed their mind"},
			{"mail", "import", filepath.Join(mailDir, "003-en-question-robots-txt.eml"), filepath.Join(mailDir, "011-en-subject-only-com-au.eml")},
		} {
			if r := runCLI(t, env, args...); r.code != 0 {
				t.Fatalf("lohibot %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
		}
		if r := runCLI(t, env, "audit"); r.code != 0 || !strings.Contains(r.stdout, "integrity") {
			t.Fatalf("audit of untouched records: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r := runCLI(t, env, "report", "a-shop.example", "--format", "json")
		if r.code != 0 {
			t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
		}
		var rep struct {
			Seal *struct {
				Head  string `json:"head"`
				Block int64  `json:"block"`
			} `json:"seal"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Seal == nil || len(rep.Seal.Head) != 64 {
			t.Fatalf("report --format json: seal = %+v, %v; want the chain head", rep.Seal, err)
		}
		head := rep.Seal.Head
		for _, format := range []string{"text", "html"} {
			if r := runCLI(t, env, "report", "a-shop.example", "--format", format); r.code != 0 || !strings.Contains(r.stdout, head) {
				t.Errorf("report --format %s does not show the chain head %s", format, head)
			}
		}
		if r := runCLI(t, env, "audit", "integrity", "--head", head); r.code != 0 {
			t.Errorf("audit integrity --head of an untouched database: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := runCLI(t, env, "audit", "integrity", "--head", strings.Repeat("0", 64)); r.code != 1 || !strings.Contains(r.stderr, "unknown chain head") {
			t.Errorf("audit integrity --head UNKNOWN: exit %d, stderr %q; want 1 and a clear message", r.code, r.stderr)
		}
		if r := runCLI(t, env, "audit", "robots", "--head", head); r.code != 2 {
			t.Errorf("audit robots --head: exit %d, want 2", r.code)
		}

		// Tampering: a policy event's reason, then a message's subject.
		if err := s.DB.Exec("UPDATE policy_events SET reason = 'never asked' WHERE id = 1").Error; err != nil {
			t.Fatal(err)
		}
		r = runCLI(t, env, "audit", "--json")
		if r.code != 1 || !strings.Contains(r.stdout, `"table":"policy_events","row_id":1`) {
			t.Errorf("audit after editing policy event 1: exit %d, want 1 naming policy_events row 1\n%s", r.code, r.stdout)
		}
		if r := runCLI(t, env, "audit", "integrity", "--head", head); r.code != 1 {
			t.Errorf("audit integrity --head after tampering: exit %d, want 1", r.code)
		}
		if err := s.DB.Exec("UPDATE policy_events SET reason = 'asked by phone' WHERE id = 1").Error; err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, env, "audit", "integrity"); r.code != 0 {
			t.Errorf("audit integrity after putting the reason back: exit %d\n%s", r.code, r.stdout)
		}
		if err := s.DB.Exec("DELETE FROM mail_messages WHERE id = 2").Error; err != nil {
			t.Fatal(err)
		}
		r = runCLI(t, env, "audit", "integrity")
		if r.code != 1 || !strings.Contains(r.stdout, "mail_messages row 2") {
			t.Errorf("audit integrity after deleting message 2: exit %d, want 1 naming mail_messages row 2\n%s", r.code, r.stdout)
		}
	})
}
