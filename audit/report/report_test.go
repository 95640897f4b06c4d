package report_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/audit/report"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

var t0 = time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)

// Hostile strings, as a crawled page or an email could carry them.
const (
	evilTitle   = `Shop <script>alert("title")</script> & <img src=x onerror=alert(1)>`
	evilSubject = `Please stop <script>alert('subject')</script> crawling`
	evilFrom    = `"><script>alert(2)</script>@example.com`
	evilAnchor  = `</td><script>alert(3)</script>`
	escapeSeq   = "\x1b[31mRED\x1b[0m"
)

type fixture struct {
	t     *testing.T
	ctx   context.Context
	store *db.Store
}

func (f *fixture) create(v any) {
	f.t.Helper()
	if err := dbtest.Gorm(f.store).WithContext(f.ctx).Create(v).Error; err != nil {
		f.t.Fatalf("create %T: %v", v, err)
	}
}

func (f *fixture) request(cycle int64, slot *int, purpose, raw string, sent time.Time, dur time.Duration, status int, outcome string, mod func(*db.Request)) int64 {
	f.t.Helper()
	u, _ := url.Parse(raw)
	site, err := policy.SiteOf(raw)
	if err != nil {
		f.t.Fatal(err)
	}
	done := sent.Add(dur)
	r := &db.Request{CycleID: &cycle, BudgetSlot: slot, Site: site, Host: u.Hostname(), Origin: u.Scheme + "://" + u.Host, URL: raw,
		Method: "GET", Purpose: purpose, SentAt: sent, CompletedAt: &done, Status: &status, Bytes: 2345,
		DurationMS: dur.Milliseconds(), DelayMS: 2000, Outcome: outcome, PolicyCheck: "allowed (policy v1)"}
	if mod != nil {
		mod(r)
	}
	f.create(r)
	return r.ID
}

const robotsBody = "# Shop robots\nUser-agent: *\nDisallow: /cart/\n\nUser-agent: LohiSoftBot\nDisallow: /private/\nCrawl-delay: 2\n"

