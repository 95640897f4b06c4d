package crawler_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binOut  []byte
)

// TestMain removes the binary built by lohibot after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// lohibot builds the lohibot binary once per test run.
func lohibot(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lohibot-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "lohibot")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/lohisoft/lohibot/cmd/lohibot")
		binOut, binErr = cmd.CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binOut)
	}
	return binPath
}

// crawlCmd is `lohibot crawl` on the test web.
func crawlCmd(t *testing.T, e *env, node string, delay time.Duration, sites []string) (*exec.Cmd, *bytes.Buffer) {
	args := []string{"--db", e.dsn, "--resolver", e.web.DNSAddr, "crawl", "--allow-private", "--node", node,
		"--delay", delay.String(), "--timeout", "2s", "--lease-ttl", "3s", "--max-sites-parallel", "64"}
	if !slices.Contains(sites, "--all") {
		args = append(args, "--add") // named sites the test did not list
	}
	args = append(args, sites...)
	cmd := exec.Command(lohibot(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// crawlTogether runs two crawler processes, crawler-a and crawler-b, with
// the same arguments (crawlCmd) at once, fails the test when either fails,
// and returns their outputs.
func crawlTogether(t *testing.T, e *env, delay time.Duration, args []string) (outA, outB *bytes.Buffer) {
	t.Helper()
	a, outA := crawlCmd(t, e, "crawler-a", delay, args)
	b, outB := crawlCmd(t, e, "crawler-b", delay, args)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	errA, errB := a.Wait(), b.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("crawlers failed: %v, %v\n--- a:\n%s\n--- b:\n%s", errA, errB, outA, outB)
	}
	return outA, outB
}

func startURLs(e *env, sites []testweb.Site) []string {
	var out []string
	for _, s := range sites {
		out = append(out, s.StartURL)
	}
	return out
}

// TestFleet runs two crawler processes on one PostgreSQL database over the
// same 50 sites: the server never sees more than 20 page requests per site,
// nor two requests at once on one host.
func TestFleet(t *testing.T) {
	if os.Getenv("LOHIBOT_TEST_POSTGRES") == "" {
		t.Skip("LOHIBOT_TEST_POSTGRES not set")
	}
	e := newEnv(t, "postgres", &testweb.Options{Plain: 50, PagesPerSite: 30})
	const delay = 50 * time.Millisecond
	sites := startURLs(e, e.web.Plain())
	outA, outB := crawlTogether(t, e, delay, sites)
	hits := e.web.Hits()
	e.web.CheckPolite(t, hits, delay)
	for site, n := range e.web.PageHitsPerSite(hits) {
		if n > crawler.Budget {
			t.Errorf("page requests to %s = %d, want <= %d", site, n, crawler.Budget)
		}
	}
	var nodes []string
	dbtest.Gorm(e.store).Model(&db.Request{}).Distinct("node").Pluck("node", &nodes)
	t.Logf("requests: %d, nodes: %v", len(hits), nodes)
	if len(hits) < 50*(crawler.Budget+1) {
		t.Errorf("server saw %d requests, want every site crawled (%d)", len(hits), 50*(crawler.Budget+1))
		var cycles []db.CrawlCycle
		dbtest.Gorm(e.store).Where("status <> ? OR spent < budget", db.CycleDone).Find(&cycles)
		for _, cy := range cycles {
			t.Logf("cycle %d of %s (%s): %s, %d/%d: %s", cy.ID, cy.Site, cy.Node, cy.Status, cy.Spent, cy.Budget, cy.Reason)
		}
		t.Logf("--- a:\n%s\n--- b:\n%s", outA, outB)
	}
	checkLogCoversHits(t, e, hits, true)
	var failed []db.Request
	dbtest.Gorm(e.store).Where("error <> ''").Find(&failed)
	for _, r := range failed {
		t.Logf("failed request %d %s: %s %s", r.ID, r.URL, r.Outcome, r.Error)
	}
}

// TestFleetAll runs two `crawl --all` processes at once on one PostgreSQL
// crawl list of 60 sites (blocks of 8: see ListAll): every site is crawled
// in one cycle, with its 20 page requests, and no host ever has two
// requests at once. Each crawler's summary gives its share, the shares
// add up to every request logged, and the crawler that ends last says the
// crawl list is done.
func TestFleetAll(t *testing.T) {
	if os.Getenv("LOHIBOT_TEST_POSTGRES") == "" {
		t.Skip("LOHIBOT_TEST_POSTGRES not set")
	}
	e := newEnv(t, "postgres", &testweb.Options{Plain: 60, PagesPerSite: 25})
	const delay = 50 * time.Millisecond
	if _, err := e.pol.AddSites(context.Background(), startURLs(e, e.web.Plain()), policy.Change{Actor: "test", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	outA, outB := crawlTogether(t, e, delay, []string{"--all"})
	hits := e.web.Hits()
	shareLine := regexp.MustCompile(`(?m)^fleet: this crawler sent (\d+) of the \d+ requests since it started \(\d+%\); (.*)$`)
	mine, done := 0, 0
	for _, out := range []string{outA.String(), outB.String()} {
		m := shareLine.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("no fleet line in:\n%s", out)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		mine += n
		if m[2] == "the crawl list is done" {
			done++
		}
	}
	if logged := len(e.requests(t)); mine != logged {
		t.Errorf("the crawlers' shares add up to %d requests, want the %d logged", mine, logged)
	}
	if done == 0 {
		t.Errorf("no crawler said the crawl list is done:\n--- a:\n%s\n--- b:\n%s", outA, outB)
	}
	e.web.CheckPolite(t, hits, delay)
	checkBudgets(t, e.web, hits)
	checkLogCoversHits(t, e, hits, true)
	// Each site was crawled by one crawler, in one cycle.
	var cycles []db.CrawlCycle
	dbtest.Gorm(e.store).Find(&cycles)
	bySite, byNode := map[string]int{}, map[string]int{}
	for _, cy := range cycles {
		bySite[cy.Site]++
		byNode[cy.Node]++
	}
	for site, n := range bySite {
		if n != 1 {
			t.Errorf("%s: %d cycles, want 1", site, n)
		}
	}
	if len(bySite) != 60 {
		t.Errorf("%d sites have a cycle, want 60", len(bySite))
	}
	t.Logf("sites per crawler: %v", byNode)
	// The claims are given back as each crawler ends.
	var held int64
	dbtest.Gorm(e.store).Model(&db.HostLease{}).Where("holder <> ''").Count(&held)
	if held != 0 {
		t.Errorf("%d leases still held after both crawlers ended, want 0", held)
	}
}

// TestKillAndRestart kills a crawl with SIGKILL halfway and starts it again:
// the budget still holds and the log has every request the server saw.
func TestKillAndRestart(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "postgres" && os.Getenv("LOHIBOT_TEST_POSTGRES") == "" {
				t.Skip("LOHIBOT_TEST_POSTGRES not set")
			}
			e := newEnv(t, engine, &testweb.Options{Plain: 4, PagesPerSite: 40, BigPages: 60})
			const delay = 100 * time.Millisecond
			sites := append(startURLs(e, e.web.Plain()), e.web.Site(testweb.KindBig).StartURL)
			first, out := crawlCmd(t, e, "crawler-1", delay, sites)
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 30*time.Second, "9 requests to big.test", func() bool { return len(e.web.HitsFor("big.test")) >= 9 })
			first.Process.Signal(syscall.SIGKILL)
			first.Wait()
			killedAt := len(e.web.Hits())
			t.Logf("killed after %d requests", killedAt)
			if killedAt >= 5*(crawler.Budget+1) {
				t.Fatalf("the crawl finished before the kill:\n%s", out)
			}
			second, out2 := crawlCmd(t, e, "crawler-2", delay, sites)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_ = ctx
			if err := second.Run(); err != nil {
				t.Fatalf("second crawl: %v\n%s", err, out2)
			}
			hits := e.web.Hits()
			e.web.CheckPolite(t, hits, delay)
			for site, n := range e.web.PageHitsPerSite(hits) {
				if n > crawler.Budget {
					t.Errorf("page requests to %s = %d, want <= %d", site, n, crawler.Budget)
				}
			}
			if n := e.web.PageHitsPerSite(hits)["big.test"]; n != crawler.Budget {
				t.Errorf("page requests to big.test = %d, want the budget spent across both runs (%d)", n, crawler.Budget)
			}
			checkLogCoversHits(t, e, hits, false)
			var cycles []db.CrawlCycle
			dbtest.Gorm(e.store).Find(&cycles)
			if len(cycles) != 5 {
				t.Errorf("cycles = %d, want 5 (interrupted ones taken up again)", len(cycles))
			}
			for _, c := range cycles {
				if c.Status != db.CycleDone || c.Spent > crawler.Budget {
					t.Errorf("cycle %d of %s: status %s, spent %d", c.ID, c.Site, c.Status, c.Spent)
				}
			}
		})
	}
}

