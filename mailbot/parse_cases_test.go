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
		{"unquoted text below a Thunderbird attribution does not count", "x", "Proszę usunąć second-store.pl.\n\nW dniu 9.03.2026 o 15:00, LohiSoft pisze:\nCzy chodzi o first-store.pl?", []string{"second-store.pl"}},
		{"chained dot words", "x", "remove bluefin-store dot co dot uk please", []string{"bluefin-store.co.uk"}},
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
			mailbot.Auth{DKIM: "pass", SPF: "pass", DMARC: "pass", Domain: "example-shop.de", Aligned: "example-shop.de"}},
		{"dkim fails, spf passes", "Authentication-Results: mx1.lohisoft.com; dkim=fail header.d=example-shop.de; spf=pass smtp.mailfrom=webmaster@example-shop.de; dmarc=pass header.from=example-shop.de\n",
			mailbot.Auth{DKIM: "fail", SPF: "pass", DMARC: "pass", Domain: "example-shop.de", Aligned: "example-shop.de"}},
		{"nothing passes", "Authentication-Results: mx1.lohisoft.com; dkim=none; spf=softfail smtp.mailfrom=webmaster@example-shop.de; dmarc=fail header.from=example-shop.de\n",
			mailbot.Auth{DKIM: "none", SPF: "softfail", DMARC: "fail"}},
		{"aligned signature preferred", "Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=esp-mailer.net; dkim=pass header.d=example-shop.de; spf=pass smtp.mailfrom=b@esp-mailer.net\n",
			mailbot.Auth{DKIM: "pass", SPF: "pass", Domain: "example-shop.de", Aligned: "example-shop.de"}},
		{"own server's header wins over a forged one", "Authentication-Results: mx1.lohisoft.com; dkim=fail header.d=example-shop.de; spf=fail smtp.mailfrom=x@example-shop.de\nAuthentication-Results: forged.example.org; dkim=pass header.d=example-shop.de; spf=pass smtp.mailfrom=x@example-shop.de\n",
			mailbot.Auth{DKIM: "fail", SPF: "fail"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.ParseTrusting(rawMail(tc.header+fmt.Sprintf(plainHeader, "x"), "hello"), "mx1.lohisoft.com")
			if m.Auth != tc.want {
				t.Errorf("Parse(%s).Auth = %+v, want %+v", tc.name, m.Auth, tc.want)
			}
		})
	}
	m := mailbot.ParseTrusting(rawMail("Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=mail.example-shop.de\n"+fmt.Sprintf(plainHeader, "x"), "hello"), "mx1.lohisoft.com")
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

