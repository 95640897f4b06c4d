package crawler_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// scaleCase is one crawl of the local web with the crawler's default
// settings: sites of pages pages each at delay.
type scaleCase struct {
	sites, pages int
	delay        time.Duration
}

func (sc scaleCase) String() string {
	return fmt.Sprintf("%dx%d@%s", sc.sites, sc.pages, sc.delay)
}

// BenchmarkCrawlScale crawls the local web with lohibot's default settings
// (no tuning option: no MaxSitesParallel) and with Colly v2 under the same
// per-host limits, and reports each run against the politeness bound (21
// requests per host: 20 gaps of the delay, every host in parallel). The
// web server's own record is checked: one request in flight per host, the
// gap, exactly 20 page requests per site.
//
//	go test -run '^$' -bench 'CrawlScale$' -benchtime 1x ./crawler/
func BenchmarkCrawlScale(b *testing.B) {
	for _, sc := range []scaleCase{
		{sites: 200, pages: 25, delay: 200 * time.Millisecond},
		{sites: 3000, pages: 25, delay: time.Second},
	} {
		b.Run(sc.String(), func(b *testing.B) { benchScale(b, sc) })
	}
}

// BenchmarkCrawlScaleDefaultDelay crawls 8,000 sites x 25 pages at the
// default delay (5 s) with the default settings, alone in its process so
// that the process's peak RSS is lohibot's (and the local web's).
//
//	go test -run '^$' -bench 'CrawlScaleDefaultDelay$' -benchtime 1x ./crawler/
func BenchmarkCrawlScaleDefaultDelay(b *testing.B) {
	benchScale(b, scaleCase{sites: 8000, pages: 25, delay: crawler.DefaultDelay})
}

func benchScale(b *testing.B, sc scaleCase) {
	bound := time.Duration(crawler.Budget) * sc.delay
	w, err := testweb.Start(&testweb.Options{Plain: sc.sites, PagesPerSite: sc.pages, TallyOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	res, err := resolver.New(w.DNSAddr)
	if err != nil {
		b.Fatal(err)
	}
	// run crawls once and returns how long the crawl took, from the
	// crawler's start (crawler.New, on a database that exists already, as
	// `lohibot init` leaves it) to its end.
	measure := func(b *testing.B, strict bool, run func() time.Duration) {
		for i := 0; i < b.N; i++ {
			w.Reset()
			runtime.GC()
			stop := sampleHeap()
			elapsed := run()
			peak := stop()
			tallies := w.Tallies()
			if strict {
				checkServerTallies(b, w, tallies, sc.delay)
			}
			requests := 0
			for _, t := range tallies {
				requests += t.Requests
			}
			b.ReportMetric(elapsed.Seconds(), "s/crawl")
			b.ReportMetric(elapsed.Seconds()/bound.Seconds(), "x-bound")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(requests), "requests")
		}
	}
	b.Run("lohibot", func(b *testing.B) {
		measure(b, true, func() time.Duration {
			b.StopTimer()
			store, err := db.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			pol := policy.New(store, nil)
			var ts []crawler.Target
			for _, s := range w.Plain() {
				ts = append(ts, crawler.Target{Site: s.Name, StartURL: s.StartURL})
			}
			b.StartTimer()
			start := time.Now()
			c, err := crawler.New(context.Background(), store, pol, &crawler.Options{
				Node: "bench", Delay: sc.delay, AllowPrivate: true, Resolver: res,
				Timeout: 20 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			rs, err := c.Crawl(context.Background(), ts)
			elapsed := time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			bad := 0
			for _, r := range rs {
				if r.Status != crawler.SiteCrawled || r.Requests != crawler.Budget {
					if bad++; bad <= 5 {
						b.Errorf("site %s: %+v", r.Site, r)
					}
				}
			}
			return elapsed
		})
	})
}

// checkServerTallies checks the web server's record (its tallies per host):
// one request in flight per host, at least delay between two requests to a
// host (less 10 ms of clock slack between the client's and the server's
// view), and exactly Budget page requests per site.
func checkServerTallies(b *testing.B, w *testweb.Web, tallies map[string]testweb.Tally, delay time.Duration) {
	b.Helper()
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 5 {
			b.Errorf(format, args...)
		}
	}
	for host, n := range w.MaxInFlight() {
		if n > 1 {
			report("%s had %d requests in flight", host, n)
		}
	}
	pages := map[string]int{}
	for host, t := range tallies {
		if t.MinGap >= 0 && t.MinGap < delay-10*time.Millisecond {
			report("%s: gap of %s, want at least %s", host, t.MinGap, delay)
		}
		pages[w.SiteOfHost(host)] += t.Pages
	}
	for _, s := range w.Plain() {
		if n := pages[s.Name]; n != crawler.Budget {
			report("%s got %d page requests, want %d", s.Name, n, crawler.Budget)
		}
	}
}

// sampleHeap samples the heap in use (HeapInuse and StackInuse, read
// through runtime/metrics, which unlike runtime.ReadMemStats does not stop
// the world) every 20 ms until the returned func is called, which returns
// the peak.
func sampleHeap() func() uint64 {
	var (
		mu   sync.Mutex
		peak uint64
	)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
			{Name: "/memory/classes/heap/stacks:bytes"}}
		for {
			metrics.Read(ms)
			inuse := ms[0].Value.Uint64() + ms[1].Value.Uint64() + ms[2].Value.Uint64()
			mu.Lock()
			peak = max(peak, inuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
