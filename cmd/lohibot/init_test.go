package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestNoDatabaseCreatesNothing: a mistyped --db is refused with exit 2 and
// the way out, by every command that uses the database, and no file
// appears; init creates it and says where.
func TestNoDatabaseCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.db")
	want := "no lohibot database at " + typo + " (create it with lohibot init --db " + typo + ")"
	for _, args := range [][]string{
		{"exclude", "check", "example.com"},
		{"exclude", "list"},
		{"exclude", "add", "example.com"},
		{"sites", "list"},
		{"crawl", "--all"},
		{"search", "x"},
		{"audit"},
		{"report", "example.com"},
		{"mail", "review", "list"},
		{"serve", "--http", "127.0.0.1:0"},
	} {
		r := runCLI(t, nil, append([]string{"--db", typo}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("lohibot --db typo.db %s: exit %d, stderr %q; want 2 and %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("lohibot %s created %s", strings.Join(args, " "), typo)
		}
	}
	// Also through LOHIBOT_DB.
	if r := runCLI(t, []string{"LOHIBOT_DB=" + typo}, "exclude", "check", "example.com"); r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("LOHIBOT_DB=typo.db exclude check: exit %d, stderr %q", r.code, r.stderr)
	}

	r := runCLI(t, nil, "init", "--db", typo)
	if r.code != 0 || !strings.Contains(r.stdout, "created database at "+typo) {
		t.Fatalf("init: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, nil, "init", "--db", typo)
	if r.code != 0 || !strings.Contains(r.stdout, "database ready at "+typo) {
		t.Errorf("init again: exit %d, stdout %q", r.code, r.stdout)
	}
	if r := runCLI(t, nil, "--db", typo, "exclude", "check", "example.com"); r.code != 0 {
		t.Errorf("exclude check after init: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestNoDatabasePostgres: a PostgreSQL database without lohibot's schema
// is no lohibot database either, and stays without it.
func TestNoDatabasePostgres(t *testing.T) {
	dsn := dbtest.EmptyDSN(t, "postgres")
	if r := runCLI(t, nil, "--db", dsn, "exclude", "list"); r.code != 2 || !strings.Contains(r.stderr, "no lohibot database at") {
		t.Errorf("exclude list on an empty PostgreSQL database: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "--db", dsn, "exclude", "list"); r.code != 2 {
		t.Errorf("second exclude list: exit %d: the first created the schema", r.code)
	}
	if r := runCLI(t, nil, "--db", dsn, "init"); r.code != 0 {
		t.Fatalf("init: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "--db", dsn, "exclude", "list"); r.code != 0 {
		t.Errorf("exclude list after init: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCommandsWithoutDatabase: commands that need no database run with a
// --db naming none and create nothing.
func TestCommandsWithoutDatabase(t *testing.T) {
	dir := t.TempDir()
	none := filepath.Join(dir, "none.db")
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eml := filepath.Join(dir, "m.eml")
	if err := os.WriteFile(eml, []byte("From: a@example.com\nSubject: hi\n\nplease stop crawling example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ips"},
		{"robots", "test", "--robots", robots, "https://example.com/x"},
		{"mail", "parse", eml},
	} {
		r := runCLI(t, nil, append([]string{"--db", none}, args...)...)
		if r.code != 0 {
			t.Errorf("lohibot %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a command without a database created %s", none)
	}
}

func TestEmptyDBFlagIsUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"--db", "", "exclude", "list"},
		{"--db=", "init"},
		{"exclude", "check", "example.com", "--db", " "},
	} {
		if r := runCLI(t, nil, args...); r.code != 2 || !strings.Contains(r.stderr, "--db") {
			t.Errorf("lohibot %q: exit %d, stderr %q; want 2 naming --db", args, r.code, r.stderr)
		}
	}
}

// TestSecretsRedacted: no output shows a password: serve --check with the
// DSN from LOHIBOT_DB (of a database it cannot reach), mail watch refusing an IMAP URL with a password, a
// malformed PostgreSQL DSN echoed by the driver's error (which is bad
// input, exit 2).
func TestSecretsRedacted(t *testing.T) {
	const secret = "s3cretPW"
	tests := []struct {
		name string
		env  []string
		args []string
		code int
	}{
		// (The check opens the database, which is not reachable here: it
		// fails, and says why without the password.)
		{"serve --check", []string{"LOHIBOT_DB=postgres://bot:" + secret + "@db.example/lohibot?sslmode=disable"},
			[]string{"serve", "--check"}, 1},
		{"serve --check --json", []string{"LOHIBOT_DB=postgres://bot@db.example/lohibot?password=" + secret},
			[]string{"serve", "--check", "--json"}, 1},
		{"mail watch URL password", nil,
			[]string{"mail", "watch", "--imap", "imaps://u:" + secret + "@mail.example/INBOX", "--once"}, 2},
		{"malformed DSN", nil,
			[]string{"--db", "postgres://bot:" + secret + "@db.example:99999999/x?password=" + secret, "exclude", "list"}, 2},
		{"malformed DSN escape", nil,
			[]string{"--db", "postgres://bot:" + secret + "%zz@db.example/x", "exclude", "list"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tt.code, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("output shows the password:\nstdout %s\nstderr %s", r.stdout, r.stderr)
			}
		})
	}
}
