package main

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-msgauth/dkim"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/postfixtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
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

// TestAuthenticationResultsThroughPostfix delivers exclusion requests
// through a real receiving MX, Postfix with an OpenDKIM milter, and imports
// what it delivered with its authserv-id: the genuine, DKIM-signed request
// is verified wherever this set-up writes its Authentication-Results (it
// logs where: Debian 12's Postfix 3.7 and OpenDKIM 2.11 put it above
// Postfix's own Received); a request carrying a forged header with our id
// (which OpenDKIM removes), and one signed by another domain than From's,
// are not.
func TestAuthenticationResultsThroughPostfix(t *testing.T) {
	if os.Getenv("LOHIBOT_TEST_POSTFIX") == "1" {
		if _, err := exec.LookPath("opendkim"); err != nil {
			t.Fatalf("LOHIBOT_TEST_POSTFIX=1 needs opendkim (apt install opendkim): %v", err)
		}
	}
	keys := map[string]*rsa.PrivateKey{}
	records := map[string]string{}
	for _, d := range []string{"genuine-example.com", "attacker-example.com"} {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		keys[d] = k
		records["s1._domainkey."+d] = "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der)
	}
	pf := postfixtest.StartWith(t, &postfixtest.Options{DKIMKeys: records})

	message := func(from, site, id, top string) []byte {
		return []byte(top + "From: Webmaster <" + from + ">\r\nTo: message@lohisoft.com\r\nSubject: Please stop crawling " + site +
			"\r\nMessage-ID: <" + id + ">\r\nDate: " + time.Now().Format(time.RFC1123Z) + "\r\n\r\n" +
			"Hello,\r\nplease stop crawling our website " + site + " and remove it from your index.\r\nThank you\r\n")
	}
	sign := func(raw []byte, domain string) []byte {
		var b bytes.Buffer
		err := dkim.Sign(&b, bytes.NewReader(raw), &dkim.SignOptions{Domain: domain, Selector: "s1", Signer: keys[domain],
			HeaderKeys: []string{"From", "To", "Subject", "Message-ID", "Date"}})
		if err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	send := func(from string, raw []byte) {
		if err := smtp.SendMail(pf.Addr, nil, from, []string{"message@lohisoft.com"}, raw); err != nil {
			t.Fatalf("submit to Postfix: %v\n%s", err, pf.Log())
		}
	}
	send("web@genuine-example.com", sign(message("web@genuine-example.com", "genuine-example.com", "genuine@genuine-example.com", ""), "genuine-example.com"))
	send("web@victim-example.com", message("web@victim-example.com", "victim-example.com", "forged@attacker-example.com",
		"Authentication-Results: "+postfixtest.Hostname+"; dkim=pass header.d=victim-example.com; spf=pass smtp.mailfrom=web@victim-example.com\r\n"))
	send("web@attacker-example.com", sign(message("web@other-victim-example.com", "other-victim-example.com", "unaligned@attacker-example.com", ""), "attacker-example.com"))
	got := pf.WaitDelivered(t, 3, 20*time.Second)

	dir := t.TempDir()
	for i, raw := range got {
		if err := os.MkdirAll(filepath.Join(dir, "cur"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cur", fmt.Sprintf("%d.eml", i)), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("genuine@genuine-example.com")) {
			head, _, _ := bytes.Cut(raw, []byte("\n\n"))
			received := bytes.Index(head, []byte("\nReceived: from"))
			ar := bytes.Index(head, []byte("\nAuthentication-Results: "+postfixtest.Hostname))
			t.Logf("the genuine message as delivered:\n%s", head)
			if received < 0 || ar < 0 {
				t.Errorf("no Received (%d) or no Authentication-Results of ours (%d) in the delivered header", received, ar)
			} else {
				t.Logf("OpenDKIM's Authentication-Results stands %s Postfix's own Received", map[bool]string{true: "above", false: "below"}[ar < received])
			}
		}
		if bytes.Contains(raw, []byte("forged@attacker-example.com")) && bytes.Contains(raw, []byte("dkim=pass header.d=victim-example.com")) {
			// RFC 8601 5: OpenDKIM removes incoming headers with its
			// AuthservID by default (RemoveARFrom).
			t.Errorf("the forged header with our id was delivered as is")
		}
	}
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	if r := runCLI(t, env, "mail", "import", "--authserv-id", postfixtest.Hostname, dir); r.code != 0 {
		t.Fatalf("mail import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ex := exclusionsJSON(t, env)
	for site, want := range map[string]bool{"genuine-example.com": true, "victim-example.com": false, "other-victim-example.com": false} {
		if ex[site] == nil {
			t.Errorf("%s not excluded", site)
			continue
		}
		if ex[site]["verified"] != want {
			t.Errorf("%s: verified = %v, want %v", site, ex[site]["verified"], want)
		}
	}
}
