package crawler_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// BenchmarkFleetCapacity simulates a fleet whose crawlers are machines of
// their own on one PostgreSQL database: each `lohibot crawl --all`
// process may have 10 requests in flight (--max-in-flight 10, its own
// request capacity), every page of the local web answers after 100 ms,
// and 200 sites x 25 pages are crawled at --delay 200ms. One crawler then
// runs at its cap (about 100 requests a second, with the CPU mostly
// idle), and a second and a third crawler add their caps. Each iteration
// crawls the list with one, two and three processes in turn, and reports
// the time of each, the ratios of two and three to one (a fleet that
// shares the work takes about 1/2 and 1/3), and the share of the requests
// sent by the crawler that sent fewest (even: 1/2, 1/3); it logs how many
// cycles were handed over from one crawler to another. The web server's
// record is checked every time (one request in flight per host, the gap,
// exactly 20 page requests per site). It needs LOHIBOT_TEST_POSTGRES.
//
//	go test -run '^$' -bench FleetCapacity -benchtime 1x -count 3 ./crawler/
func BenchmarkFleetCapacity(b *testing.B) {
	if os.Getenv("LOHIBOT_TEST_POSTGRES") == "" {
		b.Skip("LOHIBOT_TEST_POSTGRES not set")
	}
	const (
		sites    = 200
		pages    = 25
		delay    = 200 * time.Millisecond
		latency  = 100 * time.Millisecond
		inFlight = 10
	)
	for i := 0; i < b.N; i++ {
		var one time.Duration
		for procs := 1; procs <= 3; procs++ {
			b.StopTimer()
			elapsed, least := crawlFleetOnce(b, procs, sites, pages, delay, latency, inFlight)
			if procs == 1 {
				one = elapsed
				b.ReportMetric(elapsed.Seconds(), "s/one")
				continue
			}
			name := map[int]string{2: "two", 3: "three"}[procs]
			b.ReportMetric(elapsed.Seconds(), "s/"+name)
			b.ReportMetric(elapsed.Seconds()/one.Seconds(), name+"/one")
			b.ReportMetric(least, "least-share-"+name)
		}
	}
}

// crawlFleetOnce crawls a fresh list of sites x pages with procs crawler
// processes at once (each --max-in-flight inFlight) over a web answering
// every page after latency, checks the server's record, and returns the
// time from the first process's start to the last one's end, and the
// share of the requests of the crawler that sent fewest.
func crawlFleetOnce(b *testing.B, procs, sites, pages int, delay, latency time.Duration, inFlight int) (time.Duration, float64) {
	e := newEnv(b, "postgres", &testweb.Options{Plain: sites, PagesPerSite: pages, Latency: latency})
	var starts []string
	for _, s := range e.web.Plain() {
		starts = append(starts, s.StartURL)
	}
	ctx := context.Background()
	if _, err := e.pol.AddSites(ctx, starts, policy.Change{Actor: "bench", Source: "bench"}); err != nil {
		b.Fatal(err)
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for p := range procs {
		args := []string{"--db", e.dsn, "--resolver", e.web.DNSAddr, "crawl", "--all", "--allow-private",
			"--node", "crawler-" + string(rune('a'+p)), "--delay", delay.String(), "--max-in-flight", fmt.Sprint(inFlight)}
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
	checkServerTallies(b, e.web, e.web.Tallies(), delay)
	var requests, fewest int64
	dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT COUNT(*) FROM requests`).Scan(&requests)
	dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT CASE WHEN COUNT(DISTINCT node) < $1 THEN 0 ELSE MIN(n) END FROM (SELECT node, COUNT(*) AS n FROM requests GROUP BY node) t`, procs).Scan(&fewest)
	// Each crawler's first and last request, from the start.
	var spans []string
	rows, err := dbtest.SQL(e.store).QueryContext(ctx, `SELECT node, COUNT(*), MIN(sent_at), MAX(sent_at) FROM requests GROUP BY node ORDER BY node`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var (
			node        string
			n           int
			first, last time.Time
		)
		if err := rows.Scan(&node, &n, &first, &last); err != nil {
			b.Fatal(err)
		}
		spans = append(spans, fmt.Sprintf("%s %d requests %.1f-%.1f s", node, n, first.Sub(start).Seconds(), last.Sub(start).Seconds()))
	}
	rows.Close()
	b.Logf("%s", strings.Join(spans, "; "))
	var lines []string
	for _, out := range outs {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "fleet: ") {
				lines = append(lines, l)
			}
		}
	}
	// The cycles handed over at a gap from one crawler to another.
	var handed int
	dbtest.SQL(e.store).QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT cycle_id FROM requests
		WHERE cycle_id IS NOT NULL GROUP BY cycle_id HAVING COUNT(DISTINCT node) > 1) t`).Scan(&handed)
	b.Logf("%d crawler(s): %.2f s, %d requests, %d cycles handed over; %s", procs, elapsed.Seconds(), requests, handed, strings.Join(lines, " | "))
	return elapsed, float64(fewest) / float64(max(requests, 1))
}
