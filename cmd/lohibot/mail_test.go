package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/dovecottest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/mailbot"
)

// The test messages of testdata/mailbot, with what the classifier says.
var mailTestFiles = []struct {
	file    string
	intent  string
	domains []string // asserted for exclude and reinclude only
	action  string   // what mail import would do
}{
	{"exclude-one.eml", "exclude", []string{"bakery-example.com"}, "apply"},
	{"exclude-two.eml", "exclude", []string{"garden-example.org", "toys-example.co.uk"}, "apply"},
	{"exclude-nosite.eml", "exclude", []string{}, "review"},
	{"reinclude.eml", "reinclude", []string{"bakery-example.com"}, "review"},
	{"other.eml", "other", nil, "review"},
	{"auto.eml", "auto", nil, "ignore"},
	{"no-message-id.eml", "exclude", []string{"oldschool-example.com"}, "apply"},
}

func mailTestdata(name string) string { return filepath.Join("..", "..", "testdata", "mailbot", name) }

// jsonKeys returns the keys of the JSON object line, in their order.
func jsonKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("line %q is not a JSON object: %v", line, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
	}
	return keys
}

func TestMailParse(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "never.db")
	env := []string{"LOHIBOT_DB=" + dbPath}
	var args []string
	for _, f := range mailTestFiles {
		args = append(args, mailTestdata(f.file))
	}
	missing := filepath.Join(t.TempDir(), "missing.eml")
	r := runCLI(t, env, append([]string{"mail", "parse", "--json", missing}, args...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "missing.eml") {
		t.Errorf("mail parse with an unreadable file: exit %d, stderr %q; want 2 naming the file", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(mailTestFiles) {
		t.Fatalf("mail parse --json printed %d lines, want %d:\n%s", len(lines), len(mailTestFiles), r.stdout)
	}
	for i, line := range lines {
		want := mailTestFiles[i]
		keys := jsonKeys(t, line)
		if want := []string{"file", "message_id", "from", "intent", "domains", "reasons", "action"}; !slices.Equal(keys, want) {
			t.Errorf("mail parse --json keys = %v, want %v in that order", keys, want)
		}
		var got mailParseJSON
		json.Unmarshal([]byte(line), &got)
		if got.File != args[i] || got.Intent != want.intent || got.Domains == nil || got.From == "" || got.MessageID == "" || got.Reasons == nil {
			t.Errorf("mail parse %s = %+v, want intent %s, file, from, message id and a domains array", want.file, got, want.intent)
		}
		if want.domains != nil && !slices.Equal(got.Domains, want.domains) {
			t.Errorf("mail parse %s: domains %q, want %q", want.file, got.Domains, want.domains)
		}
		if got.Action != want.action {
			t.Errorf("mail parse %s: action %q, want %q", want.file, got.Action, want.action)
		}
	}
	if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
		t.Errorf("mail parse created the database %s (stat: %v); it must write nothing", dbPath, err)
	}

	r = runCLI(t, env, "mail", "parse", args[0])
	if r.code != 0 || !strings.Contains(r.stdout, "exclude") || !strings.Contains(r.stdout, "bakery-example.com") {
		t.Errorf("mail parse (text): exit %d, stdout %q", r.code, r.stdout)
	}
	if !strings.Contains(r.stdout, "exclude: '") {
		t.Errorf("mail parse (text) = %q, want the reasons (exclude: '…')", r.stdout)
	}
	if r := runCLI(t, env, "mail", "parse"); r.code != 2 {
		t.Errorf("mail parse without files: exit %d, want 2", r.code)
	}
}

// writeTestMbox writes the test messages as an mbox.
func writeTestMbox(t *testing.T, path string, files ...string) {
	t.Helper()
	var b strings.Builder
	for _, f := range files {
		raw, err := os.ReadFile(mailTestdata(f))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("From lohibot-test Mon Mar  2 09:00:00 2026\n")
		b.Write(raw)
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMailImportAndReview(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		dir := t.TempDir()
		mbox := filepath.Join(dir, "in.mbox")
		writeTestMbox(t, mbox, "exclude-one.eml", "exclude-two.eml", "exclude-nosite.eml", "reinclude.eml")
		md := filepath.Join(dir, "Maildir")
		for i, f := range []string{"other.eml", "auto.eml", "no-message-id.eml"} {
			raw, _ := os.ReadFile(mailTestdata(f))
			p := filepath.Join(md, "cur", fmt.Sprintf("17000000%d.x:2,S", i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, raw, 0o644)
		}

		if r := runCLI(t, env, "mail", "import", filepath.Join(dir, "nothing.mbox")); r.code != 2 {
			t.Errorf("mail import of a missing file: exit %d, want 2", r.code)
		}
		r := runCLI(t, env, "mail", "import", "--json", mbox, md)
		if r.code != 0 {
			t.Fatalf("mail import: exit %d: %s", r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 8 {
			t.Fatalf("mail import --json printed %d lines, want 7 messages and a summary:\n%s", len(lines), r.stdout)
		}
		var sum map[string]int
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
			t.Fatalf("mail import --json %q: %v", r.stdout, err)
		}
		want := map[string]int{"messages": 7, "excluded": 3, "queued": 3, "ignored": 1, "failed": 0, "duplicates": 0}
		for k, v := range want {
			if sum[k] != v {
				t.Errorf("mail import --json: %s = %d, want %d (%s)", k, sum[k], v, r.stdout)
			}
		}
		r = runCLI(t, env, "mail", "import", mbox)
		if r.code != 0 || !strings.Contains(r.stdout, "4 already seen") {
			t.Errorf("mail import again: exit %d, stdout %q; want 4 already seen", r.code, r.stdout)
		}
		for _, site := range []string{"bakery-example.com", "garden-example.org", "toys-example.co.uk", "oldschool-example.com"} {
			if r := runCLI(t, env, "exclude", "check", site); r.code != 1 {
				t.Errorf("exclude check %s after import: exit %d, want 1 (excluded)", site, r.code)
			}
		}

		// The review queue.
		r = runCLI(t, env, "mail", "review", "list", "--json")
		ids := map[string]int64{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var it struct {
				ID      int64    `json:"id"`
				Intent  string   `json:"intent"`
				From    string   `json:"from"`
				Subject string   `json:"subject"`
				Reason  string   `json:"reason"`
				Date    string   `json:"date"`
				Domains []string `json:"domains"`
			}
			if err := json.Unmarshal([]byte(line), &it); err != nil {
				t.Fatalf("mail review list --json line %q: %v", line, err)
			}
			if it.ID == 0 || it.From == "" || it.Reason == "" || it.Date == "" || it.Domains == nil {
				t.Errorf("review item %s lacks a field", line)
			}
			ids[it.Intent] = it.ID
		}
		if len(ids) != 3 {
			t.Fatalf("mail review list --json = %q, want exclude, reinclude and other", r.stdout)
		}
		r = runCLI(t, env, "mail", "review")
		if r.code != 0 || !strings.Contains(r.stdout, "SUBJECT") || !strings.Contains(r.stdout, "stop it") {
			t.Errorf("mail review: exit %d, stdout %q", r.code, r.stdout)
		}

		id := func(intent string) string { return fmt.Sprint(ids[intent]) }
		steps := []struct {
			args     []string
			code     int
			contains string
		}{
			{[]string{"mail", "review", "approve", id("reinclude"), "--by", ""}, 2, ""},   // empty --by
			{[]string{"mail", "review", "approve", "999999", "--by", "anna"}, 2, ""},      // no such message
			{[]string{"mail", "review", "approve", "x", "--by", "anna"}, 2, ""},           // not an id
			{[]string{"mail", "review", "approve", id("exclude"), "--by", "anna"}, 2, ""}, // names no site
			{[]string{"mail", "review", "approve", id("exclude"), "--by", "anna", "--site", "co.uk"}, 2, ""},
			{[]string{"mail", "review", "approve", id("exclude"), "--by", "anna", "--site", "annoyed-example.com"}, 0, "excluded annoyed-example.com"},
			{[]string{"exclude", "check", "annoyed-example.com"}, 1, "anna"},
			{[]string{"mail", "review", "approve", id("reinclude")}, 2, ""}, // a re-inclusion needs --by, as reinclude and exclude remove
			{[]string{"mail", "review", "approve", id("reinclude"), "--by", "bob"}, 0, "re-included bakery-example.com"},
			{[]string{"exclude", "check", "bakery-example.com"}, 0, "not excluded"},
			{[]string{"mail", "review", "approve", id("reinclude"), "--by", "bob"}, 1, ""}, // twice
			{[]string{"mail", "review", "dismiss", id("other"), "--by", " "}, 2, ""},
			{[]string{"mail", "review", "dismiss", id("other"), "--by", "carla"}, 0, "dismissed"},
			{[]string{"mail", "review", "bogus"}, 2, ""},
		}
		for _, s := range steps {
			r := runCLI(t, env, s.args...)
			if r.code != s.code || !strings.Contains(r.stdout, s.contains) {
				t.Errorf("lohibot %s: exit %d stdout %q stderr %q; want exit %d and %q", strings.Join(s.args, " "), r.code, r.stdout, r.stderr, s.code, s.contains)
			}
		}
		r = runCLI(t, env, "mail", "review", "list", "--json")
		if strings.TrimSpace(r.stdout) != "" {
			t.Errorf("review list after reviewing = %q, want nothing", r.stdout)
		}
	})
}

func TestMailWatchUsage(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte("secret\n"), 0o600)
	db := "LOHIBOT_DB=" + filepath.Join(t.TempDir(), "l.db")
	cases := []struct {
		name string
		env  []string
		args []string
	}{
		{"no --imap", []string{db}, []string{"mail", "watch", "--password-file", pwFile}},
		{"bad scheme", []string{db}, []string{"mail", "watch", "--imap", "pop3://bot@127.0.0.1/INBOX", "--password-file", pwFile}},
		{"password in URL", []string{db}, []string{"mail", "watch", "--imap", "imaps://bot:secret@127.0.0.1/INBOX"}},
		{"no password", []string{db}, []string{"mail", "watch", "--imap", "imaps://bot@127.0.0.1/INBOX"}},
		{"unreadable password file", []string{db}, []string{"mail", "watch", "--imap", "imaps://bot@127.0.0.1/INBOX", "--password-file", pwFile + ".missing"}},
		{"insecure off loopback", []string{db, "LOHIBOT_IMAP_PASSWORD=x"}, []string{"mail", "watch", "--imap", "imaps://bot@imap.example.com/INBOX", "--insecure"}},
		{"password and token files", []string{db}, []string{"mail", "watch", "--imap", "imaps://bot@127.0.0.1/INBOX", "--password-file", pwFile, "--oauth-token-file", pwFile}},
		{"missing token file", []string{db}, []string{"mail", "watch", "--imap", "imaps://bot@127.0.0.1/INBOX", "--oauth-token-file", pwFile + ".missing"}},
		{"smtp insecure off loopback", []string{db, "LOHIBOT_IMAP_PASSWORD=x", "LOHIBOT_SMTP_PASSWORD=x"}, []string{"mail", "watch", "--imap", "imaps://bot@127.0.0.1/INBOX", "--insecure", "--smtp", "smtp://bot@smtp.example.com:587"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, c.env, c.args...)
			if r.code != 2 || r.stderr == "" {
				t.Errorf("lohibot %s: exit %d, stderr %q; want 2 with a message", strings.Join(c.args, " "), r.code, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, "secret") && c.name != "password in URL" {
				t.Errorf("output shows the password: %q", r.stderr)
			}
		})
	}
}

func TestMailWatchDovecot(t *testing.T) {
	srv := dovecottest.Start(t)
	for _, f := range mailTestFiles {
		raw, err := os.ReadFile(mailTestdata(f.file))
		if err != nil {
			t.Fatal(err)
		}
		srv.Deliver(raw, "")
	}
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte(dovecottest.Password+"\n"), 0o600)
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}

	// Without --insecure, the self-signed certificate is refused.
	r := runCLI(t, env, "mail", "watch", "--imap", srv.URL(true), "--password-file", pwFile, "--once")
	if r.code != 1 || srv.Count("INBOX") != len(mailTestFiles) {
		t.Errorf("mail watch with an unverifiable certificate: exit %d, INBOX %d; want 1 and nothing touched (stderr %q)", r.code, srv.Count("INBOX"), r.stderr)
	}

	r = runCLI(t, env, "mail", "watch", "--imap", srv.URL(true), "--password-file", pwFile, "--insecure", "--once",
		"--processed-folder", "Done", "--review-folder", "Staff", "--json")
	if r.code != 0 {
		t.Fatalf("mail watch --once: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning") {
		t.Errorf("mail watch --insecure printed no warning: %q", r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, dovecottest.Password) {
		t.Errorf("mail watch output shows the password")
	}
	var sum map[string]int
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum["messages"] != 7 || sum["excluded"] != 3 || sum["queued"] != 3 || sum["ignored"] != 1 {
		t.Errorf("mail watch --json summary = %q (%v), want 7 messages: 3 excluded, 3 queued, 1 ignored", r.stdout, err)
	}
	if in, done, staff := srv.Count("INBOX"), srv.Count("Done"), srv.Count("Staff"); in != 0 || done != 4 || staff != 3 {
		t.Errorf("INBOX %d, Done %d, Staff %d; want 0, 4, 3", in, done, staff)
	}
	for _, site := range []string{"bakery-example.com", "garden-example.org", "toys-example.co.uk", "oldschool-example.com"} {
		if r := runCLI(t, env, "exclude", "check", site); r.code != 1 {
			t.Errorf("exclude check %s after mail watch: exit %d, want 1 (excluded)", site, r.code)
		}
	}

	// STARTTLS, password from the environment; a redelivered message is
	// moved without being applied again.
	raw, _ := os.ReadFile(mailTestdata("exclude-one.eml"))
	srv.Deliver(raw, "")
	env = append(env, "LOHIBOT_IMAP_PASSWORD="+dovecottest.Password)
	r = runCLI(t, env, "mail", "watch", "--imap", srv.URL(false), "--insecure", "--once")
	if r.code != 0 || !strings.Contains(r.stdout, "1 already seen") {
		t.Errorf("mail watch over STARTTLS: exit %d, stdout %q, stderr %q; want 1 already seen", r.code, r.stdout, r.stderr)
	}
	if in, done := srv.Count("INBOX"), srv.Count("Processed"); in != 0 || done != 1 {
		t.Errorf("INBOX %d, Processed %d; want 0, 1", in, done)
	}

	// A wrong password fails --once with exit 1.
	r = runCLI(t, []string{env[0], "LOHIBOT_IMAP_PASSWORD=wrong"}, "mail", "watch", "--imap", srv.URL(false), "--insecure", "--once")
	if r.code != 1 {
		t.Errorf("mail watch with a wrong password: exit %d, want 1", r.code)
	}
}

// The corpus delivered to Dovecot and applied by mail watch --once: every
// exclusion request that names sites excludes them, everything that needs
// staff lands in Review, the rest in Processed.
func TestMailWatchDovecotCorpus(t *testing.T) {
	srv := dovecottest.Start(t)
	corpusDir := filepath.Join("..", "..", "testdata", "mail")
	b, err := os.ReadFile(filepath.Join(corpusDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected struct {
		Messages []struct {
			File    string   `json:"file"`
			Intent  string   `json:"intent"`
			Domains []string `json:"domains"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &expected); err != nil {
		t.Fatal(err)
	}
	var wantSites []string
	wantReview := 0
	for _, m := range expected.Messages {
		raw, err := os.ReadFile(filepath.Join(corpusDir, m.File))
		if err != nil {
			t.Fatal(err)
		}
		srv.Deliver(raw, "")
		parsed := mailbot.Parse(raw)
		switch {
		case m.Intent == "exclude" && len(m.Domains) > 0:
			for _, d := range m.Domains {
				if !slices.Contains(wantSites, d) {
					wantSites = append(wantSites, d)
				}
			}
			if parsed.Review != "" {
				wantReview++
			}
		case m.Intent == "auto" && parsed.Review == "":
		default:
			wantReview++
		}
	}
	slices.Sort(wantSites)

	dbPath := dbtest.DSN(t, "sqlite")
	env := []string{"LOHIBOT_DB=" + dbPath, "LOHIBOT_IMAP_PASSWORD=" + dovecottest.Password}
	r := runCLI(t, env, "mail", "watch", "--imap", srv.URL(true), "--insecure", "--once", "--json")
	if r.code != 0 {
		t.Fatalf("mail watch --once: exit %d: %s", r.code, r.stderr)
	}
	n := len(expected.Messages)
	if in, done, review := srv.Count("INBOX"), srv.Count("Processed"), srv.Count("Review"); in != 0 || review != wantReview || done != n-wantReview {
		t.Errorf("INBOX %d, Processed %d, Review %d; want 0, %d, %d", in, done, review, n-wantReview, wantReview)
	}
	r = runCLI(t, env, "exclude", "list", "--json")
	var gotSites []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e exclusionJSON
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("exclude list --json line %q: %v", line, err)
		}
		gotSites = append(gotSites, e.Site)
		if e.Source != "mail" || !strings.Contains(e.Evidence, "@") {
			t.Errorf("exclusion %+v: want source mail and a Message-ID as evidence", e)
		}
	}
	if !slices.Equal(gotSites, wantSites) {
		t.Errorf("excluded sites = %q, want %q", gotSites, wantSites)
	}
}

// mail watch runs in its own process in the background: an exclusion
// delivered to Dovecot is applied at once and seen by another lohibot
// process; Ctrl-C ends the watch with exit 0 and a summary.
func TestMailWatchBackgroundProcess(t *testing.T) {
	srv := dovecottest.Start(t)
	dbPath := dbtest.DSN(t, "sqlite")
	cmd := lohibotProcess(context.Background(), "--db", dbPath, "mail", "watch", "--imap", srv.URL(true), "--insecure")
	cmd.Env = append(cmd.Env, "LOHIBOT_IMAP_PASSWORD="+dovecottest.Password)
	var stdout, stderr testutil.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if !testutil.Within(15*time.Second, func() bool { return strings.Contains(stderr.String(), "imap connected") }) {
		t.Fatalf("mail watch did not connect within 15 s: %s", stderr.String())
	}
	// Connected is enough: mail delivered from here on is found by the
	// search after connecting or announced by IDLE, whichever comes first
	// (Dovecot also announces mail that arrived just before an IDLE).

	raw, _ := os.ReadFile(mailTestdata("exclude-one.eml"))
	start := time.Now()
	srv.Deliver(raw, "")
	for {
		if r := runCLI(t, nil, "--db", dbPath, "exclude", "check", "bakery-example.com"); r.code == 1 {
			break
		}
		if time.Since(start) > 15*time.Second {
			t.Fatalf("bakery-example.com not excluded within 15 s; watch stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("time to exclusion through lohibot mail watch: %v", time.Since(start))
	for srv.Count("Processed") != 1 && time.Since(start) < 15*time.Second {
		time.Sleep(20 * time.Millisecond)
	}

	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("mail watch after Ctrl-C: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mail watch did not stop after Ctrl-C")
	}
	if !strings.Contains(stdout.String(), "processed 1 message: 1 excluded") {
		t.Errorf("mail watch summary = %q, want 1 message, 1 excluded", stdout.String())
	}
	if in, done := srv.Count("INBOX"), srv.Count("Processed"); in != 0 || done != 1 {
		t.Errorf("INBOX %d, Processed %d; want 0, 1", in, done)
	}
}
