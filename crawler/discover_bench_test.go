package crawler_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// BenchmarkCrawlScaleDiscover is BenchmarkCrawlScale's 200 x 25 @200ms
// crawl with discovery: every page also carries N links to a pool of
// 1,000 other sites (with 100, 400,000 links over the crawl and 200,000
// distinct candidate-site pairs). "plain" is the crawl without those
// links, "links-N" with them and discovery off, "discover-N" with them
// and --discover on (its candidates written, none added, so that the
// crawl's work is the same; the candidates are checked afterwards).
// Every link's text is stored for the page it points to, discovery or
// not, from up to MaxSourcesPerText pages per target and text: each pool
// site's page is linked with one text from 400 pages, so most are
// repeats (it reports how many link texts it wrote, left as repeats,
// coalesced and dropped, the time Close took to write what was left, and
// the process's CPU time). With LOHIBOT_TEST_POSTGRES set, each case runs
// on PostgreSQL too (pg-...). "wide-..." are the crawl of 1,000 sites x 25
// pages @1s (the same rate of requests, five times the sites and links),
// plain and with 100 links a page and --discover.
//
//	go test -run '^$' -bench 'CrawlScaleDiscover$/(plain|.*-100)$' -benchtime 1x ./crawler/
func BenchmarkCrawlScaleDiscover(b *testing.B) {
	narrow := scaleCase{sites: 200, pages: 25, delay: 200 * time.Millisecond}
	wide := scaleCase{sites: 1000, pages: 25, delay: time.Second}
	type variant struct {
		name     string
		links    int
		discover bool
		engine   string
		sc       scaleCase
	}
	vs := []variant{{"plain", 0, false, "sqlite", narrow}, {"links-10", 10, false, "sqlite", narrow},
		{"discover-10", 10, true, "sqlite", narrow}, {"links-100", 100, false, "sqlite", narrow},
		{"discover-100", 100, true, "sqlite", narrow}}
	if os.Getenv(dbtest.PostgresEnv) != "" {
		for _, v := range vs {
			v.name, v.engine = "pg-"+v.name, "postgres"
			vs = append(vs, v)
		}
	}
	vs = append(vs, variant{"wide-plain", 0, false, "sqlite", wide}, variant{"wide-discover-100", 100, true, "sqlite", wide})
	for _, v := range vs {
		b.Run(v.name, func(b *testing.B) {
			sc := v.sc
			w, err := testweb.Start(&testweb.Options{Plain: sc.sites, PagesPerSite: sc.pages, TallyOnly: true, ExternalLinks: v.links})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			res, err := resolver.New(w.DNSAddr)
			if err != nil {
				b.Fatal(err)
			}
			bound := time.Duration(crawler.Budget) * sc.delay
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				w.Reset()
				store, err := db.Open(context.Background(), dbtest.DSN(b, v.engine))
				if err != nil {
					b.Fatal(err)
				}
				pol := policy.New(store, nil)
				var ts []crawler.Target
				for _, s := range w.Plain() {
					ts = append(ts, crawler.Target{Site: s.Name, StartURL: s.StartURL})
				}
				opts := &crawler.Options{Node: "bench", Delay: sc.delay, AllowPrivate: true, Resolver: res,
					Timeout: 20 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
				if v.discover {
					opts.Discover = &crawler.DiscoverOptions{MaxNew: 0}
				}
				runtime.GC()
				stop := sampleHeap()
				cpu0 := cpuTime()
				b.StartTimer()
				start := time.Now()
				c, err := crawler.New(context.Background(), store, pol, opts)
				if err != nil {
					b.Fatal(err)
				}
				rs, err := c.Crawl(context.Background(), ts)
				elapsed := time.Since(start)
				c.Close() // (writes the last link texts and candidates)
				drain := time.Since(start) - elapsed
				b.StopTimer()
				cpu := cpuTime() - cpu0
				st := c.Stats()
				peak := stop()
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range rs {
					if r.Status != crawler.SiteCrawled || r.Requests != crawler.Budget {
						b.Fatalf("site %s: %+v", r.Site, r)
					}
				}
				checkServerTallies(b, w, w.Tallies(), sc.delay)
				if v.links > 0 {
					// Coalesced or not, every target is kept with its text.
					var targets int
					if err := dbtest.SQL(store).QueryRowContext(context.Background(),
						`SELECT count(DISTINCT to_url) FROM anchors WHERE to_site LIKE 'linked-%'`).Scan(&targets); err != nil {
						b.Fatal(err)
					}
					if targets != len(w.LinkedSites()) {
						b.Errorf("link texts to %d of the %d linked sites, want every one", targets, len(w.LinkedSites()))
					}
				}
				if v.discover {
					cands, err := store.CandidatesAfter(context.Background(), "", "", 100_000)
					if err != nil {
						b.Fatal(err)
					}
					var pairs int64
					for _, cd := range cands {
						pairs += cd.LinkedFrom
					}
					if len(cands) != len(w.LinkedSites())+1 { // and big.test
						b.Errorf("%d candidates, want %d", len(cands), len(w.LinkedSites())+1)
					}
					b.ReportMetric(float64(pairs), "pairs")
				}
				store.Close()
				b.ReportMetric(elapsed.Seconds(), "s/crawl")
				b.ReportMetric(elapsed.Seconds()/bound.Seconds(), "x-bound")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(drain.Seconds(), "s/close")
				b.ReportMetric(cpu.Seconds(), "cpu-s")
				if v.links > 0 {
					b.ReportMetric(float64(st.LinkTexts), "texts-written")
					b.ReportMetric(float64(st.LinkTextsCoalesced), "texts-coalesced")
					b.ReportMetric(float64(st.LinkTextsDropped), "texts-dropped")
					b.ReportMetric(float64(st.LinkTextsRepeated), "texts-repeated")
				}
			}
		})
	}
}

// cpuTime is the CPU time the process used so far (user and system), the
// web server's included: unlike the time a crawl takes, it hardly moves
// with the load of a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
