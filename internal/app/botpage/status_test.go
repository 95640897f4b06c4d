package botpage_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/lohisoft/lohibot/internal/app/botpage"
)

var (
	excludedAt = time.Date(2026, 11, 20, 8, 30, 15, 123456000, time.UTC)
	lastSent   = time.Date(2026, 11, 18, 14, 2, 3, 0, time.UTC)
)

// fakeLookup answers for shop.example.co.uk (listed, crawled), gone.com
// (excluded) and xn--bcher-kva.de (listed, never crawled), and records the
// sites asked for.
type fakeLookup struct {
	mu    sync.Mutex
	asked []string
	fail  bool
}

func (f *fakeLookup) lookup(_ context.Context, site string) (*botpage.SiteStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, site)
	if f.fail {
		return nil, errors.New("database down")
	}
	switch site {
	case "example.co.uk":
		fin := lastSent.Add(time.Minute)
		return &botpage.SiteStatus{Listed: true, LastRequest: &lastSent,
			LastCycle: &botpage.CycleStatus{StartedAt: lastSent.Add(-3 * time.Minute), FinishedAt: &fin, PageRequests: 7, Budget: 20}}, nil
	case "gone.com":
		return &botpage.SiteStatus{Excluded: true, ExcludedSince: &excludedAt, LastRequest: &lastSent}, nil
	case "xn--bcher-kva.de":
		return &botpage.SiteStatus{Listed: true}, nil
	}
	return &botpage.SiteStatus{}, nil
}