// writeStory writes one site's story: listed, crawled twice (a 503 with
// Retry-After, a redirect, a page marked noindex, a second host), then an
// exclusion email with a hostile subject and the exclusion it caused.
func writeStory(t *testing.T, dsn string) *fixture {
	t.Helper()
	ctx := context.Background()
	store := dbtest.OpenDSN(t, dsn)
	f := &fixture{t: t, ctx: ctx, store: store}
	p := policy.New(store, &policy.Options{Now: func() time.Time { return t0.Add(-24 * time.Hour) }})
	if _, err := p.AddSites(ctx, []string{"https://www.example.com/"}, policy.Change{Actor: "anna", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	for week := range 2 {
		start := t0.Add(time.Duration(week) * 7 * 24 * time.Hour)
		c := &db.CrawlCycle{Site: "example.com", Node: "crawler1", StartedAt: start, Status: db.CycleDone, Budget: 20, DelayMS: 2000}
		fin := start.Add(3 * time.Minute)
		c.FinishedAt = &fin
		f.create(c)
		slot := 0
		next := func() *int { slot++; s := slot; return &s }
		at := start
		step := func(d time.Duration) time.Time { at = at.Add(d); return at }
		for _, origin := range []string{"https://www.example.com", "https://shop.example.com"} {
			reqID := f.request(c.ID, nil, db.PurposeRobots, origin+"/robots.txt", step(0), 80*time.Millisecond, 200, "ok", nil)
			sum := sha256.Sum256([]byte(robotsBody))
			sn := &db.RobotsSnapshot{Origin: origin, FetchedAt: at.Add(80 * time.Millisecond), Status: 200, FinalURL: origin + "/robots.txt",
				Body: []byte(robotsBody), Sha256: hex.EncodeToString(sum[:]), Outcome: db.RobotsParsed, RequestID: &reqID}
			f.create(sn)
			link := func(r *db.Request) { r.RobotsSnapshotID = &sn.ID; r.RobotsRule = "no rule matched" }
			if origin == "https://shop.example.com" {
				f.request(c.ID, next(), db.PurposePage, origin+"/", step(2500*time.Millisecond), 300*time.Millisecond, 200, "ok", link)
				continue
			}
			home := f.request(c.ID, next(), db.PurposePage, origin+"/", step(2500*time.Millisecond), 240*time.Millisecond, 200, "ok", link)
			red := f.request(c.ID, next(), db.PurposePage, origin+"/old", step(2500*time.Millisecond), 90*time.Millisecond, 301, "redirect", link)
			f.request(c.ID, next(), db.PurposePage, origin+"/new", step(2500*time.Millisecond), 200*time.Millisecond, 200, "ok",
				func(r *db.Request) { link(r); r.RedirectOf = &red })
			f.request(c.ID, next(), db.PurposePage, origin+"/busy", step(2500*time.Millisecond), 120*time.Millisecond, 503, "retry",
				func(r *db.Request) { link(r); r.RetryAfter = "6" })
			f.request(c.ID, next(), db.PurposePage, origin+"/busy", step(7*time.Second), 150*time.Millisecond, 200, "ok",
				func(r *db.Request) { link(r); r.Attempt = 1 })
			f.request(c.ID, next(), db.PurposePage, origin+"/hidden", step(2500*time.Millisecond), 100*time.Millisecond, 200, "noindex", link)
			if week == 0 {
				f.create(&db.Page{URL: origin + "/", Site: "example.com", Title: evilTitle + escapeSeq, Description: "Fine shoes",
					H1: "Shoes", H2: "New\nSale", Status: 200, FetchedAt: at, RequestID: &home})
				f.create(&db.Anchor{FromURL: "https://other.org/", ToURL: origin + "/", ToSite: "example.com", AnchorText: evilAnchor, SeenAt: at})
			}
		}
	}
	// The email, and the exclusion it caused.
	received := t0.Add(8*24*time.Hour + time.Hour)
	f.create(&db.MailMessage{MessageID: "abc123@mail.example.com", ReceivedAt: received, FromAddr: evilFrom, Subject: evilSubject + escapeSeq,
		Intent: "exclude", Domains: "example.com", Lang: "en", Outcome: "excluded", Source: "imap://bot@localhost/INBOX", Size: 812,
		Sha256: strings.Repeat("ab", 32), Raw: []byte("Subject: x\r\n\r\nbody")})
	f.create(&db.MailMessage{MessageID: "unrelated@x.org", ReceivedAt: received, FromAddr: "a@x.org", Subject: "hello",
		Intent: "other", Domains: "example.com.au xexample.com", Outcome: "queued"})
	f.create(&db.Page{URL: "https://www.example.com/new", Site: "example.com", Title: "New", Status: 200, FetchedAt: t0})
	f.create(&db.Anchor{FromURL: "https://www.example.com/", ToURL: "https://www.example.com/new", ToSite: "example.com", AnchorText: "New", SeenAt: t0})
	px := policy.New(store, &policy.Options{Now: func() time.Time { return received.Add(time.Second) }})
	if _, err := px.Exclude(ctx, []string{"example.com"}, policy.Change{Actor: "webmaster@example.com", Reason: "email",
		Evidence: "abc123@mail.example.com", Source: "mail"}); err != nil {
		t.Fatal(err)
	}
	// The exclusion purged the index entries above. A page whose request
	// was in flight at the exclusion, and another site's link to it, land
	// after it: the report shows them.
	late := received.Add(2 * time.Second)
	f.create(&db.Page{URL: "https://www.example.com/late", Site: "example.com", Title: evilTitle + escapeSeq, Description: "Late shoes",
		H1: "Late", Status: 200, FetchedAt: late})
	f.create(&db.Anchor{FromURL: "https://other.org/", ToURL: "https://www.example.com/late", ToSite: "example.com", AnchorText: evilAnchor, SeenAt: late})
	return f
}

func TestBuild(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		f := writeStory(t, dsn)
		rep, err := report.Build(f.ctx, f.store, "example.com", &report.Options{Now: func() time.Time { return t0.Add(30 * 24 * time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		checks := []struct {
			name      string
			got, want any
		}{
			{"listed", rep.Status.Listed, true},
			{"crawled", rep.Status.Crawled, true},
			{"cycles", rep.Status.Cycles, 2},
			{"requests", rep.Status.Requests, 18},
			{"page requests", rep.Status.PageRequests, 14},
			{"excluded", rep.Status.Excluded, true},
			{"exclusion evidence", rep.Status.Exclusion.Evidence, "abc123@mail.example.com"},
			{"exclusion mail found", rep.Status.Exclusion.MailID != 0, true},
			{"requests since exclusion", rep.Status.RequestsSinceExclusion, 0},
			{"policy events", len(rep.Events), 2},
			{"cycle 1 requests", len(rep.Cycles[0].Requests), 9},
			{"cycle 1 page requests", rep.Cycles[0].PageRequests, 7},
			{"robots snapshots", len(rep.Robots), 4},
			{"snapshot hash ok", rep.Robots[0].HashOK, true},
			{"snapshot body", rep.Robots[0].Body, robotsBody},
			{"pages", len(rep.Pages), 1},
			{"anchors", len(rep.Anchors), 1},
			{"index purged at exclusion", *rep.Status.Exclusion.IndexPurged, db.IndexPurge{Pages: 2, Anchors: 2}},
			{"exclusion event purge", *rep.Events[1].IndexPurged, db.IndexPurge{Pages: 2, Anchors: 2}},
			{"site-add event purge", rep.Events[0].IndexPurged == nil, true},
			{"emails (not the one naming example.com.au)", len(rep.Mail), 1},
			{"audit rules", len(rep.Audit), len(audit.Rules())},
			{"audit ok", rep.OK(), true},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
			}
		}
		for _, a := range rep.Audit {
			for _, v := range a.Violations {
				t.Errorf("violation %s/%s: %s", v.Rule, v.Check, v.Evidence)
			}
		}
	})
}

func TestBuildBrokenPromiseShows(t *testing.T) {
	f := writeStory(t, dbtest.DSN(t, "sqlite"))
	// A request after the exclusion.
	var c db.CrawlCycle
	if err := dbtest.Gorm(f.store).Where("site = ?", "example.com").Order("id desc").First(&c).Error; err != nil {
		t.Fatal(err)
	}
	f.request(c.ID, nil, db.PurposePage, "https://www.example.com/late", t0.Add(9*24*time.Hour), 100*time.Millisecond, 200, "ok", nil)
	rep, err := report.Build(f.ctx, f.store, "example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatalf("Report.OK() = true, want false")
	}
	if rep.Status.RequestsSinceExclusion != 1 {
		t.Errorf("RequestsSinceExclusion = %d, want 1", rep.Status.RequestsSinceExclusion)
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, rep, "en"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NOT kept", "excluded", "/late"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}

func build(t *testing.T) *report.Report {
	t.Helper()
	f := writeStory(t, dbtest.DSN(t, "sqlite"))
	rep, err := report.Build(f.ctx, f.store, "example.com", &report.Options{Now: func() time.Time { return t0.Add(30 * 24 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestHTMLHasNoLiveMarkup puts <script> in a page title, an anchor text, an
// email's subject and sender, and checks that the HTML report, in every
// language, holds no live markup and nothing from outside.
func TestHTMLHasNoLiveMarkup(t *testing.T) {
	rep := build(t)
	for _, lang := range report.Languages() {
		t.Run(lang, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.WriteHTML(&buf, rep, lang); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Contains(strings.ToLower(out), "<script") {
				t.Errorf("WriteHTML(%s) contains <script", lang)
			}
			for _, want := range []string{"&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;", "&lt;script&gt;alert(&#39;subject&#39;)&lt;/script&gt;"} {
				if !strings.Contains(out, want) {
					t.Errorf("WriteHTML(%s) lacks the escaped text %q", lang, want)
				}
			}
			if strings.Contains(out, "\x1b") {
				t.Errorf("WriteHTML(%s) passes an escape character through", lang)
			}
			doc, err := html.Parse(strings.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				if n.Type == html.ElementNode {
					switch n.Data {
					case "script", "iframe", "object", "embed", "link", "img", "base", "form":
						t.Errorf("WriteHTML(%s) has a <%s> element", lang, n.Data)
					}
					for _, a := range n.Attr {
						k := strings.ToLower(a.Key)
						if strings.HasPrefix(k, "on") || k == "src" || k == "srcset" ||
							(k == "href" && !strings.HasPrefix(a.Val, "#")) {
							t.Errorf("WriteHTML(%s): <%s %s=%q>", lang, n.Data, a.Key, a.Val)
						}
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			for _, bad := range []string{"@import", "url(http", "url(//", "<link"} {
				if strings.Contains(out, bad) {
					t.Errorf("WriteHTML(%s) refers outside itself: %q", lang, bad)
				}
			}
			if !strings.Contains(out, "<svg") || !strings.Contains(out, "@media print") {
				t.Errorf("WriteHTML(%s) lacks the SVG timeline or the print styles", lang)
			}
		})
	}
}

func TestTextEscapesControlCharacters(t *testing.T) {
	rep := build(t)
	var buf bytes.Buffer
	if err := report.WriteText(&buf, rep, "en"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "\x1b") {
		t.Errorf("WriteText passes an escape character through")
	}
	for _, want := range []string{`\x1b[31mRED`, "abc123@mail.example.com", "Disallow: /private/", "Crawl report: example.com", "Retry-After: 6"} {
		if !strings.Contains(out, want) {
			t.Errorf("WriteText lacks %q", want)
		}
	}
}

func TestIndexPurgeShown(t *testing.T) {
	rep := build(t)
	for _, c := range []struct{ format, lang, want string }{
		{"text", "en", "index purged: 2 pages, 2 link texts"},
		{"html", "en", "index purged: 2 pages, 2 link texts"},
		{"json", "", `"index_purged":{"pages":2,"link_texts":2}`},
		{"text", "it", "indice svuotato: 2 pagine, 2 testi di link"},
		{"text", "da", "indeks ryddet: 2 sider, 2 linktekster"},
		{"html", "hu", "index törölve: 2 oldal, 2 linkszöveg"},
	} {
		var buf bytes.Buffer
		if err := report.Write(&buf, rep, c.format, c.lang); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("Write(%s, %s) lacks %q", c.format, c.lang, c.want)
		}
	}
}

func TestJSON(t *testing.T) {
	rep := build(t)
	var buf bytes.Buffer
	if err := report.Write(&buf, rep, "json", ""); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.TrimRight(buf.String(), "\n"), "\n"); n != 0 {
		t.Errorf("JSON report has %d newlines inside, want one line", n)
	}
	var back report.Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Site != "example.com" || len(back.Cycles) != 2 || back.Pages[0].Title != rep.Pages[0].Title || len(back.Audit) != len(audit.Rules()) {
		t.Errorf("JSON round trip lost data: site %q, %d cycles, title %q, %d rules", back.Site, len(back.Cycles), back.Pages[0].Title, len(back.Audit))
	}
}

func TestLanguages(t *testing.T) {
	rep := build(t)
	titles := map[string]string{"en": "Crawl report", "it": "Rapporto di scansione", "da": "Crawlrapport", "hu": "Feltérképezési jelentés"}
	for _, format := range []string{"text", "html"} {
		for lang, title := range titles {
			var buf bytes.Buffer
			if err := report.Write(&buf, rep, format, lang); err != nil {
				t.Fatalf("Write(%s, %s): %v", format, lang, err)
			}
			if !strings.Contains(buf.String(), title) {
				t.Errorf("Write(%s, %s) lacks %q", format, lang, title)
			}
			if lang != "en" && strings.Contains(buf.String(), "Every promise checked was kept") {
				t.Errorf("Write(%s, %s) has English verdict text", format, lang)
			}
		}
	}
	if err := report.Write(&bytes.Buffer{}, rep, "html", "fr"); !errors.Is(err, report.ErrUnknownLanguage) {
		t.Errorf("Write(html, fr) = %v, want ErrUnknownLanguage", err)
	}
	if err := report.Write(&bytes.Buffer{}, rep, "pdf", "en"); !errors.Is(err, report.ErrUnknownFormat) {
		t.Errorf("Write(pdf) = %v, want ErrUnknownFormat", err)
	}
}

// TestWriteSample writes the sample report to the file named by
// LOHIBOT_REPORT_SAMPLE (scripts/report-screenshot.sh renders it).
func TestWriteSample(t *testing.T) {
	path := os.Getenv("LOHIBOT_REPORT_SAMPLE")
	if path == "" {
		t.Skip("LOHIBOT_REPORT_SAMPLE not set")
	}
	rep := build(t)
	lang := os.Getenv("LOHIBOT_REPORT_LANG")
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, rep, lang); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReportSignature: a signed request shows its keyid, created and
// expires in the text, HTML and JSON reports.
func TestReportSignature(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "r.db")
	store := dbtest.OpenDSN(t, dsn)
	sent := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	done, exp, st := sent.Add(time.Second), sent.Add(5*time.Minute), 200
	if err := dbtest.Gorm(store).Create(&db.Request{Site: "example.net", Host: "example.net", Origin: "https://example.net", URL: "https://example.net/robots.txt",
		Method: "GET", Purpose: db.PurposeRobots, SentAt: sent, CompletedAt: &done, Status: &st, Outcome: "ok",
		SigKeyID: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U", SigCreated: &sent, SigExpires: &exp}).Error; err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(context.Background(), store, "example.net", nil)
	if err != nil {
		t.Fatal(err)
	}
	for format, want := range map[string][]string{
		"text": {"signed poqkLGiy… 12:00:00–12:05:00"},
		"html": {"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"},
		"json": {`"signature":{"keyid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","created":"2026-12-01T12:00:00Z","expires":"2026-12-01T12:05:00Z"}`},
	} {
		var b bytes.Buffer
		if err := report.Write(&b, rep, format, ""); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s report lacks %q", format, w)
			}
		}
	}
}

// TestLogHeadShown: the text and HTML reports show the transparency log's
// size and root the report was built from, and the command that proves the
// site's records.
func TestLogHeadShown(t *testing.T) {
	rep := build(t)
	h := "niyDH5gVBclB2zOtaiCmA2jwHR9wPw9BzNHMfFxE0123="
	rep.Log = &report.LogHead{Size: 7, Root: h, Check: "lohibot log prove example.com --checkpoint FILE"}
	for _, format := range []string{"text", "html"} {
		var buf bytes.Buffer
		if err := report.Write(&buf, rep, format, "en"); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, want := range []string{h, "7 records", "lohibot log prove example.com --checkpoint FILE"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q", format, want)
			}
		}
		if strings.Contains(out, "UTC UTC") {
			t.Errorf("%s report says \"UTC UTC\"", format)
		}
	}
}
