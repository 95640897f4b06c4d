package classify_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/mailbot/classify"
	"github.com/lohisoft/lohibot/mailbot/message"
)

func classifyText(subject, body string) *classify.Result {
	raw := "From: w@example.net\nSubject: " + subject + "\nMessage-ID: <t@x>\nContent-Type: text/plain; charset=utf-8\n\n" + body
	return classify.Classify(message.Read([]byte(raw)))
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name, subject, body string
		intent              classify.Intent
		domains             []string
		reason              string // a reason starting with it
	}{
		{"plain exclusion", "crawler", "Please stop crawling example.com.", classify.IntentExclude, []string{"example.com"}, "exclude: 'stop crawling' (en)"},
		{"hungarian accusative", "robot", "Kérem, ne indexeljék tovább a kertesz-kert.hu-t.", classify.IntentExclude, []string{"kertesz-kert.hu"}, "exclude:"},
		{"croatian genitive", "molba", "Molimo vas da prestanete indeksirati stranice sa stolarija-horvat.hr-a.", classify.IntentExclude, []string{"stolarija-horvat.hr"}, "exclude:"},
		{"finnish colon ending", "indeksointi", "Pyydämme, että lopetatte sivuston puutarha-virtanen.fi:n indeksoinnin.", classify.IntentExclude, []string{"puutarha-virtanen.fi"}, "exclude:"},
		{"serbian .rs is a site", "molba", "Molim vas uklonite sajt prodavnica.rs sa vaše liste.", classify.IntentExclude, []string{"prodavnica.rs"}, "exclude:"},
		{"rust file is no site", "x", "Please stop crawling example.com; the bug is in main.rs.", classify.IntentExclude, []string{"example.com"}, "exclude:"},
		{"chinese", "请停止", "请停止抓取我们的网站 wangjia-chaye.cn 。", classify.IntentExclude, []string{"wangjia-chaye.cn"}, "exclude:"},
		{"part of a site", "x", "Please stop crawling the /members/ area of club-example.org.", classify.IntentOther, nil, "unclear: part of a site"},
		{"all subdomains is the whole", "x", "Please stop crawling example.com and all its subdomains.", classify.IntentExclude, []string{"example.com"}, "exclude:"},
		{"question", "x", "We wonder whether we should block your bot on example.com.", classify.IntentOther, nil, "unclear: question"},
		{"polite question is a request", "x", "Could you please stop crawling example.com?", classify.IntentExclude, []string{"example.com"}, "exclude:"},
		{"negation", "x", "Please do not remove example.com from your index.", classify.IntentOther, nil, "unclear: negation"},
		{"negation after the verb", "x", "Sluta inte att indexera example.se.", classify.IntentOther, nil, "unclear: negation"},
		{"do not crawl is an exclusion", "x", "Please do not crawl example.com.", classify.IntentExclude, []string{"example.com"}, "exclude:"},
		{"not a site", "x", "Please remove my email address from your database.", classify.IntentOther, nil, "unclear: not a site"},
		{"signature site", "x", "Please stop crawling our website.\n-- \nJane\nwww.jane-example.com\n", classify.IntentExclude, []string{"jane-example.com"}, "domain: signature"},
		{"both directions", "x", "Please stop crawling old-example.com and please crawl new-example.com again.", classify.IntentOther, nil, "unclear: both directions"},
		{"re-inclusion recalling its exclusion", "x", "You removed example.com last year; please crawl example.com again.", classify.IntentReinclude, []string{"example.com"}, "reinclude:"},
		{"german transliteration", "x", "Bitte hoeren Sie auf, example.de zu durchsuchen.", classify.IntentExclude, []string{"example.de"}, "exclude:"},
		{"agreement", "Re: example.org", "Yes please.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> Shall we remove example.org from our crawl list?\n",
			classify.IntentExclude, []string{"example.org"}, "agree: 'yes' (en) to our quoted proposal"},
		{"agreement to an offer", "Re: your site", "ok, go ahead\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> Reply YES and we will stop crawling example.org.\n",
			classify.IntentExclude, []string{"example.org"}, "agree: 'ok' (en) to our quoted proposal"},
		{"thanks is no agreement", "Re: example.org", "Tak!\n\nDen 9. mar. 2026 skrev LohiSoft <message@lohisoft.com>:\n> Vi har fjernet example.org. Vil I tilbage? Svar på denne mail.\n",
			classify.IntentOther, nil, "quoted: ignored"},
		{"refusal", "Re: example.org", "No thanks.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> Shall we remove example.org from our crawl list?\n",
			classify.IntentOther, nil, "quoted: ignored"},
		{"agreement to someone else's quote", "Re: example.org", "Yes please.\n\nOn Mon, 9 Mar 2026, Bob <bob@example.org> wrote:\n> Shall we ask LohiSoft to remove example.org from their crawl list?\n",
			classify.IntentOther, nil, "quoted: ignored"},
		{"v2 statement is not a question", "x", "Daarom moeten we u vragen om example.nl niet meer te crawlen.", classify.IntentExclude, []string{"example.nl"}, "exclude:"},
		{"modal question", "x", "Moeten we uw crawler op example.nl blokkeren?", classify.IntentOther, nil, "unclear: question"},
		{"a stop under a negation goes on", "x", "We are happy to be on example.com's list, but please don't stop crawling us, just slow down.", classify.IntentOther, nil, "no request recognised"},
		{"german stop under a negation goes on", "x", "Bitte hören Sie nicht auf, example.de zu crawlen, nur langsamer.", classify.IntentOther, nil, ""},
		{"conditional negation is a demand", "x", "If you do not stop crawling example.com, we will take legal action.", classify.IntentExclude, []string{"example.com"}, "exclude:"},
		{"area is not a scope", "x", "We are a small bakery in the Bristol area. Please stop crawling example.com.", classify.IntentExclude, []string{"example.com"}, "exclude:"},
		{"site request with data", "x", "Please stop crawling our website and delete our data.", classify.IntentExclude, nil, "exclude:"},
		{"rest of the site elsewhere", "x", "Please stop crawling the blog of example.com. The rest of the site is fine.", classify.IntentOther, nil, "unclear: part of a site"},
		{"one page", "x", "Please remove this page from your index: https://example.com/old/offer.html", classify.IntentOther, nil, "unclear: part of a site"},
		{"ticket receipt", "[#123] Re: crawl list", "This is an automated response: your request has been received.", classify.IntentAuto, nil, "auto: text"},
		{"croatian vacation notice", "Automatski odgovor: Robot", "Trenutno sam na godišnjem odmoru do 15.12.", classify.IntentAuto, nil, "auto: subject"},
		{"ukrainian out of office", "Re: Робот", "Я зараз у відпустці до 15 грудня.", classify.IntentAuto, nil, "auto: text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := classifyText(tt.subject, tt.body)
			if r.Intent != tt.intent {
				t.Errorf("Classify(%q).Intent = %q, want %q; reasons %q", tt.body, r.Intent, tt.intent, r.Reasons)
			}
			if tt.domains != nil && !slices.Equal(r.Domains, tt.domains) {
				t.Errorf("Classify(%q).Domains = %q, want %q", tt.body, r.Domains, tt.domains)
			}
			if !slices.ContainsFunc(r.Reasons, func(s string) bool { return strings.HasPrefix(s, tt.reason) }) {
				t.Errorf("Classify(%q).Reasons = %q, want one starting with %q", tt.body, r.Reasons, tt.reason)
			}
		})
	}
}

