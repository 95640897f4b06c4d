package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/mailbot"
)

// configSource is the configuration a test server reloads from.
type configSource struct {
	mu  sync.Mutex
	cfg *serve.Config
	err error
}

func (s *configSource) set(c *serve.Config, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.err = c, err
}

func (s *configSource) load() (*serve.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	c := *s.cfg
	return &c, nil
}

// testConfig is the default configuration on dsn, crawler off.
func testConfig(dsn string) *serve.Config {
	c := serve.DefaultConfig()
	c.DB = dsn
	c.HTTP = "127.0.0.1:0"
	c.Crawler.Enabled = false
	return c
}

var quiet = slog.New(slog.DiscardHandler)

// newServer returns a server over cfg, closed when the test ends, and the
// source its reloads read.
func newServer(t *testing.T, cfg *serve.Config) (*serve.Server, *configSource) {
	t.Helper()
	src := &configSource{}
	src.set(cfg, nil)
	srv, err := serve.New(context.Background(), cfg, &serve.Options{Load: src.load, Logger: quiet})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, src
}

func fetch(t *testing.T, h http.Handler, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestEndpoints(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		srv, _ := newServer(t, testConfig(dsn))
		h := srv.Handler()

		resp, body := fetch(t, h, "/bot", "Accept-Language", "it-IT,it;q=0.9")
		if resp.StatusCode != 200 || !strings.Contains(body, "Massimo 20 pagine per sito") || resp.Header.Get("Content-Language") != "it" {
			t.Errorf("GET /bot (it): %d %q", resp.StatusCode, resp.Header.Get("Content-Language"))
		}
		resp, body = fetch(t, h, "/bot/ips.json")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Location") != "" {
			t.Errorf("GET /bot/ips.json: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(body, `"prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"}]`) {
			t.Errorf("GET /bot/ips.json = %s", body)
		}

		resp, body = fetch(t, h, "/healthz")
		var hl serve.Health
		if err := json.Unmarshal([]byte(body), &hl); err != nil {
			t.Fatalf("healthz: %v: %s", err, body)
		}
		if resp.StatusCode != 200 || hl.Status != "ok" || hl.Database.Status != "ok" || hl.Watcher.Status != "disabled" || len(hl.Down) != 0 {
			t.Errorf("GET /healthz = %d %s, want 200 ok with the watcher disabled", resp.StatusCode, body)
		}

		resp, body = fetch(t, h, "/metrics")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
			t.Errorf("GET /metrics: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, want := range []string{
			"# TYPE lohibot_crawler_pages_total counter",
			"# TYPE lohibot_crawler_robots_refusals_total counter",
			"# TYPE lohibot_exclusions_applied_total counter",
			"# TYPE lohibot_mail_time_to_exclusion_seconds histogram",
			`lohibot_http_requests_total{code="200",handler="bot"} 1`,
			`lohibot_http_requests_total{code="200",handler="ips"} 1`,
			`lohibot_crawler_sites_total{status="excluded"} 0`,
			`lohibot_config_reloads_total{result="ok"} 0`, // the first load is not a reload
			"lohibot_db_retries_total 0",
			"go_goroutines ",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

func TestHealthDatabaseDown(t *testing.T) {
	srv, _ := newServer(t, testConfig(dbtest.DSN(t, "sqlite")))
	dbtest.SQL(srv.Store()).Close()
	resp, body := fetch(t, srv.Handler(), "/healthz")
	var h serve.Health
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || h.Status != "unavailable" || h.Database.Status != "down" || h.Database.Error == "" ||
		len(h.Down) != 1 || h.Down[0] != "database" {
		t.Errorf("GET /healthz with the database closed = %d %s, want 503 naming the database", resp.StatusCode, body)
	}
}

// TestHealthWatcherDown runs the daemon with a mailbox that refuses
// connections: /healthz says the watcher is down, and why.
func TestHealthWatcherDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg := testConfig(dbtest.DSN(t, "sqlite"))
	cfg.Mail.IMAP = "imap://bot@" + addr + "/INBOX"
	cfg.Mail.Password = "secret"
	cfg.Mail.Insecure = true
	srv, _ := newServer(t, cfg)
	base := start(t, srv)

	var (
		h    serve.Health
		code int
		body []byte
	)
	testutil.Eventually(t, 10*time.Second, "/healthz: 503 with the watcher down after a failed connection", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		code = resp.StatusCode
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatal(err)
		}
		return code == http.StatusServiceUnavailable && h.Watcher.Status == "down" && strings.Contains(h.Watcher.Error, "connect")
	})
	if len(h.Down) != 1 || h.Down[0] != "watcher" || h.Database.Status != "ok" {
		t.Errorf("healthz = %d %s, want only the watcher down", code, body)
	}
}

