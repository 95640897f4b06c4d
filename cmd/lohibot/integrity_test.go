package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/outsider"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestCrawlLogsAtEnd: when lohibot crawl returns, every request it logged
// and every robots.txt it kept is a leaf of the transparency log (its last
// append runs as the crawl ends, while the crawler closes).
func TestCrawlLogsAtEnd(t *testing.T) {
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
			var rows, unlogged int64
			if err := dbtest.SQL(s).QueryRow(`SELECT COUNT(*), COUNT(*) - COUNT(l.row_id) FROM `+table+` r
				LEFT JOIN log_leaves l ON l.tbl = '`+table+`' AND l.row_id = r.id`).Scan(&rows, &unlogged); err != nil {
				t.Fatal(err)
			}
			if rows == 0 || unlogged != 0 {
				t.Errorf("%s after the crawl: %d rows, %d not in the log; want rows, all in it", table, rows, unlogged)
			}
		}
	})
}

// logFiles is a test's log key and the files its commands write.
type logFiles struct {
	dir, key string
}

func newLogFiles(t *testing.T) *logFiles {
	t.Helper()
	f := &logFiles{dir: t.TempDir()}
	f.key = filepath.Join(f.dir, "log.pem")
	if r := runCLI(t, nil, "keys", "generate", "--out", f.key); r.code != 0 {
		t.Fatalf("keys generate: exit %d\n%s", r.code, r.stderr)
	}
	return f
}

