package serve_test

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/pgcluster"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// TestSchedulerRidesOutDatabaseRestart restarts the database (a fast
// stop, 2 s down, a start: a private cluster) under serve's scheduler
// crawling 10 sites: it waits for the database, says so in its log and in
// lohibot_db_retries_total, and every site still gets its 20 page
// requests, one at a time per host with the delay kept, in one cycle that
// passes the audit.
func TestSchedulerRidesOutDatabaseRestart(t *testing.T) {
	cl := pgcluster.Start(t)
	web, err := testweb.Start(&testweb.Options{Plain: 10, PagesPerSite: 25})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	setup, err := db.Open(context.Background(), cl.DSN)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, s := range web.Plain() {
		urls = append(urls, s.StartURL)
	}
	if _, err := policy.New(setup, nil).AddSites(context.Background(), urls, policy.Change{Actor: "test", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	setup.Close()

	cfg := crawlConfig(cl.DSN, web)
	cfg.Crawler.MaxSitesParallel = 10
	var log testutil.Buffer
	src := &configSource{}
	src.set(cfg, nil)
	srv, err := serve.New(context.Background(), cfg, &serve.Options{Load: src.load, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	base := start(t, srv)
	testutil.Eventually(t, 30*time.Second, "60 requests", func() bool { return len(web.Hits()) >= 60 })
	back := cl.Restart(2 * time.Second).Back

	store := srv.Store()
	testutil.Eventually(t, 60*time.Second, "every site's cycle to end", func() bool {
		var running int64
		err := store.Retry(context.Background(), func() error {
			var ended int64
			if err := dbtest.Gorm(store).Model(&db.CrawlCycle{}).Where("status <> ?", db.CycleRunning).Count(&ended).Error; err != nil {
				return err
			}
			running = 10 - ended
			return nil
		})
		return err == nil && running == 0
	})
	hits := web.Hits()
	for host, n := range web.MaxInFlight() {
		if n > 1 {
			t.Errorf("MaxInFlight[%s] = %d, want 1", host, n)
		}
	}
	for host, g := range testweb.MinGap(hits) {
		if g < time.Duration(cfg.Crawler.Delay)-10*time.Millisecond {
			t.Errorf("MinGap[%s] = %v, want >= %v", host, g, time.Duration(cfg.Crawler.Delay))
		}
	}
	pages := web.PageHitsPerSite(hits)
	for _, s := range web.Plain() {
		if pages[s.Name] != 20 {
			t.Errorf("page requests to %s = %d, want 20", s.Name, pages[s.Name])
		}
	}
	cs := cycles(t, store)
	for _, s := range web.Plain() {
		if len(cs[s.Name]) != 1 || cs[s.Name][0].Status != db.CycleDone {
			t.Errorf("cycles of %s: %+v, want one, done", s.Name, cs[s.Name])
		}
	}
	var first time.Time
	for _, h := range hits {
		if h.Start.After(back) && (first.IsZero() || h.Start.Before(first)) {
			first = h.Start
		}
	}
	t.Logf("first request %s after the server was back", first.Sub(back).Round(time.Millisecond))

	_, metrics := fetchURL(t, base+"/metrics")
	m := regexp.MustCompile(`(?m)^lohibot_db_retries_total (\d+)$`).FindStringSubmatch(metrics)
	if m == nil {
		t.Fatalf("/metrics lacks lohibot_db_retries_total")
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		t.Errorf("lohibot_db_retries_total 0 after a restart, want the retries counted")
	}
	if !strings.Contains(metrics, `lohibot_crawler_sites_total{status="failed"} 0`) {
		t.Errorf("/metrics counts failed sites")
	}
	for _, want := range []string{"database unreachable: retrying with backoff", "database reachable again"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "msg=\"database") {
			t.Log(l)
		}
	}
	auditOK(t, store)
}
