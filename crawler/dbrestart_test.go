package crawler_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/pgcluster"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// restartEnv is a crawl list of plain sites on a private cluster (which
// the test may stop and start), and the test web serving them.
func restartEnv(t *testing.T, sites, pages int) (*env, *pgcluster.Cluster) {
	t.Helper()
	cl := pgcluster.Start(t)
	w, err := testweb.Start(&testweb.Options{Plain: sites, PagesPerSite: pages})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	store, err := db.Open(context.Background(), cl.DSN)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{web: w, store: store, pol: policy.New(store, nil), dsn: cl.DSN}
	if _, err := e.pol.AddSites(context.Background(), startURLs(e, w.Plain()), policy.Change{Actor: "test", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	// The test's own connections would not outlive the restart: it reads
	// the records through a store opened afterwards (reopen).
	store.Close()
	return e, cl
}

// reopen opens the env's database again, once the crawl is over.
func (e *env) reopen(t *testing.T) {
	t.Helper()
	e.store = dbtest.OpenDSN(t, e.dsn)
	e.pol = policy.New(e.store, nil)
}

// crawlAllCmd is `lohibot crawl --all` on the test web, with the default
// lease TTL (60 s): nothing of the fleet expires during the tests.
func crawlAllCmd(t *testing.T, e *env, node string, delay time.Duration, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	args := append([]string{"--db", e.dsn, "--resolver", e.web.DNSAddr, "crawl", "--all", "--allow-private", "--node", node,
		"--delay", delay.String(), "--timeout", "5s"}, extra...)
	cmd := exec.Command(lohibot(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// exitCode waits for cmd, at most limit (then it kills it and fails the
// test: a crawl must never hang), and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd, limit time.Duration, out *bytes.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s still running after %s: killed\n%s", cmd.Args[0], limit, out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// summaryErrors reads the error count of a crawl's summary line ("60
// sites (0 with nothing fetched): ... 0 errors"), or -1 without one.
func summaryErrors(out string) int {
	m := regexp.MustCompile(`(?m)^\d+ sites? \(.*, (\d+) errors?$`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// outageHits counts the requests the web server received from settle
// after the database went down until its start began: a request reserved
// before the stop (durable) may still start within settle of it; any
// later one was sent while nothing could log it. (The server accepts
// connections some moment before its start returns.)
func outageHits(hits []testweb.Hit, down, starting time.Time, settle time.Duration) int {
	n := 0
	for _, h := range hits {
		if h.Start.After(down.Add(settle)) && h.Start.Before(starting) {
			n++
		}
	}
	return n
}

// downSettle is how long after the server was down a request whose row
// committed before may still be sent: a reservation is made at most
// db.MaxReserveAhead ahead of its time, and a loaded machine may run the
// sender's goroutine a moment late.
const downSettle = db.MaxReserveAhead + 350*time.Millisecond

// TestFleetRidesOutDatabaseRestart restarts the database (a fast stop,
// 2 s down, a start) under two `crawl --all` processes sharing a crawl list
// of 60 sites of 25 pages: both ride it out and finish with exit 0, every
// site gets exactly its 20 page requests, one at a time per host with the
// delay kept across the restart, nothing is sent while the database is
// down, every request the server saw is in the log, the audit passes and
// no lease is left held.
func TestFleetRidesOutDatabaseRestart(t *testing.T) {
	e, cl := restartEnv(t, 60, 25)
	const delay = 100 * time.Millisecond
	a, outA := crawlAllCmd(t, e, "crawler-a", delay)
	b, outB := crawlAllCmd(t, e, "crawler-b", delay)
	began := time.Now()
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	total := 60 * (crawler.Budget + 1)
	testutil.Eventually(t, 30*time.Second, "a third of the crawl's requests", func() bool { return len(e.web.Hits()) >= total/3 })
	before := len(e.web.Hits())
	o := cl.Restart(2 * time.Second)
	down, back := o.Stopped, o.Back
	codeA, codeB := exitCode(t, a, 50*time.Second, outA), exitCode(t, b, 50*time.Second, outB)
	ended := time.Now()
	e.reopen(t)
	if codeA != 0 || codeB != 0 {
		t.Errorf("exit codes %d, %d, want 0, 0", codeA, codeB)
	}
	for name, out := range map[string]string{"a": outA.String(), "b": outB.String()} {
		if n := summaryErrors(out); n != 0 {
			t.Errorf("crawler-%s's summary counts %d errors, want 0", name, n)
		}
		if strings.Contains(out, "stopped, error") || strings.Contains(out, ": failed,") {
			t.Errorf("crawler-%s: a site stopped by the restart", name)
		}
		t.Logf("--- crawler-%s:\n%s", name, out)
	}
	hits := e.web.Hits()
	e.web.CheckPolite(t, hits, delay)
	checkBudgets(t, e.web, hits)
	checkLogCoversHits(t, e, hits, true)
	if n := outageHits(hits, down, o.Starting, downSettle); n != 0 {
		t.Errorf("%d requests sent while the database was down, want 0", n)
	}
	if out, err := exec.Command(lohibot(t), "--db", e.dsn, "audit").CombinedOutput(); err != nil {
		t.Errorf("audit: %v\n%s", err, out)
	}
	var held int64
	dbtest.Gorm(e.store).Model(&db.HostLease{}).Where("holder <> ''").Count(&held)
	if held != 0 {
		t.Errorf("%d leases still held after both crawlers ended, want 0", held)
	}
	var withdrawn int64
	dbtest.Gorm(e.store).Model(&db.Request{}).Where("outcome = ?", db.OutcomeWithdrawn).Count(&withdrawn)

	// What the processes did, and how long recovery took: from the
	// server back to the first request after it.
	var first time.Time
	for _, h := range hits {
		if h.Start.After(back) && (first.IsZero() || h.Start.Before(first)) {
			first = h.Start
		}
	}
	t.Logf("requests before the restart: %d of %d; down %s (stop began %s after the crawl, took %s); first request %s after the server was back; crawl took %s; %d withdrawn reservations",
		before, total, back.Sub(down).Round(time.Millisecond), o.Stopping.Sub(began).Round(time.Millisecond), down.Sub(o.Stopping).Round(time.Millisecond),
		first.Sub(back).Round(time.Millisecond), ended.Sub(began).Round(time.Millisecond), withdrawn)
	if first.IsZero() {
		t.Errorf("no request after the server was back")
	}
}

// TestCrawlGivesUpOnDatabaseGone stops the database for good under a
// crawl that waits 3 s for it (--db-retry): the crawl ends within seconds
// of that, exits 1, counts every site it could not finish as an error,
// says why in a sentence, and sent nothing after the database went down.
func TestCrawlGivesUpOnDatabaseGone(t *testing.T) {
	e, cl := restartEnv(t, 20, 25)
	const delay = 100 * time.Millisecond
	cmd, out := crawlAllCmd(t, e, "crawler-a", delay, "--db-retry", "3s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "100 requests", func() bool { return len(e.web.Hits()) >= 100 })
	down := time.Now()
	cl.Stop()
	// Giving up takes the 3 s it waits, then the cycles' ends and leases,
	// each given a moment to reach the database: 40 s is a hang.
	code := exitCode(t, cmd, 40*time.Second, out)
	gone := time.Since(down)
	t.Logf("exit %d %s after the database went down\n%s", code, gone.Round(time.Millisecond), out)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if n := summaryErrors(out.String()); n <= 0 {
		t.Errorf("summary counts %d errors, want the sites that failed", n)
	}
	if !strings.Contains(out.String(), "the database was unreachable for 3s") {
		t.Errorf("output does not say the database was unreachable")
	}
	if n := outageHits(e.web.Hits(), down, time.Now(), downSettle); n != 0 {
		t.Errorf("%d requests sent after the database went down, want 0", n)
	}
}

// TestInterruptTwiceQuitsAtOnce: a crawl interrupted while its database is
// unreachable waits to record what was under way; interrupted again, it
// quits at once.
func TestInterruptTwiceQuitsAtOnce(t *testing.T) {
	e, cl := restartEnv(t, 20, 25)
	cmd, out := crawlAllCmd(t, e, "crawler-a", 100*time.Millisecond, "--db-retry", "60s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "100 requests", func() bool { return len(e.web.Hits()) >= 100 })
	cl.Stop()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait() // (the output is read once it returned)
		close(exited)
	}()
	select {
	case <-exited:
		t.Fatalf("the crawl quit at the first interrupt, with its database down and 60 s to wait for it\n%s", out)
	case <-time.After(2 * time.Second):
	}
	again := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		t.Logf("quit %s after the second interrupt", time.Since(again).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("the crawl still ran 5 s after a second interrupt\n%s", out)
	}
	if !strings.Contains(out.String(), "interrupt again to quit at once") {
		t.Errorf("the crawl did not say a second interrupt quits at once\n%s", out)
	}
}
