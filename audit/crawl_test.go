package audit_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/audit/report"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// TestRealCrawlPasses crawls every site of the local test web (plain sites,
// robots.txt rules, Crawl-delay, 429 and 503 with Retry-After as seconds and
// as a date, flaky and dead hosts, redirects, 401/403/407, challenge pages,
// noindex, a budget-busting site, slow, huge and gzip-bomb pages), with one
// site excluded before the crawl, and checks that the log the crawler wrote
// passes every audit rule, and that the report of a site names every
// request the server saw.
func TestRealCrawlPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the local test web")
	}
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 8, BigPages: 30, SlowFor: time.Second,
			HugeSize: 3 << 20, BombSize: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		store := dbtest.OpenDSN(t, dsn)
		pol := policy.New(store, nil)
		excluded := web.Plain()[1].Name
		if _, err := pol.Exclude(ctx, []string{excluded}, policy.Change{Actor: "webmaster@" + excluded, Evidence: "x1@" + excluded, Source: "mail"}); err != nil {
			t.Fatal(err)
		}
		res, err := resolver.New(web.DNSAddr)
		if err != nil {
			t.Fatal(err)
		}
		c, err := crawler.New(ctx, store, pol, &crawler.Options{Node: "audit-test", Delay: 50 * time.Millisecond,
			AllowPrivate: true, Resolver: res, Timeout: 2 * time.Second, MaxSitesParallel: 64,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var targets []crawler.Target
		for _, s := range web.Sites() {
			targets = append(targets, crawler.Target{Site: s.Name, StartURL: s.StartURL})
		}
		if _, err := c.Crawl(ctx, targets); err != nil {
			t.Fatalf("Crawl: %v", err)
		}
		if len(web.Hits()) < 100 {
			t.Fatalf("the crawl made %d requests, want a real crawl", len(web.Hits()))
		}

		var violations []audit.Violation
		sum, err := audit.Run(ctx, store, nil, func(v audit.Violation) error {
			violations = append(violations, v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range violations {
			t.Errorf("violation on a real crawl: %s %s/%s: %s", v.Site, v.Rule, v.Check, v.Evidence)
		}
		for _, r := range sum.Rules {
			if r.Checked == 0 {
				t.Errorf("rule %s checked nothing", r.Rule)
			}
		}

		// The report of a site names every request the server saw.
		site := web.Site(testweb.KindRetrySecs)
		rep, err := report.Build(ctx, store, site.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := report.WriteText(&buf, rep, "en"); err != nil {
			t.Fatal(err)
		}
		hits := web.HitsFor(site.Host)
		if len(hits) == 0 {
			t.Fatalf("the server saw no request for %s", site.Host)
		}
		for _, h := range hits {
			if !strings.Contains(buf.String(), h.Path) {
				t.Errorf("the report of %s lacks the request for %s", site.Name, h.Path)
			}
		}
		if got, want := rep.Status.Requests, len(hits); got != want {
			t.Errorf("report of %s: %d requests, the server saw %d", site.Name, got, want)
		}

		// LOHIBOT_REPORT_CRAWL_SAMPLES=DIR keeps the HTML reports of every
		// site, to look at (scripts/report-screenshot.sh renders one).
		if dir := os.Getenv("LOHIBOT_REPORT_CRAWL_SAMPLES"); dir != "" && strings.HasPrefix(t.Name(), "TestRealCrawlPasses/sqlite") {
			for _, s := range web.Sites() {
				rep, err := report.Build(ctx, store, s.Name, nil)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := report.WriteHTML(&buf, rep, os.Getenv("LOHIBOT_REPORT_LANG")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, s.Name+".html"), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
