package compare_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/webbotauth"
)

// BenchmarkCrawl crawls 500 sites of 30 pages each on the local web with a
// 200 ms delay, once with lohibot and once with Colly v2 under the same
// per-host limits (one request at a time, 200 ms between the end of one and
// the start of the next, 20 pages per host), and reports each run's time
// against the politeness bound (21 requests per host: robots.txt and 20
// pages, 20 gaps of 200 ms, all hosts in parallel) and the peak heap.
//
//	go test -run '^$' -bench Crawl -benchtime 1x ./crawler/
func BenchmarkCrawl(b *testing.B) {
	const (
		sites = 500
		pages = 30
		delay = 200 * time.Millisecond
	)
	bound := time.Duration(crawler.Budget) * delay // 20 gaps; the requests themselves take ~1 ms
	w, err := testweb.Start(&testweb.Options{Plain: sites, PagesPerSite: pages})
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
	measure := func(b *testing.B, run func() time.Duration) {
		for i := 0; i < b.N; i++ {
			w.Reset()
			runtime.GC()
			stop := sampleHeap()
			elapsed := run()
			peak := stop()
			hits := w.Hits()
			for site, n := range w.PageHitsPerSite(hits) {
				if n > crawler.Budget {
					b.Errorf("%s got %d page requests", site, n)
				}
			}
			for host, n := range w.MaxInFlight() {
				if n > 1 {
					b.Errorf("%s had %d requests in flight", host, n)
				}
			}
			b.ReportMetric(elapsed.Seconds(), "s/crawl")
			b.ReportMetric(elapsed.Seconds()/bound.Seconds(), "x-bound")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(len(hits)), "requests")
		}
	}
	lohibot := func(b *testing.B, signer *webbotauth.Signer, seal bool) {
		measure(b, func() time.Duration {
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
				Node: "bench", Delay: delay, AllowPrivate: true, Resolver: res, MaxSitesParallel: sites,
				Timeout: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Signer: signer,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			// The records are sealed while the crawl runs and once more
			// at its end, as the crawl command does.
			if seal {
				store.StartSealer(0, nil)
			}
			rs, err := c.Crawl(context.Background(), ts)
			if err != nil {
				b.Fatal(err)
			}
			if seal {
				if _, err := store.AppendLog(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			for _, r := range rs {
				if r.Status != crawler.SiteCrawled || r.Requests != crawler.Budget {
					b.Errorf("site %s: %+v", r.Site, r)
				}
			}
			return elapsed
		})
	}
	// lohibot-signed signs every request with Web Bot Auth (Options.Signer):
	// its time against lohibot's is the cost of signing.
	key, err := webbotauth.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	signer, err := webbotauth.NewSigner(key, nil)
	if err != nil {
		b.Fatal(err)
	}
	// lohibot-unsealed crawls without sealing the records (no hash chain):
	// its time against lohibot's is the cost of the tamper-evident records.
	for _, v := range []struct {
		name   string
		signer *webbotauth.Signer
		seal   bool
	}{{"lohibot", nil, true}, {"lohibot-signed", signer, true}, {"lohibot-unsealed", nil, false}} {
		b.Run(v.name, func(b *testing.B) { lohibot(b, v.signer, v.seal) })
	}
	b.Run("colly", func(b *testing.B) {
		measure(b, func() time.Duration {
			start := time.Now()
			collyCrawl(b, w, res, delay)
			return time.Since(start)
		})
	})
}

// collyCrawl crawls the plain sites with Colly v2: robots.txt obeyed, one
// request at a time per host with delay after each, 20 pages per host.
func collyCrawl(b *testing.B, w *testweb.Web, res resolver.Resolver, delay time.Duration) {
	dial := resolver.DialContext(res, &net.Dialer{Timeout: 10 * time.Second})
	c := colly.NewCollector(colly.Async(true), colly.UserAgent(crawler.UserAgent))
	c.IgnoreRobotsTxt = false
	c.WithTransport(&http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return dial(ctx, "tcp4", addr)
		},
		MaxIdleConns: 4096, MaxIdleConnsPerHost: 1, IdleConnTimeout: 90 * time.Second,
	})
	var rules []*colly.LimitRule
	for _, s := range w.Plain() {
		rules = append(rules, &colly.LimitRule{DomainGlob: s.Host + ":*", Parallelism: 1, Delay: delay})
	}
	if err := c.Limits(rules); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	count := map[string]int{}
	c.OnRequest(func(r *colly.Request) {
		mu.Lock()
		defer mu.Unlock()
		if count[r.URL.Host] >= crawler.Budget {
			r.Abort()
			return
		}
		count[r.URL.Host]++
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		link := e.Request.AbsoluteURL(e.Attr("href"))
		u, err := url.Parse(link)
		if err != nil || u.Host != e.Request.URL.Host || strings.Contains(e.Attr("rel"), "nofollow") {
			return
		}
		mu.Lock()
		full := count[u.Host] >= crawler.Budget
		mu.Unlock()
		if !full {
			e.Request.Visit(link)
		}
	})
	for _, s := range w.Plain() {
		c.Visit(s.StartURL)
	}
	c.Wait()
}

// sampleHeap samples the heap in use every 20 ms until the returned func
// is called, which returns the peak.
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
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse+ms.StackInuse)
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
