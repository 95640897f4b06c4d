package botpage_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/app/botpage"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		query, header string
		want          botpage.Lang
		fromHeader    bool
	}{
		{"", "", botpage.English, true},
		{"it", "", botpage.Italian, false},
		{"HU", "da", botpage.Hungarian, false},
		{"da-DK", "", botpage.Danish, false},
		{"fr", "hu", botpage.Hungarian, true}, // unknown ?lang= falls back to the header
		{"", "it", botpage.Italian, true},
		{"", "it-IT,it;q=0.9,en;q=0.8", botpage.Italian, true},
		{"", "fr, it;q=0.5", botpage.Italian, true},
		{"", "de, da;q=0.1, en;q=0.05", botpage.Danish, true},
		{"", "en;q=0.1, hu", botpage.Hungarian, true},
		{"", "da-DK;q=0.9, it;q=0.95", botpage.Italian, true},
		{"", "it;q=0.5, hu;q=0.5", botpage.Italian, true}, // a tie keeps the header's order
		{"", "it;q=0, da", botpage.Danish, true},
		{"", "it;q=0, *;q=0.5", botpage.English, true},
		{"", "en;q=0, *", botpage.Italian, true},
		{"", "sv, de-CH", botpage.English, true},
		{"", "*", botpage.English, true},
		{"", "hu;q=abc, da;q=0.5", botpage.Danish, true}, // a malformed entry is skipped
		{"", "hu;q=2, da;q=0.5", botpage.Danish, true},
		{"", ",,;q=1, DA", botpage.Danish, true},
		{"", "x-klingon, hu-HU", botpage.Hungarian, true},
	}
	for _, tt := range tests {
		l, fromHeader := botpage.Negotiate(tt.query, tt.header)
		if l != tt.want || fromHeader != tt.fromHeader {
			t.Errorf("Negotiate(%q, %q) = %s, %v; want %s, %v", tt.query, tt.header, l, fromHeader, tt.want, tt.fromHeader)
		}
	}
}

// TestAcceptLanguage checks the language chosen over HTTP and the Vary
// header that tells caches the page depends on Accept-Language.
func TestAcceptLanguage(t *testing.T) {
	srv, _ := server(t, testFacts())
	tests := []struct {
		path, header string
		want         string
		vary         bool
	}{
		{"/bot", "", "en", true},
		{"/bot", "hu-HU,hu;q=0.9,en-US;q=0.8,en;q=0.7", "hu", true},
		{"/bot", "de-DE, da;q=0.6, it;q=0.4", "da", true},
		{"/bot?lang=it", "hu", "it", false},
		{"/bot/", "it", "it", true},
	}
	for _, tt := range tests {
		resp, body := get(t, srv, tt.path, "Accept-Language", tt.header)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", tt.path, resp.StatusCode)
		}
		if got := resp.Header.Get("Content-Language"); got != tt.want {
			t.Errorf("GET %s with Accept-Language %q: Content-Language %q, want %q", tt.path, tt.header, got, tt.want)
		}
		if !strings.Contains(string(body), `<html lang="`+tt.want+`">`) {
			t.Errorf("GET %s with Accept-Language %q: page not in %s", tt.path, tt.header, tt.want)
		}
		if vary := resp.Header.Get("Vary") == "Accept-Language"; vary != tt.vary {
			t.Errorf("GET %s with Accept-Language %q: Vary %q, want Accept-Language: %v", tt.path, tt.header, resp.Header.Get("Vary"), tt.vary)
		}
	}
}

// TestEscaping checks that configured values are text, never markup.
func TestEscaping(t *testing.T) {
	f := testFacts()
	f.Operator = `<script>alert("x")</script> Evil & "Sons" s.r.o.`
	f.IPsURL = `https://lohisoft.com/bot/ips.json"onmouseover="x`
	srv, _ := server(t, f)
	for _, l := range botpage.Langs() {
		resp, body := get(t, srv, "/bot?lang="+string(l))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /bot?lang=%s: status %d", l, resp.StatusCode)
		}
		if strings.Contains(string(body), "<script") || strings.Contains(string(body), `"onmouseover`) {
			t.Errorf("page %s has markup from the configuration:\n%s", l, body)
		}
		d := parse(t, body)
		if !strings.Contains(d.text(), f.Operator) {
			t.Errorf("page %s does not show the operator %q as text", l, f.Operator)
		}
		if len(d.all("script")) != 0 {
			t.Errorf("page %s has a <script> element", l)
		}
	}
}