// TestParseLanguages checks intent and language on short messages in every
// language, including quoted replies and phrasings that must not count
// ("no problem with indexing", "thanks for excluding").
func TestParseLanguages(t *testing.T) {
	tests := []struct {
		lang, subject, body string
		want                mailbot.Intent
	}{
		{"en", "Request", "Hi, I run sunny-days.com. Please exclude it from your crawler. Thanks", mailbot.IntentExclude},
		{"en", "Website removal", "Could you please remove sunny-days.com from your index?", mailbot.IntentExclude},
		{"en", "Hi", "Kindly stop indexing our website sunny-days.com.", mailbot.IntentExclude},
		{"en", "Hi", "I object to your bot scraping sunny-days.com. Remove it now.", mailbot.IntentExclude},
		{"en", "Hi", "Please undo the exclusion of sunny-days.com.", mailbot.IntentReinclude},
		{"en", "Re-inclusion", "Please re-enable crawling for sunny-days.com", mailbot.IntentReinclude},
		{"en", "Hi", "Your bot is great, thanks for indexing sunny-days.com!", mailbot.IntentOther},
		{"en", "Complaint", "Your crawler is too fast on sunny-days.com, please reduce the rate.", mailbot.IntentOther},
		{"de", "Crawler", "Ich möchte nicht, dass Ihr Crawler meine Seite sonnenhof.de besucht.", mailbot.IntentExclude},
		{"de", "Löschung", "Bitte löschen Sie sonnenhof.de aus Ihrer Datenbank.", mailbot.IntentExclude},
		{"de", "Hallo", "Sie dürfen sonnenhof.de wieder crawlen.", mailbot.IntentReinclude},
		{"de", "Frage", "Welche IP-Adressen nutzt Ihr Bot? Wir betreiben sonnenhof.de.", mailbot.IntentOther},
		{"fr", "Demande", "Bonjour, je souhaite que mon site soleil-levant.fr ne soit plus indexé. Merci", mailbot.IntentExclude},
		{"fr", "Bonjour", "Merci de cesser d'explorer soleil-levant.fr.", mailbot.IntentExclude},
		{"fr", "Bonjour", "Merci de lever le blocage de soleil-levant.fr.", mailbot.IntentReinclude},
		{"it", "Richiesta", "Buongiorno, vi chiedo di rimuovere il sito sole-mare.it dal vostro indice.", mailbot.IntentExclude},
		{"it", "Ciao", "Per favore smettete di indicizzare sole-mare.it.", mailbot.IntentExclude},
		{"it", "Ciao", "Vi chiedo di sbloccare sole-mare.it.", mailbot.IntentReinclude},
		{"es", "Solicitud", "Hola, por favor eliminen sol-y-mar.es de su índice.", mailbot.IntentExclude},
		{"es", "Hola", "Les pido que dejen de indexar sol-y-mar.es.", mailbot.IntentExclude},
		{"es", "Hola", "Por favor desbloqueen sol-y-mar.es.", mailbot.IntentReinclude},
		{"pt", "Pedido", "Olá, por favor retirem o site sol-e-mar.pt do vosso índice.", mailbot.IntentExclude},
		{"pt", "Olá", "Peço que deixem de indexar sol-e-mar.pt.", mailbot.IntentExclude},
		{"pt", "Pergunta", "Quais são os endereços IP do vosso robô? O nosso site é sol-e-mar.pt.", mailbot.IntentOther},
		{"nl", "Crawler", "Wij willen niet dat uw crawler zonnebloem.nl bezoekt.", mailbot.IntentExclude},
		{"nl", "Hoi", "U mag zonnebloem.nl weer indexeren.", mailbot.IntentReinclude},
		{"da", "Anmodning", "Hej, fjern venligst solsikke.dk fra jeres indeks.", mailbot.IntentExclude},
		{"da", "Hej", "I må gerne indeksere solsikke.dk igen.", mailbot.IntentReinclude},
		{"sv", "Begäran", "Hej, ta bort solros.se från ert index.", mailbot.IntentExclude},
		{"sv", "Hej", "Ni får gärna indexera solros.se igen.", mailbot.IntentReinclude},
		{"hu", "Kérés", "Jó napot, kérem törölje a napraforgo.hu oldalt az indexükből.", mailbot.IntentExclude},
		{"hu", "Kérés", "Kérem, indexeljék újra a napraforgo.hu oldalt.", mailbot.IntentReinclude},
		{"cs", "Žádost", "Dobrý den, prosím odstraňte slunecnice.cz z vašeho indexu.", mailbot.IntentExclude},
		{"cs", "Žádost", "Dobrý den, můžete znovu indexovat slunecnice.cz.", mailbot.IntentReinclude},
		{"sk", "Žiadosť", "Dobrý deň, prosím odstráňte slnecnica.sk z vášho indexu.", mailbot.IntentExclude},
		{"sk", "Žiadosť", "Dobrý deň, môžete znova indexovať slnecnica.sk.", mailbot.IntentReinclude},
		{"pl", "Prośba", "Dzień dobry, proszę usunąć slonecznik.pl z Państwa indeksu.", mailbot.IntentExclude},
		{"pl", "Prośba", "Dzień dobry, możecie ponownie indeksować slonecznik.pl.", mailbot.IntentReinclude},
		{"en", "Legal notice", "Dear Sir, we represent Acme Ltd, owner of acme-widgets.com. Your bot copies our content. We reserve all rights and will take legal action. Provide your company details within 14 days.", mailbot.IntentOther},
		{"en", "robots.txt", "Hi, does LohiSoftBot support the Disallow directive with wildcards? I am setting up acme-widgets.com.", mailbot.IntentOther},
		{"en", "Hi", "Is your crawler the one hitting acme-widgets.com from 203.0.113.5? It does not look like your IP.", mailbot.IntentOther},
		{"en", "Hello", "Thanks for excluding acme-widgets.com so quickly!", mailbot.IntentOther},
		{"en", "Job application", "Hi, I'd like to apply for the developer position. My portfolio is at janedoe-dev.com.", mailbot.IntentOther},
		{"en", "Invoice", "Please find attached invoice 2026-031 for hosting acme-widgets.com.", mailbot.IntentOther},
		{"en", "Hi", "Your bot keeps hitting acme-widgets.com. Stop it.", mailbot.IntentOther}, // ambiguous: staff decide
		{"en", "opt-out request", "acme-widgets.com", mailbot.IntentExclude},
		{"en", "Hello", "I run acme-widgets.com and I do not consent to LohiSoftBot collecting our pages.", mailbot.IntentExclude},
		{"en", "Hi", "Can you take acme-widgets.com off the crawl list please?", mailbot.IntentExclude},
		{"en", "Hello", "We previously opted out acme-widgets.com but would now like to be included in your index.", mailbot.IntentReinclude},
		{"en", "Hello", "Last month we asked you to exclude acme-widgets.com. Please reverse that, we want to be crawled.", mailbot.IntentReinclude},
		{"en", "Hello", "We asked you last month to stop crawling acme-widgets.com and your bot is still visiting. Please stop.", mailbot.IntentExclude},
		{"de", "Rechnung", "Anbei die Rechnung für das Hosting von sonnenhof.de.", mailbot.IntentOther},
		{"de", "Frage", "Crawlt Ihr Bot auch Unterseiten von sonnenhof.de? Ich habe nichts gegen die Indexierung.", mailbot.IntentOther},
		{"de", "Datenschutz", "Ich untersage Ihnen jegliche Erfassung meiner Website sonnenhof.de.", mailbot.IntentExclude},
		{"de", "Hallo", "Wir haben damals um Ausschluss gebeten. Bitte nehmen Sie sonnenhof.de wieder auf.", mailbot.IntentReinclude},
		{"fr", "Robot", "Votre robot visite trop souvent soleil-levant.fr. Je vous demande de retirer notre site de votre index.", mailbot.IntentExclude},
		{"fr", "Question", "Votre robot respecte-t-il le fichier robots.txt de soleil-levant.fr ?", mailbot.IntentOther},
		{"fr", "Réintégration", "Nous souhaitons que soleil-levant.fr soit à nouveau exploré par votre robot.", mailbot.IntentReinclude},
		{"it", "Diffida", "Vi diffido dal continuare a scansionare sole-mare.it. Rimuovete il sito dal vostro indice.", mailbot.IntentExclude},
		{"it", "Fattura", "In allegato la fattura per il sito sole-mare.it.", mailbot.IntentOther},
		{"it", "Ripristino", "Abbiamo cambiato idea: potete tornare a indicizzare sole-mare.it.", mailbot.IntentReinclude},
		{"es", "Baja", "Quiero dar de baja mi web sol-y-mar.es de su buscador.", mailbot.IntentExclude},
		{"es", "Consulta", "¿Su robot respeta el archivo robots.txt de sol-y-mar.es?", mailbot.IntentOther},
		{"pt", "Remoção", "Solicito a exclusão do domínio sol-e-mar.com.br do vosso rastreador.", mailbot.IntentExclude},
		{"pt", "Olá", "Pedimos a exclusão há meses, mas agora queremos que sol-e-mar.com.br seja rastreado novamente.", mailbot.IntentReinclude},
		{"nl", "Hallo", "Ik wil niet dat jullie robot zonnebloem.nl indexeert. Haal de site uit jullie lijst.", mailbot.IntentExclude},
		{"nl", "Hallo", "Eerder vroegen we om uitsluiting, maar zonnebloem.nl mag weer opgenomen worden in jullie index.", mailbot.IntentReinclude},
		{"da", "Hej", "Stop venligst jeres crawler på solsikke.dk, vi ønsker ikke at blive indekseret.", mailbot.IntentExclude},
		{"da", "Hej", "Vi bad om at blive fjernet, men nu må I gerne crawle solsikke.dk igen.", mailbot.IntentReinclude},
		{"sv", "Hej", "Sluta indexera solros.se tack. Vi vill inte vara med i er databas.", mailbot.IntentExclude},
		{"sv", "Hej", "Vi bad er tidigare att sluta, men nu får ni gärna crawla solros.se igen.", mailbot.IntentReinclude},
		{"hu", "Tiltakozás", "Tiltakozom az ellen, hogy a robotjuk feltérképezze a napraforgo.hu oldalt. Kérem, töröljék a listáról.", mailbot.IntentExclude},
		{"hu", "Visszavonás", "Korábban kértük a kizárást, de most visszavonjuk: a napraforgo.hu oldalt újra indexelhetik.", mailbot.IntentReinclude},
		{"cs", "Dobrý den", "Prosím, přestaňte procházet naši stránku slunecnice.cz a vyřaďte ji ze seznamu.", mailbot.IntentExclude},
		{"cs", "Dobrý den", "Dříve jsme žádali o vyřazení, nyní prosíme o opětovné zařazení domény slunecnice.cz.", mailbot.IntentReinclude},
		{"sk", "Dobrý deň", "Prosím, prestaňte prechádzať našu stránku slnecnica.sk a vyraďte ju zo zoznamu.", mailbot.IntentExclude},
		{"sk", "Dobrý deň", "Predtým sme žiadali o vyradenie, teraz prosíme o opätovné zaradenie domény slnecnica.sk.", mailbot.IntentReinclude},
		{"pl", "Dzień dobry", "Proszę przestać indeksować slonecznik.pl i usunąć stronę z Państwa listy.", mailbot.IntentExclude},
		{"pl", "Dzień dobry", "Wcześniej prosiliśmy o wyłączenie, teraz prosimy o ponowne indeksowanie slonecznik.pl.", mailbot.IntentReinclude},
		{"de", "Abmahnung", "Sehr geehrte Damen und Herren, im Namen unserer Mandantin, Inhaberin von sonnenhof.de, fordern wir Sie auf, binnen 14 Tagen Auskunft über die gespeicherten Daten zu erteilen. Andernfalls behalten wir uns rechtliche Schritte vor.", mailbot.IntentOther},
		{"fr", "Partenariat", "Bonjour, nous proposons des backlinks de qualité pour soleil-levant.fr. Contactez-nous !", mailbot.IntentOther},
		{"it", "Info", "Buongiorno, vorrei sapere come funziona il vostro motore di ricerca. Il mio sito è sole-mare.it.", mailbot.IntentOther},
		{"es", "Hola", "Vuestro robot hace demasiadas peticiones a sol-y-mar.es. ¿Podéis reducir la velocidad? No nos importa que nos indexéis.", mailbot.IntentOther},
		{"nl", "Vraag", "Hoe vaak komt uw crawler langs op zonnebloem.nl? We hebben geen bezwaar tegen indexering.", mailbot.IntentOther},
		{"pl", "Pytanie", "Dzień dobry, czy Państwa robot respektuje plik robots.txt? Nasza strona to slonecznik.pl.", mailbot.IntentOther},
		{"hu", "Kérdés", "Jó napot! Mennyire gyakran jön a robotjuk a napraforgo.hu oldalra? Nincs kifogásunk az indexelés ellen.", mailbot.IntentOther},
		{"cs", "Dotaz", "Dobrý den, jak často váš robot prochází slunecnice.cz? Proti indexování nic nemáme.", mailbot.IntentOther},
		{"de", "Re: Ihre Anfrage", "Bitte auch sonnenhof-ferien.de sperren und aus dem Index nehmen.\n\nAm 09.03.2026 um 14:02 schrieb LohiSoft <message@lohisoft.com>:\n> Wir haben sonnenhof.de ausgeschlossen.", mailbot.IntentExclude},
		{"en", "Re: your bot", "Please also remove acme-tools.com.\n\nOn Monday, March 9, 2026, 2:02 PM, LohiSoft <message@lohisoft.com> wrote:\n\n> We have excluded acme-widgets.com.", mailbot.IntentExclude},
		{"en", "stop", "Hi,\n\nStop crawling acme-widgets.com.\n\nSent from my iPhone", mailbot.IntentExclude},
		{"fr", "Suppression", "Bonjour,\n\nMerci de retirer soleil-levant.fr de votre robot.\n\nEnvoyé de mon iPhone\n\n> Le 9 mars 2026 à 14:02, LohiSoft <message@lohisoft.com> a écrit :\n>\n> Bonjour, ...", mailbot.IntentExclude},
		{"it", "Re: richiesta", "Sì, confermo: non voglio che sole-mare.it venga scansionato.\n\n---- Il lun, 09 mar 2026 14:02:00 +0100 LohiSoft <message@lohisoft.com> ha scritto ----\n\n> Confermate la richiesta?", mailbot.IntentExclude},
		{"en", "Re: your request", "Yes, that's correct.\n\n> Do you want us to exclude acme-widgets.com?", mailbot.IntentOther},
		{"en", "Re: Please confirm", "Yes, please exclude it.\n\n> Do you want us to exclude acme-widgets.com?", mailbot.IntentExclude},
		{"sv", "Sv: Ta bort", "Ja tack, ta bort solros.se också.\n\nDen 9 mars 2026 14:02 skrev LohiSoft <message@lohisoft.com>:\n> Vi har tagit bort solros-stugor.se.", mailbot.IntentExclude},
		{"nl", "Herindexering", "Goedendag, zouden jullie zonnebloem.nl opnieuw willen indexeren? Onze blokkade in robots.txt is weg.", mailbot.IntentReinclude},
		{"en", "GDPR", "Under GDPR I request that you stop processing and delete all data collected from acme-widgets.com, and exclude the site from your crawler.", mailbot.IntentExclude},
		{"pt", "Olá", "Bom dia. O site sol-e-mar.pt não deve ser indexado pelo vosso robô. Obrigado.", mailbot.IntentExclude},
		{"es", "Hola", "Por favor, excluyan sol-y-mar.es.\n\n--\nJuan\nsol-y-mar.es | diseño web por agencia-web.es", mailbot.IntentExclude},
		{"en", "Quick idea", "Hi, we help sites like acme-widgets.com rank better. Book a call? If you'd like me to remove you from our list, just reply.", mailbot.IntentOther},
		{"en", "Growth", "Hello, boost your traffic today! To opt out of future emails, click here.", mailbot.IntentOther},
		{"en", "SEO", "Hi there, interested in backlinks for acme-widgets.com? Unsubscribe from these emails here.", mailbot.IntentOther},
		{"en", "Abuse report", "We see aggressive requests against acme-widgets.com from 203.0.113.9 claiming to be your bot. Please investigate and stop this activity.", mailbot.IntentOther},
		{"en", "Too many requests", "Your crawler hits acme-widgets.com 20 times a second. Please slow down, otherwise we will block your bot.", mailbot.IntentOther},
		{"de", "Zu viele Zugriffe", "Ihr Bot greift zu oft auf sonnenhof.de zu. Bitte drosseln, sonst sperren wir Ihren Crawler.", mailbot.IntentOther},
		{"fr", "Offre", "Bonjour, découvrez nos offres pour soleil-levant.fr. Pour vous désinscrire, cliquez ici.", mailbot.IntentOther},
		{"pt", "Oferta", "Olá, conheça nossas soluções para sol-e-mar.com.br. Para se descadastrar, clique aqui.", mailbot.IntentOther},
		{"es", "Oferta", "Hola, mejore el SEO de sol-y-mar.es. Si no desea recibir más correos, puede darse de baja aquí.", mailbot.IntentOther},
		{"pt", "Descadastro do robô", "Por favor, não quero que o robô acesse sol-e-mar.com.br.", mailbot.IntentExclude},
		{"en", "Hi", "I would like to block your bot from sunny-days.com.", mailbot.IntentExclude},
	}
	for _, tc := range tests {
		t.Run(tc.lang+"/"+tc.subject, func(t *testing.T) {
			m := mailbot.Parse(plain(tc.subject, tc.body))
			if m.Intent != tc.want {
				t.Errorf("Parse(%q, %q).Intent = %q, want %q\nreasons: %q", tc.subject, tc.body, m.Intent, tc.want, m.Reasons)
			}
			if m.Lang != tc.lang {
				t.Errorf("Parse(%q, %q).Lang = %q, want %q", tc.subject, tc.body, m.Lang, tc.lang)
			}
		})
	}
}

