package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

var visit = time.Date(2026, 11, 18, 14, 0, 0, 0, time.UTC)

// writeStatusStory lists example.com and crawls it twice (the last visit
// spends three page requests and a robots.txt fetch), and excludes
// gone.com with a named staff member and a private reason.
func writeStatusStory(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	store := dbtest.OpenDSN(t, dsn)
	p := policy.New(store, nil)
	if _, err := p.AddSites(ctx, []string{"example.com"}, policy.Change{Actor: "anna", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exclude(ctx, []string{"gone.com"}, policy.Change{Actor: "Secret Person", Reason: "private reason", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	create := func(v any) {
		t.Helper()
		if err := dbtest.Gorm(store).Create(v).Error; err != nil {
			t.Fatal(err)
		}
	}
	for week, pages := range []int{9, 3} {
		start := visit.Add(time.Duration(week-1) * 7 * 24 * time.Hour)
		c := &db.CrawlCycle{Site: "example.com", Node: "crawler1", StartedAt: start, Status: db.CycleDone, Budget: 20}
		create(c)
		at := start
		req := func(purpose, path string) {
			at = at.Add(2 * time.Second)
			create(&db.Request{CycleID: &c.ID, Site: "example.com", Host: "example.com", Origin: "https://example.com",
				URL: "https://example.com" + path, Method: "GET", Purpose: purpose, SentAt: at, Outcome: "ok"})
		}
		req(db.PurposeRobots, "/robots.txt")
		for i := range pages {
			req(db.PurposePage, "/p"+string(rune('a'+i)))
		}
	}
}

func TestStatusFromDatabase(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		writeStatusStory(t, dsn)
		srv, _ := newServer(t, testConfig(dsn))
		h := srv.Handler()

		resp, body := fetch(t, h, "/bot/status.json?site=https://www.example.com/x")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var st struct {
			Site        string  `json:"site"`
			Listed      bool    `json:"listed"`
			Excluded    bool    `json:"excluded"`
			LastRequest *string `json:"last_request"`
			LastCycle   *struct {
				StartedAt    string `json:"started_at"`
				PageRequests int    `json:"page_requests"`
				Budget       int    `json:"budget"`
			} `json:"last_cycle"`
		}
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		if st.Site != "example.com" || !st.Listed || st.Excluded || st.LastRequest == nil || *st.LastRequest != "2026-11-18T14:00:08Z" {
			t.Errorf("example.com = %s", body)
		}
		if c := st.LastCycle; c == nil || c.PageRequests != 3 || c.Budget != 20 || c.StartedAt != "2026-11-18T14:00:00Z" {
			t.Errorf("last cycle of example.com = %s, want 3 page requests of 20 from 2026-11-18T14:00:00Z", body)
		}

		resp, body = fetch(t, h, "/bot/status.json?site=gone.com")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"excluded":true`) || !strings.Contains(body, `"excluded_since":"20`) {
			t.Errorf("gone.com: status %d, %s", resp.StatusCode, body)
		}
		for _, path := range []string{"/bot/status.json?site=gone.com", "/bot/status?site=gone.com", "/bot/status?site=gone.com&lang=hu"} {
			_, body := fetch(t, h, path)
			for _, secret := range []string{"Secret Person", "private reason", "cli"} {
				if strings.Contains(body, secret) {
					t.Errorf("%s says %q: the status page never says who asked or how", path, secret)
				}
			}
		}

		resp, body = fetch(t, h, "/bot/status?site=example.com&lang=it")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "3 su un massimo di 20") {
			t.Errorf("/bot/status?site=example.com&lang=it: status %d, lacks the page requests", resp.StatusCode)
		}
		if resp, _ := fetch(t, h, "/bot/status.json?site=not_a_site"); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("invalid site: status %d, want 400", resp.StatusCode)
		}
	})
}