// TestFactsFollowConfiguration changes the facts between requests, as a
// configuration reload does, and checks that the page and the list change
// at once.
func TestFactsFollowConfiguration(t *testing.T) {
	srv, cur := server(t, testFacts())
	next := testFacts()
	next.Budget = 1
	next.Contact = "opt-out@lohisoft.example"
	next.Crawlers = []identity.Crawler{crawler("192.0.2.10", "crawler7.bot.lohisoft.com")}
	next.UserAgents = []botpage.UserAgent{
		{String: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)", Status: botpage.InUse},
		{String: "LohiSoftBot/1.0 (+message@lohisoft.com)", Status: botpage.Older},
	}
	next.IPsCreated = time.Date(2026, 9, 2, 8, 0, 0, 0, time.UTC)
	cur.Store(next)
	tests := []struct {
		lang      botpage.Lang
		want      []string
		notWanted []string
	}{
		{botpage.English, []string{"At most 1 page per site", "At most 1 page per site.", "Currently in use\nLohiSoftBot/1.0 (+https://lohisoft.com/bot)\nOlder form, still legitimate\nLohiSoftBot/1.0 (+message@lohisoft.com)"}, []string{"20 pages"}},
		{botpage.Italian, []string{"Massimo 1 pagina per sito", "Al massimo 1 pagina per sito."}, []string{"20 pagine"}},
		{botpage.Danish, []string{"Maks. 1 side pr. site", "Højst 1 side pr. site."}, []string{"20 sider"}},
		{botpage.Hungarian, []string{"Max. 1 oldal weboldalanként", "Weboldalanként legfeljebb 1 oldalt."}, []string{"20 oldal"}},
	}
	common := []string{"192.0.2.10\ncrawler7.bot.lohisoft.com", "$ dig +short -x 192.0.2.10\ncrawler7.bot.lohisoft.com.", "opt-out@lohisoft.example"}
	for _, tt := range tests {
		_, body := get(t, srv, "/bot?lang="+string(tt.lang))
		page := parse(t, body).text()
		for _, w := range append(tt.want, common...) {
			if !strings.Contains(page, w) {
				t.Errorf("page %s after the change lacks %q:\n%s", tt.lang, w, page)
			}
		}
		for _, w := range append(tt.notWanted, "79.139.58.98", "crawler1.bot", "message@lohisoft.com\n") {
			if strings.Contains(page, w) {
				t.Errorf("page %s after the change still shows %q", tt.lang, w)
			}
		}
	}
	_, body := get(t, srv, "/bot/ips.json")
	want := `{"creationTime":"2026-09-02T08:00:00Z","prefixes":[{"ipv4Prefix":"192.0.2.10/32"}]}` + "\n"
	if string(body) != want {
		t.Errorf("ips.json after the change = %s, want %s", body, want)
	}
}

func TestIPsJSON(t *testing.T) {
	f := testFacts()
	srv, _ := server(t, f)
	resp, body := get(t, srv, "/bot/ips.json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /bot/ips.json: status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var got identity.IPList
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("ips.json: %v\n%s", err, body)
	}
	if diff := cmp.Diff(identity.NewIPList(f.Crawlers, f.IPsCreated), got); diff != "" {
		t.Errorf("ips.json differs from identity.NewIPList (-want +got):\n%s", diff)
	}
	want := `{"creationTime":"2026-08-23T10:00:00Z","prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"}]}` + "\n"
	if string(body) != want {
		t.Errorf("ips.json = %s, want %s", body, want)
	}

	// Without IPsCreated, the list is made at the time of the request.
	f2 := testFacts()
	f2.IPsCreated = time.Time{}
	srv2, _ := server(t, f2)
	_, body = get(t, srv2, "/bot/ips.json")
	if !strings.HasPrefix(string(body), `{"creationTime":"2026-09-01T00:00:00Z"`) {
		t.Errorf("ips.json without IPsCreated = %s, want the request time", body)
	}

	// HEAD has the headers and no body; a matching ETag gets 304.
	req, _ := http.NewRequest(http.MethodHead, srv.URL+"/bot/ips.json", nil)
	hresp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK || hresp.Header.Get("Content-Type") != "application/json" || hresp.ContentLength != int64(len(want)) {
		t.Errorf("HEAD /bot/ips.json: %d %q length %d", hresp.StatusCode, hresp.Header.Get("Content-Type"), hresp.ContentLength)
	}
	r304, _ := get(t, srv, "/bot/ips.json", "If-None-Match", resp.Header.Get("ETag"))
	if r304.StatusCode != http.StatusNotModified {
		t.Errorf("GET /bot/ips.json with If-None-Match %s: status %d, want 304", resp.Header.Get("ETag"), r304.StatusCode)
	}
}

