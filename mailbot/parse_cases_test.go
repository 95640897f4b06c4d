package mailbot_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lohisoft/lohibot/mailbot"
)

// rawMail builds a raw message from header lines and a body.
func rawMail(header, body string) []byte {
	return []byte(strings.TrimLeft(header, "\n") + "\n" + body)
}

const plainHeader = `From: Web Master <webmaster@example-shop.de>
To: message@lohisoft.com
Subject: %s
Message-ID: <case@example-shop.de>
Date: Tue, 10 Mar 2026 10:00:00 +0100
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8
`

func plain(subject, body string) []byte {
	return rawMail(fmt.Sprintf(plainHeader, subject), body)
}

func TestParseSites(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		body    string
		want    []string
	}{
		{"url with www, port and path", "x", "Please remove https://WWW.Shop.Example-Store.co.uk:8443/x?y=1 from your list.", []string{"example-store.co.uk"}},
		{"trailing dot", "x", "Please remove example-store.com. Thanks", []string{"example-store.com"}},
		{"idn to punycode", "x", "Bitte bücher-müller.de entfernen.", []string{"xn--bcher-mller-thbg.de"}},
		{"private suffix kept", "x", "remove alice-knits.github.io please", []string{"alice-knits.github.io"}},
		{"bracket dot", "x", "remove example-store[.]com please", []string{"example-store.com"}},
		{"bracket word dot", "x", "remove example-store[dot]com please", []string{"example-store.com"}},
		{"paren dot with spaces", "x", "remove example-store (.) org please", []string{"example-store.org"}},
		{"bare dot words", "x", "remove example-store dot com please", []string{"example-store.com"}},
		{"common word before dot stays", "x", "the dot com era is over", []string{}},
		{"e-mail address does not count", "x", "write to owner@private-example.com or see public-example.com", []string{"public-example.com"}},
		{"mailto does not count", "x", "contact mailto:owner@private-example.com", []string{}},
		{"own domain does not count", "x", "see https://lohisoft.com/bot and www.lohisoft.com", []string{}},
		{"file names are not sites", "x", "our robots.txt, sitemap.xml, index.php and readme.md", []string{}},
		{"path segment is not a site", "x", "see https://example-store.com/files/other.de", []string{"example-store.com"}},
		{"numbers and abbreviations", "x", "version 1.2.3, z.B. am 14.03.2026, Ing. Novák s.r.o.", []string{}},
		{"subject counts", "Remove example-store.com", "", []string{"example-store.com"}},
		{"subdomains deduplicated and sorted", "x", "b-site.com, www.a-site.com, shop.a-site.com", []string{"a-site.com", "b-site.com"}},
		{"signature does not count", "x", "Please remove example-store.com.\n\n-- \nMade by agency-example.com", []string{"example-store.com"}},
		{"quote does not count", "x", "Also remove second-store.com.\n\n> We removed first-store.com.", []string{"second-store.com"}},
		{"sentence run together", "x", "we are done.Thanks for that", []string{}},
		{"ip address is not a site", "x", "requests from 192.0.2.7 and 198.51.100.1", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.Parse(plain(tc.subject, tc.body))
			got := m.Domains
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q).Domains mismatch (-want +got):\n%s", tc.body, diff)
			}
		})
	}
}