// TestCLI runs lohibot crawl, search and robots fetch as a user would.
func TestCLI(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 4})
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(lohibot(t), append([]string{"--db", e.dsn, "--resolver", e.web.DNSAddr}, args...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	plain := e.web.Site("plain-000.test")
	out, code := run("crawl", "--add", "--allow-private", "--delay", "50ms", plain.StartURL)
	if code != 0 || !strings.Contains(out, "plain-000.test: crawled") || !strings.Contains(out, "4 pages") {
		t.Errorf("crawl: exit %d\n%s", code, out)
	}
	out, code = run("search", "plain-000.test", "page", "3")
	if code != 0 || !strings.Contains(out, plain.StartURL+"p/3.html") || !strings.Contains(out, "plain-000.test page 3") {
		t.Errorf("search: exit %d\n%s", code, out)
	}
	out, code = run("search", "--json", "nothing-like-this")
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("search without results: exit %d, output %q", code, out)
	}
	// --add put the site on the crawl list: crawl --all finds it, visited.
	out, code = run("crawl", "--all")
	if code != 0 || !strings.Contains(out, "plain-000.test: skipped, visited") {
		t.Errorf("crawl --all after crawl --add: exit %d\n%s", code, out)
	}
	if _, code = run("crawl"); code != 2 {
		t.Errorf("crawl without sites: exit %d, want 2", code)
	}
	if _, code = run("crawl", "--delay", "0s", "x.test"); code != 2 {
		t.Errorf("crawl --delay 0: exit %d, want 2", code)
	}
	if _, code = run("crawl", "--source-ip", "::1", "x.test"); code != 2 {
		t.Errorf("crawl --source-ip ::1: exit %d, want 2", code)
	}
	rsite := e.web.Site(testweb.KindRobots)
	out, code = run("--json", "robots", "fetch", "--allow-private", "--delay", "50ms", rsite.StartURL+"public/a.html")
	if code != 0 || !strings.Contains(out, `"outcome":"parsed"`) || !strings.Contains(out, `"allowed":true`) {
		t.Errorf("robots fetch: exit %d\n%s", code, out)
	}
	out, code = run("robots", "fetch", "--allow-private", "--delay", "50ms", rsite.StartURL+"private/secret.html")
	if code != 1 || !strings.Contains(out, "disallowed") || !strings.Contains(out, "Disallow: /private/") {
		t.Errorf("robots fetch of a disallowed URL: exit %d, want 1\n%s", code, out)
	}
	if _, code = run("robots", "fetch", "not a url"); code != 2 {
		t.Errorf("robots fetch of bad input: exit %d, want 2", code)
	}
}
