package crawler_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

func TestCrawlPlainSites(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 3, PagesPerSite: 30})
			c := e.crawler(t, nil)
			res := e.crawl(t, c, "plain-000.test", "plain-001.test", "plain-002.test")
			// Each cycle's end gave its leases back (the site's and its
			// hosts'), before the crawler's Close would.
			var held int64
			dbtest.Gorm(e.store).Model(&db.HostLease{}).Where("holder <> ''").Count(&held)
			if held != 0 {
				t.Errorf("%d leases still held after the crawl", held)
			}
			hits := e.web.Hits()
			e.web.CheckPolite(t, hits, testDelay)
			checkBudgets(t, e.web, hits)
			for _, s := range e.web.Plain() {
				if r := res[s.Name]; r.Status != crawler.SiteCrawled || r.Reason != "budget spent" {
					t.Errorf("result of %s = %+v, want crawled, budget spent", s.Name, r)
				}
				sh := e.web.HitsFor(s.Host)
				if len(sh) == 0 || sh[0].Path != "/robots.txt" {
					t.Errorf("first request to %s = %v, want /robots.txt first", s.Host, paths(sh))
				}
			}
			for _, h := range hits {
				if h.UserAgent != crawler.UserAgent {
					t.Errorf("User-Agent of %s%s = %q, want %q", h.Host, h.Path, h.UserAgent, crawler.UserAgent)
				}
				if h.Cookie != "" || h.Referer != "" || h.Auth != "" {
					t.Errorf("request %s%s carried cookie %q, referer %q, auth %q; want none", h.Host, h.Path, h.Cookie, h.Referer, h.Auth)
				}
				if h.IPv6 {
					t.Errorf("request %s%s came over IPv6", h.Host, h.Path)
				}
			}
			// The log has exactly what the server saw, every row completed,
			// budget slots 1..20 per cycle.
			rows := e.requests(t)
			if len(rows) != len(hits) {
				t.Errorf("request log has %d rows, the server saw %d requests", len(rows), len(hits))
			}
			slots := map[int64]map[int]bool{}
			for _, r := range rows {
				if r.CompletedAt == nil || r.Status == nil {
					t.Errorf("request %d (%s) not completed", r.ID, r.URL)
				}
				if !strings.HasPrefix(r.PolicyCheck, "allowed") {
					t.Errorf("request %d policy_check = %q, want allowed", r.ID, r.PolicyCheck)
				}
				if r.Purpose == db.PurposePage {
					if r.BudgetSlot == nil || r.RobotsSnapshotID == nil || r.CycleID == nil {
						t.Errorf("page request %d: slot %v, snapshot %v, cycle %v; want all set", r.ID, r.BudgetSlot, r.RobotsSnapshotID, r.CycleID)
						continue
					}
					if slots[*r.CycleID] == nil {
						slots[*r.CycleID] = map[int]bool{}
					}
					slots[*r.CycleID][*r.BudgetSlot] = true
				} else if r.BudgetSlot != nil {
					t.Errorf("robots request %d has budget slot %d, want none", r.ID, *r.BudgetSlot)
				}
				if r.DelayMS != testDelay.Milliseconds() {
					t.Errorf("request %d delay_ms = %d, want %d", r.ID, r.DelayMS, testDelay.Milliseconds())
				}
			}
			for id, s := range slots {
				if len(s) != crawler.Budget || !s[1] || !s[crawler.Budget] {
					t.Errorf("cycle %d used slots %v, want 1..%d", id, s, crawler.Budget)
				}
			}
			var pages int64
			dbtest.Gorm(e.store).Model(&db.Page{}).Count(&pages)
			if pages != 3*crawler.Budget {
				t.Errorf("pages indexed = %d, want %d", pages, 3*crawler.Budget)
			}
			var anchors int64
			dbtest.Gorm(e.store).Model(&db.Anchor{}).Where("to_site = ?", "big.test").Count(&anchors)
			if anchors == 0 {
				t.Errorf("no anchor text stored for the cross-site links to big.test")
			}
			// Visited at most once per --recrawl-after.
			before := len(e.web.Hits())
			res = e.crawl(t, c, "plain-000.test")
			if r := res["plain-000.test"]; r.Status != crawler.SiteSkipped {
				t.Errorf("second crawl of plain-000.test = %+v, want skipped", r)
			}
			if n := len(e.web.Hits()); n != before {
				t.Errorf("second crawl sent %d requests, want 0", n-before)
			}
		})
	}
}