func TestParseIntent(t *testing.T) {
	tests := []struct {
		subject, body string
		want          mailbot.Intent
	}{
		{"Opt-out", "example-store.com", mailbot.IntentExclude},
		{"Hello", "Please do not crawl example-store.com.", mailbot.IntentExclude},
		{"Hello", "We would like to be crawled again: example-store.com", mailbot.IntentReinclude},
		{"Hello", "Please lift the block on example-store.com.", mailbot.IntentReinclude},
		{"Hello", "Please remove example-store.com from your exclusion list.", mailbot.IntentReinclude},
		{"Hello", "Does your bot respect robots.txt?", mailbot.IntentOther},
		{"Hello", "We have no problem with indexing, just slow down please.", mailbot.IntentOther},
		{"Hola", "No tenemos nada en contra de la indexación.", mailbot.IntentOther},
		{"Re: Exclusion of example-store.com", "Thanks!", mailbot.IntentOther},
		{"Fwd: Please stop crawling example-store.com", "See below.", mailbot.IntentExclude},
		{"", "", mailbot.IntentOther},
		{"Hej", "Vi vill inte att er robot indexerar example-store.se.", mailbot.IntentExclude},
		{"Dobrý den", "Prosíme o vyřazení domény example-store.cz z procházení.", mailbot.IntentExclude},
		{"Dobrý deň", "Prosíme o vyradenie stránky example-store.sk.", mailbot.IntentExclude},
		{"Goedendag", "Wilt u example-store.nl weer crawlen? De blokkade mag eraf.", mailbot.IntentReinclude},
		{"Olá", "Por favor, parem de rastrear example-store.pt.", mailbot.IntentExclude},
		{"Bonjour", "Nous ne souhaitons pas être indexés : example-store.fr.", mailbot.IntentExclude},
		{"Buongiorno", "Potete riattivare la scansione di example-store.it?", mailbot.IntentReinclude},
		{"Jó napot", "Kérem, ne indexeljék tovább az example-store.hu oldalt.", mailbot.IntentExclude},
		{"Dzień dobry", "Prosimy o ponowne indeksowanie example-store.pl.", mailbot.IntentReinclude},
	}
	for _, tc := range tests {
		t.Run(tc.subject+"/"+tc.body, func(t *testing.T) {
			m := mailbot.Parse(plain(tc.subject, tc.body))
			if m.Intent != tc.want {
				t.Errorf("Parse(%q, %q).Intent = %q, want %q\nreasons: %q", tc.subject, tc.body, m.Intent, tc.want, m.Reasons)
			}
		})
	}
}

func TestParseAuto(t *testing.T) {
	tests := []struct {
		name, header string
	}{
		{"auto-submitted", "Auto-Submitted: auto-replied\n"},
		{"x-autoreply", "X-Autoreply: yes\n"},
		{"bulk", "Precedence: bulk\nList-Unsubscribe: <https://news.example.org/u>\n"},
		{"list with unsubscribe", "List-Id: <news.example.org>\nList-Unsubscribe: <https://news.example.org/u>\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\n"},
		{"null return path", "Return-Path: <>\n"},
		{"failed recipients", "X-Failed-Recipients: someone@example.org\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := rawMail(fmt.Sprintf(plainHeader, "Please stop crawling example-store.com")+tc.header, "Please stop crawling example-store.com.")
			if m := mailbot.Parse(raw); m.Intent != mailbot.IntentAuto {
				t.Errorf("Parse(%s).Intent = %q, want auto; reasons %q", tc.name, m.Intent, m.Reasons)
			}
		})
	}
	for _, subject := range []string{"Out of Office: Re: exclusion", "Automatic reply: Re: exclusion", "Risposta automatica: Re: x", "Réponse automatique : x", "Automatische Antwort: x", "Undeliverable: Re: x"} {
		t.Run(subject, func(t *testing.T) {
			if m := mailbot.Parse(plain(subject, "Please stop crawling example-store.com.")); m.Intent != mailbot.IntentAuto {
				t.Errorf("Parse(subject %q).Intent = %q, want auto", subject, m.Intent)
			}
		})
	}
	if m := mailbot.Parse(plain("Auto parts", "Please stop crawling example-store.com.")); m.Intent != mailbot.IntentExclude {
		t.Errorf("Parse(subject %q).Intent = %q, want exclude", "Auto parts", m.Intent)
	}
}

