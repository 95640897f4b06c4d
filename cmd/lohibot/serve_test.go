package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServeCheck checks the order of the configuration's layers: the
// defaults, the file, the environment, the flags.
func TestServeCheck(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lohibot.toml")
	writeFile(t, conf, `
http = "127.0.0.1:7001"
db = "`+filepath.Join(dir, "file.db")+`"
[crawler]
delay = "8s"
max_sites_parallel = 4
[page]
budget = 21
`)
	pw := filepath.Join(dir, "pw")
	writeFile(t, pw, "hunter2\n")
	env := []string{
		"LOHIBOT_CRAWLER_MAX_SITES_PARALLEL=6",
		"LOHIBOT_PAGE_BUDGET=22",
		"LOHIBOT_MAIL_IMAP=imaps://bot@127.0.0.1:10993/INBOX",
		"LOHIBOT_MAIL_PASSWORD_FILE=" + pw,
		"LOHIBOT_DB=" + filepath.Join(dir, "env.db"),
	}
	// A database that does not exist fails the check, as serve itself
	// refuses it; nothing is created.
	r := runCLI(t, env, "serve", "--config", conf, "--http", "127.0.0.1:7002", "--check")
	if r.code != 2 || !strings.Contains(r.stderr, "env.db") {
		t.Errorf("serve --check without a database: exit %d, stderr %s; want 2, naming it", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "env.db")); err == nil {
		t.Errorf("serve --check created the database")
	}
	for _, name := range []string{"file.db", "env.db", "flag.db"} {
		if r := runCLI(t, nil, "--db", filepath.Join(dir, name), "init"); r.code != 0 {
			t.Fatalf("init: exit %d: %s", r.code, r.stderr)
		}
	}
	r = runCLI(t, env, "serve", "--config", conf, "--http", "127.0.0.1:7002", "--check")
	if r.code != 0 {
		t.Fatalf("serve --check: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, want := range []string{
		`http = "127.0.0.1:7002"`,                     // the flag beats the file
		`db = "` + filepath.Join(dir, "env.db") + `"`, // the environment beats the file
		`delay = "8s"`,                                // the file beats the default
		"max_sites_parallel = 6",                      // the environment beats the file
		"budget = 22",                                 // the environment beats the file
		`imap = "imaps://bot@127.0.0.1:10993/INBOX"`,  // the environment alone
		`recrawl_after = "168h0m0s"`,                  // the default
		`password_file = "` + pw + `"`,                // the file's name is shown
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("serve --check lacks %s:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "hunter2") {
		t.Errorf("serve --check prints the password:\n%s", r.stdout)
	}
	// --db beats the environment.
	r = runCLI(t, env, "serve", "--config", conf, "--db", filepath.Join(dir, "flag.db"), "--check")
	if r.code != 0 || !strings.Contains(r.stdout, `db = "`+filepath.Join(dir, "flag.db")+`"`) {
		t.Errorf("serve --db ... --check: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// LOHIBOT_CONFIG names the file when --config is not given.
	r = runCLI(t, []string{"LOHIBOT_CONFIG=" + conf}, "serve", "--check")
	if r.code != 0 || !strings.Contains(r.stdout, `http = "127.0.0.1:7001"`) {
		t.Errorf("LOHIBOT_CONFIG=... serve --check: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestServeCheckJSON: with --json, serve --check prints the configuration as
// one JSON object with the file's key names, and nothing else.
func TestServeCheckJSON(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	for _, args := range [][]string{{"serve", "--check", "--json"}, {"--json", "serve", "--check", "--http=127.0.0.1:7003"}} {
		r := runCLI(t, env, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		var cfg struct {
			HTTP    string `json:"http"`
			Crawler struct {
				Delay string `json:"delay"`
				Fleet []struct {
					IP string `json:"ip"`
				} `json:"fleet"`
			} `json:"crawler"`
		}
		if strings.Count(r.stdout, "\n") != 1 || json.Unmarshal([]byte(r.stdout), &cfg) != nil {
			t.Fatalf("%v: stdout is not one line of JSON:\n%s", args, r.stdout)
		}
		if cfg.HTTP == "" || cfg.Crawler.Delay != "5s" || len(cfg.Crawler.Fleet) != 2 {
			t.Errorf("%v: configuration = %+v, want the defaults", args, cfg)
		}
	}
}

func TestServeBadConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lohibot.toml")
	writeFile(t, conf, "[mail]\npassword = \"hunter2\"\n")
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"secret in the file", nil, []string{"serve", "--config", conf, "--check"}, "secrets are never read"},
		{"missing file", nil, []string{"serve", "--config", filepath.Join(dir, "none.toml"), "--check"}, "no such file"},
		{"budget below the crawler's", []string{"LOHIBOT_PAGE_BUDGET=5"}, []string{"serve", "--check"}, "page.budget"},
		{"bad duration", []string{"LOHIBOT_CRAWLER_DELAY=5"}, []string{"serve", "--check"}, "LOHIBOT_CRAWLER_DELAY"},
		{"imap without password", []string{"LOHIBOT_MAIL_IMAP=imaps://bot@127.0.0.1/INBOX"}, []string{"serve", "--check"}, "no IMAP password"},
		{"bad http flag", nil, []string{"serve", "--http", "nonsense", "--check"}, "HOST:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, tt.args...)
			if r.code != exitBadInput || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("lohibot %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
			}
		})
	}
}

// freePort returns a loopback address nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeSignals runs serve as a process: SIGHUP reloads the
// configuration file and the page shows it at once; SIGTERM stops it with
// exit 0.
func TestServeSignals(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lohibot.toml")
	writeFile(t, conf, "[crawler]\nenabled = false\n[page]\nbudget = 20\n")
	addr := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dbtest.Init(t, filepath.Join(dir, "l.db"))
	cmd := lohibotProcess(ctx, "serve", "--config", conf, "--db", filepath.Join(dir, "l.db"), "--http", addr)
	stderr := &testutil.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	page := func() string {
		resp, err := http.Get("http://" + addr + "/bot?lang=en")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		if !testutil.Within(20*time.Second, ok) {
			t.Fatalf("timed out waiting for %s; stderr:\n%s", what, stderr.String())
		}
	}
	waitFor("the page with budget 20", func() bool { return strings.Contains(page(), "At most 20 pages per site") })

	writeFile(t, conf, "[crawler]\nenabled = false\n[page]\nbudget = 35\ncontact = \"optout@lohisoft.com\"\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the page with budget 35 after SIGHUP", func() bool {
		p := page()
		return strings.Contains(p, "At most 35 pages per site") && strings.Contains(p, "optout@lohisoft.com")
	})

	// A broken file on SIGHUP keeps the last good configuration.
	writeFile(t, conf, "[page]\nbudget = \"many\"\n")
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the failed reload in the log", func() bool { return strings.Contains(stderr.String(), "configuration not reloaded") })
	if !strings.Contains(page(), "At most 35 pages per site") {
		t.Errorf("a failed reload changed the page")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not stop within 20 s of SIGTERM; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "msg=stopped") {
		t.Errorf("serve did not log its stop:\n%s", stderr.String())
	}
}

// serveProcess is a running `lohibot serve` child process.
type serveProcess struct {
	cmd    *exec.Cmd
	stderr *testutil.Buffer
	done   chan error
}

func startServe(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{stderr: &testutil.Buffer{}, done: make(chan error, 1)}
	p.cmd = lohibotProcess(context.Background(), append([]string{"serve"}, args...)...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serveProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v; stderr:\n%s", err, p.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop within 30 s of SIGTERM; stderr:\n%s", p.stderr.String())
	}
}

// checkLog audits the request log and checks that nothing was left half
// written: every request completed, no cycle left running, no lease held.
func checkLog(t *testing.T, dsn string) map[string][]db.CrawlCycle {
	t.Helper()
	ctx := context.Background()
	store := dbtest.OpenDSN(t, dsn)
	sum, err := audit.Run(ctx, store, &audit.Options{Logger: slog.New(slog.DiscardHandler)}, func(v audit.Violation) error {
		t.Errorf("audit: %s %s %s: %s", v.Site, v.Rule, v.Check, v.Evidence)
		return nil
	})
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	if !sum.OK() {
		t.Errorf("audit found %d violations: %+v", sum.Violations(), sum.Rules)
	}
	var open, requests int64
	dbtest.Gorm(store).Model(&db.Request{}).Where("completed_at IS NULL").Count(&open)
	dbtest.Gorm(store).Model(&db.Request{}).Count(&requests)
	if open != 0 || requests == 0 {
		t.Errorf("%d of %d requests in the log were never completed, want 0 of some", open, requests)
	}
	var held int64
	dbtest.Gorm(store).Model(&db.HostLease{}).Where("holder <> ''").Count(&held)
	if held != 0 {
		t.Errorf("%d host or cycle leases still held after the stop", held)
	}
	var cs []db.CrawlCycle
	dbtest.Gorm(store).Order("id").Find(&cs)
	out := map[string][]db.CrawlCycle{}
	for _, c := range cs {
		if c.Status == db.CycleRunning {
			t.Errorf("cycle %d of %s left running", c.ID, c.Site)
		}
		out[c.Site] = append(out[c.Site], c)
	}
	return out
}

// TestServeSIGTERMDuringCrawl stops serve with SIGTERM while it crawls: it
// exits cleanly, the log passes the audit with nothing half written, and
// the next start resumes the interrupted cycles within their budget.
func TestServeSIGTERMDuringCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 30, BigPages: 60})
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		dir := t.TempDir()
		conf := filepath.Join(dir, "lohibot.toml")
		config := func(delay string) string {
			return `
node = "node-a"
resolver = "` + web.DNSAddr + `"
[crawler]
allow_private = true
delay = "` + delay + `"
scan_interval = "100ms"
max_sites_parallel = 3
`
		}
		writeFile(t, conf, config("150ms"))
		var urls []string
		for _, s := range []string{"plain-000.test", "plain-001.test", testweb.KindBig} {
			urls = append(urls, web.Site(s).StartURL)
		}
		if r := runCLI(t, nil, append([]string{"--db", dsn, "sites", "add"}, urls...)...); r.code != 0 {
			t.Fatalf("sites add: exit %d: %s", r.code, r.stderr)
		}

		p := startServe(t, "--config", conf, "--db", dsn, "--http", freePort(t))
		testutil.Eventually(t, 30*time.Second, "pages of every site", func() bool {
			for _, h := range []string{"plain-000.test", "plain-001.test", "big.test"} {
				if len(web.HitsFor(h)) < 3 {
					return false
				}
			}
			return true
		})
		p.stop(t)
		stopped := time.Now()
		for _, h := range web.Hits() {
			if h.Start.After(stopped) {
				t.Errorf("request %s%s started after serve exited", h.Host, h.Path)
			}
		}
		cs := checkLog(t, dsn)
		interrupted := 0
		for _, c := range cs {
			if c[len(c)-1].Status == db.CycleStopped {
				interrupted++
			}
		}
		if interrupted == 0 {
			t.Errorf("no cycle was interrupted by SIGTERM: %+v", cs)
		}

		// The next start resumes the interrupted cycles (same cycle, the
		// budget still counting) and finishes them. (With the same delay:
		// a resumed cycle is audited against the delay it started with.)
		p = startServe(t, "--config", conf, "--db", dsn, "--http", freePort(t))
		testutil.Eventually(t, 60*time.Second, "every cycle to finish", func() bool {
			store, err := db.Open(context.Background(), dsn)
			if err != nil {
				return false
			}
			defer store.Close()
			var unfinished int64
			dbtest.Gorm(store).Model(&db.CrawlCycle{}).Where("status <> ?", db.CycleDone).Count(&unfinished)
			return unfinished == 0
		})
		p.stop(t)
		cs = checkLog(t, dsn)
		for site, c := range cs {
			if len(c) != 1 || c[0].Spent > crawler.Budget {
				t.Errorf("cycles of %s = %+v, want one, resumed, within the budget", site, c)
			}
		}
		if n := len(pageHitsOf(web.HitsFor("big.test"))); n > crawler.Budget {
			t.Errorf("%d pages of big.test fetched over the stop and restart, want at most %d", n, crawler.Budget)
		}
	})
}

func pageHitsOf(hits []testweb.Hit) []testweb.Hit {
	var out []testweb.Hit
	for _, h := range hits {
		if h.Path != "/robots.txt" {
			out = append(out, h)
		}
	}
	return out
}
