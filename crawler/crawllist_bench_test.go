package crawler_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/policy/audit"
	"github.com/lohisoft/lohibot/policy/audit/report"
)

// BenchmarkCrawlList measures the crawl list at scale (issue 14) on a
// generated database of 1,000,000 listed sites, one finished cycle each
// and 20 page requests per cycle (20,000,000 request rows), 1% of the
// sites due: one due-site scan (a page of 1,000, as serve asks), report
// SITE and audit SITE for one site, and reading the whole list a page at a
// time (sites list, crawl --all). Targets: a scan, a report and an audit
// each under 1 s.
//
// Generating the database takes minutes, so it is opt-in and cached:
// LOHIBOT_BENCH_CRAWLLIST=1 runs it on SQLite (the file is kept at
// LOHIBOT_BENCH_CRAWLLIST_DB, default /tmp/lohibot-crawllist-SITES.db) and,
// when LOHIBOT_BENCH_CRAWLLIST_PG names a PostgreSQL database (kept
// between runs), on PostgreSQL too. LOHIBOT_BENCH_CRAWLLIST_SITES changes
// the number of sites; LOHIBOT_BENCH_CRAWLLIST_NOLOG=1 leaves the request
// log empty (the due-site scan and the list alone, in a minute or two).
//
//	LOHIBOT_BENCH_CRAWLLIST=1 go test -run '^$' -bench CrawlList -benchtime 1x -timeout 60m ./crawler/
func BenchmarkCrawlList(b *testing.B) {
	if os.Getenv("LOHIBOT_BENCH_CRAWLLIST") == "" {
		b.Skip("opt-in: set LOHIBOT_BENCH_CRAWLLIST=1 (generating 20,000,000 request rows takes minutes)")
	}
	sites := 1_000_000
	if s := os.Getenv("LOHIBOT_BENCH_CRAWLLIST_SITES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		sites = v
	}
	dsns := map[string]string{}
	path := os.Getenv("LOHIBOT_BENCH_CRAWLLIST_DB")
	if path == "" {
		path = filepath.Join(os.TempDir(), fmt.Sprintf("lohibot-crawllist-%d.db", sites))
	}
	dsns["sqlite"] = path
	if pg := os.Getenv("LOHIBOT_BENCH_CRAWLLIST_PG"); pg != "" {
		dsns["postgres"] = pg
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		dsn, ok := dsns[engine]
		if !ok {
			continue
		}
		b.Run(engine, func(b *testing.B) { benchCrawlList(b, dsn, sites) })
	}
}