// TestScenarios crawls every scenario site at once and checks each against
// the server's record and the request log.
func TestScenarios(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 5, SlowFor: 5 * time.Second})
	c := e.crawler(t, nil)
	kinds := append([]string{}, testweb.ScenarioKinds...)
	start := time.Now()
	res := e.crawl(t, c, kinds...)
	t.Logf("scenarios crawled in %v", time.Since(start))
	hits := e.web.Hits()
	e.web.CheckPolite(t, hits, testDelay)
	rows := e.requests(t)
	rowsFor := func(host, path string) []db.Request {
		var out []db.Request
		for _, r := range rows {
			if r.Host == host && strings.HasSuffix(r.URL, ":"+itoa(e.web.Port)+path) {
				out = append(out, r)
			}
		}
		return out
	}
	pageHits := func(host string) []testweb.Hit {
		var out []testweb.Hit
		for _, h := range e.web.HitsFor(host) {
			if h.Path != "/robots.txt" {
				out = append(out, h)
			}
		}
		return out
	}
	hitsOf := func(host, path string) []testweb.Hit {
		var out []testweb.Hit
		for _, h := range e.web.HitsFor(host) {
			if h.Path == path {
				out = append(out, h)
			}
		}
		return out
	}
	never := func(t *testing.T, host string, ps ...string) {
		t.Helper()
		for _, p := range ps {
			if n := len(hitsOf(host, p)); n != 0 {
				t.Errorf("%s%s requested %d times, want never", host, p, n)
			}
		}
	}
	times := func(t *testing.T, host, path string, want int) []testweb.Hit {
		t.Helper()
		hs := hitsOf(host, path)
		if len(hs) != want {
			t.Errorf("%s%s requested %d times, want %d", host, path, len(hs), want)
		}
		return hs
	}

	t.Run("retry-after seconds", func(t *testing.T) {
		hs := times(t, "retry-secs.test", "/", 2)
		if len(hs) == 2 {
			if gap := hs[1].Start.Sub(hs[0].End); gap < time.Second {
				t.Errorf("gap after 429 Retry-After: 1 = %v, want >= 1s", gap)
			}
		}
		rs := rowsFor("retry-secs.test", "/")
		if len(rs) != 2 || rs[0].RetryAfter != "1" || rs[0].RetryNotBefore == nil || *rs[0].Status != 429 {
			t.Fatalf("log of the 429 = %+v, want status 429, retry_after 1 and retry_not_before", rs)
		}
		if want := rs[0].CompletedAt.Add(time.Second); !rs[0].RetryNotBefore.Equal(want) {
			t.Errorf("retry_not_before = %v, want completed_at + 1s = %v", rs[0].RetryNotBefore, want)
		}
		if rs[1].SentAt.Before(*rs[0].RetryNotBefore) {
			t.Errorf("retry sent at %v, before retry_not_before %v", rs[1].SentAt, rs[0].RetryNotBefore)
		}
	})
	t.Run("retry-after date", func(t *testing.T) {
		hs := times(t, "retry-date.test", "/", 2)
		rs := rowsFor("retry-date.test", "/")
		if len(hs) == 2 && len(rs) == 2 {
			nb, err := http.ParseTime(rs[0].RetryAfter)
			if err != nil {
				t.Fatalf("retry_after %q: %v", rs[0].RetryAfter, err)
			}
			if hs[1].Start.Before(nb) {
				t.Errorf("second request at %v, before Retry-After %v", hs[1].Start, nb)
			}
			if rs[0].RetryNotBefore == nil || !rs[0].RetryNotBefore.Equal(nb) {
				t.Errorf("retry_not_before = %v, want %v", rs[0].RetryNotBefore, nb)
			}
		}
	})
	t.Run("retry-after beyond an hour", func(t *testing.T) {
		if n := len(pageHits("retry-long.test")); n != 1 {
			t.Errorf("page requests to retry-long.test = %d, want 1", n)
		}
		if r := res["retry-long.test"]; !strings.Contains(r.Reason, "Retry-After") {
			t.Errorf("result = %+v, want the host left for its Retry-After", r)
		}
	})
	t.Run("503 streak then success", func(t *testing.T) {
		hs := times(t, "flaky.test", "/", 3)
		for i := 1; i < len(hs); i++ {
			if gap := hs[i].Start.Sub(hs[i-1].End); gap < 2*testDelay {
				t.Errorf("backoff gap %d = %v, want >= %v", i, gap, 2*testDelay)
			}
		}
		if n := len(hitsOf("flaky.test", "/a.html")); n != 3 {
			t.Errorf("flaky.test/a.html requested %d times, want 3 (2 retries)", n)
		}
	})
	t.Run("3 consecutive 5xx leave the host", func(t *testing.T) {
		rs := rowsFor("down.test", "/")
		if len(rs) != 3 {
			t.Errorf("page requests to down.test logged = %d, want 3", len(rs))
		}
		for _, r := range rs {
			if r.Status == nil || *r.Status != 500 {
				t.Logf("down.test request %d: outcome %s, error %q (a failure all the same)", r.ID, r.Outcome, r.Error)
			}
		}
		if n := len(pageHits("down.test")); n > 3 {
			t.Errorf("page requests to down.test = %d, want at most 3", n)
		}
	})
	t.Run("redirects", func(t *testing.T) {
		for _, p := range []string{"/chain/1", "/chain/2", "/chain/3", "/final.html", "/away", "/mailto", "/zero", "/www"} {
			times(t, "redirect.test", p, 1)
		}
		times(t, "redirect.test", "/loop/a", 1)
		times(t, "redirect.test", "/loop/b", 1)
		times(t, "www.redirect.test", "/landing.html", 1)
		for _, h := range e.web.HitsFor("plain-000.test") {
			t.Errorf("cross-site redirect followed: plain-000.test%s requested", h.Path)
		}
		rs := rowsFor("redirect.test", "/chain/2")
		if len(rs) != 1 || rs[0].RedirectOf == nil || rs[0].BudgetSlot == nil {
			t.Errorf("hop /chain/2 logged as %+v, want a page request with redirect_of and a budget slot", rs)
		}
		var zero int64
		dbtest.Gorm(e.store).Model(&db.Request{}).Where("host = ?", "zero.test").Count(&zero)
		if zero != 0 {
			t.Errorf("%d requests logged to zero.test (0.0.0.0), want none", zero)
		}
	})
	t.Run("401 ends the host", func(t *testing.T) {
		times(t, "auth.test", "/members/", 1)
		never(t, "auth.test", "/wp-login.php", "/after.html")
		times(t, "auth.test", "/about.html", 1)
	})
	t.Run("403 ends the host", func(t *testing.T) {
		times(t, "forbidden.test", "/private.html", 1)
		never(t, "forbidden.test", "/after.html")
	})
	t.Run("407 ends the host", func(t *testing.T) {
		times(t, "proxyauth.test", "/p.html", 1)
		never(t, "proxyauth.test", "/after.html")
	})
	t.Run("cf-mitigated challenge", func(t *testing.T) {
		times(t, "challenge.test", "/", 1)
		never(t, "challenge.test", "/next.html")
		rs := rowsFor("challenge.test", "/")
		if len(rs) != 1 || rs[0].Outcome != "challenge" {
			t.Errorf("challenge logged as %+v, want outcome challenge", rs)
		}
	})
	t.Run("captcha page", func(t *testing.T) {
		times(t, "captcha.test", "/search.html", 1)
		never(t, "captcha.test", "/after.html")
	})
	t.Run("noindex and nofollow", func(t *testing.T) {
		never(t, "noindex.test", "/hidden-rel.html", "/hidden-meta.html")
		var urls []string
		dbtest.Gorm(e.store).Model(&db.Page{}).Where("site = ?", "noindex.test").Pluck("url", &urls)
		want := e.web.URL("noindex.test", "/")
		if len(urls) != 2 || !contains(urls, want) || !contains(urls, e.web.URL("noindex.test", "/nofollow.html")) {
			t.Errorf("indexed pages of noindex.test = %v, want / and /nofollow.html only", urls)
		}
	})
	t.Run("budget", func(t *testing.T) {
		if n := len(pageHits("big.test")); n != crawler.Budget {
			t.Errorf("page requests to big.test = %d, want %d", n, crawler.Budget)
		}
	})
	t.Run("slow drip", func(t *testing.T) {
		hs := hitsOf("slow.test", "/drip.html")
		if len(hs) == 0 || len(hs) > 1+crawler.MaxRetries {
			t.Errorf("/drip.html requested %d times, want 1..3", len(hs))
		}
		for _, r := range rowsFor("slow.test", "/drip.html") {
			if r.Outcome != "timeout" || r.DurationMS > 4500 {
				t.Errorf("drip logged as outcome %q after %d ms, want a timeout (2s) before the drip ends (5s)", r.Outcome, r.DurationMS)
			}
		}
	})
	t.Run("huge and binary bodies", func(t *testing.T) {
		rs := rowsFor("huge.test", "/huge.html")
		if len(rs) != 1 || rs[0].Bytes != crawler.MaxBody {
			t.Errorf("huge.html logged as %+v, want exactly %d bytes read", rs, crawler.MaxBody)
		}
		rs = rowsFor("huge.test", "/file.bin")
		if len(rs) != 1 || rs[0].Bytes != 0 || rs[0].Outcome != "not-html" {
			t.Errorf("file.bin logged as %+v, want 0 bytes read, outcome not-html", rs)
		}
	})
	t.Run("gzip bomb", func(t *testing.T) {
		rs := rowsFor("gzip.test", "/bomb.html")
		if len(rs) == 0 {
			t.Fatal("bomb never requested")
		}
		for _, r := range rs {
			if r.Bytes > crawler.MaxBody || r.CompletedAt == nil {
				t.Errorf("bomb logged as %+v, want at most %d bytes read", r, crawler.MaxBody)
			}
		}
	})
	t.Run("charsets", func(t *testing.T) {
		want := map[string]string{
			"/":            "Café Müller à la carte",
			"/sjis.html":   "日本語のページ",
			"/cp1252.html": "“Smart quotes” € 5",
		}
		for p, title := range want {
			var pg db.Page
			if err := dbtest.Gorm(e.store).Where("url = ?", e.web.URL("charset.test", p)).Take(&pg).Error; err != nil {
				t.Errorf("page %s: %v", p, err)
				continue
			}
			if pg.Title != title {
				t.Errorf("title of charset.test%s = %q, want %q", p, pg.Title, title)
			}
		}
	})
	t.Run("IPv6-only host", func(t *testing.T) {
		for _, h := range hits {
			if h.IPv6 || h.Host == "v6only.test" {
				t.Errorf("request over IPv6 or to v6only.test: %+v", h)
			}
		}
		rs := rowsFor("v6only.test", "/robots.txt")
		if len(rs) != 1 || rs[0].Status != nil || rs[0].Error == "" {
			t.Errorf("robots.txt of v6only.test logged as %+v, want one failed request", rs)
		}
	})
	t.Run("robots.txt", func(t *testing.T) {
		never(t, "robots.test", "/private/secret.html")
		times(t, "robots.test", "/private/open.html", 1)
		if r := res["robots.test"]; r.RobotsRefused != 1 {
			t.Errorf("robots refusals on robots.test = %d, want 1", r.RobotsRefused)
		}
	})
	t.Run("crawl-delay", func(t *testing.T) {
		hs := e.web.HitsFor("crawldelay.test")
		for i := 2; i < len(hs); i++ { // after robots.txt is known
			if gap := hs[i].Start.Sub(hs[i-1].End); gap < time.Second {
				t.Errorf("gap %d on crawldelay.test = %v, want >= 1s (Crawl-delay: 1)", i, gap)
			}
		}
	})
	t.Run("log matches the server", func(t *testing.T) {
		checkLogCoversHits(t, e, hits, true)
	})
	t.Run("canary", func(t *testing.T) {
		checkCanary(t, e)
	})
}

