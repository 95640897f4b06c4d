package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// writeMail writes one message into dir and returns its path.
func writeMail(t *testing.T, dir, name, header, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(header+"\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const ourHop = "Received: from mail.sender.example (mail.sender.example [203.0.113.9]) by mx1.lohisoft.com (Postfix) with ESMTPS id 4A; Tue, 10 Mar 2026 09:00:01 +0000\n"

// exclusionsJSON runs exclude list --json (with extra args) and returns
// the objects by site.
func exclusionsJSON(t *testing.T, env []string, extra ...string) map[string]map[string]any {
	t.Helper()
	r := runCLI(t, env, append([]string{"exclude", "list", "--json"}, extra...)...)
	if r.code != 0 {
		t.Fatalf("exclude list --json: exit %d, stderr %q", r.code, r.stderr)
	}
	out := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("exclude list --json line %q: %v", line, err)
		}
		out[m["site"].(string)] = m
	}
	return out
}

// TestVerifiedExclusions: an exclusion by email is verified only when a
// trusted Authentication-Results header (our --authserv-id, on top) shows
// an aligned pass for the site; a forged one lower down proves nothing;
// without --authserv-id nothing is verified; staff exclusions are; all of
// them apply at once.
func TestVerifiedExclusions(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		dir := t.TempDir()
		mail := func(name, site, trace string) string {
			return writeMail(t, dir, name, trace+fmt.Sprintf("From: Web Master <webmaster@%s>\nTo: message@lohisoft.com\nSubject: stop\nMessage-ID: <%s@%s>\nDate: Tue, 10 Mar 2026 10:00:00 +0100\n", site, name, site),
				"Please stop crawling "+site+".\n")
		}
		genuine := mail("genuine", "genuine-shop.com",
			"Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=genuine-shop.com; spf=pass smtp.mailfrom=b@genuine-shop.com\n"+ourHop)
		forged := mail("forged", "victim-shop.com",
			"Authentication-Results: mx1.lohisoft.com; dkim=none; spf=pass smtp.mailfrom=b@attacker.example\n"+ourHop+
				"Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=victim-shop.com\n")
		noID := mail("noid", "other-shop.com",
			"Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=other-shop.com\n"+ourHop)

		for _, c := range [][]string{
			{"mail", "import", "--authserv-id", "mx1.lohisoft.com", genuine, forged},
			{"mail", "import", noID},
			{"exclude", "add", "staff-shop.com", "--by", "anna"},
		} {
			if r := runCLI(t, env, c...); r.code != 0 {
				t.Fatalf("%v: exit %d, stderr %q", c, r.code, r.stderr)
			}
		}
		want := map[string]bool{"genuine-shop.com": true, "victim-shop.com": false, "other-shop.com": false, "staff-shop.com": true}
		got := exclusionsJSON(t, env)
		for site, v := range want {
			ex, ok := got[site]
			if !ok {
				t.Errorf("%s is not excluded: an unverified exclusion applies at once too", site)
				continue
			}
			if ex["verified"] != v {
				t.Errorf("%s: verified = %v, want %v", site, ex["verified"], v)
			}
		}
		un := exclusionsJSON(t, env, "--unverified")
		if len(un) != 2 || un["victim-shop.com"] == nil || un["other-shop.com"] == nil {
			t.Errorf("exclude list --unverified = %v, want victim-shop.com and other-shop.com", un)
		}
		r := runCLI(t, env, "exclude", "list", "--unverified")
		if r.code != 0 || !strings.Contains(r.stdout, "victim-shop.com\tunverified") || strings.Contains(r.stdout, "genuine-shop.com") {
			t.Errorf("exclude list --unverified text: %q", r.stdout)
		}
		r = runCLI(t, env, "exclude", "list")
		if !strings.Contains(r.stdout, "genuine-shop.com\tverified") {
			t.Errorf("exclude list text does not say verified: %q", r.stdout)
		}
		// Asked again by staff: now verified.
		if r := runCLI(t, env, "exclude", "add", "victim-shop.com", "--by", "anna"); r.code != 0 {
			t.Fatalf("exclude add again: exit %d", r.code)
		}
		if got := exclusionsJSON(t, env); got["victim-shop.com"]["verified"] != true {
			t.Errorf("after a staff exclusion: verified = %v, want true", got["victim-shop.com"]["verified"])
		}
	})
}

