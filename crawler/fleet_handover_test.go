package crawler_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestFleetHandover has a saturated crawler hand started sites over at a
// gap to a crawler with free capacity. crawler-b, with one request slot,
// starts every site of the list at once, over a web whose pages answer
// after 100 ms: each site waits for the slot far longer than its gap.
// crawler-a, with four slots, runs `crawl --all` a second later: it finds
// every site started, asks for them, and takes them over at their gaps.
// The web server's record shows exactly 20 page requests per site, one
// request in flight per host and the gap, across the handovers; the log
// shows cycles whose requests crawler-b sent first and crawler-a after,
// at least the gap after crawler-b's last ended; crawler-a ends only once
// every cycle has ended; the audit passes.
func TestFleetHandover(t *testing.T) {
	const sites = 8
	e := fleetEnv(t, sites, 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, b := capped(t, e, "crawler-a", 4), capped(t, e, "crawler-b", 1)
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		resA, resB    = map[string]crawler.SiteResult{}, map[string]crawler.SiteResult{}
		runningAfterA = int64(-1)
		errA, errB    error
		record        = func(m map[string]crawler.SiteResult) func(crawler.SiteResult) {
			return func(r crawler.SiteResult) {
				mu.Lock()
				defer mu.Unlock()
				if prev, ok := m[r.Site]; ok && prev.Status == crawler.SiteCrawled {
					return
				}
				m[r.Site] = r
			}
		}
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		errB = b.CrawlEach(ctx, func(yield func(crawler.Target, error) bool) {
			for _, t := range e.plainTargets() {
				if !yield(t, nil) {
					return
				}
			}
		}, record(resB))
	}()
	go func() {
		defer wg.Done()
		time.Sleep(time.Second)
		errA = a.CrawlEach(ctx, a.ListAll(ctx, sites), record(resA))
		dbtest.Gorm(e.store).Model(&db.CrawlCycle{}).Where("status = ?", db.CycleRunning).Count(&runningAfterA)
	}()
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("crawler-a: %v; crawler-b: %v", errA, errB)
	}
	sent := checkFleetLog(t, e, sites)
	t.Logf("requests by node: %v", sent)
	if runningAfterA != 0 {
		t.Errorf("crawler-a ended with %d cycles running, want 0 (a fleet's crawl ends together)", runningAfterA)
	}

	// The cycles handed over: crawler-b's requests first, then
	// crawler-a's, the first of them the gap after the last of b's ended.
	byCycle := map[int64][]db.Request{}
	for _, r := range e.requests(t) {
		if r.CycleID != nil {
			byCycle[*r.CycleID] = append(byCycle[*r.CycleID], r)
		}
	}
	handed := 0
	for id, rs := range byCycle {
		turn := -1
		for i := 1; i < len(rs); i++ {
			if rs[i].Node != rs[i-1].Node {
				if turn >= 0 || rs[i-1].Node != "crawler-b" || rs[i].Node != "crawler-a" {
					t.Errorf("cycle %d: request %d by %s follows request %d by %s", id, rs[i].ID, rs[i].Node, rs[i-1].ID, rs[i-1].Node)
				}
				turn = i
			}
		}
		if turn < 0 {
			continue
		}
		handed++
		before, after := rs[turn-1], rs[turn]
		if before.CompletedAt == nil {
			t.Errorf("cycle %d: crawler-b's last request %d not completed", id, before.ID)
		} else if gap := after.SentAt.Sub(*before.CompletedAt); after.Host == before.Host && gap < testDelay {
			t.Errorf("cycle %d: crawler-a's first request %d sent %v after crawler-b's last ended, want >= %v", id, after.ID, gap, testDelay)
		}
		site := rs[0].Site
		if r := resB[site]; r.Status != crawler.SiteSkipped || !strings.Contains(r.Reason, "handed over") {
			t.Errorf("%s: crawler-b's result %s (%s), want skipped, handed over", site, r.Status, r.Reason)
		}
		if r := resA[site]; r.Status != crawler.SiteCrawled {
			t.Errorf("%s: crawler-a's result %s (%s), want crawled", site, r.Status, r.Reason)
		}
	}
	t.Logf("%d of %d cycles handed over", handed, sites)
	if handed == 0 {
		t.Errorf("no cycle was handed over from the saturated crawler-b to crawler-a")
	}
	sum, err := audit.Run(context.Background(), e.store, nil, func(v audit.Violation) error {
		t.Errorf("audit: %+v", v)
		return nil
	})
	if err != nil || !sum.OK() {
		t.Errorf("audit = %+v, %v; want no violation", sum, err)
	}
}
