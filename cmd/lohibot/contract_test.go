package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// These tests check the command-line contract (docs/commands.md) from outside, as a user or the black-box tests see
// it: arguments in, exit code and output out.

// TestContractRobotsFetchRefusesBeforeSending: robots fetch refuses a URL
// with credentials without echoing them, and names what a bare domain
// lacks; both are bad input (exit 2), decided before any database or
// network is touched.
func TestContractRobotsFetchRefusesBeforeSending(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"credentials", "http://alice:s3cret@example.org/", "credentials (user:password@) is refused"},
		{"credentials without scheme", "alice:s3cret@example.org", "credentials (user:password@) is refused"},
		{"bare domain", "example.org", `"example.org" is not an http(s) URL (such as https://example.org/)`},
		{"scheme-relative", "//example.org/x", `is not an http(s) URL (such as https://example.org/x)`},
		{"bad port", "example.org:abc", `bad port "abc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := t.TempDir() + "/none.db"
			res := runCLI(t, nil, "--db", dsn, "robots", "fetch", tt.url)
			if res.code != exitBadInput {
				t.Errorf("robots fetch %q: exit %d, want %d; stderr %q", tt.url, res.code, exitBadInput, res.stderr)
			}
			if !strings.Contains(res.stderr, tt.want) {
				t.Errorf("robots fetch %q: stderr %q, want it to say %q", tt.url, res.stderr, tt.want)
			}
			if strings.Contains(res.stdout+res.stderr, "s3cret") {
				t.Errorf("robots fetch %q printed the password: stdout %q, stderr %q", tt.url, res.stdout, res.stderr)
			}
		})
	}
}

// TestContractFilesAreReadBounded: every file named on the command line is
// read in bounded memory. One far larger than any key, secret, directory,
// configuration or capture (a sparse 17 MiB file standing in for
// /dev/zero, which crashed these commands out of memory) is bad input,
// exit 2, saying the file is too large.
func TestContractFilesAreReadBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 17<<20); err != nil {
		t.Fatal(err)
	}
	capture := filepath.Join(dir, "request.txt")
	if err := os.WriteFile(capture, []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eml := filepath.Join(dir, "m.eml")
	if err := os.WriteFile(eml, []byte("From: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := dbtest.DSN(t, "sqlite")
	tests := []struct {
		name string
		args []string
	}{
		{"verify-signature FILE", []string{"verify-signature", big}},
		{"verify-signature --directory FILE", []string{"verify-signature", "--directory", big, capture}},
		{"keys show FILE", []string{"keys", "show", big}},
		{"serve --config FILE", []string{"serve", "--config", big, "--check"}},
		{"mail watch --password-file", []string{"--db", dsn, "mail", "watch", "--imap", "imaps://bot@127.0.0.1:1/INBOX", "--password-file", big, "--once"}},
		{"mail watch --oauth-token-file", []string{"--db", dsn, "mail", "watch", "--imap", "imaps://bot@127.0.0.1:1/INBOX", "--oauth-token-file", big, "--once"}},
		{"mail import --smtp-password-file", []string{"--db", dsn, "mail", "import", "--smtp", "smtp://bot@127.0.0.1:1", "--from", "message@lohisoft.com", "--smtp-password-file", big, eml}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, nil, tt.args...)
			if res.code != exitBadInput || !strings.Contains(res.stderr, "is larger than") {
				t.Errorf("lohibot %q: exit %d, stderr %q; want exit %d saying the file is larger than its limit", tt.args, res.code, res.stderr, exitBadInput)
			}
		})
	}
}

// TestContractResolverPort: --resolver with a port that is no port is bad
// usage (exit 2) on the commands that need no database; verify accepted
// 127.0.0.1:99999 and then called every address unverifiable (exit 1).
func TestContractResolverPort(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:dns"} {
		res := runCLI(t, nil, "verify", "--resolver", addr, "192.0.2.1")
		if res.code != exitBadInput || !strings.Contains(res.stderr, "resolver") {
			t.Errorf("verify --resolver %s: exit %d, stderr %q; want exit %d naming the resolver", addr, res.code, res.stderr, exitBadInput)
		}
	}
}

// TestContractAuditSummaryNamesEveryCount: each rule's line of the text
// summary says what it counted (the signatures rule printed "(5  checked)").
func TestContractAuditSummaryNamesEveryCount(t *testing.T) {
	sum := &audit.Summary{Sites: 1, Requests: 5, Log: &audit.LogSummary{Size: 4, Root: "ab", Unlogged: 1}}
	for _, r := range audit.Rules() {
		sum.Rules = append(sum.Rules, audit.RuleSummary{Rule: r, Checked: 5})
	}
	var out bytes.Buffer
	printAuditSummary(&out, sum)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, r := range audit.Rules() {
		if i >= len(lines) || !strings.HasPrefix(lines[i], r) || !regexp.MustCompile(`\(5 [a-z][a-z ]* checked\)$`).MatchString(lines[i]) {
			t.Errorf("summary line for %s = %q, want \"(5 WHAT checked)\"", r, lines[min(i, len(lines)-1)])
		}
	}
	if !strings.Contains(out.String(), "; 1 row not in it yet\n") {
		t.Errorf("summary %q, want \"1 row not in it yet\"", out.String())
	}
}

// TestContractMissingPostgresDatabase: --db naming a PostgreSQL database
// that does not exist is bad input (exit 2) for init and for the other
// commands, as a missing SQLite file is; it exited 1 like an unreachable
// server.
func TestContractMissingPostgresDatabase(t *testing.T) {
	u := dbtest.MissingPostgres(t)
	for _, args := range [][]string{{"init"}, {"exclude", "list"}, {"audit"}} {
		res := runCLI(t, nil, append([]string{"--db", u.String()}, args...)...)
		if res.code != exitBadInput || !strings.Contains(res.stderr, "PostgreSQL has no database") {
			t.Errorf("lohibot %v on a missing PostgreSQL database: exit %d, stderr %q; want %d", args, res.code, res.stderr, exitBadInput)
		}
	}
}

// zeros is an endless input, like /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestContractVerifyLogStopsOnSignal: verify-log of an endless input stops
// when its context ends (Ctrl-C, SIGTERM); it read /dev/zero for ever,
// ignoring both.
func TestContractVerifyLogStopsOnSignal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"verify-log", "--resolver", "127.0.0.1:1", "-"}, zeros{}, &out, &errOut, envFunc(nil))
	}()
	select {
	case code := <-done:
		if code == exitOK {
			t.Errorf("verify-log of an endless input stopped with exit 0; stderr %q", errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("verify-log of an endless input still runs 20 s after its context ended")
	}
}

// TestContractAuthservID: an --authserv-id no Authentication-Results header
// can carry is bad usage (exit 2) for mail import and mail watch; it was
// taken, and then trusted no header at all.
func TestContractAuthservID(t *testing.T) {
	eml := filepath.Join(t.TempDir(), "m.eml")
	if err := os.WriteFile(eml, []byte("From: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := dbtest.DSN(t, "sqlite")
	for _, id := range []string{"mx1 lohisoft.com", "mx1.lohisoft.com;", "a@b", "mx1.lohisoft.com\x1b"} {
		for _, args := range [][]string{
			{"--db", dsn, "mail", "import", "--authserv-id", id, eml},
			{"--db", dsn, "mail", "watch", "--imap", "imaps://bot@127.0.0.1:1/INBOX", "--authserv-id", id, "--once"},
		} {
			res := runCLI(t, []string{"LOHIBOT_IMAP_PASSWORD=x"}, args...)
			if res.code != exitBadInput || !strings.Contains(res.stderr, "is not an authserv-id") {
				t.Errorf("lohibot %q: exit %d, stderr %q; want exit %d", args, res.code, res.stderr, exitBadInput)
			}
		}
	}
	if res := runCLI(t, nil, "--db", dsn, "mail", "import", "--authserv-id", "mx1.lohisoft.com", eml); res.code != exitOK {
		t.Errorf("mail import --authserv-id mx1.lohisoft.com: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestContractExcludeAddHidesCredentials: exclude add --json echoes the
// input it was given without the credentials a URL may carry (it printed
// "input":"http://u:PASSWORD@..."); the site is excluded all the same.
func TestContractExcludeAddHidesCredentials(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	res := runCLI(t, nil, "--db", dsn, "--json", "exclude", "add", "http://alice:s3cret@www.example.com/x", "//bob:s3cret@example.org")
	if res.code != exitOK || strings.Contains(res.stdout+res.stderr, "s3cret") {
		t.Fatalf("exclude add --json: exit %d, stdout %q, stderr %q; want 0 and no password", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{`"site":"example.com"`, `"input":"http://www.example.com/x"`, `"site":"example.org"`, `"input":"//example.org"`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("exclude add --json printed %q, want %s", res.stdout, want)
		}
	}
	// Refused inputs are quoted without their password, with or without a
	// scheme.
	for _, in := range []string{"bob:s3cret@example.org", "http://bob:s3cret@co.uk/"} {
		res := runCLI(t, nil, "--db", dsn, "exclude", "add", in)
		if res.code != exitBadInput || strings.Contains(res.stderr, "s3cret") {
			t.Errorf("exclude add %q: exit %d, stderr %q; want %d without the password", in, res.code, res.stderr, exitBadInput)
		}
	}
}

// TestContractNoPasswordEchoed: arguments carrying user:password@ are shown
// with the password masked by audit's refusal and robots test's verdicts.
func TestContractNoPasswordEchoed(t *testing.T) {
	robotsFile := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robotsFile, []byte("User-agent: *\nDisallow: /x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := dbtest.DSN(t, "sqlite")
	for _, args := range [][]string{
		{"--db", dsn, "audit", "bob:s3cret@co.uk"},
		{"robots", "test", "--robots", robotsFile, "http://bob:s3cret@example.com/a"},
		{"--json", "robots", "test", "--robots", robotsFile, "http://bob:s3cret@example.com/x"},
	} {
		res := runCLI(t, nil, args...)
		if out := res.stdout + res.stderr; strings.Contains(out, "s3cret") || !strings.Contains(out, "bob:xxxxx@") {
			t.Errorf("lohibot %q printed %q; want the password masked", args, out)
		}
	}
}

// TestContractRawMessageOnATerminal: mail show --raw writes the stored
// bytes exactly when redirected, and with control characters escaped on a
// terminal, where a hostile subject could otherwise retitle the window or
// erase lines.
func TestContractRawMessageOnATerminal(t *testing.T) {
	dir := t.TempDir()
	raw := "From: evil@example.com\r\nSubject: hi \x1b]0;owned\x07 \x1b[2K\r\nMessage-ID: <raw@example.com>\r\n\r\nPlease stop crawling example.com\r\n"
	eml := filepath.Join(dir, "m.eml")
	if err := os.WriteFile(eml, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := dbtest.DSN(t, "sqlite")
	if res := runCLI(t, nil, "--db", dsn, "mail", "import", eml); res.code != exitOK {
		t.Fatalf("mail import: exit %d, stderr %q", res.code, res.stderr)
	}
	p := policy.New(dbtest.OpenDSN(t, dsn), nil)
	for _, terminal := range []bool{false, true} {
		var rawOut, out bytes.Buffer
		opts := &mailShowOptions{policyOptions: policyOptions{p}, RawOut: &rawOut, RawTerminal: terminal, ID: 1, Raw: true}
		if err := runMailShow(context.Background(), opts, &out); err != nil {
			t.Fatal(err)
		}
		got := rawOut.String()
		switch {
		case !terminal && got != raw:
			t.Errorf("mail show --raw redirected = %q, want the stored bytes %q", got, raw)
		case terminal && (strings.ContainsAny(got, "\x1b\x07\r") || !strings.Contains(got, `hi \x1b]0;owned\x07 \x1b[2K`+"\n")):
			t.Errorf("mail show --raw on a terminal = %q, want control characters escaped", got)
		}
	}
}