func TestParseAuth(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   mailbot.Auth
	}{
		{"none", "", mailbot.Auth{}},
		{"comments with semicolons", "Authentication-Results: mx1.lohisoft.com;\n\tdkim=pass (2048-bit key; unprotected) header.d=example-shop.de header.s=s1;\n\tspf=pass (sender ok; yes) smtp.mailfrom=bounce@mail.example-shop.de;\n\tdmarc=pass (p=none dis=none) header.from=example-shop.de\n",
			mailbot.Auth{DKIM: "pass", SPF: "pass", DMARC: "pass", Domain: "example-shop.de"}},
		{"dkim fails, spf passes", "Authentication-Results: mx1.lohisoft.com; dkim=fail header.d=example-shop.de; spf=pass smtp.mailfrom=webmaster@example-shop.de; dmarc=pass header.from=example-shop.de\n",
			mailbot.Auth{DKIM: "fail", SPF: "pass", DMARC: "pass", Domain: "example-shop.de"}},
		{"nothing passes", "Authentication-Results: mx1.lohisoft.com; dkim=none; spf=softfail smtp.mailfrom=webmaster@example-shop.de; dmarc=fail header.from=example-shop.de\n",
			mailbot.Auth{DKIM: "none", SPF: "softfail", DMARC: "fail"}},
		{"aligned signature preferred", "Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=esp-mailer.net; dkim=pass header.d=example-shop.de; spf=pass smtp.mailfrom=b@esp-mailer.net\n",
			mailbot.Auth{DKIM: "pass", SPF: "pass", Domain: "example-shop.de"}},
		{"own server's header wins over a forged one", "Authentication-Results: mx1.lohisoft.com; dkim=fail header.d=example-shop.de; spf=fail smtp.mailfrom=x@example-shop.de\nAuthentication-Results: forged.example.org; dkim=pass header.d=example-shop.de; spf=pass smtp.mailfrom=x@example-shop.de\n",
			mailbot.Auth{DKIM: "fail", SPF: "fail"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.Parse(rawMail(tc.header+fmt.Sprintf(plainHeader, "x"), "hello"))
			if m.Auth != tc.want {
				t.Errorf("Parse(%s).Auth = %+v, want %+v", tc.name, m.Auth, tc.want)
			}
		})
	}
	m := mailbot.Parse(rawMail("Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=mail.example-shop.de\n"+fmt.Sprintf(plainHeader, "x"), "hello"))
	for site, want := range map[string]bool{"example-shop.de": true, "other-shop.de": false, "": false} {
		if got := m.SentBy(site); got != want {
			t.Errorf("SentBy(%q) = %v, want %v", site, got, want)
		}
	}
}

func TestParseHeaderFields(t *testing.T) {
	tests := []struct {
		name   string
		header string
		from   string
		id     string
		date   time.Time
	}{
		{"plain", "From: A <A.Person@Example-Shop.DE>\nMessage-ID: <abc@example-shop.de>\nDate: Tue, 10 Mar 2026 10:00:00 +0100\n",
			"a.person@example-shop.de", "abc@example-shop.de", time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)},
		{"comment form", "From: MAILER-DAEMON@mail.example.org (Mail Delivery System)\nMessage-Id:   <x.y@z>  \nDate: 12 Feb 2026 12:05 +0000\n",
			"mailer-daemon@mail.example.org", "x.y@z", time.Date(2026, 2, 12, 12, 5, 0, 0, time.UTC)},
		{"unquoted dots in name", "From: Dr. Hans Meier, M.A. <hans@example-shop.de>\nMessage-ID: <q@r>\nDate: garbage\n",
			"hans@example-shop.de", "q@r", time.Time{}},
		{"encoded name", "From: =?UTF-8?Q?J=C3=BCrgen?= <j@example-shop.de>\nMessage-ID: q@r\n", "j@example-shop.de", "q@r", time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.Parse(rawMail(tc.header+"Subject: x\n", "hello"))
			if m.From != tc.from {
				t.Errorf("Parse(%s).From = %q, want %q", tc.name, m.From, tc.from)
			}
			if m.MessageID != tc.id {
				t.Errorf("Parse(%s).MessageID = %q, want %q", tc.name, m.MessageID, tc.id)
			}
			if !m.Date.Equal(tc.date) {
				t.Errorf("Parse(%s).Date = %v, want %v", tc.name, m.Date, tc.date)
			}
		})
	}
}