func statusServer(t *testing.T, opts *botpage.StatusOptions) (*httptest.Server, *fakeLookup) {
	t.Helper()
	var cur atomic.Pointer[botpage.Facts]
	cur.Store(testFacts())
	fl := &fakeLookup{}
	if opts == nil {
		opts = &botpage.StatusOptions{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	h, err := botpage.NewStatusHandler(cur.Load, fl.lookup, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, fl
}

func TestStatusPage(t *testing.T) {
	srv, _ := statusServer(t, nil)
	tests := []struct {
		lang  botpage.Lang
		path  string
		code  int
		texts []string
	}{
		{botpage.English, "/bot/status", 200, []string{"What LohiSoftBot knows about a site", "Domain or web address", "Were those requests ours?"}},
		{botpage.English, "/bot/status?site=https://www.Shop.Example.co.uk/x?y", 200, []string{
			"Status of example.co.uk", "On the crawl list\nYes", "Excluded\nNo",
			"Last request from LohiSoftBot\n2026-11-18 14:02:03 UTC", "Last visit started\n2026-11-18 13:59:03 UTC",
			"Page requests in the last visit\n7 of at most 20", "Times are in UTC.",
			"/bot/status.json?site=example.co.uk",
			"Do a reverse lookup of the IP address the request came from. The host name returned must end in .bot.lohisoft.com.",
			"$ dig +short -x 79.139.58.98", "https://lohisoft.com/bot/ips.json",
		}},
		{botpage.Italian, "/bot/status?site=gone.com&lang=it", 200, []string{
			"Stato di gone.com", "Nell'elenco di scansione\nNo", "Escluso\nSì", "Escluso dal\n2026-11-20 08:30:15 UTC",
			"Un sito escluso non riceve richieste", "Inizio dell'ultima visita\nNessuna visita finora",
		}},
		{botpage.Danish, "/bot/status?site=b%C3%BCcher.de&lang=da", 200, []string{
			"Status for bücher.de (xn--bcher-kva.de)", "På crawlelisten\nJa", "Udelukket\nNej",
			"Seneste forespørgsel fra LohiSoftBot\nAldrig", "Intet besøg endnu",
		}},
		{botpage.Hungarian, "/bot/status?site=nothing.hu&lang=hu", 200, []string{
			"nothing.hu állapota", "A feltérképezési listán\nNem", "Kizárva\nNem", "Valóban tőlünk jöttek ezek a kérések?",
		}},
		{botpage.English, "/bot/status?site=co.uk", 400, []string{"“co.uk” is not a domain we can look up."}},
		{botpage.Hungarian, "/bot/status?site=&lang=hu", 400, []string{"nem olyan domain, amelyet le tudunk kérdezni"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.lang)+" "+tt.path, func(t *testing.T) {
			resp, body := get(t, srv, tt.path)
			if resp.StatusCode != tt.code {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.code)
			}
			if got := resp.Header.Get("Content-Language"); got != string(tt.lang) {
				t.Errorf("Content-Language = %q, want %q", got, tt.lang)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "form-action 'self'") || strings.Contains(csp, "script") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", cc)
			}
			d := parse(t, body)
			page := d.text()
			for _, want := range tt.texts {
				if !strings.Contains(page, want) {
					t.Errorf("page lacks %q; text:\n%s", want, page)
				}
			}
			checkStatusStructure(t, d, tt.lang)
		})
	}
}

// checkStatusStructure checks the status page's semantics: one h1, the
// landmarks, one labelled form that submits to the page by GET, and no
// script or external resource.
func checkStatusStructure(t *testing.T, d *doc, lang botpage.Lang) {
	t.Helper()
	if n := len(d.all("h1")); n != 1 {
		t.Errorf("%d h1 elements, want 1", n)
	}
	for _, tag := range []string{"header", "nav", "main", "footer", "form"} {
		if len(d.all(tag)) != 1 {
			t.Errorf("%d <%s> elements, want 1", len(d.all(tag)), tag)
		}
	}
	for _, tag := range []string{"script", "img", "iframe", "object", "embed", "link"} {
		if len(d.all(tag)) > 0 {
			t.Errorf("status page has a <%s> element", tag)
		}
	}
	if html := d.all("html"); len(html) == 1 {
		if l, _ := attr(html[0], "lang"); l != string(lang) {
			t.Errorf("<html lang=%q>, want %q", l, lang)
		}
	}
	form := d.all("form")[0]
	if m, _ := attr(form, "method"); m != "get" {
		t.Errorf("form method %q, want get", m)
	}
	if a, _ := attr(form, "action"); a != botpage.StatusPath {
		t.Errorf("form action %q, want %s", a, botpage.StatusPath)
	}
	labelled := false
	for _, l := range d.all("label") {
		if f, _ := attr(l, "for"); f == "site" {
			labelled = true
		}
	}
	if !labelled {
		t.Error("the site input has no <label for=site>")
	}
}

func TestStatusEscapesInput(t *testing.T) {
	srv, fl := statusServer(t, nil)
	const evil = `<script>alert("x")</script>"><img src=x onerror=alert(1)>`
	for _, path := range []string{
		"/bot/status?site=" + urlEscape(evil),
		"/bot/status?site=" + urlEscape(evil) + "&lang=it",
	} {
		resp, body := get(t, srv, path)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: status %d, want 400", path, resp.StatusCode)
		}
		b := string(body)
		if strings.Contains(strings.ToLower(b), "<script") || strings.Contains(b, "<img") {
			t.Errorf("GET %s: the page holds the visitor's markup unescaped:\n%s", path, b)
		}
		if !strings.Contains(b, "&lt;script&gt;") {
			t.Errorf("GET %s: the page does not show what was typed, escaped", path)
		}
		d := parse(t, body)
		if len(d.all("script")) != 0 || len(d.all("img")) != 0 {
			t.Errorf("GET %s: the parsed page has a script or img element", path)
		}
		in := d.all("input")[0]
		if v, _ := attr(in, "value"); v != evil {
			t.Errorf("input value = %q, want what was typed, %q", v, evil)
		}
	}
	if len(fl.asked) != 0 {
		t.Errorf("invalid input reached the lookup: %q", fl.asked)
	}
}