// start runs srv on a loopback port until the test ends; it returns the
// base URL.
func start(t *testing.T, srv *serve.Server) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Run did not return within 30 s of its context ending")
		}
	})
	testutil.Eventually(t, 5*time.Second, "the server to listen", func() bool { return srv.Addr() != nil })
	return "http://" + srv.Addr().String()
}

func TestReload(t *testing.T) {
	cfg := testConfig(dbtest.DSN(t, "sqlite"))
	fc := clocktest.New(time.Time{})
	src := &configSource{}
	src.set(cfg, nil)
	srv, err := serve.New(context.Background(), cfg, &serve.Options{Load: src.load, Logger: quiet, Now: fc.Now})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	h := srv.Handler()
	_, before := fetch(t, h, "/bot/ips.json")

	// The page's numbers follow the reloaded configuration; the IP list
	// keeps its creationTime while the fleet is the same.
	next := *cfg
	next.Page.Budget = 30
	next.Page.Contact = "optout@lohisoft.com"
	src.set(&next, nil)
	if err := srv.Reload(context.Background()); err != nil {
		t.Fatalf("Reload = %v", err)
	}
	_, page := fetch(t, h, "/bot?lang=hu")
	if !strings.Contains(page, "Max. 30 oldal weboldalanként") || !strings.Contains(page, "optout@lohisoft.com") || strings.Contains(page, "Max. 20 oldal") {
		t.Errorf("page after reload does not show budget 30 and the new contact")
	}
	if _, after := fetch(t, h, "/bot/ips.json"); after != before {
		t.Errorf("ips.json changed with the fleet unchanged: %s, then %s", before, after)
	}

	// A new fleet is a new list.
	fc.Advance(time.Second) // creationTime has whole seconds
	next2 := next
	next2.Crawler.Fleet = []serve.Machine{{IP: "192.0.2.7", Host: "crawler3.bot.lohisoft.com"}}
	src.set(&next2, nil)
	if err := srv.Reload(context.Background()); err != nil {
		t.Fatalf("Reload = %v", err)
	}
	_, after := fetch(t, h, "/bot/ips.json")
	if !strings.Contains(after, `"prefixes":[{"ipv4Prefix":"192.0.2.7/32"}]`) || after[:40] == before[:40] {
		t.Errorf("ips.json after a fleet change = %s (before %s), want the new address and a new creationTime", after, before)
	}
	_, page = fetch(t, h, "/bot?lang=da")
	if !strings.Contains(page, "crawler3.bot.lohisoft.com") || strings.Contains(page, "79.139.58.98") {
		t.Errorf("page after a fleet change does not show the new fleet only")
	}

	// A bad configuration changes nothing and is counted.
	bad := next2
	bad.Page.Budget = 5
	src.set(&bad, nil)
	if err := srv.Reload(context.Background()); !errors.Is(err, serve.ErrConfig) {
		t.Errorf("Reload(budget 5) = %v, want ErrConfig", err)
	}
	src.set(nil, errors.New("file gone"))
	if err := srv.Reload(context.Background()); err == nil {
		t.Errorf("Reload(unreadable) = nil, want an error")
	}
	_, page = fetch(t, h, "/bot?lang=da")
	if !strings.Contains(page, "Maks. 30 sider pr. site") {
		t.Errorf("page after failed reloads does not show the last good budget")
	}
	_, metrics := fetch(t, h, "/metrics")
	for _, want := range []string{`lohibot_config_reloads_total{result="ok"} 2`, `lohibot_config_reloads_total{result="error"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// The database and the address need a restart: a reload keeps them.
	moved := next2
	moved.HTTP = "127.0.0.1:1"
	moved.DB = dbtest.DSN(t, "sqlite")
	src.set(&moved, nil)
	if err := srv.Reload(context.Background()); err != nil {
		t.Fatalf("Reload = %v", err)
	}
	if got := srv.Config(); got.HTTP != cfg.HTTP || got.DB != cfg.DB {
		t.Errorf("after reload: http %q db %q, want the old %q %q", got.HTTP, got.DB, cfg.HTTP, cfg.DB)
	}
}

func TestMetricsFeed(t *testing.T) {
	m := serve.NewMetrics()
	delivered := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	m.ObserveMail(mailbot.WatchEvent{Delivered: delivered, Result: &mailbot.Result{
		Intent: mailbot.IntentExclude, Outcome: mailbot.OutcomeExcluded, Excluded: []string{"a.example", "b.example"},
		Committed: delivered.Add(3 * time.Second)}})
	m.ObserveMail(mailbot.WatchEvent{Delivered: delivered, Result: &mailbot.Result{
		Intent: mailbot.IntentExclude, Outcome: mailbot.OutcomeExcluded, Excluded: []string{"a.example"}, Duplicate: true,
		Committed: delivered.Add(time.Hour)}})
	m.ObserveMail(mailbot.WatchEvent{Result: &mailbot.Result{Intent: mailbot.IntentReinclude, Outcome: mailbot.OutcomeQueued}})
	m.ObserveSite(crawler.SiteResult{Status: crawler.SiteCrawled, Pages: 7, RobotsRefused: 2})
	m.ObserveSite(crawler.SiteResult{Status: crawler.SiteExcluded, Pages: 1})
	m.Request("page", 200, 8)
	m.Request("page", 0, 1)
	m.Request("robots", 404, 1)
	m.ObserveWatchState(mailbot.WatchState{Connected: true})
	_, body := fetch(t, m.Handler(), "/metrics")
	for _, want := range []string{
		`lohibot_mail_processed_total{intent="exclude",outcome="excluded"} 1`,
		`lohibot_mail_processed_total{intent="exclude",outcome="duplicate"} 1`,
		`lohibot_mail_processed_total{intent="reinclude",outcome="queued"} 1`,
		`lohibot_exclusions_applied_total{source="mail"} 2`,
		"lohibot_mail_time_to_exclusion_seconds_count 1",
		"lohibot_mail_time_to_exclusion_seconds_sum 3",
		`lohibot_mail_time_to_exclusion_seconds_bucket{le="2"} 0`,
		`lohibot_mail_time_to_exclusion_seconds_bucket{le="5"} 1`,
		`lohibot_crawler_sites_total{status="crawled"} 1`,
		`lohibot_crawler_sites_total{status="excluded"} 1`,
		"lohibot_crawler_exclusions_applied_total 1",
		"lohibot_crawler_pages_total 8",
		"lohibot_crawler_robots_refusals_total 2",
		`lohibot_crawler_requests_total{purpose="page",status="200"} 8`,
		`lohibot_crawler_requests_total{purpose="page",status="none"} 1`,
		`lohibot_crawler_requests_total{purpose="robots",status="404"} 1`,
		"lohibot_mail_watcher_connected 1",
		"# HELP lohibot_crawler_requests_total HTTP requests of the crawler",
		"# TYPE lohibot_crawler_requests_total counter",
		"# TYPE lohibot_mail_processed_total counter",
	} {
		if !strings.HasPrefix(want, "#") {
			want += "\n" // the whole value
		}
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Two sets of metrics never share a registry.
	if serve.NewMetrics().Registry() == m.Registry() {
		t.Error("NewMetrics returned a shared registry")
	}
}

// fetchURL GETs url and returns the status and the body.
func fetchURL(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