func TestParseContentID(t *testing.T) {
	body := "Please stop crawling example-store.com.\n"
	lf := rawMail("Received: from a by b; Tue, 10 Mar 2026 10:00:00 +0100\nFrom: a@example-store.com\nSubject: stop\n", body)
	crlf := bytes.ReplaceAll(rawMail("Received: from c by d; Tue, 10 Mar 2026 10:00:05 +0100\nDelivered-To: message@lohisoft.com\nFrom: a@example-store.com\nSubject: stop\n", body), []byte("\n"), []byte("\r\n"))
	other := rawMail("From: a@example-store.com\nSubject: stop\n", "Please stop crawling other-store.com.\n")
	a, b, c := mailbot.Parse(lf).MessageID, mailbot.Parse(crlf).MessageID, mailbot.Parse(other).MessageID
	if !strings.HasPrefix(a, "sha256-") || !strings.HasSuffix(a, "@lohibot.invalid") {
		t.Errorf("Parse(no Message-ID).MessageID = %q, want sha256-…@lohibot.invalid", a)
	}
	if a != b {
		t.Errorf("content ids differ for the same message with CRLF and other trace headers: %q, %q", a, b)
	}
	if a == c {
		t.Errorf("content ids are equal for different messages: %q", a)
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct {
		name string
		raw  []byte
	}{
		{"empty", nil},
		{"no header", []byte("\n\njust a body\n")},
		{"binary", []byte("\x00\x01\x02\xff\xfe\xfd")},
		{"header never ends", bytes.Repeat([]byte("X-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"), 20000)},
		{"multipart without boundary", rawMail("From: a@b.example\nContent-Type: multipart/alternative\n", "stop crawling example-store.com")},
		{"multipart boundary never found", rawMail("From: a@b.example\nContent-Type: multipart/mixed; boundary=zzz\n", "stop crawling example-store.com")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.Parse(tc.raw)
			if m.Intent != mailbot.IntentOther || m.Review == "" {
				t.Errorf("Parse(%s) = intent %q, review %q; want other with a review reason", tc.name, m.Intent, m.Review)
			}
			if m.MessageID == "" {
				t.Errorf("Parse(%s).MessageID is empty", tc.name)
			}
		})
	}
}