// vkey returns the log's verifier key, as 'log vkey' prints it.
func (f *logFiles) vkey(t *testing.T) string {
	t.Helper()
	r := runCLI(t, nil, "log", "vkey", "--key", f.key)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "lohisoft.com/bot/log+") {
		t.Fatalf("log vkey: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

// checkpoint runs 'log checkpoint' and writes what it prints to name.
func (f *logFiles) checkpoint(t *testing.T, env []string, name string) (path string, msg []byte) {
	t.Helper()
	r := runCLI(t, env, "log", "checkpoint", "--key", f.key)
	if r.code != 0 {
		t.Fatalf("log checkpoint: exit %d\n%s", r.code, r.stderr)
	}
	path = filepath.Join(f.dir, name)
	if err := os.WriteFile(path, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, []byte(r.stdout)
}

// TestAuditIntegrity writes an exclusion history and a mailbox through the
// commands, signs a checkpoint, checks that audit passes against it, then
// tampers with the records and checks that audit exits 1 naming the table
// and row, and that the checkpoint no longer checks out.
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
		f := newLogFiles(t)
		cp, msg := f.checkpoint(t, env, "cp.txt")
		c, err := outsider.OpenCheckpoint(msg, f.vkey(t))
		if err != nil || c.Size < 5 {
			t.Fatalf("the checkpoint from outside: %+v, %v; want at least 5 records", c, err)
		}
		if r := runCLI(t, env, "audit"); r.code != 0 || !strings.Contains(r.stdout, "integrity") {
			t.Fatalf("audit of untouched records: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := runCLI(t, env, "audit", "integrity", "--checkpoint", cp); r.code != 0 {
			t.Errorf("audit integrity --checkpoint of untouched records: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r := runCLI(t, env, "report", "a-shop.example", "--format", "json")
		var rep struct {
			Log *struct {
				Size int64 `json:"size"`
			} `json:"log"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Log == nil || rep.Log.Size != c.Size {
			t.Fatalf("report --format json: exit %d, log %+v, %v; want the log of %d", r.code, rep.Log, err, c.Size)
		}
		if r := runCLI(t, env, "audit", "robots", "--checkpoint", cp); r.code != 2 {
			t.Errorf("audit robots --checkpoint: exit %d, want 2", r.code)
		}
		// A checkpoint signed by another key.
		other := newLogFiles(t)
		forged, _ := other.checkpoint(t, env, "forged.txt")
		if r := runCLI(t, env, "audit", "integrity", "--checkpoint", forged); r.code != 0 {
			// (other's key is now recorded too: 'log checkpoint' records
			// the key it signs with.)
			t.Errorf("audit integrity --checkpoint by a second key of the log: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if err := dbtest.Gorm(s).Exec("DELETE FROM log_keys WHERE vkey <> ?", f.vkey(t)).Error; err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, env, "audit", "integrity", "--checkpoint", forged, "--json"); r.code != 1 || !strings.Contains(r.stdout, `"check":"checkpoint"`) {
			t.Errorf("audit integrity --checkpoint signed by an unknown key: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}

		// Tampering: a policy event's reason, then a message.
		if err := dbtest.Gorm(s).Exec("UPDATE policy_events SET reason = 'never asked' WHERE id = 1").Error; err != nil {
			t.Fatal(err)
		}
		r = runCLI(t, env, "audit", "--json")
		if r.code != 1 || !strings.Contains(r.stdout, `"table":"policy_events","row_id":1`) {
			t.Errorf("audit after editing policy event 1: exit %d, want 1 naming policy_events row 1\n%s", r.code, r.stdout)
		}
		if r := runCLI(t, env, "audit", "integrity", "--checkpoint", cp); r.code != 1 || !strings.Contains(r.stdout, "checkpoint") {
			t.Errorf("audit integrity --checkpoint after tampering: exit %d, want 1\n%s", r.code, r.stdout)
		}
		if err := dbtest.Gorm(s).Exec("UPDATE policy_events SET reason = 'asked by phone' WHERE id = 1").Error; err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, env, "audit", "integrity", "--checkpoint", cp); r.code != 0 {
			t.Errorf("audit integrity after putting the reason back: exit %d\n%s", r.code, r.stdout)
		}
		if s.Dialect == db.SQLite {
			if err := dbtest.Gorm(s).Exec("UPDATE policy_events SET reason = reason || char(0) || ' and every other site' WHERE id = 1").Error; err != nil {
				t.Fatal(err)
			}
			if r := runCLI(t, env, "audit", "integrity", "--checkpoint", cp); r.code != 1 || !strings.Contains(r.stdout, "policy_events row 1") {
				t.Errorf("audit integrity after a NUL in the reason: exit %d, want 1 naming policy_events row 1\n%s", r.code, r.stdout)
			}
			if err := dbtest.Gorm(s).Exec("UPDATE policy_events SET reason = 'asked by phone' WHERE id = 1").Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := dbtest.Gorm(s).Exec("DELETE FROM mail_messages WHERE id = 2").Error; err != nil {
			t.Fatal(err)
		}
		r = runCLI(t, env, "audit", "integrity")
		if r.code != 1 || !strings.Contains(r.stdout, "mail_messages row 2") {
			t.Errorf("audit integrity after deleting message 2: exit %d, want 1 naming mail_messages row 2\n%s", r.code, r.stdout)
		}
	})
}

// TestLogProofsFromOutside: after a crawl and an exclusion, a webmaster
// holding a signed checkpoint checks, with golang.org/x/mod/sumdb alone,
// an inclusion proof for every record of the site (its requests, its
// robots.txt snapshots, its exclusion), and after a second exclusion that
// the new checkpoint extends the old. A log rebuilt with a forged email
// before the exclusion no longer reproduces the checkpoint.
func TestLogProofsFromOutside(t *testing.T) {
	web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		site, otherSite := web.Plain()[0], web.Plain()[1]
		if r := runCLI(t, nil, "--db", dsn, "--resolver", web.DNSAddr, "crawl", "--add", "--allow-private", "--delay", "10ms", site.StartURL, otherSite.StartURL); r.code != 0 {
			t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := runCLI(t, env, "exclude", "add", site.Name, "--by", "staff", "--reason", "asked"); r.code != 0 {
			t.Fatalf("exclude add: exit %d\n%s", r.code, r.stderr)
		}
		f := newLogFiles(t)
		vkey := f.vkey(t)
		cp1, msg1 := f.checkpoint(t, env, "cp1.txt")
		c1, err := outsider.OpenCheckpoint(msg1, vkey)
		if err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, env, "log", "prove", site.Name, "--checkpoint", cp1, "--json")
		if r.code != 0 {
			t.Fatalf("log prove: exit %d\n%s", r.code, r.stderr)
		}
		records, err := outsider.CheckRecords(c1, []byte(r.stdout))
		if err != nil {
			t.Fatalf("the proofs from outside: %v", err)
		}
		count := map[string]int{}
		for _, rec := range records {
			count[rec.Table]++
			if !outsider.Names(rec.Record, site.Name) {
				t.Errorf("%s %d: the leaf data does not name %s", rec.Table, rec.ID, site.Name)
			}
		}
		s := dbtest.OpenDSN(t, dsn)
		var requests int
		if err := dbtest.SQL(s).QueryRow(rebindTest(s, "SELECT COUNT(*) FROM requests WHERE site = ?"), site.Name).Scan(&requests); err != nil {
			t.Fatal(err)
		}
		// Two policy events name the site: its addition to the crawl list
		// (crawl --add) and its exclusion.
		if count["requests"] != requests || count["policy_events"] != 2 || count["robots_snapshots"] == 0 || len(records) != requests+2+count["robots_snapshots"] {
			t.Errorf("proved records %v, want the %d requests, the robots.txt snapshots, the site's addition and its exclusion", count, requests)
		}
		if r := runCLI(t, env, "log", "prove", site.Name, "--checkpoint", cp1); r.code != 0 || !strings.Contains(r.stdout, "each proved") {
			t.Errorf("log prove (text): exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}

		// A second exclusion, a second checkpoint: consistent with the first.
		if r := runCLI(t, env, "exclude", "add", otherSite.Name, "--by", "staff"); r.code != 0 {
			t.Fatalf("exclude add: exit %d\n%s", r.code, r.stderr)
		}
		cp2, msg2 := f.checkpoint(t, env, "cp2.txt")
		c2, err := outsider.OpenCheckpoint(msg2, vkey)
		if err != nil || c2.Size != c1.Size+1 {
			t.Fatalf("second checkpoint %+v, %v; want one leaf more than %d", c2, err, c1.Size)
		}
		r = runCLI(t, env, "log", "consistency", "--old", cp1, "--new", cp2, "--json")
		if r.code != 0 {
			t.Fatalf("log consistency: exit %d\n%s", r.code, r.stderr)
		}
		if err := outsider.CheckConsistency(c1, c2, []byte(r.stdout)); err != nil {
			t.Errorf("the consistency proof from outside: %v", err)
		}
		if r := runCLI(t, env, "log", "consistency", "--old", cp2, "--new", cp1); r.code != 2 {
			t.Errorf("log consistency with old and new swapped: exit %d, want 2", r.code)
		}

		// The attacker rewrites history: a forged "we withdraw" email
		// before the exclusion, and the whole log rebuilt around it.
		for _, q := range []string{
			"DELETE FROM log_leaves", "DELETE FROM log_hashes", "DELETE FROM log_cursor",
		} {
			if err := dbtest.Gorm(s).Exec(q).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := dbtest.Gorm(s).Exec(`INSERT INTO mail_messages (message_id, received_at, from_addr, intent, domains, outcome, review_status)
			VALUES ('forged@example', '2020-01-01 00:00:00+00:00', 'w@x', 'reinclude', ?, 'reincluded', 'approved')`, site.Name).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendLog(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, env, "audit", "integrity"); r.code != 0 {
			t.Logf("audit integrity of the rebuilt log, without a checkpoint: exit %d (a consistent rebuild needs the checkpoint to be found out)", r.code)
		}
		r = runCLI(t, env, "audit", "integrity", "--checkpoint", cp1)
		if r.code != 1 || !strings.Contains(r.stdout, "checkpoint") {
			t.Errorf("audit integrity --checkpoint of the rebuilt log: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := runCLI(t, env, "log", "prove", site.Name, "--checkpoint", cp1); r.code != 1 {
			t.Errorf("log prove against the old checkpoint of the rebuilt log: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := runCLI(t, env, "log", "consistency", "--old", cp1, "--new", cp2); r.code != 1 {
			t.Errorf("log consistency of the rebuilt log: exit %d, want 1", r.code)
		}
	})
}

// rebindTest spells q's placeholders for s's engine.
func rebindTest(s *db.Store, q string) string {
	if s.Dialect != db.Postgres {
		return q
	}
	return strings.Replace(q, "?", "$1", 1)
}
