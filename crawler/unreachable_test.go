package crawler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestUnreachableIsNotAVisit crawls a site whose name does not resolve: the
// site's result names the cause, its cycle is not counted as a visit (the
// next crawl is not put off for the recrawl interval), and the site is
// tried again once a backoff of minutes has passed, not before.
func TestUnreachableIsNotAVisit(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 1, PagesPerSite: 2})
			c := e.crawler(t, nil)
			const site = "nowhere.test"
			crawl := func() crawler.SiteResult {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				rs, err := c.Crawl(ctx, []crawler.Target{{Site: site, StartURL: "http://" + site + "/"}})
				if err != nil || len(rs) != 1 {
					t.Fatalf("Crawl = %+v, %v", rs, err)
				}
				return rs[0]
			}
			robotsRequests := func() int {
				t.Helper()
				var n int64
				if err := dbtest.Gorm(e.store).Model(&db.Request{}).Where("site = ? AND purpose = ?", site, db.PurposeRobots).Count(&n).Error; err != nil {
					t.Fatal(err)
				}
				return int(n)
			}

			r := crawl()
			if r.Requests != 0 || r.RobotsRequests != 1 {
				t.Errorf("first crawl counts %d page and %d robots.txt requests, want 0 and 1", r.Requests, r.RobotsRequests)
			}
			if r.Status != crawler.SiteNothingFetched || !strings.Contains(r.Reason, "no such host") || !strings.Contains(r.Reason, "not counted as a visit") {
				t.Errorf("first crawl = %+v; want nothing fetched, naming the cause (no such host), not counted as a visit", r)
			}
			var cycles []db.CrawlCycle
			dbtest.Gorm(e.store).Where("site = ?", site).Find(&cycles)
			if len(cycles) != 1 || cycles[0].Status == db.CycleDone || !strings.Contains(cycles[0].Reason, "no such host") {
				t.Fatalf("cycles = %+v; want one, not done, naming the cause", cycles)
			}

			// At once: not yet tried again (a backoff), and not put off for
			// the recrawl interval either.
			r = crawl()
			if r.Status != crawler.SiteSkipped || !strings.Contains(r.Reason, "tried again from") || strings.Contains(r.Reason, "recrawl-after") {
				t.Errorf("crawl at once = %+v; want skipped until the backoff has passed", r)
			}
			if n := robotsRequests(); n != 1 {
				t.Errorf("robots.txt requests = %d, want 1", n)
			}

			// Eleven minutes later (the cycle and the snapshot set back): tried again.
			back := db.Now().Add(-11 * time.Minute)
			if err := dbtest.Gorm(e.store).Exec("UPDATE crawl_cycles SET started_at = ?, finished_at = ? WHERE site = ?", back, back, site).Error; err != nil {
				t.Fatal(err)
			}
			if err := dbtest.Gorm(e.store).Exec("UPDATE robots_snapshots SET fetched_at = ?", back).Error; err != nil {
				t.Fatal(err)
			}
			r = crawl()
			if r.Status != crawler.SiteNothingFetched || !strings.Contains(r.Reason, "no such host") {
				t.Errorf("crawl after the backoff = %+v; want tried again, nothing fetched", r)
			}
			if n := robotsRequests(); n != 2 {
				t.Errorf("robots.txt requests = %d, want 2 (tried again)", n)
			}
		})
	}
}