// TestClassifyScriptLanguages checks the languages told by their script
// or by their distinctive words, beyond the thirteen.
func TestClassifyScriptLanguages(t *testing.T) {
	for _, tt := range []struct{ body, lang string }{
		{"貴社のクローラーによる example.jp の巡回を停止してください。", "ja"},
		{"请停止抓取我们的网站。", "zh"},
		{"귀사의 크롤러가 사이트를 수집하지 않도록 해 주십시오.", "ko"},
		{"Παρακαλώ σταματήστε την ευρετηρίαση.", "el"},
		{"Vă rugăm să nu mai indexați site-ul nostru. Mulțumim!", "ro"},
		{"Hei, vennligst slutt å crawle nettstedet vårt. Takk!", "no"},
		{"Lütfen sitemizi taramayı durdurun ve listenizden çıkarın.", "tr"},
		{"Va rugam sa nu mai indexati site-ul nostru. Multumim!", "ro"},
		{"Моля, спрете да индексирате нашия сайт.", "bg"},
		{"Будь ласка, припиніть індексувати наш сайт.", "uk"},
	} {
		if r := classifyText("x", tt.body); r.Lang != tt.lang {
			t.Errorf("Classify(%q).Lang = %q, want %q", tt.body, r.Lang, tt.lang)
		}
	}
}