// TestNoRedirects checks every address of the page and the list answers
// itself, and that other paths are not found.
func TestNoRedirects(t *testing.T) {
	srv, _ := server(t, testFacts())
	for path, want := range map[string]int{
		"/bot": 200, "/bot/": 200, "/bot?lang=da": 200, "/bot/ips.json": 200,
		"/bot/ips.json?x=1": 200, "/": 404, "/bot/other": 404, "/bot/ips.json/": 404,
	} {
		resp, _ := get(t, srv, path)
		if resp.StatusCode != want {
			t.Errorf("GET %s: status %d, want %d", path, resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/bot/ips.json", nil)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /bot/ips.json: status %d, want 405", resp.StatusCode)
	}
}

// TestBadFacts checks that facts the page cannot state truthfully give a
// 500, never a page with holes.
func TestBadFacts(t *testing.T) {
	tests := []struct {
		name   string
		change func(*botpage.Facts)
	}{
		{"no crawlers", func(f *botpage.Facts) { f.Crawlers = nil }},
		{"IPv6 crawler", func(f *botpage.Facts) {
			f.Crawlers = []identity.Crawler{crawler("2001:db8::1", "crawler1.bot.lohisoft.com")}
		}},
		{"host outside the bot zone", func(f *botpage.Facts) { f.Crawlers = []identity.Crawler{crawler("192.0.2.1", "www.lohisoft.com")} }},
		{"zero budget", func(f *botpage.Facts) { f.Budget = 0 }},
		{"contact with a name", func(f *botpage.Facts) { f.Contact = "Bot <message@lohisoft.com>" }},
		{"no operator", func(f *botpage.Facts) { f.Operator = " " }},
		{"javascript URL", func(f *botpage.Facts) { f.IPsURL = "javascript:alert(1)" }},
		{"relative page URL", func(f *botpage.Facts) { f.URL = "/bot" }},
		{"no user agent", func(f *botpage.Facts) { f.UserAgents = nil }},
		{"first user agent not in use", func(f *botpage.Facts) { f.UserAgents[0].Status = botpage.Older }},
		{"no date", func(f *botpage.Facts) { f.Updated = time.Time{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFacts()
			tt.change(f)
			if err := f.Check(); err == nil {
				t.Errorf("Check() = nil, want an error")
			}
			srv, _ := server(t, f)
			resp, body := get(t, srv, "/bot")
			if resp.StatusCode != http.StatusInternalServerError || strings.Contains(string(body), "<html") {
				t.Errorf("GET /bot: status %d, want 500 and no page", resp.StatusCode)
			}
		})
	}
	if err := testFacts().Check(); err != nil {
		t.Errorf("Check() of the published facts = %v, want nil", err)
	}
}

// BenchmarkServePage measures a page served from the cache (the facts
// unchanged) and one rendered anew (new facts on every request).
func BenchmarkServePage(b *testing.B) {
	f := testFacts()
	for _, bb := range []struct {
		name  string
		facts func() *botpage.Facts
	}{
		{"cached", func() *botpage.Facts { return f }},
		{"render", testFacts},
	} {
		b.Run(bb.name, func(b *testing.B) {
			h, err := botpage.NewHandler(bb.facts, nil)
			if err != nil {
				b.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, "/bot", nil)
			req.Header.Set("Accept-Language", "hu-HU,hu;q=0.9,en;q=0.8")
			b.ReportAllocs()
			for b.Loop() {
				h.ServePage(discard{}, req)
			}
		})
	}
}

type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
