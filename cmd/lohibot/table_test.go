package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/termsafe"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// column returns the terminal column at which sub starts in line (-1 when
// line lacks it).
func column(line, sub string) int {
	i := strings.Index(line, sub)
	if i < 0 {
		return -1
	}
	return termsafe.Width(line[:i])
}

// TestTableAligns: the columns after a cell holding a control character
// (shown escaped) or non-ASCII text (é precomposed and decomposed, 漢 two
// columns wide) start at the same terminal column on every line.
func TestTableAligns(t *testing.T) {
	var tab table
	tab.add("ID", "SUBJECT", "FROM", "REASON")
	tab.add("1", "plain subject", "a@example.com", "r1")
	tab.add("2", "evil \x1b]0;title\x07 subject", "b@example.com", "r2")
	tab.add("3", "Café 漢字 e\u0301", "c@exämple.com", "r3")
	tab.add("4", "tab\there", "漢@example.com", "r4")
	lines := tab.lines()
	if !strings.Contains(lines[2], `evil \x1b]0;title\x07 subject`) || !strings.Contains(lines[4], `tab\x09here`) {
		t.Errorf("control characters not escaped:\n%s", strings.Join(lines, "\n"))
	}
	for _, col := range []struct{ head, prefix string }{{"SUBJECT", ""}, {"FROM", "@"}, {"REASON", "r"}} {
		want := column(lines[0], col.head)
		for i, l := range lines[1:] {
			var got int
			switch col.head {
			case "SUBJECT":
				got = column(l, []string{"plain", "evil", "Café", "tab"}[i])
			case "FROM":
				got = column(l, []string{"a@", "b@", "c@", "漢@"}[i])
			default:
				got = column(l, fmt.Sprintf("r%d", i+1))
			}
			if got != want {
				t.Errorf("line %d: %s starts at column %d, want %d (as its heading):\n%s", i+1, col.head, got, want, strings.Join(lines, "\n"))
			}
		}
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %q ends with a space: the last cell is padded", l)
		}
	}
}

// TestMailReviewListAligns: in mail review list, a subject with an escape
// sequence and one with é and 漢 leave the REASON column where the heading
// puts it.
func TestMailReviewListAligns(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	env := []string{"LOHIBOT_DB=" + dsn}
	dir := t.TempDir()
	subjects := []string{
		"A question about your bot",
		"=?utf-8?q?Evil_=1B]0;pwned=07_=1B[2K_subject?=",
		"=?utf-8?q?Caf=C3=A9_=E6=BC=A2=E5=AD=97_question?=",
	}
	var files []string
	for i, s := range subjects {
		raw := fmt.Sprintf("From: Curious <curious%d@library-example.org>\r\nTo: message@lohisoft.com\r\n"+
			"Date: Wed, 04 Mar 2026 12:00:0%d +0100\r\nSubject: %s\r\nMessage-ID: <table%d@library-example.org>\r\n"+
			"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"+
			"Hello,\r\n\r\nwhat kind of search engine are you building?\r\n", i, i, s, i)
		f := filepath.Join(dir, fmt.Sprintf("m%d.eml", i))
		if err := os.WriteFile(f, []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if r := runCLI(t, env, append([]string{"mail", "import"}, files...)...); r.code != 0 {
		t.Fatalf("mail import: exit %d: %s", r.code, r.stderr)
	}
	r := runCLI(t, env, "mail", "review", "list", "--json")
	var reasons []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var it struct {
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(l), &it); err != nil {
			t.Fatalf("mail review list --json line %q: %v", l, err)
		}
		reasons = append(reasons, it.Reason)
	}
	if len(reasons) != 3 {
		t.Fatalf("mail review list --json: %d messages, want 3:\n%s", len(reasons), r.stdout)
	}
	r = runCLI(t, env, "mail", "review", "list")
	if r.code != 0 {
		t.Fatalf("mail review list: exit %d: %s", r.code, r.stderr)
	}
	var rows []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if l != "" && !strings.HasPrefix(l, "    │") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 4 || !strings.Contains(r.stdout, `\x1b]0;pwned\x07`) || !strings.Contains(r.stdout, "Café 漢字") {
		t.Fatalf("mail review list = %q, want a heading and 3 rows, the escape shown escaped", r.stdout)
	}
	want := column(rows[0], "REASON")
	for i, row := range rows[1:] {
		if got := termsafe.Width(row) - termsafe.Width(reasons[i]); got != want || !strings.HasSuffix(row, reasons[i]) {
			t.Errorf("row %d: REASON %q starts at column %d, want %d:\n%s", i+1, reasons[i], got, want, r.stdout)
		}
	}
}
