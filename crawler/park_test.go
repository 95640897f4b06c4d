package crawler_test

import (
	"bufio"
	"bytes"
	"context"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// siteSteps counts the goroutines running a step of a site's crawl (see
// Crawler.step): inside runSteps and inside the step. A timer's goroutine
// that is only handing a step over, or a runSteps that has finished its
// last step and is returning, is not one.
func siteSteps(t *testing.T) int {
	return goroutinesIn(t, "lohibot/crawler.(*Crawler).runSteps", "lohibot/crawler.(*siteRun).proceed+")
}

// goroutinesIn counts the goroutines whose stack holds every one of fns.
func goroutinesIn(t *testing.T, fns ...string) int {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	// debug=1: "N @ addresses" opens each distinct stack, "#" lines follow.
	n, count := 0, 0
	var found map[string]bool
	flush := func() {
		if len(found) == len(fns) {
			n += count
		}
	}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 1 && f[1] == "@" {
			flush()
			count, _ = strconv.Atoi(f[0])
			found = map[string]bool{}
			continue
		}
		if strings.HasPrefix(line, "#") {
			for _, fn := range fns {
				if strings.Contains(line, fn) {
					found[fn] = true
				}
			}
		}
	}
	flush()
	return n
}

// TestWaitingSiteHoldsNoGoroutine: a site waiting for its host's gap holds
// no goroutine (a waiting host holds no worker), while every
// politeness promise still holds in the web server's record.
func TestWaitingSiteHoldsNoGoroutine(t *testing.T) {
	const sites, delay = 30, 2 * time.Second
	e := newEnv(t, "sqlite", &testweb.Options{Plain: sites, PagesPerSite: 3})
	opts := e.options(t)
	opts.Delay = delay
	c := e.crawler(t, opts)
	var samples, total int
	rs := crawlSampling(t, c, e.plainTargets(), 50*time.Millisecond, func() {
		samples++
		total += goroutinesIn(t, "lohibot/crawler.(*siteRun)", "lohibot/internal/clock.Sleep")
	})
	for _, r := range rs {
		if r.Status != crawler.SiteCrawled || r.Pages != 3 {
			t.Errorf("%s: %+v, want 3 pages crawled", r.Site, r)
		}
	}
	e.web.CheckPolite(t, e.web.Hits(), delay)
	// Waiting for its gap is nearly all of a site's time: a goroutine per
	// site would be found sleeping in nearly every sample.
	if avg := float64(total) / float64(max(samples, 1)); avg > 1 {
		t.Errorf("on average %.1f goroutines slept for a host in a site's crawl (%d samples), want none", avg, samples)
	}
}

// TestSitesStartBounded: at most so many sites are starting (gate, cycle,
// last cycle's validators) at once, and a site not yet started is not a
// goroutine; at most so many sites' steps run at once, the others due wait
// without a goroutine. The bounds (by default from MaxInFlight,
// at least 64 and 128) are set low so as to be reached.
func TestSitesStartBounded(t *testing.T) {
	const sites, inFlight = 60, 3
	e := newEnv(t, "sqlite", &testweb.Options{Plain: sites, PagesPerSite: 1})
	opts := e.options(t)
	opts.MaxInFlight = inFlight
	opts.MaxSitesParallel = sites
	c := e.crawler(t, opts)
	c.SetWorkBounds(inFlight, 2*inFlight)
	most, mostSteps := 0, 0
	rs := crawlSampling(t, c, e.plainTargets(), 2*time.Millisecond, func() {
		most = max(most, goroutinesIn(t, "lohibot/crawler.(*Crawler).startSite"))
		mostSteps = max(mostSteps, siteSteps(t))
	})
	if len(rs) != sites {
		t.Fatalf("%d results, want %d", len(rs), sites)
	}
	for _, r := range rs {
		if r.Status != crawler.SiteCrawled {
			t.Errorf("%s: %+v", r.Site, r)
		}
	}
	if most > inFlight {
		t.Errorf("up to %d sites were starting at once, want at most %d", most, inFlight)
	}
	if mostSteps > 2*inFlight {
		t.Errorf("up to %d goroutines were in a site's crawl at once, want at most %d", mostSteps, 2*inFlight)
	}
}

// crawlSampling crawls ts with c and calls sample every so often while the
// crawl runs, and returns the crawl's results.
func crawlSampling(t *testing.T, c *crawler.Crawler, ts []crawler.Target, every time.Duration, sample func()) []crawler.SiteResult {
	t.Helper()
	done := make(chan []crawler.SiteResult)
	go func() {
		rs, err := c.Crawl(context.Background(), ts)
		if err != nil {
			t.Errorf("Crawl: %v", err)
		}
		done <- rs
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case rs := <-done:
			return rs
		case <-tick.C:
			sample()
		}
	}
}
