package crawler_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

const testDelay = 100 * time.Millisecond

// env is a local web and a database for one test.
type env struct {
	web   *testweb.Web
	store *db.Store
	pol   *policy.Policy
	dsn   string
}

func newEnv(t testing.TB, engine string, wopts *testweb.Options) *env {
	t.Helper()
	w, err := testweb.Start(wopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dsn := dbtest.DSN(t, engine)
	store := dbtest.OpenDSN(t, dsn)
	return &env{web: w, store: store, pol: policy.New(store, nil), dsn: dsn}
}

func (e *env) options(t testing.TB) *crawler.Options {
	t.Helper()
	res, err := resolver.New(e.web.DNSAddr)
	if err != nil {
		t.Fatal(err)
	}
	var logger *slog.Logger
	if os.Getenv("CRAWLER_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	} else {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &crawler.Options{
		Node:             "test",
		Delay:            testDelay,
		AllowPrivate:     true,
		Resolver:         res,
		Timeout:          2 * time.Second,
		Logger:           logger,
		MaxSitesParallel: 64,
	}
}

func (e *env) crawler(t *testing.T, opts *crawler.Options) *crawler.Crawler {
	t.Helper()
	if opts == nil {
		opts = e.options(t)
	}
	c, err := crawler.New(context.Background(), e.store, e.pol, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (e *env) targets(kinds ...string) []crawler.Target {
	var out []crawler.Target
	for _, k := range kinds {
		s := e.web.Site(k)
		out = append(out, crawler.Target{Site: s.Name, StartURL: s.StartURL})
	}
	return out
}

// plainTargets returns the local web's plain sites as targets.
func (e *env) plainTargets() []crawler.Target {
	var out []crawler.Target
	for _, s := range e.web.Plain() {
		out = append(out, crawler.Target{Site: s.Name, StartURL: s.StartURL})
	}
	return out
}

func (e *env) crawl(t *testing.T, c *crawler.Crawler, kinds ...string) map[string]crawler.SiteResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := c.Crawl(ctx, e.targets(kinds...))
	if err != nil {
		t.Fatalf("Crawl: %v", err)
	}
	out := map[string]crawler.SiteResult{}
	for _, r := range rs {
		out[r.Site] = r
	}
	return out
}

// requests reads the request log.
func (e *env) requests(t *testing.T) []db.Request {
	t.Helper()
	var rs []db.Request
	if err := dbtest.Gorm(e.store).Order("id").Find(&rs).Error; err != nil {
		t.Fatal(err)
	}
	return rs
}

// paths returns the paths the server saw for host, in order.
func paths(hits []testweb.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func strconvItoa(n int) string { return strconv.Itoa(n) }

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// checkBudgets checks that every plain site of w got exactly
// crawler.Budget page requests in hits (a site with none counts).
func checkBudgets(t *testing.T, w *testweb.Web, hits []testweb.Hit) {
	t.Helper()
	pages := w.PageHitsPerSite(hits)
	for _, s := range w.Plain() {
		if n := pages[s.Name]; n != crawler.Budget {
			t.Errorf("page requests to %s = %d, want %d (the budget)", s.Name, n, crawler.Budget)
		}
	}
}
