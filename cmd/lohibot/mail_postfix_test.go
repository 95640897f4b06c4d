package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"

	"github.com/lohisoft/lohibot/internal/dbtest"
	"github.com/lohisoft/lohibot/internal/postfixtest"
	"github.com/lohisoft/lohibot/internal/testutil"
)

// TestAcknowledgementsThroughPostfix sends the replies of mail import
// through a real Postfix and reads what it delivered: an acknowledgement in
// Italian and one in Hungarian, the "received" reply to an unclear message,
// and nothing for a vacation reply or a bounce.
func TestAcknowledgementsThroughPostfix(t *testing.T) {
	pf := postfixtest.Start(t)
	dsn := dbtest.DSN(t, "sqlite")
	env := []string{"LOHIBOT_DB=" + dsn}
	dir := filepath.Join("..", "..", "testdata", "mailbot", "ack")
	start := time.Now()
	r := runCLI(t, env, "mail", "import", dir, "--authserv-id", "mx1.lohisoft.com", "--smtp", "smtp://"+pf.Addr, "--insecure", "--from", "message@lohisoft.com")
	if r.code != 0 {
		t.Fatalf("mail import --smtp: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "3 replies sent, 0 waiting") {
		t.Errorf("mail import --smtp:\n%s", r.stdout)
	}
	pf.WaitDelivered(t, 3, 10*time.Second)
	// Nothing more arrives: every message Postfix accepted is delivered.
	testutil.Eventually(t, 10*time.Second, "Postfix's queue to empty", func() bool { return pf.QueueEmpty(t) })
	got := pf.Delivered(t)
	if len(got) != 3 {
		t.Fatalf("Postfix delivered %d replies, want 3", len(got))
	}
	t.Logf("3 replies sent and delivered in %s", time.Since(start).Round(time.Millisecond))

	type reply struct {
		h    mail.Header
		text string
	}
	byTo := map[string]reply{}
	for _, raw := range got {
		mr, err := mail.CreateReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("delivered reply does not parse: %v\n%s", err, raw)
		}
		p, err := mr.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p.Body)
		to, _ := mr.Header.AddressList("To")
		if len(to) != 1 {
			t.Fatalf("reply To = %v", to)
		}
		byTo[to[0].Address] = reply{mr.Header, string(b)}
	}
	cases := []struct {
		to, inReplyTo, lang string
		words               []string
	}{
		{"m.rossi@forno-rossi-example.it", "<it-exclude.1@forno-rossi-example.it>", "it",
			[]string{"Buongiorno", "forno-rossi-example.it", "robots.txt", "risponda a questo", "> vi chiedo di non scansionare"}},
		{"info@pekseg-example.hu", "<hu-exclude.1@pekseg-example.hu>", "hu",
			[]string{"Jó napot kívánunk!", "pekseg-example.hu", "robots.txt", "válaszoljon erre a", "> Kérjük, hogy a pekseg-example.hu"}},
		{"curious@library-example.org", "<unclear.1@library-example.org>", "en",
			[]string{"A person at LohiSoft will read it", "> what kind of search engine"}},
	}
	for _, c := range cases {
		rep, ok := byTo[c.to]
		if !ok {
			t.Errorf("no reply to %s (got %v)", c.to, keys(byTo))
			continue
		}
		if v := rep.h.Get("Auto-Submitted"); v != "auto-replied" {
			t.Errorf("reply to %s: Auto-Submitted = %q", c.to, v)
		}
		if v := rep.h.Get("In-Reply-To"); v != c.inReplyTo {
			t.Errorf("reply to %s: In-Reply-To = %q, want %q", c.to, v, c.inReplyTo)
		}
		if v := rep.h.Get("References"); !strings.Contains(v, c.inReplyTo) {
			t.Errorf("reply to %s: References = %q", c.to, v)
		}
		if v := rep.h.Get("Content-Language"); v != c.lang {
			t.Errorf("reply to %s: Content-Language = %q, want %q", c.to, v, c.lang)
		}
		if from, _ := rep.h.AddressList("From"); len(from) != 1 || from[0].Address != "message@lohisoft.com" {
			t.Errorf("reply to %s: From = %v", c.to, from)
		}
		text := strings.ReplaceAll(rep.text, "\r\n", "\n")
		for _, w := range c.words {
			if !strings.Contains(text, w) {
				t.Errorf("reply to %s lacks %q:\n%s", c.to, w, text)
			}
		}
	}
	for _, never := range []string{"holiday@travel-example.com", "mailer-daemon@mx.bakery-example.com"} {
		if _, ok := byTo[never]; ok {
			t.Errorf("a reply went to %s", never)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
