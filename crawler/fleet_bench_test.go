package crawler_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// BenchmarkCrawlFleet crawls 1,000 sites x 25 pages at a 1 s delay on
// PostgreSQL with `lohibot crawl --all` and default settings, by one
// crawler process and by two at once over the same crawl list (issue 14:
// each at most 1.25x the politeness bound of 20 s, two never slower than
// one). The web server's record is checked (one request in flight per
// host, the gap, exactly 20 page requests per site: budgets exact, no host
// shared by two processes at once), and the database's own counters give
// the commits per request and the connections per process; with two, the
// share of the requests sent by the crawler that sent fewest says how the
// crawl was shared (0.5 is even). It needs LOHIBOT_TEST_POSTGRES.
//
//	go test -run '^$' -bench CrawlFleet -benchtime 1x ./crawler/
func BenchmarkCrawlFleet(b *testing.B) {
	if os.Getenv("LOHIBOT_TEST_POSTGRES") == "" {
		b.Skip("LOHIBOT_TEST_POSTGRES not set")
	}
	const (
		sites = 1000
		pages = 25
		delay = time.Second
	)
	bound := time.Duration(crawler.Budget) * delay
	for _, fleet := range []struct {
		name  string
		procs int
	}{{"one", 1}, {"two", 2}} {
		b.Run(fleet.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := newEnv(b, "postgres", &testweb.Options{Plain: sites, PagesPerSite: pages})
				var starts []string
				for _, s := range e.web.Plain() {
					starts = append(starts, s.StartURL)
				}
				ctx := context.Background()
				if _, err := e.pol.AddSites(ctx, starts, policy.Change{Actor: "bench", Source: "bench"}); err != nil {
					b.Fatal(err)
				}
				stat := func() (commits, rollbacks int64) {
					e.store.SQL.QueryRowContext(ctx, `SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&commits, &rollbacks)
					return
				}
				c0, r0 := stat()
				// The peak of the connections the crawlers hold.
				var (
					mu    sync.Mutex
					peak  int
					stopC = make(chan struct{})
					doneC = make(chan struct{})
				)
				go func() {
					defer close(doneC)
					t := time.NewTicker(200 * time.Millisecond)
					defer t.Stop()
					for {
						var n int
						e.store.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name <> 'bench-probe' AND pid <> pg_backend_pid()`).Scan(&n)
						mu.Lock()
						peak = max(peak, n)
						mu.Unlock()
						select {
						case <-stopC:
							return
						case <-t.C:
						}
					}
				}()
				var cmds []*exec.Cmd
				var outs []*bytes.Buffer
				for p := range fleet.procs {
					args := []string{"--db", e.dsn, "--resolver", e.web.DNSAddr, "crawl", "--all", "--allow-private",
						"--node", "crawler-" + string(rune('a'+p)), "--delay", delay.String()}
					cmd := exec.Command(lohibot(b), args...)
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					cmds, outs = append(cmds, cmd), append(outs, &out)
				}
				e.web.Reset()
				b.StartTimer()
				start := time.Now()
				for _, cmd := range cmds {
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
				}
				for i, cmd := range cmds {
					if err := cmd.Wait(); err != nil {
						b.Fatalf("crawler %d: %v\n%s", i, err, lastBytes(outs[i].Bytes(), 2000))
					}
				}
				elapsed := time.Since(start)
				b.StopTimer()
				close(stopC)
				<-doneC
				c1, r1 := stat()
				tallies := e.web.Tallies()
				checkServerTallies(b, e.web, tallies, delay)
				served := 0
				for _, t := range tallies {
					served += t.Requests
				}
				var requests, fewest int64
				e.store.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM requests`).Scan(&requests)
				// How the crawl was shared: the requests of the crawler that
				// sent fewest (a crawler that sent none counts).
				if fleet.procs > 1 {
					e.store.SQL.QueryRowContext(ctx, `SELECT CASE WHEN COUNT(DISTINCT node) < $1 THEN 0 ELSE MIN(n) END FROM (SELECT node, COUNT(*) AS n FROM requests GROUP BY node) t`, fleet.procs).Scan(&fewest)
				}
				b.ReportMetric(elapsed.Seconds(), "s/crawl")
				b.ReportMetric(elapsed.Seconds()/bound.Seconds(), "x-bound")
				b.ReportMetric(float64(c1-c0)/float64(max(requests, 1)), "commits/request")
				b.ReportMetric(float64(r1-r0)/float64(max(requests, 1)), "rollbacks/request")
				b.ReportMetric(float64(peak)/float64(fleet.procs), "conns/process")
				if fleet.procs > 1 {
					b.ReportMetric(float64(fewest)/float64(max(requests, 1)), "least-share")
				}
				b.ReportMetric(float64(served), "requests")
				b.StartTimer()
			}
		})
	}
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