func urlEscape(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", "+", "%2B", " ", "%20", "<", "%3C", ">", "%3E", `"`, "%22", "=", "%3D")
	return r.Replace(s)
}

func TestStatusJSON(t *testing.T) {
	srv, _ := statusServer(t, nil)
	resp, body := get(t, srv, "/bot/status.json?site=www.gone.com")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"site": "gone.com", "listed": false, "excluded": true, "excluded_since": "2026-11-20T08:30:15Z",
		"last_request": "2026-11-18T14:02:03Z", "last_cycle": nil, "budget": float64(20),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	v, _ := got["verify"].(map[string]any)
	if v["reverse_dns_suffix"] != ".bot.lohisoft.com" || v["ips_url"] != "https://lohisoft.com/bot/ips.json" {
		t.Errorf("verify = %v", v)
	}
	for _, k := range []string{"by", "actor", "reason", "evidence", "source"} {
		if _, ok := got[k]; ok {
			t.Errorf("the JSON says %s: it must never say who asked or how", k)
		}
	}

	_, body = get(t, srv, "/bot/status.json?site=example.co.uk")
	var st botpage.SiteStatus
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	if c := st.LastCycle; c == nil || c.PageRequests != 7 || c.Budget != 20 || !st.Listed {
		t.Errorf("example.co.uk = %+v, last cycle %+v", st, c)
	}

	for _, path := range []string{"/bot/status.json", "/bot/status.json?site=", "/bot/status.json?site=co.uk",
		"/bot/status.json?site=%3Cscript%3E", "/bot/status.json?site=" + strings.Repeat("a", 3000) + ".com"} {
		resp, body := get(t, srv, path)
		var e struct{ Error string }
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Errorf("GET %.60s: status %d, body %.200s; want 400 with an error", path, resp.StatusCode, body)
		}
		if strings.Contains(string(body), "<script>") {
			t.Errorf("GET %s: the JSON holds unescaped markup: %s", path, body)
		}
	}
}

func TestStatusLookupFails(t *testing.T) {
	srv, fl := statusServer(t, nil)
	fl.fail = true
	resp, body := get(t, srv, "/bot/status?site=shop.com")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "cannot be looked up right now") {
		t.Errorf("status %d; body lacks the message", resp.StatusCode)
	}
	if strings.Contains(string(body), "database down") {
		t.Error("the page shows the database's error")
	}
}

func TestStatusRateLimited(t *testing.T) {
	srv, fl := statusServer(t, &botpage.StatusOptions{Rate: rate.Every(time.Hour), Burst: 2})
	for i := range 2 {
		if resp, _ := get(t, srv, "/bot/status.json?site=shop.com"); resp.StatusCode != http.StatusOK {
			t.Fatalf("lookup %d: status %d, want 200", i+1, resp.StatusCode)
		}
	}
	resp, body := get(t, srv, "/bot/status.json?site=shop.com")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third lookup: status %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(string(body), "too many lookups") {
		t.Errorf("429 body %s", body)
	}
	resp, body = get(t, srv, "/bot/status?site=shop.com&lang=da")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "For mange opslag fra din adresse") {
		t.Errorf("HTML after the limit: status %d", resp.StatusCode)
	}
	if len(fl.asked) != 2 {
		t.Errorf("the lookup ran %d times, want 2", len(fl.asked))
	}
	// The form alone costs no lookup.
	if resp, _ := get(t, srv, "/bot/status"); resp.StatusCode != http.StatusOK {
		t.Errorf("the form after the limit: status %d, want 200", resp.StatusCode)
	}
}

func TestBotPageLinksStatus(t *testing.T) {
	srv, _ := server(t, testFacts())
	for _, l := range botpage.Langs() {
		_, body := get(t, srv, "/bot?lang="+string(l))
		found := false
		for _, a := range parse(t, body).all("a") {
			if href, _ := attr(a, "href"); href == botpage.StatusPath+"?lang="+string(l) {
				found = true
			}
		}
		if !found {
			t.Errorf("/bot?lang=%s does not link %s", l, botpage.StatusPath)
		}
	}
}

func TestClientAddr(t *testing.T) {
	tests := []struct {
		remote, xff, want string
	}{
		{"203.0.113.7:5555", "", "203.0.113.7"},
		{"203.0.113.7:5555", "198.51.100.1", "203.0.113.7"}, // not from our proxy: header ignored
		{"127.0.0.1:5555", "", "127.0.0.1"},
		{"127.0.0.1:5555", "10.9.9.9, 198.51.100.1", "198.51.100.1"}, // the address our proxy saw
		{"[::1]:5555", "2001:db8::1", "2001:db8::1"},
		{"127.0.0.1:5555", "garbage", "127.0.0.1"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/bot/status", nil)
		r.RemoteAddr = tt.remote
		if tt.xff != "" {
			r.Header.Set("X-Forwarded-For", tt.xff)
		}
		if got := botpage.ClientAddr(r); got != tt.want {
			t.Errorf("clientAddr(%s, X-Forwarded-For %q) = %q, want %q", tt.remote, tt.xff, got, tt.want)
		}
	}
}

func TestRateLimitIsPerClient(t *testing.T) {
	srv, _ := statusServer(t, &botpage.StatusOptions{Rate: rate.Every(time.Hour), Burst: 1})
	// The test server is on loopback, so it stands for a reverse proxy:
	// each forwarded client has its own bucket.
	for _, client := range []string{"198.51.100.1", "198.51.100.2"} {
		if resp, _ := get(t, srv, "/bot/status.json?site=shop.com", "X-Forwarded-For", client); resp.StatusCode != http.StatusOK {
			t.Errorf("first lookup of %s: status %d, want 200", client, resp.StatusCode)
		}
	}
	if resp, _ := get(t, srv, "/bot/status.json?site=shop.com", "X-Forwarded-For", "198.51.100.1"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second lookup of 198.51.100.1: status %d, want 429", resp.StatusCode)
	}
}
