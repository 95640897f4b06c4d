package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/lohisoft/lohibot/audit"
)

// everyWordReport is a report that makes the writers use every word of
// the catalogue they can: every request outcome, every robots.txt reason,
// every email outcome and review state, every cycle ending and every kind
// of policy event. Its data holds no English words of its own.
func everyWordReport() *Report {
	at := time.Date(2026, 12, 1, 10, 21, 50, 0, time.UTC)
	ptr := func(t time.Time) *time.Time { return &t }
	st := func(n int) *int { return &n }
	r := &Report{Site: "xn--bcher-kva.de", GeneratedAt: at}
	r.Status = Status{Listed: true, StartURL: "https://xn--bcher-kva.de/", ListedSince: ptr(at), Crawled: true, Cycles: 3,
		Requests: 30, PageRequests: 20, FirstRequest: ptr(at), LastRequest: ptr(at), Excluded: true,
		Exclusion: &Exclusion{Since: at, By: "x@xn--bcher-kva.de", Reason: "-", Evidence: "<m1@xn--bcher-kva.de>", Source: "mail", Version: 3, MailID: 1}}
	kinds := []string{"exclude", "exclude-repeat", "reinclude", "site-add", "site-update", "site-remove"}
	for i, k := range kinds {
		r.Events = append(r.Events, Event{Version: int64(i + 1), HappenedAt: at, Kind: k, Actor: "anna", Source: "cli"})
	}
	var outcomes, rules []string
	for k := range catalog {
		if o, ok := strings.CutPrefix(k, "oc_"); ok {
			outcomes = append(outcomes, o)
		}
	}
	for r := range ruleKeys {
		rules = append(rules, r)
	}
	reasons := []string{"nothing left to fetch", "budget spent", "excluded while crawling", "interrupted", "host lease lost to another crawler",
		"every host left, a.xn--bcher-kva.de: login required, HTTP 401; b.xn--bcher-kva.de: forbidden, HTTP 403",
		"nothing left to fetch; left c.xn--bcher-kva.de: bot protection challenge, HTTP 503; d.xn--bcher-kva.de: robots.txt unreachable, so nothing is allowed",
		"every host left: e.xn--bcher-kva.de (login required (status 401))"}
	states := []string{"running", "done", "stopped"}
	for i, reason := range reasons {
		c := Cycle{ID: int64(40 + i), Number: i + 1, Node: "n1", StartedAt: ptr(at), FinishedAt: ptr(at), Status: states[i%3],
			Budget: 20, DelayMS: 1000, Reason: reason}
		for j, o := range outcomes {
			c.Requests = append(c.Requests, Request{ID: int64(100*i + j), SentAt: at.Add(time.Duration(j) * time.Second), CompletedAt: ptr(at.Add(time.Duration(j)*time.Second + 100*time.Millisecond)),
				Host: "xn--bcher-kva.de", URL: "https://xn--bcher-kva.de/a", Purpose: "page", Status: st(200), Outcome: o,
				RobotsRule: rules[j%len(rules)], Attempt: j % 2})
		}
		c.Requests = append(c.Requests, Request{ID: int64(100*i + 99), SentAt: at, Host: "xn--bcher-kva.de", URL: "https://xn--bcher-kva.de/robots.txt", Purpose: "robots"})
		r.Cycles = append(r.Cycles, c)
	}
	for _, o := range []string{"parsed", "allow-all", "disallow-all"} {
		r.Robots = append(r.Robots, Snapshot{ID: 1, Origin: "https://xn--bcher-kva.de", FetchedAt: at, Status: 200, Outcome: o, HashOK: true, Body: "User-agent: *\nDisallow: /x\n"})
	}
	r.Robots = append(r.Robots, Snapshot{ID: 2, Origin: "https://xn--bcher-kva.de", FetchedAt: at, Outcome: "parsed", Body: ""})
	r.Pages = []Page{{ID: 1, URL: "https://xn--bcher-kva.de/", Title: "Bücher", Description: "Bücher", H1: "Bücher", Status: 200, FetchedAt: at}}
	r.Anchors = []Anchor{{FromURL: "https://xn--bcher-kva.de/", ToURL: "https://xn--bcher-kva.de/a", AnchorText: "Bücher", SeenAt: at}}
	i := int64(1)
	for _, o := range []string{"excluded", "queued", "ignored", "failed"} {
		for _, rv := range []string{"", "pending", "approved", "dismissed"} {
			for _, intent := range []string{"exclude", "reinclude", "other", "auto"} {
				r.Mail = append(r.Mail, Mail{ID: i, MessageID: "m1@xn--bcher-kva.de", ReceivedAt: at, From: "x@xn--bcher-kva.de", Subject: "Bücher",
					Intent: intent, Outcome: o, ReviewStatus: rv})
				i++
			}
		}
	}
	for _, rule := range audit.Rules() {
		r.Audit = append(r.Audit, RuleResult{Rule: rule, OK: rule != "budget", Checked: 3,
			Violations: []audit.Violation{}})
	}
	r.Audit[1].Violations = []audit.Violation{{Site: r.Site, Rule: "budget", Check: "over-budget", Evidence: "21 > 20"}}
	r.Audit = append(r.Audit, RuleResult{Rule: "storage", OK: true, Checked: 0, Violations: []audit.Violation{}})
	return r
}