func itoa(n int) string { return strconvItoa(n) }

// checkLogCoversHits asserts every request the server saw is in the log
// (host and path), and when exact, nothing else is.
func checkLogCoversHits(t *testing.T, e *env, hits []testweb.Hit, exact bool) {
	t.Helper()
	logged := map[string]int{}   // every row
	answered := map[string]int{} // rows with an HTTP status: the server must have seen them
	for _, r := range e.requests(t) {
		i := strings.Index(r.URL, "://")
		rest := r.URL[i+3:]
		j := strings.IndexByte(rest, '/')
		logged[r.Host+" "+rest[j:]]++
		if r.Status != nil {
			answered[r.Host+" "+rest[j:]]++
		}
	}
	seen := map[string]int{}
	for _, h := range hits {
		seen[h.Host+" "+h.Path]++
	}
	for k, n := range seen {
		if logged[k] < n {
			t.Errorf("server saw %q %d times, the log has %d", k, n, logged[k])
		}
	}
	if exact {
		for k, n := range answered {
			if seen[k] < n {
				t.Errorf("log has %q answered %d times, the server saw %d", k, n, seen[k])
			}
		}
	}
}

// checkCanary asserts the canary sentence is nowhere in the database files
// (the main file, its WAL and shared memory).
func checkCanary(t *testing.T, e *env) {
	t.Helper()
	if !strings.HasSuffix(e.dsn, ".db") {
		t.Skip("not an SQLite file")
	}
	dir := filepath.Dir(e.dsn)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	canary := []byte(e.web.Canary)
	checked := 0
	for _, ent := range ents {
		b, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if bytes.Contains(b, canary) || bytes.Contains(b, []byte("quartz zebra")) {
			t.Errorf("the canary sentence is in %s", ent.Name())
		}
	}
	if checked < 2 {
		t.Errorf("checked %d files in %s, want the database and its WAL", checked, dir)
	}
	// The canary test can fail: it is in every page body the server sent.
	var pages int64
	dbtest.Gorm(e.store).Model(&db.Page{}).Count(&pages)
	if pages == 0 {
		t.Errorf("no pages indexed: the canary check proves nothing")
	}
}

