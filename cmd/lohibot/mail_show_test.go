package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// quotedWithAttachment is a reply with a quoted earlier message and a PDF.
const quotedWithAttachment = "Return-Path: <web@quoted-example.com>\r\n" +
	"From: Web Master <web@quoted-example.com>\r\n" +
	"To: message@lohisoft.com\r\n" +
	"Date: Tue, 03 Mar 2026 10:00:00 +0100\r\n" +
	"Subject: Re: your crawler\r\n" +
	"Message-ID: <quoted.1@quoted-example.com>\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=\"b1\"\r\n" +
	"\r\n" +
	"--b1\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"\r\n" +
	"Please stop crawling quoted-example.com and remove it from your list.\r\n" +
	"\r\n" +
	"On Mon, 2 Mar 2026 at 09:00, LohiSoft <message@lohisoft.com> wrote:\r\n" +
	"> We noticed our crawler visited you.\r\n" +
	"> Reply to this message if you have questions.\r\n" +
	"--b1\r\n" +
	"Content-Type: application/pdf; name=\"letter.pdf\"\r\n" +
	"Content-Disposition: attachment; filename=\"letter.pdf\"\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"JVBERi0xLjQK\r\n" +
	"--b1--\r\n"

func TestMailShowAndCorrect(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		me := currentUser(os.Getenv) // the default --by
		// A folder of .eml files, as saved from a mail client (no cur/ or new/).
		dir := filepath.Join(t.TempDir(), "saved")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"other.eml", "auto.eml"} {
			raw, err := os.ReadFile(mailTestdata(f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, f), raw, 0o644)
		}
		os.WriteFile(filepath.Join(dir, "quoted.eml"), []byte(quotedWithAttachment), 0o644)

		r := runCLI(t, env, "mail", "import", dir)
		if r.code != 0 {
			t.Fatalf("mail import FOLDER: exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{"excluded quoted-example.com", "queued for review: needs a human reader",
			"ignored: automatic mail", "3 messages"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("mail import FOLDER stdout lacks %q:\n%s", want, r.stdout)
			}
		}
		r = runCLI(t, env, "mail", "import", "--json", dir)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 4 {
			t.Fatalf("mail import --json again: %d lines, want 3 and a summary:\n%s", len(lines), r.stdout)
		}
		ids := map[string]int64{}
		for _, l := range lines[:3] {
			var m struct {
				ID        int64  `json:"id"`
				Outcome   string `json:"outcome"`
				Duplicate bool   `json:"duplicate"`
				Source    string `json:"source"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatal(err)
			}
			if !m.Duplicate || m.Outcome != "duplicate" || m.ID == 0 {
				t.Errorf("second import line %s: want a duplicate with the stored id", l)
			}
			ids[filepath.Base(m.Source)] = m.ID
		}
		quoted := ids["quoted.eml"]

		// show: text form.
		r = runCLI(t, env, "mail", "show", itoa(quoted))
		if r.code != 0 {
			t.Fatalf("mail show: exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{"From:        Web Master <web@quoted-example.com>", "Subject:     Re: your crawler",
			"Message-ID:  <quoted.1@quoted-example.com>", "Classified:  exclude", "because ",
			"exclude quoted-example.com by web@quoted-example.com (mail)",
			"  Please stop crawling quoted-example.com", "Quoted and signature (not read as the request):",
			"  | > We noticed our crawler visited you.", "letter.pdf (application/pdf, 9 bytes)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("mail show lacks %q:\n%s", want, r.stdout)
			}
		}
		// Times as every other command prints them: 2026-12-02 13:03:10 UTC.
		if !regexp.MustCompile(`Received: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC from `).MatchString(r.stdout) ||
			regexp.MustCompile(`\d\dT\d\d:\d\d:\d\d`).MatchString(r.stdout) {
			t.Errorf("mail show prints times unlike every other command:\n%s", r.stdout)
		}
		newText := r.stdout[strings.Index(r.stdout, "New text"):strings.Index(r.stdout, "Quoted and signature")]
		if strings.Contains(newText, "We noticed") {
			t.Errorf("the quote is shown as new text:\n%s", newText)
		}
		// --raw: the bytes exactly.
		r = runCLI(t, env, "mail", "show", itoa(quoted), "--raw")
		if r.code != 0 || r.stdout != quotedWithAttachment {
			t.Errorf("mail show --raw: exit %d, %d bytes; want the %d stored bytes", r.code, len(r.stdout), len(quotedWithAttachment))
		}
		// --json.
		r = runCLI(t, env, "mail", "show", itoa(quoted), "--json")
		var js struct {
			Intent  string   `json:"intent"`
			Reasons []string `json:"reasons"`
			Message struct {
				NewText     string `json:"new_text"`
				Quoted      string `json:"quoted"`
				Attachments []struct {
					Name string `json:"name"`
				} `json:"attachments"`
			} `json:"message"`
			Events []struct {
				Kind string `json:"kind"`
				Site string `json:"site"`
			} `json:"events"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
			t.Fatalf("mail show --json %q: %v", r.stdout, err)
		}
		if js.Intent != "exclude" || len(js.Reasons) == 0 || !strings.Contains(js.Message.Quoted, "We noticed") ||
			strings.Contains(js.Message.NewText, "We noticed") || len(js.Message.Attachments) != 1 ||
			len(js.Events) != 1 || js.Events[0].Site != "quoted-example.com" {
			t.Errorf("mail show --json = %s", r.stdout)
		}
		for _, c := range []struct {
			arg  string
			code int
		}{{"999999", 1}, {"x", 2}, {"0", 2}} {
			if r := runCLI(t, env, "mail", "show", c.arg); r.code != c.code || r.stderr == "" {
				t.Errorf("mail show %s: exit %d (stderr %q), want %d with a message", c.arg, r.code, r.stderr, c.code)
			}
		}

		// review list shows the first lines of the new text.
		r = runCLI(t, env, "mail", "review", "list")
		if !strings.Contains(r.stdout, "│ what kind of search engine are you building? Which pages of") {
			t.Errorf("mail review list lacks the first lines of text:\n%s", r.stdout)
		}

		// Corrections.
		steps := []struct {
			args     []string
			code     int
			contains string
		}{
			// The exclusion was a mistake: undo it with the message as evidence.
			{[]string{"mail", "review", "reinclude", itoa(quoted)}, 2, ""}, // --by required
			{[]string{"mail", "review", "reinclude", itoa(quoted), "--by", "anna"}, 0, "re-included quoted-example.com by anna"},
			{[]string{"exclude", "check", "quoted-example.com"}, 0, ""},
			// And the other way round: a message read as a question was an exclusion.
			{[]string{"mail", "review", "exclude", itoa(ids["other.eml"])}, 0, "excluded library-example.org by " + me},
			{[]string{"exclude", "check", "library-example.org"}, 1, "by " + me},
			{[]string{"mail", "review", "exclude", itoa(ids["auto.eml"]), "--site", "extra-example.com", "--by", "bob"}, 0, "excluded extra-example.com by bob"},
			{[]string{"mail", "review", "dismiss", itoa(ids["auto.eml"])}, 1, ""}, // never queued
			{[]string{"mail", "review", "exclude", "424242"}, 2, ""},
		}
		for _, s := range steps {
			r := runCLI(t, env, s.args...)
			if r.code != s.code || !strings.Contains(r.stdout, s.contains) {
				t.Errorf("lohibot %s: exit %d stdout %q stderr %q; want exit %d and %q", strings.Join(s.args, " "), r.code, r.stdout, r.stderr, s.code, s.contains)
			}
		}
		r = runCLI(t, env, "mail", "show", itoa(quoted))
		if !strings.Contains(r.stdout, "reinclude quoted-example.com by anna (review)") {
			t.Errorf("mail show after the correction lacks the re-inclusion:\n%s", r.stdout)
		}
		r = runCLI(t, env, "mail", "show", itoa(ids["other.eml"]))
		if !strings.Contains(r.stdout, "Review:      approved by "+me) {
			t.Errorf("mail show of the corrected message:\n%s", r.stdout)
		}
	})
}

func TestMailReviewDismissRecorded(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		if r := runCLI(t, env, "mail", "import", mailTestdata("other.eml")); r.code != 0 {
			t.Fatalf("import: %d %s", r.code, r.stderr)
		}
		if r := runCLI(t, env, "mail", "review", "dismiss", "1", "--by", "carla"); r.code != 0 {
			t.Fatalf("dismiss: %d %s", r.code, r.stderr)
		}
		r := runCLI(t, env, "mail", "show", "1", "--json")
		if !bytes.Contains([]byte(r.stdout), []byte(`"kind":"mail-dismiss","site":"library-example.org","actor":"carla","source":"review"`)) {
			t.Errorf("dismiss is not in the policy log: %s", r.stdout)
		}
	})
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
