package crawler_test

import (
	"context"
	"iter"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// fleetEnv is a PostgreSQL crawl list of sites plain sites of 25 pages on
// a web whose pages answer after latency.
func fleetEnv(t *testing.T, sites int, latency time.Duration) *env {
	t.Helper()
	if os.Getenv("LOHIBOT_TEST_POSTGRES") == "" {
		t.Skip("LOHIBOT_TEST_POSTGRES not set")
	}
	e := newEnv(t, "postgres", &testweb.Options{Plain: sites, PagesPerSite: 25, Latency: latency})
	if _, err := e.pol.AddSites(context.Background(), startURLs(e, e.web.Plain()), policy.Change{Actor: "test", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return e
}

// capped is a crawler of e named node with inFlight request slots.
func capped(t *testing.T, e *env, node string, inFlight int) *crawler.Crawler {
	t.Helper()
	o := e.options(t)
	o.Node, o.MaxInFlight, o.MaxSitesParallel = node, inFlight, 1000
	c := e.crawler(t, o)
	c.SetOthersAfter(200 * time.Millisecond)
	return c
}

// checkFleetLog checks what the fleet's record promises: the server saw
// one request per host at a time with the gap, exactly the budget per
// site, and every request it saw is in the log; every site has one cycle,
// whose node is the one that sent its last request (a cycle handed over
// at a gap goes on under the crawler that took it). It returns the
// requests each node sent.
func checkFleetLog(t *testing.T, e *env, sites int) map[string]int {
	t.Helper()
	hits := e.web.Hits()
	e.web.CheckPolite(t, hits, testDelay)
	checkBudgets(t, e.web, hits)
	checkLogCoversHits(t, e, hits, true)
	var cycles []db.CrawlCycle
	if err := dbtest.Gorm(e.store).Find(&cycles).Error; err != nil {
		t.Fatal(err)
	}
	nodeOf, bySite := map[int64]string{}, map[string]int{}
	for _, cy := range cycles {
		nodeOf[cy.ID] = cy.Node
		bySite[cy.Site]++
	}
	for site, n := range bySite {
		if n != 1 {
			t.Errorf("%s: %d cycles, want 1", site, n)
		}
	}
	if len(bySite) != sites {
		t.Errorf("%d sites have a cycle, want %d", len(bySite), sites)
	}
	sent, last := map[string]int{}, map[int64]db.Request{}
	for _, r := range e.requests(t) {
		sent[r.Node]++
		if r.CycleID != nil {
			last[*r.CycleID] = r
		}
	}
	for id, r := range last {
		if nodeOf[id] != r.Node {
			t.Errorf("cycle %d of %s: its last request %d (%s) sent by %s", id, nodeOf[id], r.ID, r.URL, r.Node)
		}
	}
	return sent
}

// TestFleetCapacity runs two crawlers of `crawl --all` on one PostgreSQL
// crawl list, each with 3 request slots (its own capacity), over a web
// whose pages answer after 50 ms; the second starts late. They claim
// the list by what they can send, not by how fast they start sites: each
// sends within 10% of half the requests. Neither ends while a site of
// the list is not started yet, and every promise holds in the server's
// record.
func TestFleetCapacity(t *testing.T) {
	const sites = 48
	e := fleetEnv(t, sites, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, b := capped(t, e, "crawler-a", 3), capped(t, e, "crawler-b", 3)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		ended     []time.Time
		unstarted = -1 // sites without a cycle as the first crawler ended
	)
	crawl := func(c *crawler.Crawler, after time.Duration) {
		defer wg.Done()
		time.Sleep(after)
		if err := c.CrawlEach(ctx, c.ListAll(ctx, sites), nil); err != nil {
			t.Errorf("%s: %v", c.Holder(), err)
		}
		mu.Lock()
		defer mu.Unlock()
		ended = append(ended, time.Now())
		if unstarted < 0 {
			var n int64
			dbtest.Gorm(e.store).Model(&db.Site{}).Where("name NOT IN (SELECT site FROM crawl_cycles)").Count(&n)
			unstarted = int(n)
		}
	}
	start := time.Now()
	wg.Add(2)
	go crawl(a, 0)
	go crawl(b, 500*time.Millisecond)
	wg.Wait()
	sent := checkFleetLog(t, e, sites)
	total := sent["crawler-a"] + sent["crawler-b"]
	t.Logf("requests: %v in %.1f s; the crawlers ended %.1f s and %.1f s after the start",
		sent, time.Since(start).Seconds(), ended[0].Sub(start).Seconds(), ended[1].Sub(start).Seconds())
	for _, node := range []string{"crawler-a", "crawler-b"} {
		if share := float64(sent[node]) / float64(total); share < 0.45 || share > 0.55 {
			t.Errorf("%s sent %d of %d requests (%.2f), want within 10%% of half", node, sent[node], total, share)
		}
	}
	if unstarted != 0 {
		t.Errorf("the first crawler ended with %d sites of the list not started, want 0", unstarted)
	}
}

// TestFleetTakesUnstarted has a crawler claim the first block of the list
// and stall with its sites unstarted (alive: its claim is renewed); a
// second crawler, with capacity to spare, takes those sites up too and
// crawls the whole list before it ends.
func TestFleetTakesUnstarted(t *testing.T) {
	const sites = 24
	e := fleetEnv(t, sites, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, b := capped(t, e, "crawler-a", 1), capped(t, e, "crawler-b", 4)
	// crawler-a claims a block (its capacity, one request slot, covers
	// no more) and reads one site of it, which it never starts.
	next, stop := iter.Pull2(a.ListAll(ctx, sites))
	defer stop()
	first, err, ok := next()
	if !ok || err != nil {
		t.Fatalf("crawler-a's list: %v, %v", err, ok)
	}
	var claimed int64
	dbtest.Gorm(e.store).Model(&db.HostLease{}).Where("holder = ? AND host LIKE 'start:%'", a.Holder()).Count(&claimed)
	if claimed == 0 {
		t.Fatal("crawler-a claimed no block")
	}
	rs := map[string]crawler.SiteResult{}
	var mu sync.Mutex
	if err := b.CrawlEach(ctx, b.ListAll(ctx, sites), func(r crawler.SiteResult) {
		mu.Lock()
		rs[r.Site] = r
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if r := rs[first.Site]; r.Status != crawler.SiteCrawled {
		t.Errorf("%s, claimed and read by crawler-a: %s (%s) by crawler-b, want crawled", first.Site, r.Status, r.Reason)
	}
	sent := checkFleetLog(t, e, sites)
	if sent["crawler-a"] != 0 || sent["crawler-b"] != sites*(crawler.Budget+1) {
		t.Errorf("requests by node: %v, want all %d by crawler-b", sent, sites*(crawler.Budget+1))
	}
}
