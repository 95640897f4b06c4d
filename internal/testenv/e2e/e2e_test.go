package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/audit/report"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/demo"
	"github.com/lohisoft/lohibot/internal/localweb/sampleweb"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/dovecottest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// The crawl's timings: short, so the test stays well under a minute and a
// half, yet long enough that gaps and back-off are measurable.
const (
	delay      = 200 * time.Millisecond
	crawlDelay = time.Second
	retryAfter = time.Second
)

// The sites of the sample web the emails are about.
const (
	excludedIT = "trattoria-example.it" // excluded by email before the crawl
	excludedDA = "cykel-example.dk"     // excluded by email before the crawl
	midCrawl   = "library-example.org"  // excluded by email during the crawl
)

// binary builds lohibot into a temporary folder, as CI does (no cgo).
func binary(t *testing.T) string {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "lohibot")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/lohibot")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cli runs the binary in the foreground and returns its output and exit
// code.
type cli struct {
	t   *testing.T
	bin string
	dsn string
	env []string
}

func (c *cli) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"--db", c.dsn}, args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func (c *cli) run(args ...string) (string, int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := c.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("lohibot %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), code
}

// must runs a command that has to succeed.
func (c *cli) must(args ...string) string {
	c.t.Helper()
	out, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("lohibot %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// background is a lohibot process running beside the test.
type background struct {
	cmd  *exec.Cmd
	out  testutil.Buffer // stdout and stderr
	done chan struct{}
	err  error
}

func (b *background) output() string { return b.out.String() }

func (c *cli) start(args ...string) *background {
	c.t.Helper()
	b := &background{done: make(chan struct{})}
	b.cmd = c.command(context.Background(), args...)
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.out
	if err := b.cmd.Start(); err != nil {
		c.t.Fatalf("lohibot %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		b.err = b.cmd.Wait()
		close(b.done)
	}()
	c.t.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.done
	})
	return b
}

// wait waits for the process to end and returns its exit code (-1 when it
// had to be killed after timeout).
func (b *background) wait(timeout time.Duration) int {
	select {
	case <-b.done:
	case <-time.After(timeout):
		b.cmd.Process.Kill()
		<-b.done
		return -1
	}
	if ee, ok := b.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if b.err != nil {
		return -1
	}
	return 0
}

// engine picks the database: PostgreSQL when LOHIBOT_TEST_POSTGRES is set,
// else SQLite.
func engine() string {
	if os.Getenv(dbtest.PostgresEnv) != "" {
		return "postgres"
	}
	return "sqlite"
}

// TestEndToEnd drives the built binary as a user would: `mail watch` in the
// background against a real Dovecot, `lohibot crawl` on the sample web,
// emails arriving by IMAP before and during the crawl; then checks that the
// web server's own record, the database, `lohibot audit` and `lohibot
// report` agree, and that every promise of the bot page holds in the
// server's record.
func TestEndToEnd(t *testing.T) {
	mail := dovecottest.Start(t) // skips without LOHIBOT_TEST_DOVECOT
	initial, stopMail, err := demo.SampleMail()
	if err != nil {
		t.Fatal(err)
	}
	bin := binary(t)
	web, err := sampleweb.Start(&sampleweb.Options{CrawlDelay: crawlDelay, RetryAfter: retryAfter})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	eng := engine()
	t.Logf("database: %s", eng)
	c := &cli{t: t, bin: bin, dsn: dbtest.DSN(t, eng), env: []string{"LOHIBOT_DB="}}
	store := dbtest.OpenDSN(t, c.dsn)
	pol := policy.New(store, nil)

	// The crawl list, as staff would set it.
	var starts []string
	for _, s := range web.Sites() {
		starts = append(starts, s.StartURL)
	}
	c.must(append([]string{"sites", "add"}, starts...)...)

	// The watcher, in its own process; four emails are already waiting.
	for _, raw := range initial {
		mail.Deliver(raw, "")
	}
	pw := filepath.Join(t.TempDir(), "imap-password")
	if err := os.WriteFile(pw, []byte(dovecottest.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	watcher := c.start("mail", "watch", "--imap", mail.URL(false), "--password-file", pw, "--insecure")
	testutil.Eventually(t, 20*time.Second, "the watcher to exclude the sites of the first emails", func() bool {
		_, a := c.run("exclude", "check", excludedIT)
		_, b := c.run("exclude", "check", excludedDA)
		return a == 1 && b == 1
	})

	// The crawl, in its own process; an exclusion arrives in the middle.
	crawl := c.start("crawl", "--all", "--delay", delay.String(), "--allow-private", "--resolver", web.DNSAddr)
	testutil.Eventually(t, 30*time.Second, "the crawl to reach "+midCrawl, func() bool {
		return sampleweb.PageHits(web.HitsFor(midCrawl)) >= 3
	})
	delivered := time.Now()
	mail.Deliver(stopMail, "")
	if code := crawl.wait(60 * time.Second); code != 0 {
		t.Fatalf("lohibot crawl: exit %d\n%s", code, crawl.output())
	}
	t.Logf("lohibot crawl:\n%s", crawl.output())
	testutil.Eventually(t, 10*time.Second, "the watcher to apply the mid-crawl email", func() bool {
		_, code := c.run("exclude", "check", midCrawl)
		return code == 1
	})
	watcher.cmd.Process.Signal(syscall.SIGTERM)
	if code := watcher.wait(15 * time.Second); code != 0 {
		t.Errorf("lohibot mail watch after SIGTERM: exit %d\n%s", code, watcher.output())
	}

	hits := web.Hits()
	rec := web.Check(hits)
	ctx := context.Background()
	exclusion := func(site string) *db.Exclusion {
		t.Helper()
		_, ex, err := pol.Check(ctx, site)
		if err != nil || ex == nil {
			t.Fatalf("Check(%q) = %v, %v; want an exclusion", site, ex, err)
		}
		return ex
	}

	t.Run("mail", func(t *testing.T) {
		ex := exclusion(midCrawl)
		took := ex.ExcludedAt.Sub(delivered)
		t.Logf("time to exclusion (doveadm save to commit, IDLE, separate processes): %v", took.Round(time.Millisecond))
		if took > 10*time.Second {
			t.Errorf("time to exclusion = %v, want well under 10s", took)
		}
		for _, site := range []string{excludedIT, excludedDA, midCrawl} {
			if e := exclusion(site); e.Source != "mail" || e.Evidence == "" {
				t.Errorf("exclusion of %s: source %q, evidence %q; want mail with the Message-ID", site, e.Source, e.Evidence)
			}
		}
		counts := map[string]int{"INBOX": mail.Count("INBOX"), "Processed": mail.Count("Processed"), "Review": mail.Count("Review")}
		want := map[string]int{"INBOX": 0, "Processed": 4, "Review": 1}
		if fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Errorf("mailbox folders = %v, want %v", counts, want)
		}
		out := c.must("mail", "review", "list", "--json")
		if n := strings.Count(strings.TrimSpace(out), "\n") + 1; strings.TrimSpace(out) == "" || n != 1 {
			t.Errorf("mail review list: %d items, want the Hungarian question only:\n%s", n, out)
		}
	})

	t.Run("promises in the server's record", func(t *testing.T) {
		if rec.BadUserAgent != 0 {
			t.Errorf("%d requests without the bot's user agent", rec.BadUserAgent)
		}
		if rec.WithCookie != 0 {
			t.Errorf("%d requests with a cookie, credentials or a Referer", rec.WithCookie)
		}
		for host, n := range testweb.MaxOverlap(hits) {
			if n > 1 {
				t.Errorf("host %s had %d requests in flight at once, want 1", host, n)
			}
		}
		cdHost := web.Site(sampleweb.KindCrawlDelay).Name
		for host, gaps := range testweb.Gaps(hits) {
			want := delay
			if host == cdHost {
				want = crawlDelay
			}
			for i, g := range gaps {
				if g < want {
					t.Errorf("gap %d on %s = %v, want at least %v", i, host, g, want)
				}
			}
		}
		if rec.RetryGap < retryAfter {
			t.Errorf("gap after 429 with Retry-After: %d = %v, want at least %v", int(retryAfter/time.Second), rec.RetryGap, retryAfter)
		}
		for site, n := range rec.PageRequests {
			if n > crawler.Budget {
				t.Errorf("page requests on %s = %d, want at most %d", site, n, crawler.Budget)
			}
		}
		if len(rec.Disallowed) > 0 {
			t.Errorf("robots.txt disallows %q, which were requested", rec.Disallowed)
		}
		for host, hs := range rec.ByHost {
			if hs[0].Path != "/robots.txt" {
				t.Errorf("the first request to %s was %s, want /robots.txt", host, hs[0].Path)
			}
		}
		if rec.AfterLogin != 0 || rec.LoginFetched {
			t.Errorf("after the 401: %d requests, the /login link followed: %v; want none", rec.AfterLogin, rec.LoginFetched)
		}
		for _, site := range []string{excludedIT, excludedDA} {
			if n := len(rec.ByHost[site]); n != 0 {
				t.Errorf("%d requests to %s, excluded before the crawl", n, site)
			}
		}
		ex := exclusion(midCrawl)
		// A request checked before the exclusion may still be on its way
		// when the exclusion commits (the check is a transaction the
		// exclusion waits for; the request leaves after it commits): the
		// server then sees it a moment after the exclusion's time. The
		// promise is that no request is checked after the exclusion: its
		// logged time (sent_at, taken in the check) is not later, and it
		// reached the server at once.
		var logged []db.Request
		if err := dbtest.Gorm(store).Where("site = ?", midCrawl).Find(&logged).Error; err != nil {
			t.Fatal(err)
		}
		checkedBefore := func(path string) (time.Time, bool) {
			for _, r := range logged {
				if u, err := url.Parse(r.URL); err == nil && u.RequestURI() == path && !r.SentAt.After(ex.ExcludedAt) {
					return r.SentAt, true
				}
			}
			return time.Time{}, false
		}
		before := 0
		for _, h := range rec.ByHost[midCrawl] {
			if !h.Start.After(ex.ExcludedAt) {
				before++
				continue
			}
			if at, ok := checkedBefore(h.Path); ok && h.Start.Sub(ex.ExcludedAt) < time.Second {
				t.Logf("request to %s%s reached the server %v after the exclusion; it was checked and logged at %v, before it",
					midCrawl, h.Path, h.Start.Sub(ex.ExcludedAt), at)
				continue
			}
			t.Errorf("request to %s%s at %v, after its exclusion at %v", midCrawl, h.Path, h.Start, ex.ExcludedAt)
		}
		if before == 0 {
			t.Errorf("no request to %s before its exclusion: the mid-crawl email came too early to test anything", midCrawl)
		}
	})

	t.Run("database agrees with the server", func(t *testing.T) {
		var rows []db.Request
		if err := dbtest.Gorm(store).Order("id").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		var logged, seen []string
		for _, r := range rows {
			u, err := url.Parse(r.URL)
			if err != nil {
				t.Fatalf("request %d: bad URL %q", r.ID, r.URL)
			}
			status := 0
			if r.Status != nil {
				status = *r.Status
			}
			if r.CompletedAt == nil {
				t.Errorf("request %d (%s) never completed", r.ID, r.URL)
			}
			logged = append(logged, fmt.Sprintf("%s %s %d", u.Hostname(), u.RequestURI(), status))
		}
		for _, h := range hits {
			seen = append(seen, fmt.Sprintf("%s %s %d", h.Host, h.Path, h.Status))
		}
		sort.Strings(logged)
		sort.Strings(seen)
		if !slices.Equal(logged, seen) {
			t.Errorf("the request log and the server's record differ:\nlog:    %q\nserver: %q", logged, seen)
		}
		var pages []db.Page
		if err := dbtest.Gorm(store).Find(&pages).Error; err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			for _, f := range []string{p.Title, p.Description, p.H1, p.H2, p.H3} {
				if strings.Contains(f, "canary") {
					t.Errorf("page %s keeps page text: %q", p.URL, f)
				}
			}
		}
		if eng == "sqlite" {
			for _, f := range []string{c.dsn, c.dsn + "-wal"} {
				b, _ := os.ReadFile(f)
				if bytes.Contains(b, []byte(sampleweb.Canary)) {
					t.Errorf("%s holds the canary sentence of the page bodies", f)
				}
			}
		}
	})

	t.Run("lohibot audit", func(t *testing.T) {
		out, code := c.run("audit", "--json")
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var v audit.Violation
			if json.Unmarshal([]byte(line), &v) == nil && v.Rule != "" && v.Check != "" {
				t.Errorf("lohibot audit: violation %s %s/%s: %s", v.Site, v.Rule, v.Check, v.Evidence)
			}
		}
		if code != 0 {
			t.Errorf("lohibot audit: exit %d, want 0 (every promise kept)\n%s", code, out)
		}
	})

	t.Run("lohibot report", func(t *testing.T) {
		for _, site := range []string{midCrawl, web.Site(sampleweb.KindRetry).Name} {
			out := c.must("report", site, "--format", "json")
			var rep report.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("lohibot report %s --format json: %v\n%s", site, err, out)
			}
			var inReport, seen []string
			for _, cy := range rep.Cycles {
				for _, r := range cy.Requests {
					u, _ := url.Parse(r.URL)
					status := 0
					if r.Status != nil {
						status = *r.Status
					}
					inReport = append(inReport, fmt.Sprintf("%s %d %s", u.RequestURI(), status, r.RetryAfter))
				}
			}
			for _, h := range rec.ByHost[site] {
				ra := ""
				if h.Status == 429 {
					ra = fmt.Sprint(int(retryAfter / time.Second))
				}
				seen = append(seen, fmt.Sprintf("%s %d %s", h.Path, h.Status, ra))
			}
			sort.Strings(inReport)
			sort.Strings(seen)
			if !slices.Equal(inReport, seen) {
				t.Errorf("report %s: requests differ from the server's record:\nreport: %q\nserver: %q", site, inReport, seen)
			}
			if rep.Status.Requests != len(seen) {
				t.Errorf("report %s: status says %d requests, the server saw %d", site, rep.Status.Requests, len(seen))
			}
			if !rep.OK() {
				t.Errorf("report %s: a promise is marked broken: %+v", site, rep.Audit)
			}
		}
		out := c.must("report", midCrawl, "--format", "json")
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		ex := rep.Status.Exclusion
		if !rep.Status.Excluded || ex == nil || ex.Source != "mail" || !strings.HasPrefix(ex.Evidence, "demo-5-en@") || rep.Status.RequestsSinceExclusion != 0 {
			t.Errorf("report %s status = %+v, exclusion %+v; want excluded by the mid-crawl email, nothing sent since", midCrawl, rep.Status, ex)
		}
		html := filepath.Join(t.TempDir(), "report.html")
		c.must("report", midCrawl, "--format", "html", "-o", html)
		b, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(midCrawl)) || bytes.Contains(b, []byte("<script")) {
			t.Errorf("the HTML report of %s does not name it, or holds a script", midCrawl)
		}
	})
}