func benchCrawlList(b *testing.B, dsn string, sites int) {
	ctx := context.Background()
	store, err := db.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	var have int
	if err := store.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM sites`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have != sites {
		start := time.Now()
		if err := generateCrawlList(ctx, store, sites, os.Getenv("LOHIBOT_BENCH_CRAWLLIST_NOLOG") == ""); err != nil {
			b.Fatal(err)
		}
		b.Logf("generated %d sites (request log: %v) in %s", sites, os.Getenv("LOHIBOT_BENCH_CRAWLLIST_NOLOG") == "", time.Since(start).Round(time.Second))
	}
	c, err := crawler.New(ctx, store, policy.New(store, nil), &crawler.Options{Node: "bench", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	site := fmt.Sprintf("s%07d.com", sites/2+1)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		due, err := c.DueSites(ctx, 1000, nil)
		if err != nil || len(due) != min(1000, sites/100) {
			b.Fatalf("DueSites = %d sites, %v", len(due), err)
		}
		scan := time.Since(start)

		if os.Getenv("LOHIBOT_BENCH_CRAWLLIST_NOLOG") != "" {
			b.ReportMetric(scan.Seconds(), "scan-s")
			continue
		}
		start = time.Now()
		rep, err := report.Build(ctx, store, site, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := report.Write(io.Discard, rep, report.FormatText, "en"); err != nil {
			b.Fatal(err)
		}
		rtime := time.Since(start)

		start = time.Now()
		sum, err := audit.Run(ctx, store, &audit.Options{Sites: []string{site}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			func(audit.Violation) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		_ = sum
		atime := time.Since(start)

		start = time.Now()
		n := 0
		for _, err := range crawler.Listed(ctx, store) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		ltime := time.Since(start)
		if n != sites {
			b.Fatalf("Listed yielded %d sites, want %d", n, sites)
		}
		b.ReportMetric(scan.Seconds(), "scan-s")
		b.ReportMetric(rtime.Seconds(), "report-s")
		b.ReportMetric(atime.Seconds(), "audit-s")
		b.ReportMetric(ltime.Seconds(), "list-s")
	}
}

// generateCrawlList fills an empty database with sites sites (s0000001.com
// and up), one finished cycle each with 20 page requests (a robots.txt
// request and snapshot per site would double the rows without changing
// the queries measured), set-based: INSERT ... SELECT over a recursive CTE
// (SQLite) or generate_series (PostgreSQL). One site in 100 is due (its
// cycle started 30 days ago); the others were crawled a day ago.
func generateCrawlList(ctx context.Context, store *db.Store, sites int, withLog bool) error {
	recent := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	old := recent.Add(-29 * 24 * time.Hour)
	var stmts []string
	if store.Dialect == db.Postgres {
		ts := func(t time.Time) string { return "'" + t.Format("2006-01-02 15:04:05") + "+00'::timestamptz" }
		stmts = []string{
			fmt.Sprintf(`INSERT INTO sites (name, start_url, added_at, added_by, due_since)
				SELECT 's' || lpad(i::text, 7, '0') || '.com', '', %s, 'bench', CASE WHEN i %% 100 = 0 THEN %s ELSE %s END
				FROM generate_series(1, %d) i`, ts(old), ts(old), ts(recent), sites),
			fmt.Sprintf(`INSERT INTO crawl_cycles (id, site, node, started_at, finished_at, status, budget, spent, delay_ms)
				SELECT i, 's' || lpad(i::text, 7, '0') || '.com', 'bench', CASE WHEN i %% 100 = 0 THEN %s ELSE %s END,
				CASE WHEN i %% 100 = 0 THEN %s ELSE %s END + interval '2 minutes', 'done', 20, 20, 5000
				FROM generate_series(1, %d) i`, ts(old), ts(recent), ts(old), ts(recent), sites),
			`INSERT INTO requests (cycle_id, budget_slot, site, host, origin, url, purpose, node, robots_rule, policy_check,
				delay_ms, sent_at, completed_at, status, bytes, outcome)
				SELECT c.id, k, c.site, 'www.' || c.site, 'https://www.' || c.site, 'https://www.' || c.site || '/p/' || k || '.html',
				'page', 'bench', 'allowed', 'allowed (policy v0)', 5000, c.started_at + k * interval '5 seconds',
				c.started_at + k * interval '5 seconds' + interval '80 milliseconds', 200, 4096, 'ok'
				FROM crawl_cycles c CROSS JOIN generate_series(1, 20) k`,
			`SELECT setval(pg_get_serial_sequence('crawl_cycles', 'id'), (SELECT MAX(id) FROM crawl_cycles))`,
			`ANALYZE`,
		}
	} else {
		ts := func(t time.Time) string { return "'" + t.Format("2006-01-02 15:04:05") + "+00:00'" }
		// SQLite has no interval type: times are built as text in the
		// driver's format from a Unix time.
		at := func(expr string) string {
			return `strftime('%Y-%m-%d %H:%M:%f', ` + expr + `, 'unixepoch') || '+00:00'`
		}
		stmts = []string{
			fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
				INSERT INTO sites (name, start_url, added_at, added_by, due_since)
				SELECT printf('s%%07d.com', i), '', %s, 'bench', CASE WHEN i %% 100 = 0 THEN %s ELSE %s END FROM n`,
				sites, ts(old), ts(old), ts(recent)),
			fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
				INSERT INTO crawl_cycles (id, site, node, started_at, finished_at, status, budget, spent, delay_ms)
				SELECT i, printf('s%%07d.com', i), 'bench', CASE WHEN i %% 100 = 0 THEN %s ELSE %s END,
				CASE WHEN i %% 100 = 0 THEN %s ELSE %s END, 'done', 20, 20, 5000 FROM n`,
				sites, ts(old), ts(recent), ts(old.Add(2*time.Minute)), ts(recent.Add(2*time.Minute))),
			fmt.Sprintf(`WITH RECURSIVE k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 20)
				INSERT INTO requests (cycle_id, budget_slot, site, host, origin, url, purpose, node, robots_rule, policy_check,
				delay_ms, sent_at, completed_at, status, bytes, outcome)
				SELECT c.id, k.j, c.site, 'www.' || c.site, 'https://www.' || c.site, 'https://www.' || c.site || '/p/' || k.j || '.html',
				'page', 'bench', 'allowed', 'allowed (policy v0)', 5000,
				%s, %s, 200, 4096, 'ok'
				FROM crawl_cycles c CROSS JOIN k ORDER BY c.id, k.j`,
				at(fmt.Sprintf("CASE WHEN c.id %% 100 = 0 THEN %d ELSE %d END + 5 * k.j", old.Unix(), recent.Unix())),
				at(fmt.Sprintf("CASE WHEN c.id %% 100 = 0 THEN %d ELSE %d END + 5 * k.j + 0.08", old.Unix(), recent.Unix()))),
			`ANALYZE`,
		}
	}
	for _, q := range stmts {
		if !withLog && strings.Contains(q, "INSERT INTO requests") {
			continue
		}
		if _, err := store.SQL.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
	}
	return nil
}
