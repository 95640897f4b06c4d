package serve_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// crawlConfig is a configuration that crawls web quickly.
func crawlConfig(dsn string, web *testweb.Web) *serve.Config {
	c := testConfig(dsn)
	c.Crawler.Enabled = true
	c.Crawler.AllowPrivate = true
	c.Resolver = web.DNSAddr
	c.Crawler.Delay = serve.Duration(100 * time.Millisecond)
	c.Crawler.ScanInterval = serve.Duration(100 * time.Millisecond)
	c.Crawler.RecrawlAfter = serve.Duration(time.Hour)
	c.Crawler.MaxSitesParallel = 2
	c.Crawler.Timeout = serve.Duration(5 * time.Second)
	c.Node = "test-node"
	return c
}

// addSites puts sites of web on the crawl list.
func addSites(t *testing.T, store *db.Store, web *testweb.Web, names ...string) {
	t.Helper()
	var urls []string
	for _, n := range names {
		urls = append(urls, web.Site(n).StartURL)
	}
	if _, err := policy.New(store, nil).AddSites(context.Background(), urls, policy.Change{Actor: "test", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
}

// cycles returns the crawl cycles by site.
func cycles(t *testing.T, store *db.Store) map[string][]db.CrawlCycle {
	t.Helper()
	var cs []db.CrawlCycle
	if err := dbtest.Gorm(store).Order("id").Find(&cs).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string][]db.CrawlCycle{}
	for _, c := range cs {
		out[c.Site] = append(out[c.Site], c)
	}
	return out
}

// TestScheduler runs the daemon over a local web: it crawls every due site
// once, never more sites at once than allowed, stops crawling a site the
// moment it is excluded, and feeds the metrics from the request log.
func TestScheduler(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 4, BigPages: 60})
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		cfg := crawlConfig(dsn, web)
		srv, _ := newServer(t, cfg)
		big := web.Site(testweb.KindBig)
		addSites(t, srv.Store(), web, "plain-000.test", "plain-001.test", big.Name, testweb.KindRobots)
		// An excluded site is never crawled.
		pol := policy.New(srv.Store(), nil)
		if _, err := pol.AddSites(context.Background(), []string{web.Site(testweb.KindNoindex).StartURL}, policy.Change{Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := pol.Exclude(context.Background(), []string{"noindex.test"}, policy.Change{Actor: "test", Reason: "asked"}); err != nil {
			t.Fatal(err)
		}

		maxRunning := 0
		stopWatch := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for {
				select {
				case <-stopWatch:
					return
				case <-time.After(5 * time.Millisecond):
				}
				if n := srv.Check(context.Background()).Crawler.SitesRunning; n > maxRunning {
					maxRunning = n
				}
			}
		}()
		base := start(t, srv)

		// Exclude big.test once a few of its pages were fetched.
		testutil.Eventually(t, 30*time.Second, "3 pages of big.test", func() bool { return len(pageHits(web.HitsFor(big.Host))) >= 3 })
		if _, err := pol.Exclude(context.Background(), []string{big.Name}, policy.Change{Actor: "test", Reason: "asked"}); err != nil {
			t.Fatal(err)
		}
		excludedAt := time.Now()
		testutil.Eventually(t, 30*time.Second, "every site's cycle to end", func() bool {
			cs := cycles(t, srv.Store())
			for _, s := range []string{"plain-000.test", "plain-001.test", big.Name, "robots.test"} {
				if len(cs[s]) == 0 || cs[s][len(cs[s])-1].Status == db.CycleRunning {
					return false
				}
			}
			return true
		})
		// A few more scans of the crawl list: nothing is due.
		n0 := scans(t, base)
		testutil.Eventually(t, 30*time.Second, "three more scans", func() bool { return scans(t, base) >= n0+3 })
		close(stopWatch)
		<-watched

		cs := cycles(t, srv.Store())
		for _, s := range []string{"plain-000.test", "plain-001.test", "robots.test"} {
			if len(cs[s]) != 1 || cs[s][0].Status != db.CycleDone {
				t.Errorf("cycles of %s = %+v, want one, done", s, cs[s])
			}
		}
		if len(cs[big.Name]) != 1 || cs[big.Name][0].Reason != "excluded while crawling" {
			t.Errorf("cycles of %s = %+v, want one ended by the exclusion", big.Name, cs[big.Name])
		}
		if len(cs["noindex.test"]) != 0 || len(web.HitsFor("noindex.test")) != 0 {
			t.Errorf("the excluded noindex.test was crawled: %+v", cs["noindex.test"])
		}
		late := 0
		for _, h := range web.HitsFor(big.Host) {
			if h.Start.After(excludedAt) {
				late++
			}
		}
		if late > 1 { // one request may have passed the gate just before the commit
			t.Errorf("%d requests to %s started after its exclusion, want at most 1", late, big.Name)
		}
		if n := len(pageHits(web.HitsFor(big.Host))); n >= 20 {
			t.Errorf("%d pages of %s fetched: the exclusion did not stop the crawl", n, big.Name)
		}
		if maxRunning > cfg.Crawler.MaxSitesParallel || maxRunning == 0 {
			t.Errorf("at most %d sites ran at once, want 1..%d", maxRunning, cfg.Crawler.MaxSitesParallel)
		}

		resp, metrics := fetchURL(t, base+"/metrics")
		if resp != 200 {
			t.Fatalf("GET /metrics: %d", resp)
		}
		for _, want := range []string{
			`lohibot_crawler_sites_total{status="crawled"} 3`,
			`lohibot_crawler_sites_total{status="excluded"} 1`,
			`lohibot_crawler_exclusions_applied_total 1`,
			`lohibot_crawler_requests_total{purpose="robots",status="200"}`,
			`lohibot_crawler_requests_total{purpose="page",status="200"}`,
			`lohibot_crawler_sites_running 0`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		if strings.Contains(metrics, "lohibot_crawler_robots_refusals_total 0\n") {
			t.Errorf("robots.test disallows pages, but no robots refusal was counted")
		}
		// The request counter agrees with the log.
		var logged int64
		dbtest.Gorm(srv.Store()).Model(&db.Request{}).Where("purpose = ? AND status = ?", "page", 200).Count(&logged)
		if want := "lohibot_crawler_requests_total{purpose=\"page\",status=\"200\"} " + itoa(logged) + "\n"; !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q (the log's count)", want)
		}
		auditOK(t, srv.Store())
	})
}