// TestChromiumStatus renders the status page in headless Chromium in each
// language, for a listed site, an excluded site and what an attacker would
// type, and checks the rendered text and that no script came to life.
func TestChromiumStatus(t *testing.T) {
	bin := chromiumPath(t)
	dsn := dbtest.DSN(t, "sqlite")
	writeStatusStory(t, dsn)
	srv, _ := newServer(t, testConfig(dsn))
	web := httptest.NewServer(srv.Handler())
	defer web.Close()

	const evil = `%3Cscript%3Edocument.title%3D%22pwned%22%3C%2Fscript%3E`
	cases := []struct {
		lang, query string
		texts       []string
	}{
		{"en", "site=example.com", []string{"Status of example.com", "On the crawl list\nYes", "Excluded\nNo",
			"Last request from LohiSoftBot\n2026-11-18 14:00:08 UTC", "Page requests in the last visit\n3 of at most 20",
			"must end in .bot.lohisoft.com", "https://lohisoft.com/bot/ips.json"}},
		{"it", "site=gone.com", []string{"Stato di gone.com", "Escluso\nSì", "Escluso dal\n20", "Nessuna visita finora",
			"deve terminare con .bot.lohisoft.com"}},
		{"da", "site=example.com", []string{"Status for example.com", "På crawlelisten\nJa", "3 af højst 20"}},
		{"hu", "site=example.com", []string{"example.com állapota", "A feltérképezési listán\nIgen", "3 a legfeljebb 20 közül"}},
		{"en", "site=" + evil, []string{`“<script>document.title="pwned"</script>” is not a domain we can look up.`}},
		{"hu", "site=" + evil, []string{`„<script>document.title="pwned"</script>” nem olyan domain`}},
	}
	// One browser at a time: the machine may be small and busy.
	for _, c := range cases {
		func() {
			dom := chromium(t, bin, web.URL+"/bot/status?"+c.query+"&lang="+c.lang, "--dump-dom")
			lang, text := domText(t, dom)
			if lang != c.lang {
				t.Errorf("%s: rendered with lang %q, want %q", c.query, lang, c.lang)
			}
			for _, w := range c.texts {
				if !strings.Contains(text, w) {
					t.Errorf("%s %s: rendered page lacks %q:\n%s", c.lang, c.query, w, text)
				}
			}
			root, err := html.Parse(strings.NewReader(dom))
			if err != nil {
				t.Fatal(err)
			}
			var walk func(*html.Node)
			walk = func(n *html.Node) {
				if n.Type == html.ElementNode && n.Data == "script" {
					t.Errorf("%s %s: the rendered page has a <script> element", c.lang, c.query)
				}
				if n.Type == html.ElementNode && n.Data == "title" && n.FirstChild != nil && strings.Contains(n.FirstChild.Data, "pwned") {
					t.Errorf("%s %s: the visitor's script ran", c.lang, c.query)
				}
				for k := n.FirstChild; k != nil; k = k.NextSibling {
					walk(k)
				}
			}
			walk(root)
		}()
	}
}

// TestExclusionTakesSiteOffCrawlList checks the status page against the
// bot page's promise: an excluded site is not on the crawl list, whatever
// it was before; a re-inclusion puts a site that was listed back on it,
// and only such a site.
func TestExclusionTakesSiteOffCrawlList(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		p := policy.New(store, nil)
		staff := policy.Change{Actor: "anna", Source: "cli"}
		if _, err := p.AddSites(ctx, []string{"listed.com"}, staff); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exclude(ctx, []string{"listed.com", "stranger.com"}, staff); err != nil {
			t.Fatal(err)
		}
		srv, _ := newServer(t, testConfig(dsn))
		h := srv.Handler()
		status := func(site string) (listed, excluded bool) {
			t.Helper()
			resp, body := fetch(t, h, "/bot/status.json?site="+site)
			var st struct {
				Listed   bool `json:"listed"`
				Excluded bool `json:"excluded"`
			}
			if err := json.Unmarshal([]byte(body), &st); resp.StatusCode != http.StatusOK || err != nil {
				t.Fatalf("%s: status %d, %v: %s", site, resp.StatusCode, err, body)
			}
			return st.Listed, st.Excluded
		}
		for _, site := range []string{"listed.com", "stranger.com"} {
			if listed, excluded := status(site); listed || !excluded {
				t.Errorf("%s excluded: listed %v, excluded %v; want off the crawl list, excluded", site, listed, excluded)
			}
			_, body := fetch(t, h, "/bot/status?site="+site)
			if strings.Contains(body, "On the crawl list") && strings.Count(body, "Yes") > 1 {
				t.Errorf("%s excluded: the page says Yes twice: %s", site, body)
			}
		}
		for _, site := range []string{"listed.com", "stranger.com"} {
			if _, err := p.Reinclude(ctx, site, staff); err != nil {
				t.Fatal(err)
			}
		}
		if listed, excluded := status("listed.com"); !listed || excluded {
			t.Errorf("listed.com re-included: listed %v, excluded %v; want back on the crawl list", listed, excluded)
		}
		if listed, excluded := status("stranger.com"); listed || excluded {
			t.Errorf("stranger.com re-included: listed %v, excluded %v; want neither (it was never listed)", listed, excluded)
		}
	})
}