// TestTooManySitesQueued: one email may exclude at most 10 sites; more
// goes to staff with that reason and nothing is applied.
func TestTooManySitesQueued(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		dir := t.TempDir()
		var sites []string
		for i := range 11 {
			sites = append(sites, fmt.Sprintf("shop%02d-example.com", i))
		}
		header := "From: a@shop00-example.com\nTo: message@lohisoft.com\nSubject: stop\nMessage-ID: <many@x>\n"
		many := writeMail(t, dir, "many.eml", header, "Please stop crawling "+strings.Join(sites, ", ")+".\n")
		ten := writeMail(t, dir, "ten.eml", strings.Replace(header, "<many@x>", "<ten@x>", 1),
			"Please stop crawling "+strings.Join(sites[1:], ", ")+".\n")
		if r := runCLI(t, env, "mail", "import", many); r.code != 0 {
			t.Fatalf("mail import: exit %d, stderr %q", r.code, r.stderr)
		}
		if got := exclusionsJSON(t, env); len(got) != 0 {
			t.Errorf("11 sites in one email excluded %d sites, want none", len(got))
		}
		r := runCLI(t, env, "mail", "review", "list")
		if !strings.Contains(r.stdout, "more than the 10 one email may exclude") {
			t.Errorf("review list does not give the reason: %q", r.stdout)
		}
		if r := runCLI(t, env, "mail", "import", ten); r.code != 0 {
			t.Fatalf("mail import ten: exit %d, stderr %q", r.code, r.stderr)
		}
		if got := exclusionsJSON(t, env); len(got) != 10 {
			t.Errorf("10 sites in one email excluded %d, want 10", len(got))
		}
	})
}

// TestControlCharactersEscaped: a subject holding terminal escape
// sequences is shown escaped by exclude list and mail review list (text),
// and still exact in JSON.
func TestControlCharactersEscaped(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		dir := t.TempDir()
		subject := "stop \x1b]0;pwned\x07 now \x1b[2K"
		ex := writeMail(t, dir, "ex.eml", "From: a@evil-shop.com\nTo: message@lohisoft.com\nSubject: "+subject+"\nMessage-ID: <esc1@x>\n",
			"Please stop crawling evil-shop.com.\n")
		other := writeMail(t, dir, "other.eml", "From: a@evil-shop.com\nTo: message@lohisoft.com\nSubject: "+subject+"\nMessage-ID: <esc2@x>\n",
			"Hello, what is your bot doing?\n")
		if r := runCLI(t, env, "mail", "import", ex, other); r.code != 0 {
			t.Fatalf("mail import: exit %d, stderr %q", r.code, r.stderr)
		}
		for _, args := range [][]string{{"exclude", "list"}, {"mail", "review", "list"}, {"exclude", "check", "evil-shop.com"}} {
			r := runCLI(t, env, args...)
			if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07") {
				t.Errorf("%v prints raw control characters: %q", args, r.stdout)
			}
			if !strings.Contains(r.stdout, `\x1b]0;pwned\x07`) {
				t.Errorf("%v: stdout %q, want the escape shown as \\x1b", args, r.stdout)
			}
		}
		if got := exclusionsJSON(t, env); got["evil-shop.com"]["reason"] != "email: "+subject {
			t.Errorf("JSON reason = %q, want the exact subject", got["evil-shop.com"]["reason"])
		}
	})
}

