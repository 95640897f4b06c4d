package crawler_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// TestRotation: a site waiting for its host's gap holds no request slot.
// With one request slot and the default bound on sites, every site is
// taken up at once and their requests interleave; the server never sees
// more than MaxInFlight requests at a time, nor two on one host.
func TestRotation(t *testing.T) {
	const sites = 12
	e := newEnv(t, "sqlite", &testweb.Options{Plain: sites, PagesPerSite: 4})
	opts := e.options(t)
	opts.MaxSitesParallel = 0 // the default: an upper bound only
	opts.MaxInFlight = 1
	opts.Delay = 300 * time.Millisecond
	c := e.crawler(t, opts)
	var ts []crawler.Target
	for _, s := range e.web.Plain() {
		ts = append(ts, crawler.Target{Site: s.Name, StartURL: s.StartURL})
	}
	rs, err := c.Crawl(context.Background(), ts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Status != crawler.SiteCrawled {
			t.Errorf("%s: %+v", r.Site, r)
		}
	}
	hits := e.web.Hits()
	e.web.CheckPolite(t, hits, opts.Delay)
	// Every site had a request before any site had its third: the sites
	// rotate instead of waiting for each other.
	perHost := map[string]int{}
	first := map[string]bool{}
	sort.Slice(hits, func(i, j int) bool { return hits[i].Start.Before(hits[j].Start) })
	for _, h := range hits {
		perHost[h.Host]++
		first[h.Host] = true
		if perHost[h.Host] == 3 && len(first) < sites {
			t.Fatalf("%s had its third request when only %d of %d sites had started", h.Host, len(first), sites)
		}
	}
	// One slot: never two requests in flight at once, across all hosts.
	for i := 1; i < len(hits); i++ {
		if hits[i].Start.Before(hits[i-1].End.Add(-5 * time.Millisecond)) {
			t.Fatalf("requests %s%s and %s%s overlap with MaxInFlight 1", hits[i-1].Host, hits[i-1].Path, hits[i].Host, hits[i].Path)
		}
	}
	if h, r, n := c.CacheSizes(); h != 0 || r != 0 || n != 0 {
		t.Errorf("after the crawl the crawler keeps %d hosts, %d robots.txt and %d resolved names in memory, want none", h, r, n)
	}
}