// TestParseQuoteStyles checks that only the new text's site counts under
// the attribution and separator styles of common clients and languages.
func TestParseQuoteStyles(t *testing.T) {
	quotes := []struct{ name, quote string }{
		{"gmail en", "On Mon, 9 Mar 2026 at 14:02, LohiSoft <message@lohisoft.com> wrote:\n\n> We excluded old-site.com.\n"},
		{"gmail it wrapped", "Il giorno lun 9 mar 2026 alle ore 14:02 LohiSoft <message@lohisoft.com> ha\nscritto:\n\n> Abbiamo escluso old-site.com.\n"},
		{"gmail hu", "LohiSoft <message@lohisoft.com> ezt írta (időpont: 2026. márc. 9., H, 14:02):\n\n> Kizártuk: old-site.com.\n"},
		{"gmail cs", "Dne po 9. 3. 2026 14:02 uživatel LohiSoft <message@lohisoft.com> napsal:\n\n> Vyřadili jsme old-site.com.\n"},
		{"gmail pl", "pon., 9 mar 2026 o 14:02 LohiSoft <message@lohisoft.com> napisał(a):\n\n> Wyłączyliśmy old-site.com.\n"},
		{"apple cs without verb", "9. 3. 2026 v 14:02, LohiSoft <message@lohisoft.com>:\n\n> Vyřadili jsme old-site.com.\n"},
		{"thunderbird de", "Am 09.03.26 um 14:02 schrieb LohiSoft:\n> Wir haben old-site.com gesperrt.\n"},
		{"thunderbird nl", "Op 09-03-2026 om 14:02 schreef LohiSoft:\n> We hebben old-site.com uitgesloten.\n"},
		{"outlook en", "________________________________\nFrom: LohiSoft <message@lohisoft.com>\nSent: Monday, March 9, 2026 2:02 PM\nTo: Me <me@example-shop.de>\nSubject: RE: x\n\nWe excluded old-site.com.\n"},
		{"outlook es", "De: LohiSoft <message@lohisoft.com>\nEnviado el: lunes, 9 de marzo de 2026 14:02\nPara: Yo <me@example-shop.de>\nAsunto: RE: x\n\nHemos excluido old-site.com.\n"},
		{"outlook pl", "Od: LohiSoft <message@lohisoft.com>\nWysłano: poniedziałek, 9 marca 2026 14:02\nDo: Ja <me@example-shop.de>\nTemat: RE: x\n\nWyłączyliśmy old-site.com.\n"},
		{"outlook bold", "*From:* LohiSoft <message@lohisoft.com>\n*Sent:* Monday, March 9, 2026 2:02 PM\n*To:* Me\n*Subject:* RE: x\n\nWe excluded old-site.com.\n"},
		{"original message fr", "-----Message d'origine-----\nDe : LohiSoft\nObjet : x\n\nNous avons exclu old-site.com.\n"},
		{"original message sk", "-----Pôvodná správa-----\nOd: LohiSoft\n\nVyradili sme old-site.com.\n"},
		{"yahoo", "On Monday, March 9, 2026, 2:02 PM, LohiSoft <message@lohisoft.com> wrote:\n\n\n> We excluded old-site.com.\n"},
		{"unknown client", "LohiSoft schrieb am 9.3.2026:\n> old-site.com ist ausgeschlossen.\n"},
	}
	for _, q := range quotes {
		t.Run(q.name, func(t *testing.T) {
			m := mailbot.Parse(plain("Re: x", "Please also stop crawling new-site.com.\n\n"+q.quote))
			if m.Intent != mailbot.IntentExclude {
				t.Errorf("Parse(%s).Intent = %q, want exclude", q.name, m.Intent)
			}
			if diff := cmp.Diff([]string{"new-site.com"}, m.Domains); diff != "" {
				t.Errorf("Parse(%s).Domains mismatch (-want +got):\n%s", q.name, diff)
			}
		})
	}
	// A bottom-posted reply: the text below the quote counts.
	m := mailbot.Parse(plain("Re: x", "On Mon, 9 Mar 2026 at 14:02, LohiSoft <message@lohisoft.com> wrote:\n> We excluded old-site.com.\n\nPlease also stop crawling new-site.com.\n"))
	if m.Intent != mailbot.IntentExclude || len(m.Domains) != 1 || m.Domains[0] != "new-site.com" {
		t.Errorf("Parse(bottom post) = %q %q, want exclude [new-site.com]", m.Intent, m.Domains)
	}
}