// TestUserinfoRefused: crawl refuses a start URL with credentials (exit 2,
// nothing sent, the password not echoed); sites add strips them with a
// warning and stores none.
func TestUserinfoRefused(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	for _, arg := range []string{"http://alice:s3cret@host.example/", "alice:s3cret@host.example", "https://alice@host.example/x"} {
		r := runCLI(t, env, "crawl", arg)
		if r.code != 2 || !strings.Contains(r.stderr, "credentials") {
			t.Errorf("crawl %q: exit %d, stderr %q; want 2 refusing credentials", arg, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "s3cret") {
			t.Errorf("crawl %q echoes the password: %q", arg, r.stderr)
		}
	}
	r := runCLI(t, env, "sites", "add", "https://bob:s3cret@shop.example.com/start")
	if r.code != 0 || !strings.Contains(r.stderr, "warning") || strings.Contains(r.stderr+r.stdout, "s3cret") {
		t.Errorf("sites add with credentials: exit %d, stdout %q, stderr %q; want 0, a warning, no password", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, env, "sites", "list")
	if !strings.Contains(r.stdout, "https://shop.example.com/start") || strings.Contains(r.stdout, "bob") {
		t.Errorf("sites list = %q, want the start URL without credentials", r.stdout)
	}
}

// TestOversizedMail: mail parse refuses a file over 10 MiB (also
// /dev/zero, which has no size) with exit 2 and no stack trace; mail
// import sends such a message to review; an mbox with one is streamed and
// its other messages applied.
func TestOversizedMail(t *testing.T) {
	dir := t.TempDir()
	header := "From: a@big-shop.com\nTo: message@lohisoft.com\nSubject: stop\nMessage-ID: <big@x>\n\nPlease stop crawling big-shop.com.\n"
	big := filepath.Join(dir, "big.eml")
	if err := os.WriteFile(big, []byte(header+strings.Repeat("x", 11<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{big, "/dev/zero"} {
		r := runCLI(t, nil, "mail", "parse", f)
		if r.code != 2 || !strings.Contains(r.stderr, "larger than the 10 MiB limit") || strings.Contains(r.stderr, "goroutine") {
			t.Errorf("mail parse %s: exit %d, stderr %.200q; want 2 saying it is too large", f, r.code, r.stderr)
		}
	}
	mbox := filepath.Join(dir, "mail.mbox")
	small := "From: a@small-shop.com\nTo: message@lohisoft.com\nSubject: stop\nMessage-ID: <small@x>\n\nPlease stop crawling small-shop.com.\n"
	content := "From a@big-shop.com Tue Mar 10 10:00:00 2026\n" + strings.Replace(header, "<big@x>", "<bigmbox@x>", 1) +
		strings.Repeat(strings.Repeat("y", 999)+"\n", 11<<10) + "\nFrom a@small-shop.com Tue Mar 10 10:00:00 2026\n" + small
	if err := os.WriteFile(mbox, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		r := runCLI(t, env, "mail", "import", "--json", big, mbox)
		if r.code != 0 {
			t.Fatalf("mail import: exit %d, stderr %.300q", r.code, r.stderr)
		}
		var sum struct{ Messages, Excluded, Queued int }
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil { // the summary is last
			t.Fatalf("summary %q: %v", r.stdout, err)
		}
		if sum.Messages != 3 || sum.Queued != 2 || sum.Excluded != 1 {
			t.Errorf("summary = %+v, want 3 messages: 2 too large queued, 1 excluded", sum)
		}
		r = runCLI(t, env, "mail", "review", "list")
		if strings.Count(r.stdout, "too large") != 2 {
			t.Errorf("review list = %q, want two messages too large", r.stdout)
		}
		if got := exclusionsJSON(t, env); got["big-shop.com"] != nil || got["small-shop.com"] == nil {
			t.Errorf("exclusions = %v, want small-shop.com only", got)
		}
	})
}

// TestExitCodes: bad input is exit 2, not a wrong answer or exit 1.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"robots test not a url", []string{"robots", "test", "--robots", robots, "not a url"}, 2, "not an http(s) URL"},
		{"robots test empty", []string{"robots", "test", "--robots", robots, ""}, 2, "not an http(s) URL"},
		{"robots test ftp", []string{"robots", "test", "--robots", robots, "ftp://example.com/x"}, 2, "not an http(s) URL"},
		{"robots test path", []string{"robots", "test", "--robots", robots, "/x"}, 0, ""},
		{"robots test URL", []string{"robots", "test", "--robots", robots, "https://example.com/private/x"}, 1, ""},
		{"unparsable PostgreSQL DSN", []string{"--db", "postgres://u@h:99999999/x", "exclude", "list"}, 2, "does not parse"},
		{"unreachable PostgreSQL", []string{"--db", "postgres://u@127.0.0.1:1/x?connect_timeout=2", "exclude", "list"}, 1, ""},
		{"audit --since overflow", []string{"audit", "--since", "99999999999d"}, 2, "--since"},
		{"report -o a folder", []string{"report", "example.com", "-o", dir}, 2, "is a folder"},
		{"bad port", []string{"exclude", "add", "example.com:99999"}, 2, `bad port "99999"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, env, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("lohibot %q: exit %d, stderr %q; want %d and %q", tt.args, r.code, r.stderr, tt.code, tt.wantErr)
			}
			if strings.Contains(r.stderr, "scheme") {
				t.Errorf("lohibot %q: stderr %q talks of a scheme", tt.args, r.stderr)
			}
		})
	}
}

// TestUnverifiedExclusionKeepsPages: a stranger's emailed exclusion stops
// the site and hides it from search at once, but keeps its pages: staff
// re-including it get the site back searchable; staff confirming it
// ('mail review exclude') purge them; exclude list shows until when they
// are kept.
func TestUnverifiedExclusionKeepsPages(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		writePages(t, dsn, 2) // example.com, titled "Bakery N"
		dir := t.TempDir()
		stranger := writeMail(t, dir, "stranger",
			"From: Someone <someone@elsewhere.example>\nTo: message@lohisoft.com\nSubject: stop\nMessage-ID: <s1@elsewhere.example>\n",
			"Please stop crawling example.com and remove it from your index.\n")
		searchHits := func() int {
			r := runCLI(t, env, "search", "bakery", "--json")
			return strings.Count(r.stdout, `"url"`)
		}
		if r := runCLI(t, env, "mail", "import", stranger); r.code != 0 || !strings.Contains(r.stdout, "excluded example.com") {
			t.Fatalf("mail import: exit %d, %s%s", r.code, r.stdout, r.stderr)
		}
		ex := exclusionsJSON(t, env)["example.com"]
		if ex == nil || ex["verified"] != false || ex["purge_after"] == nil {
			t.Fatalf("exclusion = %v; want unverified, with purge_after", ex)
		}
		if r := runCLI(t, env, "exclude", "check", "example.com"); r.code != 1 {
			t.Errorf("exclude check after an unverified exclusion: exit %d, want 1 (excluded at once)", r.code)
		}
		if n := searchHits(); n != 0 {
			t.Errorf("search finds %d pages of an excluded site, want 0", n)
		}
		if r := runCLI(t, env, "report", "example.com"); !strings.Contains(r.stdout, "unverified: pages kept, hidden from search, until") {
			t.Errorf("report does not say the pages are kept:\n%s", r.stdout)
		}
		// A mistake: staff re-include it, and it is all there again.
		if r := runCLI(t, env, "exclude", "remove", "example.com", "--by", "anna"); r.code != 0 {
			t.Fatalf("exclude remove: exit %d %s", r.code, r.stderr)
		}
		if n := searchHits(); n != 2 {
			t.Errorf("after re-inclusion search finds %d pages, want the 2 kept", n)
		}
		// Again, and staff confirm it from the review: purged.
		stranger2 := writeMail(t, dir, "stranger2",
			"From: Someone <someone@elsewhere.example>\nTo: message@lohisoft.com\nSubject: stop\nMessage-ID: <s2@elsewhere.example>\n",
			"Please stop crawling example.com and remove it from your index.\n")
		r := runCLI(t, env, "mail", "import", "--json", stranger2)
		var line struct{ ID int64 }
		if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &line); err != nil || line.ID == 0 {
			t.Fatalf("mail import: %q %v", r.stdout, err)
		}
		if r := runCLI(t, env, "mail", "review", "exclude", itoa(line.ID), "--by", "anna"); r.code != 0 {
			t.Fatalf("mail review exclude: exit %d %s", r.code, r.stderr)
		}
		ex = exclusionsJSON(t, env)["example.com"]
		if ex == nil || ex["verified"] != true || ex["purge_after"] != nil {
			t.Errorf("after staff confirmation = %v; want verified, nothing kept", ex)
		}
		if r := runCLI(t, env, "exclude", "remove", "example.com", "--by", "anna"); r.code != 0 {
			t.Fatalf("exclude remove: exit %d", r.code)
		}
		if n := searchHits(); n != 0 {
			t.Errorf("after a confirmed exclusion and re-inclusion search finds %d pages, want 0 (purged)", n)
		}
	})
}