// htmlText is what a reader of the HTML page sees: its text, one node a
// line (markup, class names and ids left out).
func htmlText(t *testing.T, page string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(page))
	inStyle := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			inStyle = string(name) == "style"
		case html.EndTagToken:
			inStyle = false
		case html.TextToken:
			if !inStyle {
				b.Write(z.Text())
				b.WriteByte('\n')
			}
		}
	}
}

// containsPhrase reports whether text holds p as a whole word or words,
// not inside a longer word of another language.
func containsPhrase(text, p string) bool {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for off := 0; ; {
		i := strings.Index(text[off:], p)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(p)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (start == 0 || !isWord(before)) && (end == len(text) || !isWord(after)) {
			return true
		}
		off = start + 1
	}
}

// TestEveryWordFromTheCatalogue renders the report in each language but
// English and fails on any English phrase of the report's own words that
// shows through: every word the report prints comes from the catalogue.
func TestEveryWordFromTheCatalogue(t *testing.T) {
	r := everyWordReport()
	type check struct{ key, en string }
	checks := map[string][]check{}
	for key, words := range catalog {
		for _, lang := range Languages() {
			en := words["en"]
			if words[lang] == "" {
				t.Errorf("catalogue key %q has no %s word", key, lang)
				continue
			}
			if lang == "en" || en == words[lang] || strings.Contains(words[lang], en) {
				continue // the same in both languages (URL, SHA-256, ok in Italian)
			}
			// A phrase with a placeholder is checked up to the placeholder.
			en, _, _ = strings.Cut(en, "{")
			if en = strings.TrimSpace(en); en != "" {
				checks[lang] = append(checks[lang], check{key, en})
			}
		}
	}
	for _, lang := range Languages() {
		if lang == "en" {
			continue
		}
		for _, format := range []string{FormatText, FormatHTML} {
			var buf bytes.Buffer
			if err := Write(&buf, r, format, lang); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if format == FormatHTML {
				out = htmlText(t, out)
			}
			for _, c := range checks[lang] {
				if containsPhrase(out, c.en) {
					t.Errorf("%s report in %s shows the English %q (catalogue key %q)", format, lang, c.en, c.key)
				}
			}
		}
	}
}

func TestCyclesNumberedPerSite(t *testing.T) {
	r := everyWordReport()
	var buf bytes.Buffer
	if err := WriteText(&buf, r, "en"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-- Cycle 1 (id 40) ·", "-- Cycle 2 (id 41) ·", "Crawl report: bücher.de (xn--bcher-kva.de)",
		"Excluded since:", "2026-12-01 10:21:50 UTC", "2026-12-01 10:21:50.000 UTC", "robots.txt itself is always allowed"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	buf.Reset()
	if err := WriteHTML(&buf, r, "en"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `Cycle 1 <span class="note">(id 40)</span>`) || strings.Contains(buf.String(), "UTC UTC") {
		t.Errorf("HTML report does not number cycles per site with the id beside, or doubles the zone")
	}
}