// scans reads lohibot_crawler_scans_total from the server at base.
func scans(t *testing.T, base string) int {
	t.Helper()
	_, metrics := fetchURL(t, base+"/metrics")
	for line := range strings.Lines(metrics) {
		if v, ok := strings.CutPrefix(line, "lohibot_crawler_scans_total "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("lohibot_crawler_scans_total %q: %v", v, err)
			}
			return int(n)
		}
	}
	t.Fatalf("/metrics lacks lohibot_crawler_scans_total")
	return 0
}

// pageHits drops robots.txt requests.
func pageHits(hits []testweb.Hit) []testweb.Hit {
	var out []testweb.Hit
	for _, h := range hits {
		if h.Path != "/robots.txt" {
			out = append(out, h)
		}
	}
	return out
}

// TestReloadDuringCrawl reloads new crawler settings while a site is being
// crawled: that crawl finishes with the settings it started with (one
// cycle, never interrupted), sites taken up afterwards get the new ones,
// and the log passes the audit.
func TestReloadDuringCrawl(t *testing.T) {
	web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 8, BigPages: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := crawlConfig(dbtest.DSN(t, "sqlite"), web)
	cfg.Crawler.MaxSitesParallel = 1
	srv, src := newServer(t, cfg)
	big := web.Site(testweb.KindBig)
	addSites(t, srv.Store(), web, big.Name)
	start(t, srv)
	testutil.Eventually(t, 30*time.Second, "3 pages of big.test", func() bool { return len(pageHits(web.HitsFor(big.Host))) >= 3 })

	next := *cfg
	next.Crawler.Delay = serve.Duration(50 * time.Millisecond)
	src.set(&next, nil)
	if err := srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	addSites(t, srv.Store(), web, "plain-000.test")
	testutil.Eventually(t, 30*time.Second, "both sites' cycles to end", func() bool {
		cs := cycles(t, srv.Store())
		return len(cs[big.Name]) == 1 && cs[big.Name][0].Status == db.CycleDone &&
			len(cs["plain-000.test"]) == 1 && cs["plain-000.test"][0].Status == db.CycleDone
	})
	cs := cycles(t, srv.Store())
	if got := cs[big.Name][0]; got.DelayMS != 100 || got.Reason != "budget spent" {
		t.Errorf("cycle of %s = %+v, want the old delay of 100 ms, run to the end of its budget", big.Name, got)
	}
	if got := cs["plain-000.test"][0]; got.DelayMS != 50 {
		t.Errorf("cycle of plain-000.test = %+v, want the reloaded delay of 50 ms", got)
	}
	if gaps := testweb.MinGap(web.HitsFor(big.Host)); gaps[big.Host] < 100*time.Millisecond {
		t.Errorf("smallest gap between requests to %s = %v, want at least its cycle's 100 ms", big.Host, gaps[big.Host])
	}
	auditOK(t, srv.Store())
}

// auditOK runs the audit over store and fails the test on any violation.
func auditOK(t *testing.T, store *db.Store) {
	t.Helper()
	sum, err := audit.Run(context.Background(), store, &audit.Options{Logger: quiet}, func(v audit.Violation) error {
		t.Errorf("audit: %s %s %s: %s", v.Site, v.Rule, v.Check, v.Evidence)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.OK() {
		t.Errorf("audit: %d violations", sum.Violations())
	}
}
