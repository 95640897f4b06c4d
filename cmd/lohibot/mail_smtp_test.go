package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/smtptest"
)

func TestMailImportSMTPUsage(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("secret\n"), 0o600)
	msg := mailTestdata("exclude-one.eml")
	cases := []struct {
		name string
		env  []string
		args []string
	}{
		{"password in URL", nil, []string{"--smtp", "smtp://bot:pw@127.0.0.1:2525"}},
		{"bad scheme", nil, []string{"--smtp", "http://bot@127.0.0.1:2525"}},
		{"no password", nil, []string{"--smtp", "smtp://bot@127.0.0.1:2525"}},
		{"missing password file", nil, []string{"--smtp", "smtp://bot@127.0.0.1:2525", "--smtp-password-file", pw + ".missing"}},
		{"insecure off loopback", []string{"LOHIBOT_SMTP_PASSWORD=x"}, []string{"--smtp", "smtp://bot@smtp.example.com:587", "--insecure"}},
		{"bad from", []string{"LOHIBOT_SMTP_PASSWORD=x"}, []string{"--smtp", "smtp://bot@127.0.0.1:2525", "--from", "not an address"}},
		{"password file without smtp", nil, []string{"--smtp-password-file", pw}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := append([]string{"LOHIBOT_DB=" + dsn}, c.env...)
			r := runCLI(t, env, append([]string{"mail", "import", msg}, c.args...)...)
			if r.code != 2 || r.stderr == "" {
				t.Errorf("exit %d, stderr %q; want 2 with a message", r.code, r.stderr)
			}
			if strings.Contains(r.stderr, "secret") {
				t.Errorf("stderr shows the password: %q", r.stderr)
			}
		})
	}
	// Nothing was imported by the refused runs.
	r := runCLI(t, []string{"LOHIBOT_DB=" + dsn}, "exclude", "check", "bakery-example.com")
	if r.code != 0 {
		t.Errorf("exclude check after refused imports: exit %d, want 0 (not excluded)", r.code)
	}
}

func TestMailImportAcknowledges(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		srv := smtptest.New(t, "bot@lohisoft.com", "secret")
		pw := filepath.Join(t.TempDir(), "pw")
		os.WriteFile(pw, []byte("secret\n"), 0o600)
		env := []string{"LOHIBOT_DB=" + dsn}
		smtpArgs := []string{"--authserv-id", "mx1.lohisoft.com", "--smtp", "smtp://bot%40lohisoft.com@" + srv.Addr, "--smtp-password-file", pw, "--insecure",
			"--from", "abuse@lohisoft.example"}
		r := runCLI(t, env, append([]string{"mail", "import", mailTestdata("exclude-one.eml"), mailTestdata("other.eml"),
			mailTestdata("auto.eml")}, smtpArgs...)...)
		if r.code != 0 {
			t.Fatalf("mail import --smtp: exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{"excluded bakery-example.com; reply ", "queued for review: needs a human reader; reply ",
			"ignored: automatic mail", "2 replies sent, 0 waiting"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("mail import --smtp stdout lacks %q:\n%s", want, r.stdout)
			}
		}
		msgs := srv.Messages()
		if len(msgs) != 2 {
			t.Fatalf("server got %d messages, want an ack and a received reply", len(msgs))
		}
		for _, m := range msgs {
			if m.From != "abuse@lohisoft.example" || !strings.Contains(string(m.Data), "Auto-Submitted: auto-replied") {
				t.Errorf("reply from %q:\n%s", m.From, m.Data)
			}
		}
		r = runCLI(t, env, "mail", "import", "--json", mailTestdata("exclude-one.eml"))
		var dup struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &dup); err != nil || dup.ID == 0 {
			t.Fatalf("import again: %q %v", r.stdout, err)
		}
		if len(srv.Messages()) != 2 {
			t.Errorf("a duplicate was answered again")
		}
		r = runCLI(t, env, "mail", "show", itoa(dup.ID))
		if !strings.Contains(r.stdout, "reply (ack, en) to webmaster@bakery-example.com") || !strings.Contains(r.stdout, ": sent") {
			t.Errorf("mail show lacks the reply:\n%s", r.stdout)
		}
		// The site's report lists the acknowledgement.
		r = runCLI(t, env, "report", "bakery-example.com")
		if r.code != 0 || !strings.Contains(r.stdout, "Replies sent to the webmaster") ||
			!strings.Contains(r.stdout, "acknowledgement of the exclusion (en) · webmaster@bakery-example.com · sent") {
			t.Errorf("report: exit %d\n%s", r.code, r.stdout)
		}
		r = runCLI(t, env, "report", "bakery-example.com", "--format", "json")
		if !strings.Contains(r.stdout, `"replies":[{"mail_id":`) || !strings.Contains(r.stdout, `"kind":"ack"`) {
			t.Errorf("report --format json lacks the replies: %s", r.stdout)
		}
		r = runCLI(t, env, "report", "library-example.org", "--lang", "it")
		if !strings.Contains(r.stdout, "ricevuta: la leggerà una persona") {
			t.Errorf("report --lang it lacks the receipt:\n%s", r.stdout)
		}
		// Without --smtp nothing is sent, and nothing else changes.
		r = runCLI(t, env, "mail", "import", mailTestdata("exclude-two.eml"))
		if r.code != 0 || strings.Contains(r.stdout, "reply") || len(srv.Messages()) != 2 {
			t.Errorf("import without --smtp: exit %d, stdout %q, %d messages sent", r.code, r.stdout, len(srv.Messages()))
		}
	})
}