// TestDueSites: the due-site rule and its order, on both engines.
func TestDueSites(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		e := newEnvDSN(t, dsn)
		pol := e.pol
		names := []string{"never.test", "excluded.test", "recent.test", "old.test", "stopped.test", "leased.test", "spent.test"}
		if _, err := pol.AddSites(ctx, names, policy.Change{Actor: "test", Source: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := pol.Exclude(ctx, []string{"excluded.test"}, policy.Change{Actor: "staff", Source: "test"}); err != nil {
			t.Fatal(err)
		}
		now := db.Now()
		cycle := func(site, status string, started time.Time, spent int) {
			t.Helper()
			cy := db.CrawlCycle{Site: site, Node: "n", StartedAt: started, Status: status, Budget: crawler.Budget, Spent: spent}
			if err := dbtest.Gorm(e.store).Create(&cy).Error; err != nil {
				t.Fatal(err)
			}
			// As the crawler's end of a cycle records it.
			if err := dbtest.Gorm(e.store).Exec(db.SiteDueSinceSQL, cy.ID, db.Epoch, site).Error; err != nil {
				t.Fatal(err)
			}
		}
		cycle("recent.test", db.CycleDone, now.Add(-time.Hour), 20)
		cycle("old.test", db.CycleDone, now.Add(-8*24*time.Hour), 20)
		cycle("stopped.test", db.CycleStopped, now.Add(-time.Hour), 3)
		cycle("spent.test", db.CycleStopped, now.Add(-time.Hour), 20)
		if err := dbtest.Gorm(e.store).Create(&db.HostLease{Host: "cycle:leased.test", Holder: "other/1/x", ExpiresAt: now.Add(time.Minute), NextAt: now}).Error; err != nil {
			t.Fatal(err)
		}
		c := e.crawler(t, nil)
		got, err := c.DueSites(ctx, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		var gotNames []string
		for _, g := range got {
			gotNames = append(gotNames, g.Site)
		}
		want := []string{"never.test", "stopped.test", "old.test"}
		if fmt.Sprint(gotNames) != fmt.Sprint(want) {
			t.Errorf("DueSites = %v, want %v", gotNames, want)
		}
		if got[0].StartURL != "https://never.test/" {
			t.Errorf("start URL = %q", got[0].StartURL)
		}
		got, err = c.DueSites(ctx, 100, func(s string) bool { return s == "never.test" })
		if err != nil || len(got) != 2 || got[0].Site != "stopped.test" {
			t.Errorf("DueSites skipping never.test = %v, %v", got, err)
		}
		got, err = c.DueSites(ctx, 1, nil)
		if err != nil || len(got) != 1 {
			t.Errorf("DueSites(limit 1) = %v, %v", got, err)
		}
	})
}

// TestDueSitesAfterCrawl: a crawled site stops being due until its recrawl
// interval has passed, and the list is paged through (more sites than one
// page of the query).
func TestDueSitesAfterCrawl(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 2})
	site := e.web.Plain()[0]
	var many []string
	for i := range 2500 {
		many = append(many, fmt.Sprintf("s%04d.test", i))
	}
	if _, err := e.pol.AddSites(ctx, append(many, site.StartURL), policy.Change{Actor: "test", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	c := e.crawler(t, nil)
	if rs, err := c.Crawl(ctx, []crawler.Target{{Site: site.Name, StartURL: site.StartURL}}); err != nil || rs[0].Status != crawler.SiteCrawled {
		t.Fatalf("Crawl = %+v, %v", rs, err)
	}
	due, err := c.DueSites(ctx, 10000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != len(many) {
		t.Errorf("%d sites due, want %d (all but the one just crawled)", len(due), len(many))
	}
	for _, d := range due {
		if d.Site == site.Name {
			t.Errorf("%s is due right after its cycle", site.Name)
		}
	}
	opts := e.options(t)
	opts.RecrawlAfter = time.Nanosecond
	c2 := e.crawler(t, opts)
	due, err = c2.DueSites(ctx, 10000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != len(many)+1 || due[len(due)-1].Site != site.Name {
		t.Errorf("with a recrawl interval of 1ns: %d due, last %v; want %d, the crawled site last", len(due), due[len(due)-1], len(many)+1)
	}
	// crawler.Listed yields the whole list by name, a page at a time.
	n, prev := 0, ""
	for tg, err := range crawler.Listed(ctx, e.store) {
		if err != nil {
			t.Fatal(err)
		}
		if tg.Site <= prev {
			t.Fatalf("Listed: %q after %q", tg.Site, prev)
		}
		prev = tg.Site
		n++
	}
	if n != len(many)+1 {
		t.Errorf("Listed yielded %d sites, want %d", n, len(many)+1)
	}
	// crawler.ListedFrom yields the same sites once each, from the one
	// after first round to first, whichever page first is on.
	for _, at := range []int64{0, 1, 999, 1000, 1700, int64(len(many))} {
		first, err := e.store.SiteNameAt(ctx, at)
		if err != nil || first == "" {
			t.Fatalf("SiteNameAt(%d) = %q, %v", at, first, err)
		}
		var names []string
		for tg, err := range crawler.ListedFrom(ctx, e.store, first) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tg.Site)
		}
		sorted := slices.Sorted(slices.Values(names))
		if distinct := len(slices.Compact(slices.Clone(sorted))); len(names) != len(many)+1 || distinct != len(names) {
			t.Fatalf("ListedFrom(%s): %d sites (%d distinct), want each of the %d once", first, len(names), distinct, len(many)+1)
		}
		want := append(slices.Clone(sorted[at+1:]), sorted[:at+1]...)
		if !slices.Equal(names, want) {
			t.Errorf("ListedFrom(%s) starts %v and ends %v, want the list from after it round to it", first, names[:2], names[len(names)-2:])
		}
	}
	if name, err := e.store.SiteNameAt(ctx, int64(len(many))+1); err != nil || name != "" {
		t.Errorf("SiteNameAt past the end = %q, %v; want \"\"", name, err)
	}
}

// newEnvDSN is newEnv over the database at dsn, with a small local web.
func newEnvDSN(t *testing.T, dsn string) *env {
	t.Helper()
	w, err := testweb.Start(&testweb.Options{Plain: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	store := dbtest.OpenDSN(t, dsn)
	return &env{web: w, store: store, pol: policy.New(store, nil), dsn: dsn}
}

// TestBusyCycleHandOut: a second crawler finding a site's cycle lease held
// by a live crawler learns within about a second of its release that the
// site is done, instead of waiting out the lease's TTL.
func TestBusyCycleHandOut(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 4})
	opts := e.options(t)
	opts.LeaseTTL = 30 * time.Second
	c1 := e.crawler(t, opts)
	opts2 := *opts
	c2 := e.crawler(t, &opts2)
	site := e.web.Plain()[0]
	ts := []crawler.Target{{Site: site.Name, StartURL: site.StartURL}}
	done := make(chan []crawler.SiteResult, 1)
	go func() {
		rs, _ := c1.Crawl(ctx, ts)
		done <- rs
	}()
	testutil.Eventually(t, 10*time.Second, "the first crawler's cycle lease", func() bool {
		var n int64
		dbtest.Gorm(e.store).Model(&db.HostLease{}).Where("host = ? AND holder = ?", "cycle:"+site.Name, c1.Holder()).Count(&n)
		return n == 1
	})
	start := time.Now()
	rs, err := c2.Crawl(ctx, ts)
	took := time.Since(start)
	if err != nil || len(rs) != 1 || rs[0].Status != crawler.SiteSkipped {
		t.Fatalf("second crawler: %+v, %v; want skipped", rs, err)
	}
	if took > 10*time.Second {
		t.Errorf("second crawler took %s to skip a site under a live lease (TTL %s)", took, opts.LeaseTTL)
	}
	if first := <-done; first[0].Status != crawler.SiteCrawled || first[0].Requests == 0 {
		t.Errorf("first crawler: %+v", first)
	}
}