func TestParseLenient(t *testing.T) {
	tests := []struct {
		name    string
		raw     []byte
		domains []string
	}{
		{"missing closing boundary", rawMail("From: a@b.example\nSubject: x\nContent-Type: multipart/mixed; boundary=zzz\n", "--zzz\nContent-Type: text/plain\n\nPlease stop crawling example-store.com.\n"), []string{"example-store.com"}},
		{"bad quoted-printable", rawMail("From: a@b.example\nSubject: x\nContent-Transfer-Encoding: quoted-printable\n", "Please stop crawling example-store.com =ZZ now=\n.\n"), []string{"example-store.com"}},
		{"bad base64 tail", rawMail("From: a@b.example\nSubject: x\nContent-Transfer-Encoding: base64\n", "UGxlYXNlIHN0b3AgY3Jhd2xpbmcgZXhhbXBsZS1zdG9yZS5jb20u!!!\n"), []string{"example-store.com"}},
		{"unknown charset", rawMail("From: a@b.example\nSubject: x\nContent-Type: text/plain; charset=x-no-such\n", "Please stop crawling example-store.com.\n"), []string{"example-store.com"}},
		{"latin-1 labelled utf-8", rawMail("From: a@b.example\nSubject: x\nContent-Type: text/plain; charset=utf-8\n", "Bitte nehmen Sie b\xfccher-m\xfcller.de aus Ihrer Liste.\n"), []string{"xn--bcher-mller-thbg.de"}},
		{"no content type", rawMail("From: a@b.example\nSubject: x\n", "Please stop crawling example-store.com.\n"), []string{"example-store.com"}},
		{"mbox From line", []byte("From a@b.example Tue Mar 10 10:00:00 2026\nFrom: a@b.example\nSubject: x\n\nPlease stop crawling example-store.com.\n"), []string{"example-store.com"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.Parse(tc.raw)
			if m.Intent != mailbot.IntentExclude || m.Review != "" {
				t.Errorf("Parse(%s) = intent %q, review %q; want exclude without review\nreasons: %q", tc.name, m.Intent, m.Review, m.Reasons)
			}
			if diff := cmp.Diff(tc.domains, m.Domains); diff != "" {
				t.Errorf("Parse(%s).Domains mismatch (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

// TestParseHuge checks that a message over MaxSize goes to staff with the
// reason, keeping its header fields, and that one just under it is read.
func TestParseHuge(t *testing.T) {
	header := fmt.Sprintf(plainHeader, "Please stop crawling example-store.com")
	big := rawMail(header, strings.Repeat("Please stop crawling example-store.com and many more words here.\n", mailbot.MaxSize/60))
	if len(big) <= mailbot.MaxSize {
		t.Fatalf("test message is %d bytes, want more than %d", len(big), mailbot.MaxSize)
	}
	m := mailbot.Parse(big)
	if m.Intent != mailbot.IntentOther || !strings.Contains(m.Review, "too large") {
		t.Errorf("Parse(%d bytes) = intent %q, review %q; want other, too large", len(big), m.Intent, m.Review)
	}
	if m.MessageID != "case@example-shop.de" || m.From != "webmaster@example-shop.de" || m.Size != len(big) {
		t.Errorf("Parse(%d bytes) = id %q, from %q, size %d; want the header fields and the size", len(big), m.MessageID, m.From, m.Size)
	}

	fits := rawMail(header, "Please stop crawling example-store.com.\n"+strings.Repeat("x", mailbot.MaxSize-1000))
	m = mailbot.Parse(fits)
	if m.Review != "" || m.Intent != mailbot.IntentExclude {
		t.Errorf("Parse(%d bytes) = intent %q, review %q; want exclude, no review", len(fits), m.Intent, m.Review)
	}
}

// TestParseHostile feeds inputs shaped to make a careless parser slow or
// crash (a stall shows as the test binary's timeout; the speed itself is
// BenchmarkParseCorpus's business).
func TestParseHostile(t *testing.T) {
	header := "From: a@b.example\nSubject: x\n"
	tests := []struct {
		name string
		raw  []byte
	}{
		{"deep multipart", func() []byte {
			var b strings.Builder
			b.WriteString(header + "Content-Type: multipart/mixed; boundary=b0\n\n")
			for i := 0; i < 200; i++ {
				fmt.Fprintf(&b, "--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n", i, i+1)
			}
			return []byte(b.String())
		}()},
		{"many parts", func() []byte {
			var b strings.Builder
			b.WriteString(header + "Content-Type: multipart/mixed; boundary=b\n\n")
			for i := 0; i < 20000; i++ {
				b.WriteString("--b\nContent-Type: text/plain\n\nstop crawling example-store.com\n")
			}
			return []byte(b.String())
		}()},
		{"unclosed html", rawMail(header+"Content-Type: text/html\n", strings.Repeat("<div><a href='http://x.example.com'>", 50000)+strings.Repeat("</span>", 50000))},
		{"many obfuscated dots", rawMail(header, strings.Repeat("a [.] ", 200000))},
		{"many at signs", rawMail(header, strings.Repeat("a", 500000)+strings.Repeat("@", 100000))},
		{"one long line", rawMail(header, strings.Repeat("stop-crawling.example.com/", 300000))},
		{"many quote lines", rawMail(header, strings.Repeat("> On 1 Jan 2026 X wrote:\n", 200000))},
		{"nested forwards", func() []byte {
			var b strings.Builder
			b.WriteString(header + "Content-Type: message/rfc822\n\n")
			for i := 0; i < 100; i++ {
				b.WriteString("From: x@y.example\nContent-Type: message/rfc822\n\n")
			}
			return []byte(b.String())
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.Parse(tc.raw)
			if strings.HasPrefix(m.Review, "internal error") {
				t.Fatalf("Parse(%s) panicked: %s", tc.name, m.Review)
			}
			if m.Intent == "" || m.MessageID == "" {
				t.Errorf("Parse(%s) = intent %q, id %q; want both set", tc.name, m.Intent, m.MessageID)
			}
		})
	}
}