// TestAction checks the act-alone rule: only an exclusion whose words and
// sites are the sender's own, with nothing pulling the other way, is
// applied; each decision says which part of the rule held or failed.
func TestAction(t *testing.T) {
	tests := []struct {
		name, subject, body string
		headers             string
		action              classify.Action
		reason              string // a reason starting with it
	}{
		{"clear exclusion", "robot", "Please stop crawling example.com.", "", classify.ActionApply, "apply: exclusion words in the new text"},
		{"re-inclusion", "robot", "Please crawl example.com again.", "", classify.ActionReview, "review: re-inclusion waits"},
		{"blocklist is a re-inclusion", "x", "Please remove us from your blocklist: example.com.", "", classify.ActionReview, "review: re-inclusion waits"},
		{"opposite words in the subject", "Crawl example.com again", "Please stop crawling example.com.", "", classify.ActionReview, "review:"},
		{"opposite words in a reply's subject", "Re: please crawl example.com again", "Please stop crawling example.com.", "", classify.ActionReview, "review: re-inclusion words too"},
		{"question", "x", "Do we have to email you to be removed from the exclusion list of example.com?", "", classify.ActionReview, "unclear: question"},
		{"site only in the signature", "x", "Please stop crawling our website.\n-- \nJane\nwww.jane-example.com\n", "", classify.ActionReview, "review: the sites come from the signature"},
		{"only a mail provider", "x", "Please stop crawling gmail.com, my mailbox is there.", "", classify.ActionReview, "review: no site named: mail providers"},
		{"mail provider left out", "x", "Please stop crawling example.com; write to me at seznam.cz.", "", classify.ActionApply, "apply:"},
		{"sites only in the quote", "Re: x", "Please remove them too.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> We crawl example.org and example.net.\n", "", classify.ActionReview, "review: no site named"},
		{"yes to our question", "Re: example.org", "Yes please.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> Shall we remove example.org from our crawl list?\n", "", classify.ActionApply, "apply:"},
		{"yes to our question, site only quoted", "Re: your site", "Yes please.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> Shall we remove example.org from our crawl list?\n", "", classify.ActionReview, "review: the sites come from our quoted message"},
		{"yes to our acknowledgement", "Re: example.org", "Yes, thanks.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> We have removed example.org. If you want a site crawled again, reply to this message and say so.\n",
			"In-Reply-To: <lohibot-reply.1.ab@lohisoft.com>\n", classify.ActionReview, "reply to our automatic reply"},
		{"yes to our acknowledgement, without In-Reply-To", "Re: example.org", "Yes, thanks.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n> We have removed example.org. If you want a site crawled again, reply to this message and say so; a person will read it.\n",
			"", classify.ActionReview, "review: no clear request to apply"},
		{"again in words no rule holds", "x", "Bitte stoppen Sie das Crawling von alt-ex.de. Und neu-ex.de bitte erneut aufnehmen.", "", classify.ActionReview, "review: re-inclusion words too: 'erneut'"},
		{"again in a report", "x", "Your crawler is hitting example.com again. Please stop crawling example.com.", "", classify.ActionApply, "apply:"},
		{"never again", "x", "Please stop crawling example.com and never visit example.com again.", "", classify.ActionApply, "apply:"},
		{"site outside the request", "x", "We moved from old-ex.com to new-ex.com. Please stop crawling new-ex.com.", "", classify.ActionReview, "review: named outside the request"},
		{"conditional", "x", "If your bot keeps ignoring robots.txt, we may ask you to stop crawling example.com.", "", classify.ActionReview, "unclear: conditional"},
		{"what we might do ourselves", "x", "Do you respect robots.txt? We might block LohiSoftBot on example.com.", "", classify.ActionReview, "review: no clear request"},
		{"is it possible", "x", "Ist es möglich, example.de von Ihrer Liste zu entfernen?", "", classify.ActionApply, "apply:"},
		{"appreciate it if", "x", "We would appreciate it if your crawler left example.com out from now on.", "", classify.ActionApply, "apply:"},
		{"auto", "Out of office", "I am away.", "Auto-Submitted: auto-replied\n", classify.ActionIgnore, "ignore: machine mail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := "From: w@example.net\nSubject: " + tt.subject + "\nMessage-ID: <t@x>\n" + tt.headers +
				"Content-Type: text/plain; charset=utf-8\n\n" + tt.body
			r := classify.Classify(message.Read([]byte(raw)))
			if r.Action != tt.action {
				t.Errorf("Classify(%q).Action = %q, want %q; intent %s, reasons %q", tt.body, r.Action, tt.action, r.Intent, r.Reasons)
			}
			if !slices.ContainsFunc(r.Reasons, func(s string) bool { return strings.HasPrefix(s, tt.reason) }) {
				t.Errorf("Classify(%q).Reasons = %q, want one starting with %q", tt.body, r.Reasons, tt.reason)
			}
		})
	}
}

func TestIsMailProvider(t *testing.T) {
	for host, want := range map[string]bool{
		"gmail.com": true, "www.seznam.cz": true, "email.cz": true, "pec.aruba.it": true, "otenet.gr": true,
		"mysite.free.fr": true, "example.com": false, "aruba.it": false, "lohisoft.com": false, "": false,
	} {
		if got := classify.IsMailProvider(host); got != want {
			t.Errorf("IsMailProvider(%q) = %v, want %v", host, got, want)
		}
	}
}
