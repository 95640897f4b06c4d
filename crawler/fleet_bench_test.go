package crawler_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// BenchmarkCrawlFleet crawls 1,000 sites x 25 pages at a 1 s delay on
// PostgreSQL with `lohibot crawl --all` and default settings, by one
// crawler process and by two at once over the same crawl list
// (each at most 1.25x the politeness bound of 20 s, two never slower than
// one). The web server's record is checked (one request in flight per
// host, the gap, exactly 20 page requests per site: budgets exact, no host
// shared by two processes at once), and the database's own counters give
// the commits per request and the connections per process; with two, the
// share of the requests sent by the crawler that sent fewest says how the
// crawl was shared (0.5 is even). The CPU each request cost the crawler
// processes, and PostgreSQL when it runs on this machine, says what a
// second crawler on the same cores costs. It needs LOHIBOT_TEST_POSTGRES.
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
					dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&commits, &rollbacks)
					return
				}
				c0, r0 := stat()
				pg := postmasterOf(ctx, dbtest.SQL(e.store))
				pg0, pgOK := pg.cpu()
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
						dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name <> 'bench-probe' AND pid <> pg_backend_pid()`).Scan(&n)
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
				var crawlerCPU time.Duration
				for _, cmd := range cmds {
					crawlerCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
				// The crawlers' server processes count once they have ended
				// and the postmaster has reaped them: once no connection
				// but the benchmark's own is left and the count holds
				// still for 100 ms.
				pg1, ok := pg.cpu()
				for i := 0; ok && i < 40; i++ {
					var n int
					dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
					time.Sleep(100 * time.Millisecond)
					var again time.Duration
					if again, ok = pg.cpu(); n < dbtest.SQL(e.store).Stats().OpenConnections && again == pg1 {
						break
					}
					pg1 = again
				}
				pgOK = pgOK && ok
				tallies := e.web.Tallies()
				checkServerTallies(b, e.web, tallies, delay)
				served := 0
				for _, t := range tallies {
					served += t.Requests
				}
				var requests, fewest int64
				dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT COUNT(*) FROM requests`).Scan(&requests)
				// How the crawl was shared: the requests of the crawler that
				// sent fewest (a crawler that sent none counts).
				if fleet.procs > 1 {
					dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT CASE WHEN COUNT(DISTINCT node) < $1 THEN 0 ELSE MIN(n) END FROM (SELECT node, COUNT(*) AS n FROM requests GROUP BY node) t`, fleet.procs).Scan(&fewest)
				}
				b.ReportMetric(elapsed.Seconds(), "s/crawl")
				b.ReportMetric(elapsed.Seconds()/bound.Seconds(), "x-bound")
				b.ReportMetric(float64(c1-c0)/float64(max(requests, 1)), "commits/request")
				b.ReportMetric(float64(r1-r0)/float64(max(requests, 1)), "rollbacks/request")
				b.ReportMetric(float64(peak)/float64(fleet.procs), "conns/process")
				// CPU per request: the crawler processes', and PostgreSQL's
				// when the server runs on this machine (its postmaster's
				// own and its ended children's, whatever else it served
				// meanwhile). Two crawlers spend more than one on the
				// same requests: the tax of a second process on the same
				// cores (docs/sizing.md).
				b.ReportMetric(float64(crawlerCPU.Microseconds())/1000/float64(max(requests, 1)), "crawler-cpu-ms/request")
				if pgOK {
					b.ReportMetric(float64((pg1-pg0).Microseconds())/1000/float64(max(requests, 1)), "pg-cpu-ms/request")
				}
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

// postmaster is the PostgreSQL server's main process, when it runs on this
// machine (0 otherwise).
type postmaster int

// postmasterOf finds the postmaster of the server sqlDB is connected to: the
// parent of the connection's server process, if /proc shows both as
// PostgreSQL's (a server elsewhere, or in a container of its own, has
// process ids that are not this machine's).
func postmasterOf(ctx context.Context, sqlDB *sql.DB) postmaster {
	var backend int
	if err := sqlDB.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return 0
	}
	comm, f, ok := procStat(backend)
	if !ok || comm != "postgres" || len(f) < 2 {
		return 0
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0
	}
	if comm, _, ok := procStat(ppid); !ok || comm != "postgres" {
		return 0
	}
	return postmaster(ppid)
}

// cpu is the CPU time the postmaster and its ended children used: user and
// system, its own and its children's (/proc/PID/stat, in ticks of 1/100 s,
// USER_HZ on Linux).
func (p postmaster) cpu() (time.Duration, bool) {
	if p == 0 {
		return 0, false
	}
	_, f, ok := procStat(int(p))
	if !ok || len(f) < 15 {
		return 0, false
	}
	var ticks int64
	for _, v := range f[11:15] { // utime, stime, cutime, cstime
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true
}

// procStat returns the command's name in /proc/PID/stat and the fields
// after it (state first).
func procStat(pid int) (comm string, fields []string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", nil, false
	}
	s := string(b)
	i, k := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || k < i || k+2 > len(s) {
		return "", nil, false
	}
	return s[i+1 : k], strings.Fields(s[k+2:]), true
}
