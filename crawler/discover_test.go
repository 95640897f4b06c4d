package crawler_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// crawlDiscovering crawls targets with discovery on, and the sites it
// adds, and returns every site's result.
func crawlDiscovering(t *testing.T, e *env, d crawler.DiscoverOptions, targets []crawler.Target) map[string]crawler.SiteResult {
	t.Helper()
	opts := e.options(t)
	opts.Discover = &d
	c := e.crawler(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	out := map[string]crawler.SiteResult{}
	err := c.CrawlEach(ctx, c.WithDiscovered(ctx, func(yield func(crawler.Target, error) bool) {
		for _, tg := range targets {
			if !yield(tg, nil) {
				return
			}
		}
	}), func(r crawler.SiteResult) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := out[r.Site]; dup {
			t.Errorf("site %s crawled twice", r.Site)
		}
		out[r.Site] = r
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiscoverExcludedWhileCrawling: big.test, linked from both plain
// sites, is discovered and crawled in the same run; an exclusion of it
// (spelled www.BIG.test) that arrives while its third page is served stops
// it at once: no request to it is sent after the exclusion took effect.
func TestDiscoverExcludedWhileCrawling(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 2, PagesPerSite: 3})
			big := e.web.Site(testweb.KindBig)
			var (
				mu         sync.Mutex
				excludedAt time.Time
			)
			e.web.Handle(big.Host, "/p/3.html", func(rw http.ResponseWriter, r *http.Request) {
				res, err := e.pol.Exclude(r.Context(), []string{"http://www.BIG.test./"}, policy.Change{Actor: "staff", Reason: "asked by phone", Source: "cli"})
				if err != nil || len(res) != 1 {
					t.Errorf("exclude: %v, %v", res, err)
				}
				ex, err := e.store.Exclusion(context.Background(), big.Name)
				if err != nil {
					t.Errorf("exclusion: %v", err)
				} else {
					mu.Lock()
					excludedAt = ex.ExcludedAt
					mu.Unlock()
				}
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte("<html><head><title>three</title></head><body><a href=\"/p/4.html\">4</a></body></html>"))
			})
			results := crawlDiscovering(t, e, crawler.DiscoverOptions{MaxNew: 10}, e.plainTargets())
			r, ok := results[big.Name]
			if !ok {
				t.Fatalf("big.test was not crawled; results %+v", results)
			}
			if r.Status != crawler.SiteExcluded {
				t.Errorf("big.test: %+v; want status excluded", r)
			}
			mu.Lock()
			at := excludedAt
			mu.Unlock()
			if at.IsZero() {
				t.Fatal("the exclusion never happened (page 3 never requested)")
			}
			var after, pages []string
			for _, h := range e.web.HitsFor(big.Host) {
				pages = append(pages, h.Path)
				if h.Start.After(at) {
					after = append(after, h.Path)
				}
			}
			if len(after) > 0 {
				t.Errorf("requests to big.test after its exclusion at %s: %v (all: %v)", at, after, pages)
			}
			if !slices.Contains(pages, "/p/3.html") || len(pages) > 6 {
				t.Errorf("requests to big.test: %v; want the crawl to stop at /p/3.html", pages)
			}
		})
	}
}

// TestDiscoverPerDay: with PerDay (serve), the sites that qualify join the
// crawl list as the crawl goes, not crawled by it, and at most MaxNew over
// 24 hours, across crawlers: a second crawler finding the same links adds
// none.
func TestDiscoverPerDay(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 1, PagesPerSite: 2})
			links := []testweb.Link{
				{Href: e.web.URL("t-1.test", "/"), Text: "one"}, {Href: e.web.URL("t-2.test", "/"), Text: "two"},
				{Href: e.web.URL("t-3.test", "/"), Text: "three"},
			}
			var targets []crawler.Target
			for _, h := range []string{"s-1.test", "s-2.test"} {
				e.web.AddPage(h, "/", h, links...)
				targets = append(targets, crawler.Target{Site: h, StartURL: e.web.URL(h, "/")})
			}
			for round := 0; round < 2; round++ {
				opts := e.options(t)
				opts.Discover = &crawler.DiscoverOptions{MaxNew: 2, PerDay: true, FlushEvery: 50 * time.Millisecond}
				opts.RecrawlAfter = time.Millisecond
				c, err := crawler.New(context.Background(), e.store, e.pol, opts)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Crawl(context.Background(), targets); err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			n, err := e.store.CandidatesAddedSince(context.Background(), time.Now().Add(-time.Hour))
			if err != nil || n != 2 {
				t.Errorf("candidates added: %d, %v; want 2 (MaxNew a day)", n, err)
			}
			listed, err := e.pol.Sites(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range listed {
				names = append(names, s.Name)
			}
			if len(names) != 2 || !strings.HasPrefix(names[0], "t-") || !strings.HasPrefix(names[1], "t-") {
				t.Errorf("crawl list %v; want two of t-1, t-2, t-3", names)
			}
			for _, h := range []string{"t-1.test", "t-2.test", "t-3.test"} {
				if hits := e.web.HitsFor(h); len(hits) > 0 {
					t.Errorf("%s requested %d times; with PerDay the crawl list's scheduler crawls it, not this crawl", h, len(hits))
				}
			}
		})
	}
}
