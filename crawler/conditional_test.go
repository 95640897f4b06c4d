package crawler_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestConditionalRecrawl: the second cycle of an unchanged site sends the
// first cycle's validators back; every 304 is logged and counted as a page
// request, keeps the page's index entry, and its stored links are followed
// again, so the recrawl visits the same pages for a fraction of the bytes.
func TestConditionalRecrawl(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, engine, &testweb.Options{Plain: 1, PagesPerSite: 8, Validators: true})
			// The site is recrawled after RecrawlAfter of fake time; the
			// gaps within a crawl end as soon as the crawler waits.
			fc := clocktest.New(time.Time{})
			actx, stop := context.WithCancel(ctx)
			defer stop()
			go fc.AutoAdvance(actx)
			opts := e.options(t)
			opts.Clock = fc
			opts.RecrawlAfter = time.Hour
			c := e.crawler(t, opts)
			site := e.web.Plain()[0]
			ts := []crawler.Target{{Site: site.Name, StartURL: site.StartURL}}
			first, err := c.Crawl(ctx, ts)
			if err != nil || first[0].Status != crawler.SiteCrawled {
				t.Fatalf("first crawl: %+v, %v", first, err)
			}
			var indexed int64
			dbtest.Gorm(e.store).Model(&db.Page{}).Where("site = ?", site.Name).Count(&indexed)
			fc.Advance(opts.RecrawlAfter) // the site is due again
			e.web.Reset()
			second, err := c.Crawl(ctx, ts)
			if err != nil || second[0].Status != crawler.SiteCrawled {
				t.Fatalf("second crawl: %+v, %v", second, err)
			}
			if second[0].CycleID == first[0].CycleID {
				t.Fatalf("the second crawl did not start a new cycle")
			}
			reqs := e.requests(t)
			var bytes1, bytes2 int64
			var pages1, pages2, notModified int
			for _, r := range reqs {
				if r.CycleID == nil || r.Purpose != db.PurposePage {
					continue
				}
				switch *r.CycleID {
				case first[0].CycleID:
					bytes1 += r.Bytes
					pages1++
				case second[0].CycleID:
					bytes2 += r.Bytes
					pages2++
					if r.Status != nil && *r.Status == 304 {
						notModified++
						if r.Outcome != "not-modified" || r.BudgetSlot == nil || r.ETag == "" {
							t.Errorf("304 logged as %+v, want outcome not-modified, a budget slot and the ETag", r)
						}
					}
				}
			}
			if pages2 != pages1 || notModified != pages2 || second[0].NotModified != pages2 || second[0].Requests != pages2 {
				t.Errorf("second cycle: %d page requests (%d answered 304, result %+v), want %d, all 304", pages2, notModified, second[0], pages1)
			}
			for _, h := range e.web.Hits() {
				if h.Path != "/robots.txt" && h.Status != 304 {
					t.Errorf("%s answered %d on the recrawl, want 304", h.Path, h.Status)
				}
			}
			var still int64
			dbtest.Gorm(e.store).Model(&db.Page{}).Where("site = ?", site.Name).Count(&still)
			if indexed == 0 || still != indexed {
				t.Errorf("index holds %d pages of the site after the recrawl, %d before", still, indexed)
			}
			t.Logf("unchanged site of %d pages: first cycle %d bytes, conditional recrawl %d bytes (%.0f%% saved)",
				pages1, bytes1, bytes2, 100*(1-float64(bytes2)/float64(bytes1)))
			if bytes2*5 > bytes1 {
				t.Errorf("recrawl read %d bytes, the first cycle %d: want less than a fifth", bytes2, bytes1)
			}
			// The audit re-derives every promise from the log: a 304 is a
			// page request like any other (budget, gap, robots.txt).
			sum, err := audit.Run(ctx, e.store, nil, func(v audit.Violation) error {
				t.Errorf("audit: %+v", v)
				return nil
			})
			if err != nil || !sum.OK() {
				t.Errorf("audit = %+v, %v; want no violation", sum, err)
			}
		})
	}
}