// TestMailImportNoBackscatter: with our server's Authentication-Results
// and --authserv-id, forged senders get no reply (their exclusions still
// apply), one authenticated sender's burst of five sites gets three, and no
// reply header carries a bare CR from the received Message-ID; mail show
// tells staff which replies were withheld and why.
func TestMailImportNoBackscatter(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		srv := smtptest.New(t, "bot@lohisoft.com", "secret")
		pw := filepath.Join(t.TempDir(), "pw")
		os.WriteFile(pw, []byte("secret\n"), 0o600)
		dir := t.TempDir()
		msg := func(name, from, ar, msgID, site string) {
			raw := "Return-Path: <" + from + ">\r\n" +
				"Received: from mail.example (mail.example [203.0.113.5]) by mx1.lohisoft.com (Postfix) with ESMTPS id 4F; Tue, 10 Mar 2026 09:00:01 +0000\r\n" +
				"Authentication-Results: mx1.lohisoft.com; " + ar + "\r\n" +
				"From: Webmaster <" + from + ">\r\nTo: message@lohisoft.com\r\nSubject: Please stop crawling " + site + "\r\n" +
				"Message-ID: " + msgID + "\r\nDate: Tue, 10 Mar 2026 10:00:00 +0100\r\n\r\n" +
				"Hello,\r\nplease stop crawling our website " + site + " and remove it from your index.\r\nThank you\r\n"
			if err := os.WriteFile(filepath.Join(dir, name), []byte(raw), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5 {
			site := fmt.Sprintf("shop%d-example.com", i)
			msg(fmt.Sprintf("a%d.eml", i), "victim@victim-example.com", "dkim=fail header.d=victim-example.com; spf=fail smtp.mailfrom=victim@victim-example.com",
				fmt.Sprintf("<forged%d@attacker.example>", i), site)
			msg(fmt.Sprintf("b%d.eml", i), "web@genuine-example.com", "dkim=pass header.d=genuine-example.com; spf=pass smtp.mailfrom=web@genuine-example.com",
				fmt.Sprintf("<genuine%d@genuine-example.com>", i), fmt.Sprintf("genuine%d-example.com", i))
		}
		msg("c.eml", "cr@cr-example.com", "dkim=pass header.d=cr-example.com", "<cr@cr-example.com>\rX-Injected: yes", "cr-example.com")
		env := []string{"LOHIBOT_DB=" + dsn}
		r := runCLI(t, env, "mail", "import", dir, "--authserv-id", "mx1.lohisoft.com", "--smtp", "smtp://bot%40lohisoft.com@"+srv.Addr,
			"--smtp-password-file", pw, "--insecure")
		if r.code != 0 {
			t.Fatalf("mail import: exit %d: %s", r.code, r.stderr)
		}
		if n := strings.Count(r.stdout, "\texcluded "); n != 11 {
			t.Errorf("%d messages excluded, want all 11 (a reply withheld changes nothing else):\n%s", n, r.stdout)
		}
		to := map[string]int{}
		for _, m := range srv.Messages() {
			to[strings.Join(m.To, ",")]++
			head, _, _ := strings.Cut(string(m.Data), "\r\n\r\n")
			for _, line := range strings.Split(head, "\r\n") {
				if strings.ContainsAny(line, "\r\n") || strings.HasPrefix(line, "X-Injected") {
					t.Errorf("reply header line %q", line)
				}
			}
		}
		if want := map[string]int{"web@genuine-example.com": 3, "cr@cr-example.com": 1}; !maps.Equal(to, want) {
			t.Errorf("replies by recipient = %v, want %v", to, want)
		}
		if !strings.Contains(r.stdout, "no reply: sender not authenticated") || !strings.Contains(r.stdout, "no reply: this address had its replies") {
			t.Errorf("import lines do not say why replies were withheld:\n%s", r.stdout)
		}
		r = runCLI(t, env, "mail", "show", "1")
		if !strings.Contains(r.stdout, "skipped, not sent: sender not authenticated") {
			t.Errorf("mail show of a forged message does not show the withheld reply:\n%s", r.stdout)
		}
	})
}

// TestURLPasswordsRedacted: a password written into an --imap or --smtp
// URL is refused without being shown, even when it holds a "/" or a blank
// (which a URL parser takes for the start of a path or a bad host).
func TestURLPasswordsRedacted(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	env := []string{"LOHIBOT_DB=" + dsn, "LOHIBOT_SMTP_PASSWORD=x", "LOHIBOT_IMAP_PASSWORD=x"}
	for _, pw := range []string{"Sl9q/Ash9q", "Bl9q Ank9q", "Bo9q/Th9q Xy9q@Zz9q"} {
		for _, args := range [][]string{
			{"mail", "watch", "--once", "--imap", "imaps://bot:" + pw + "@mail.example/INBOX"},
			{"mail", "import", mailTestdata("exclude-one.eml"), "--smtp", "smtp://bot:" + pw + "@127.0.0.1:2525"},
		} {
			r := runCLI(t, env, args...)
			if r.code != 2 || r.stderr == "" {
				t.Errorf("%s with a password in the URL: exit %d, stderr %q; want 2", args[1], r.code, r.stderr)
			}
			for _, part := range strings.FieldsFunc(pw, func(r rune) bool { return r == '/' || r == ' ' || r == '@' }) {
				if strings.Contains(r.stderr, part) {
					t.Errorf("%s: stderr shows part of the password (%q): %q", args[1], part, r.stderr)
				}
			}
		}
	}
}