func TestExclusionMidCrawl(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, BigPages: 50})
	c := e.crawler(t, nil)
	big := e.web.Site(testweb.KindBig)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan []crawler.SiteResult)
	go func() {
		rs, _ := c.Crawl(ctx, e.targets(testweb.KindBig))
		done <- rs
	}()
	testutil.Eventually(t, 0, "6 requests to big.test", func() bool { return len(e.web.HitsFor(big.Host)) >= 6 })
	if _, err := e.pol.Exclude(ctx, []string{big.Name}, policy.Change{Actor: "staff", Reason: "test", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	committed := time.Now()
	rs := <-done
	if len(rs) != 1 || rs[0].Status != crawler.SiteExcluded {
		t.Errorf("result = %+v, want excluded", rs)
	}
	for _, h := range e.web.HitsFor(big.Host) {
		if h.Start.After(committed) {
			t.Errorf("request %s started %v after the exclusion was committed", h.Path, h.Start.Sub(committed))
		}
	}
	n := len(e.web.HitsFor(big.Host))
	if n >= crawler.Budget {
		t.Errorf("%d requests to an excluded site, want the crawl stopped", n)
	}
	// An excluded site gets nothing at all.
	e.web.Reset()
	rs, err := c.Crawl(ctx, e.targets(testweb.KindBig))
	if err != nil || len(rs) != 1 || rs[0].Status != crawler.SiteExcluded {
		t.Errorf("crawl of an excluded site = %+v, %v; want excluded", rs, err)
	}
	if hs := e.web.Hits(); len(hs) != 0 {
		t.Errorf("excluded site got %d requests, want 0", len(hs))
	}
	var last db.Request
	dbtest.Gorm(e.store).Order("id DESC").Take(&last)
	if !strings.HasPrefix(last.PolicyCheck, "allowed (policy v") {
		t.Errorf("policy_check = %q, want the gate's verdict", last.PolicyCheck)
	}
}

func TestRefusesPrivateAddresses(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 3})
	o := e.options(t)
	o.AllowPrivate = false
	c := e.crawler(t, o)
	res := e.crawl(t, c, "plain-000.test")
	if hs := e.web.Hits(); len(hs) != 0 {
		t.Errorf("server saw %d requests from a crawler that must refuse loopback", len(hs))
	}
	rows := e.requests(t)
	if len(rows) != 1 || rows[0].Outcome != "refused" || !strings.Contains(rows[0].Error, "loopback") {
		t.Errorf("log = %+v, want one refused robots.txt request", rows)
	}
	if r := res["plain-000.test"]; r.Requests != 0 {
		t.Errorf("page requests = %d, want 0", r.Requests)
	}
}

