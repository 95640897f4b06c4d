package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// Sizes of BenchmarkServeMemory.
const (
	memWaves      = 10    // waves of hosts put on the crawl list one after the other
	memWaveHosts  = 5_000 // distinct hosts (sites) per wave
	memPages      = 2     // pages per site: robots.txt and 2 page requests per host
	memDelay      = 100 * time.Millisecond
	memIdleSettle = 6 * time.Second // longer than the crawler's idle-connection timeout
)

// BenchmarkServeMemory runs serve's crawl scheduler (one long-lived
// crawler, as `lohibot serve` runs it) over 50,000 distinct hosts of the
// local web, put on the crawl list in waves of 5,000, each wave crawled to
// its end before the next is listed. It measures the live heap
// (runtime.ReadMemStats after a forced GC, once idle connections have
// timed out) after the first wave and after the last: what the server
// keeps per host it ever crawled is the difference (the end
// within 20% of the first 5,000). The web server's record of each wave is
// checked (one request in flight per host, the gap, every page requested
// once) and then dropped, so that it does not weigh on the heap measured.
//
// It takes about 8 minutes of CPU (50,000 cycles and 150,000 requests
// through one SQLite writer), so it runs only when
// LOHIBOT_BENCH_SERVE_MEMORY is set:
//
//	LOHIBOT_BENCH_SERVE_MEMORY=1 go test -run '^$' -bench 'ServeMemory$' -benchtime 1x -timeout 30m ./internal/app/serve/
func BenchmarkServeMemory(b *testing.B) {
	if os.Getenv("LOHIBOT_BENCH_SERVE_MEMORY") == "" {
		b.Skip("opt-in: set LOHIBOT_BENCH_SERVE_MEMORY=1 (50,000 hosts take about 8 minutes of CPU)")
	}
	for i := 0; i < b.N; i++ {
		serveMemory(b)
	}
}

func serveMemory(b *testing.B) {
	ctx := context.Background()
	web, err := testweb.Start(&testweb.Options{Plain: memWaves * memWaveHosts, PagesPerSite: memPages, TallyOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	dsn := filepath.Join(b.TempDir(), "serve.db")
	store, err := db.Open(ctx, dsn) // as `lohibot init` would
	if err != nil {
		b.Fatal(err)
	}
	store.Close()
	cfg := serve.DefaultConfig()
	cfg.DB = dsn
	cfg.HTTP = "127.0.0.1:0"
	cfg.Node = "bench-node"
	cfg.Resolver = web.DNSAddr
	cfg.Crawler.Enabled = true
	cfg.Crawler.AllowPrivate = true
	cfg.Crawler.Delay = serve.Duration(memDelay)
	cfg.Crawler.ScanInterval = serve.Duration(200 * time.Millisecond)
	cfg.Crawler.RecrawlAfter = serve.Duration(24 * time.Hour)
	cfg.Crawler.Timeout = serve.Duration(20 * time.Second)
	srv, err := serve.New(ctx, cfg, &serve.Options{Load: func() (*serve.Config, error) { return cfg, nil }, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Errorf("Run = %v", err)
		}
	}()
	pol := policy.New(srv.Store(), nil)
	plain := web.Plain()

	var first, last heapSample
	start := time.Now()
	for wave := 0; wave < memWaves; wave++ {
		sites := plain[wave*memWaveHosts : (wave+1)*memWaveHosts]
		urls := make([]string, len(sites))
		for i, s := range sites {
			urls[i] = s.StartURL
		}
		t0 := time.Now()
		if _, err := pol.AddSites(ctx, urls, policy.Change{Actor: "bench", Reason: "serve memory benchmark"}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		want := int64((wave + 1) * memWaveHosts)
		deadline := time.Now().Add(30 * time.Minute)
		for finishedCycles(b, srv.Store()) < want || srv.Check(ctx).Crawler.SitesRunning > 0 {
			if time.Now().After(deadline) {
				b.Fatalf("wave %d: %d of %d cycles finished after 30 minutes", wave+1, finishedCycles(b, srv.Store()), want)
			}
			time.Sleep(200 * time.Millisecond)
		}
		b.Logf("wave %d: listed in %s, crawled in %s", wave+1, t1.Sub(t0), time.Since(t1))
		checkWave(b, web, sites)
		web.Reset()
		switch wave {
		case 0:
			first = liveHeap()
			b.Logf("after %d hosts: live heap %.1f MB, %d goroutines", want, first.mb(), first.goroutines)
		case memWaves - 1:
			last = liveHeap()
			b.Logf("after %d hosts: live heap %.1f MB, %d goroutines", want, last.mb(), last.goroutines)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(first.mb(), "heap-MB-first")
	b.ReportMetric(last.mb(), "heap-MB-end")
	b.ReportMetric(last.mb()/first.mb(), "heap-growth")
	b.ReportMetric(float64(memWaves*memWaveHosts), "hosts")
	b.ReportMetric(elapsed.Seconds(), "s/run")
}

// finishedCycles counts the crawl cycles that ended.
func finishedCycles(b *testing.B, store *db.Store) int64 {
	var n int64
	if err := dbtest.Gorm(store).Model(&db.CrawlCycle{}).Where("status <> ?", db.CycleRunning).Count(&n).Error; err != nil {
		b.Fatal(err)
	}
	return n
}

// checkWave checks the web server's record of one wave: every page of
// every site requested exactly once, robots.txt once per host, one request
// in flight per host and at least the delay between two (less 10 ms of
// clock slack).
func checkWave(b *testing.B, web *testweb.Web, sites []testweb.Site) {
	b.Helper()
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 5 {
			b.Errorf(format, args...)
		}
	}
	pages, requests := map[string]int{}, 0
	for host, t := range web.Tallies() {
		if t.MinGap >= 0 && t.MinGap < memDelay-10*time.Millisecond {
			report("%s: gap of %s, want at least %s", host, t.MinGap, memDelay)
		}
		pages[web.SiteOfHost(host)] += t.Pages
		requests += t.Requests
	}
	for _, s := range sites {
		if n := pages[s.Name]; n != min(memPages, crawler.Budget) {
			report("%s got %d page requests, want %d", s.Name, n, memPages)
		}
	}
	if requests != len(sites)*(memPages+1) {
		report("%d requests for %d sites, want %d", requests, len(sites), len(sites)*(memPages+1))
	}
	for host, n := range web.MaxInFlight() {
		if n > 1 {
			report("%s had %d requests in flight", host, n)
		}
	}
}

// heapSample is the live heap at one point.
type heapSample struct {
	bytes      uint64
	goroutines int
}

func (h heapSample) mb() float64 { return float64(h.bytes) / (1 << 20) }

// liveHeap waits for idle connections to close, then returns the heap
// that survives a full GC.
func liveHeap() heapSample {
	time.Sleep(memIdleSettle)
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return heapSample{bytes: ms.HeapAlloc, goroutines: runtime.NumGoroutine()}
}
