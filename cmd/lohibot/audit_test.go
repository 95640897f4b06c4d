package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// writeExcludedThenCrawled writes a log in which example.com is excluded at
// t0 and requested once a minute later.
func writeExcludedThenCrawled(t *testing.T, dsn string) (reqID int64) {
	t.Helper()
	ctx := context.Background()
	store := dbtest.OpenDSN(t, dsn)
	t0 := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	p := policy.New(store, &policy.Options{Now: func() time.Time { return t0 }})
	if _, err := p.Exclude(ctx, []string{"example.com"}, policy.Change{Actor: "webmaster@example.com", Evidence: "m1@example.com", Source: "mail"}); err != nil {
		t.Fatal(err)
	}
	c := &db.CrawlCycle{Site: "example.com", StartedAt: t0.Add(time.Minute), Status: db.CycleDone, Budget: 20, DelayMS: 1000}
	if err := dbtest.Gorm(store).Create(c).Error; err != nil {
		t.Fatal(err)
	}
	sent := t0.Add(time.Minute)
	done := sent.Add(100 * time.Millisecond)
	st := 200
	r := &db.Request{CycleID: &c.ID, Site: "example.com", Host: "example.com", Origin: "https://example.com", URL: "https://example.com/robots.txt",
		Method: "GET", Purpose: db.PurposeRobots, SentAt: sent, CompletedAt: &done, Status: &st, Outcome: "ok"}
	if err := dbtest.Gorm(store).Create(r).Error; err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// auditSummary is the last line of audit --json.
type auditSummary struct {
	Summary bool `json:"summary"`
	OK      bool `json:"ok"`
	Rules   []struct {
		Rule       string `json:"rule"`
		OK         bool   `json:"ok"`
		Checked    int64  `json:"checked"`
		Violations int64  `json:"violations"`
	} `json:"rules"`
	Sites      int64           `json:"sites"`
	Requests   int64           `json:"requests"`
	Violations int64           `json:"violations"`
	Log        json.RawMessage `json:"log"` // the transparency log the integrity rule checked
}

func TestAuditCommand(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	env := []string{"LOHIBOT_DB=" + dsn}

	res := runCLI(t, env, "audit")
	if res.code != 0 {
		t.Fatalf("audit on an empty log: exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, rule := range []string{"robots", "budget", "politeness", "exclusions", "storage"} {
		if !strings.Contains(res.stdout, rule+" ") {
			t.Errorf("audit summary lacks rule %s:\n%s", rule, res.stdout)
		}
	}

	// With nothing wrong, --json still says what was checked.
	res = runCLI(t, env, "audit", "--json")
	if res.code != 0 {
		t.Fatalf("audit --json on an empty log: exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	sum := decodeLines[auditSummary](t, res.stdout)
	if len(sum) != 1 || !sum[0].Summary || !sum[0].OK || len(sum[0].Rules) != len(audit.Rules()) || sum[0].Violations != 0 {
		t.Errorf("audit --json on an empty log = %+v, want one summary object of every rule, 0 violations", sum)
	}

	id := writeExcludedThenCrawled(t, dsn)
	res = runCLI(t, env, "audit")
	if res.code != 1 {
		t.Fatalf("audit of a request after an exclusion: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "VIOLATION example.com exclusions/excluded") || !strings.Contains(res.stdout, "m1@example.com") {
		t.Errorf("audit text lacks the violation and its evidence:\n%s", res.stdout)
	}

	res = runCLI(t, env, "audit", "exclusions", "example.com", "--json")
	if res.code != 1 {
		t.Fatalf("audit --json: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit --json printed %d lines, want a violation and the summary:\n%s", len(lines), res.stdout)
	}
	last := decodeLines[auditSummary](t, lines[1])
	if s := last[0]; !s.Summary || s.OK || s.Sites != 1 || s.Requests != 1 || s.Violations != 1 ||
		len(s.Rules) != 1 || s.Rules[0].Rule != "exclusions" || s.Rules[0].Checked != 1 || s.Rules[0].Violations != 1 {
		t.Errorf("audit --json summary = %+v, want exclusions: 1 site, 1 request checked, 1 violation", s)
	}
	var v struct {
		Site     string `json:"site"`
		Rule     string `json:"rule"`
		Check    string `json:"check"`
		Evidence string `json:"evidence"`
		Requests []struct {
			ID     int64     `json:"id"`
			URL    string    `json:"url"`
			SentAt time.Time `json:"sent_at"`
		} `json:"requests"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil {
		t.Fatal(err)
	}
	if v.Site != "example.com" || v.Rule != "exclusions" || v.Check != "excluded" || len(v.Requests) != 1 || v.Requests[0].ID != id || v.Evidence == "" {
		t.Errorf("audit --json = %+v, want the exclusions violation of request %d", v, id)
	}

	// Other rules and sites hold; a time after the request leaves nothing.
	for _, args := range [][]string{{"audit", "budget"}, {"audit", "other.org"}, {"audit", "--since", "2026-08-02"}, {"audit", "--since=2026-08-01T10:02:00Z"}} {
		if res := runCLI(t, env, args...); res.code != 0 {
			t.Errorf("%v: exit %d, want 0\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}

	for _, args := range [][]string{
		{"audit", "speed"},
		{"audit", "127.0.0.1"},
		{"audit", "co.uk"},
		{"audit", "--since", "yesterday"},
		{"audit", "--frobnicate"},
	} {
		if res := runCLI(t, env, args...); res.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-08-01", time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-08-01T10:30:00+02:00", time.Date(2026, 8, 1, 8, 30, 0, 0, time.UTC)},
		{"2026-08-01 10:30:00", time.Date(2026, 8, 1, 10, 30, 0, 0, time.UTC)},
		{"24h", now.Add(-24 * time.Hour)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-5h", "2026-13-01"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) = nil error, want one", bad)
		}
	}
}

func TestReportCommand(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	env := []string{"LOHIBOT_DB=" + dsn}
	writeExcludedThenCrawled(t, dsn)

	res := runCLI(t, env, "report", "https://www.Example.com/x")
	if res.code != 0 {
		t.Fatalf("report: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"Crawl report: example.com", "m1@example.com", "NOT kept", "https://example.com/robots.txt"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("report text lacks %q:\n%s", want, res.stdout)
		}
	}

	for _, args := range [][]string{{"report", "example.com", "--format", "json"}, {"report", "example.com", "--json"}} {
		res = runCLI(t, env, args...)
		var rep map[string]any
		if res.code != 0 || json.Unmarshal([]byte(res.stdout), &rep) != nil || rep["site"] != "example.com" {
			t.Errorf("%v: exit %d, not one JSON report:\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}

	out := filepath.Join(t.TempDir(), "r.html")
	res = runCLI(t, env, "report", "example.com", "--format=html", "-o", out, "--lang", "hu")
	if res.code != 0 {
		t.Fatalf("report -o: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `<html lang="hu">`) || !strings.Contains(string(b), "Feltérképezési jelentés") {
		t.Errorf("report -o %s is not the Hungarian HTML report", out)
	}
	if res.stdout != "" {
		t.Errorf("report -o printed to stdout: %q", res.stdout)
	}

	for _, args := range [][]string{
		{"report"},
		{"report", "co.uk"},
		{"report", "example.com", "--format", "pdf"},
		{"report", "example.com", "--lang", "fr"},
		{"report", "example.com", "-o", filepath.Join(t.TempDir(), "missing", "r.html")},
		{"report", "a.com", "b.com"},
		// --json prints nothing but JSON: another format is a contradiction.
		{"report", "example.com", "--json", "--format", "text"},
		{"--json", "report", "example.com", "--format=html"},
	} {
		if res := runCLI(t, env, args...); res.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}
}