func TestSourceIP(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 2})
	o := e.options(t)
	o.SourceIP = mustAddr("127.0.0.2")
	o.UserAgent = crawler.UserAgentEmail
	c := e.crawler(t, o)
	e.crawl(t, c, "plain-000.test")
	hs := e.web.Hits()
	if len(hs) == 0 {
		t.Fatal("no requests")
	}
	for _, h := range hs {
		if !strings.HasPrefix(h.RemoteAddr, "127.0.0.2:") {
			t.Errorf("request %s came from %s, want 127.0.0.2", h.Path, h.RemoteAddr)
		}
		if h.UserAgent != crawler.UserAgentEmail {
			t.Errorf("User-Agent = %q, want %q", h.UserAgent, crawler.UserAgentEmail)
		}
	}
}

// TestInterruptAndResume cancels a crawl (Ctrl-C) halfway: every logged
// request is completed, the cycle is recorded as stopped, and the next
// crawl takes it up with what is left of its budget.
func TestInterruptAndResume(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, BigPages: 60})
	c := e.crawler(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []crawler.SiteResult)
	go func() {
		rs, _ := c.Crawl(ctx, e.targets(testweb.KindBig))
		done <- rs
	}()
	testutil.Eventually(t, 0, "8 requests to big.test", func() bool { return len(e.web.HitsFor("big.test")) >= 8 })
	cancel()
	rs := <-done
	if len(rs) != 1 || rs[0].Status != crawler.SiteStopped {
		t.Errorf("interrupted crawl = %+v, want stopped", rs)
	}
	for _, r := range e.requests(t) {
		if r.CompletedAt == nil {
			t.Errorf("request %d left incomplete after a clean stop", r.ID)
		}
	}
	var cy db.CrawlCycle
	dbtest.Gorm(e.store).Take(&cy)
	if cy.Status != db.CycleStopped || cy.FinishedAt == nil {
		t.Errorf("cycle = %+v, want stopped with finished_at", cy)
	}
	var held int64
	dbtest.Gorm(e.store).Model(&db.HostLease{}).Where("holder <> ''").Count(&held)
	if held != 0 {
		t.Errorf("%d leases still held after a clean stop", held)
	}
	res := e.crawl(t, c, testweb.KindBig)
	if r := res["big.test"]; r.Status != crawler.SiteCrawled || r.CycleID != cy.ID {
		t.Errorf("resumed crawl = %+v, want cycle %d crawled", r, cy.ID)
	}
	hits := e.web.Hits()
	if n := e.web.PageHitsPerSite(hits)["big.test"]; n != crawler.Budget {
		t.Errorf("page requests to big.test = %d, want %d across both runs", n, crawler.Budget)
	}
	e.web.CheckPolite(t, hits, testDelay)
}
