package crawler_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/audit/report"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// BenchmarkCrawlList measures the crawl list at scale on a
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
	if err := dbtest.SQL(store).QueryRowContext(ctx, `SELECT COUNT(*) FROM sites`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have != sites {
		start := time.Now()
		if err := generateCrawlList(ctx, store, sites, os.Getenv("LOHIBOT_BENCH_CRAWLLIST_NOLOG") == "", os.Getenv("LOHIBOT_BENCH_CRAWLLIST_SEAL") != ""); err != nil {
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
		if err != nil || len(due) != min(1000, sites/100-sites/1000) {
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

// crawlListChunk is how many sites generateCrawlList writes per transaction
// and per seal block: 1,000 sites are 21,000 request rows, a block of the
// size a busy crawler seals in a minute or so.
const crawlListChunk = 1000

// crawlListRobots is the robots.txt every generated site serves.
const crawlListRobots = "User-agent: *\nDisallow: /private/\n"

// generateCrawlList fills an empty database with sites sites (s0000001.com
// and up), set-based and in the database itself, crawlListChunk sites per
// transaction, each chunk sealed by one block (store.Seal, as a crawler
// seals its rows) when seal is true. Each site has one finished cycle: a
// robots.txt request and its snapshot, then 20 page requests (budget slots
// 1 to 20) 5 s apart that cite the snapshot: 21 request rows a site. One
// site in 100 is due (its cycle started about 30 days ago); the others were
// crawled one to four days ago. One site in 1,000, among the due ones, is
// excluded an hour after its cycle (an exclusion and its policy event), so
// it is due by time but never handed out. withLog false writes sites,
// cycles and exclusions only.
//
// SQLite: INSERT ... SELECT from a recursive CTE, with the request times
// taken from a temporary table of every (start, offset) pair (10,000 starts
// × 21 offsets) instead of strftime per row, on one connection with
// synchronous=OFF and a large page cache; the request log's secondary
// indexes are dropped for the load and built again after it. PostgreSQL:
// generate_series, synchronous_commit off, the same indexes dropped and
// rebuilt. The pool's other connections keep their settings.
func generateCrawlList(ctx context.Context, store *db.Store, sites int, withLog, seal bool) error {
	recent := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second).Unix()
	old := recent - 29*24*3600
	body := []byte(crawlListRobots)
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])

	conn, err := dbtest.SQL(store).Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	exec := func(q string) error {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("generate: %w\n%s", err, q)
		}
		return nil
	}
	pg := store.Dialect == db.Postgres

	// The request log's secondary indexes, dropped for the load.
	var indexes []string
	if withLog {
		q := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'requests' AND sql IS NOT NULL`
		if pg {
			q = `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'requests' AND indexname <> 'requests_pkey' AND schemaname = current_schema()`
		}
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var n, def string
			if err := rows.Scan(&n, &def); err != nil {
				rows.Close()
				return err
			}
			names, indexes = append(names, n), append(indexes, def)
		}
		rows.Close()
		for _, n := range names {
			if err := exec(`DROP INDEX ` + n); err != nil {
				return err
			}
		}
	}

	var setup, stmts []string
	if pg {
		name := `('s' || lpad(i::text, 7, '0') || '.com')`
		at := func(expr string) string { return `to_timestamp(` + expr + `)` }
		start := fmt.Sprintf("(CASE WHEN i %% 100 = 0 THEN %d ELSE %d END - (i %% 5000) * 60)", old, recent)
		series := `generate_series({{LO}}, {{HI}}) i`
		host, origin := `'www.' || `+name, `'https://www.' || `+name
		setup = []string{`SET synchronous_commit = off`, `SET maintenance_work_mem = '512MB'`}
		stmts = []string{
			`INSERT INTO sites (id, name, start_url, added_at, added_by, due_since)
				SELECT i, ` + name + `, '', ` + at(fmt.Sprint(old-86400)) + `, 'bench', ` + at(start) + ` FROM ` + series,
			`INSERT INTO crawl_cycles (id, site, node, started_at, finished_at, status, budget, spent, delay_ms)
				SELECT i, ` + name + `, 'bench', ` + at(start) + `, ` + at(start+" + 120") + `, 'done', 20, 20, 2000 FROM ` + series,
			`INSERT INTO exclusions (site, excluded_at, actor, reason, evidence, source, event_id, verified)
				SELECT ` + name + `, ` + at(start+" + 3600") + `, 'bench', 'asked by email', '<bench@example>', 'staff', i / 1000, TRUE
				FROM ` + series + ` WHERE i % 1000 = 0`,
			`INSERT INTO policy_events (id, version, happened_at, kind, site, actor, reason, evidence, source)
				SELECT i / 1000, i / 1000, ` + at(start+" + 3600") + `, 'exclude', ` + name + `, 'bench', 'asked by email', '<bench@example>', 'staff'
				FROM ` + series + ` WHERE i % 1000 = 0`,
		}
		if withLog {
			stmts = append(stmts,
				`INSERT INTO requests (id, cycle_id, site, host, origin, url, purpose, node, policy_check,
					delay_ms, sent_at, completed_at, status, bytes, duration_ms, outcome)
					SELECT (i - 1) * 21 + 1, i, `+name+`, `+host+`, `+origin+`, `+origin+` || '/robots.txt', 'robots', 'bench', 'allowed (policy v0)',
					2000, `+at(start)+`, `+at(start+" + 0.08")+`, 200, `+fmt.Sprint(len(body))+`, 80, 'ok' FROM `+series,
				`INSERT INTO robots_snapshots (id, origin, fetched_at, status, final_url, body, sha256, outcome, request_id)
					SELECT i, `+origin+`, `+at(start+" + 0.08")+`, 200, `+origin+` || '/robots.txt', '\x`+hex.EncodeToString(body)+`'::bytea,
					'`+digest+`', 'parsed', (i - 1) * 21 + 1 FROM `+series,
				`INSERT INTO requests (id, cycle_id, budget_slot, site, host, origin, url, purpose, node, robots_snapshot_id, robots_rule, robots_line,
					policy_check, delay_ms, sent_at, completed_at, status, bytes, duration_ms, outcome)
					SELECT (i - 1) * 21 + 1 + k, i, k, `+name+`, `+host+`, `+origin+`, `+origin+` || '/p/' || k || '.html', 'page', 'bench', i,
					'Disallow: /private/', 2, 'allowed (policy v0)', 2000, `+at(start+" + 5 * k")+`, `+at(start+" + 5 * k + 0.08")+`,
					200, 4096, 80, 'ok' FROM `+series+` CROSS JOIN generate_series(1, 20) k ORDER BY i, k`,
			)
		}
	} else {
		// Times as the driver writes them: whole seconds, or with %f.
		at := func(expr string) string {
			return `strftime('%Y-%m-%d %H:%M:%S', ` + expr + `, 'unixepoch') || '+00:00'`
		}
		atf := func(expr string) string {
			return `strftime('%Y-%m-%d %H:%M:%f', ` + expr + `, 'unixepoch') || '+00:00'`
		}
		count := func(v string, lo, hi string) string {
			return fmt.Sprintf(`(WITH RECURSIVE s(%s) AS (SELECT %s UNION ALL SELECT %s + 1 FROM s WHERE %s < %s) SELECT %s FROM s)`, v, lo, v, v, hi, v)
		}
		// slot 0-4999: crawled recently, 5000-9999: due; start of slot.
		slotStart := fmt.Sprintf("(CASE WHEN slot >= 5000 THEN %d ELSE %d END - (slot %% 5000) * 60)", old, recent)
		setup = []string{`PRAGMA synchronous = OFF`, `PRAGMA cache_size = -262144`, `PRAGMA temp_store = MEMORY`,
			`DROP TABLE IF EXISTS temp.gen_times`, `DROP TABLE IF EXISTS temp.gen_chunk`,
			`CREATE TEMP TABLE gen_times (slot INTEGER, k INTEGER, sent TEXT, done TEXT, PRIMARY KEY (slot, k)) WITHOUT ROWID`,
			`CREATE TEMP TABLE gen_chunk (i INTEGER PRIMARY KEY, name TEXT, origin TEXT, slot INTEGER, start TEXT, finish TEXT, excluded TEXT)`,
			`INSERT INTO gen_times SELECT slot, k, ` + at(slotStart+" + 5 * k") + `, ` + atf(slotStart+" + 5 * k + 0.08") + `
				FROM ` + count("slot", "0", "9999") + ` CROSS JOIN ` + count("k", "0", "20"),
		}
		stmts = []string{
			`DELETE FROM gen_chunk`,
			`INSERT INTO gen_chunk SELECT i, printf('s%07d.com', i), 'https://www.' || printf('s%07d.com', i), slot,
				` + at(slotStart) + `, ` + at(slotStart+" + 120") + `, ` + at(slotStart+" + 3600") + `
				FROM (SELECT i, (i % 100 = 0) * 5000 + i % 5000 AS slot FROM ` + count("i", "{{LO}}", "{{HI}}") + `)`,
			`INSERT INTO sites (id, name, start_url, added_at, added_by, due_since)
				SELECT i, name, '', ` + at(fmt.Sprint(old-86400)) + `, 'bench', start FROM gen_chunk ORDER BY i`,
			`INSERT INTO crawl_cycles (id, site, node, started_at, finished_at, status, budget, spent, delay_ms)
				SELECT i, name, 'bench', start, finish, 'done', 20, 20, 2000 FROM gen_chunk ORDER BY i`,
			`INSERT INTO exclusions (site, excluded_at, actor, reason, evidence, source, event_id, verified)
				SELECT name, excluded, 'bench', 'asked by email', '<bench@example>', 'staff', i / 1000, TRUE
				FROM gen_chunk WHERE i % 1000 = 0 ORDER BY i`,
			`INSERT INTO policy_events (id, version, happened_at, kind, site, actor, reason, evidence, source)
				SELECT i / 1000, i / 1000, excluded, 'exclude', name, 'bench', 'asked by email', '<bench@example>', 'staff'
				FROM gen_chunk WHERE i % 1000 = 0 ORDER BY i`,
		}
		if withLog {
			stmts = append(stmts,
				`INSERT INTO requests (id, cycle_id, site, host, origin, url, purpose, node, policy_check,
					delay_ms, sent_at, completed_at, status, bytes, duration_ms, outcome)
					SELECT (c.i - 1) * 21 + 1, c.i, c.name, 'www.' || c.name, c.origin, c.origin || '/robots.txt', 'robots', 'bench', 'allowed (policy v0)',
					2000, t.sent, t.done, 200, `+fmt.Sprint(len(body))+`, 80, 'ok'
					FROM gen_chunk c JOIN gen_times t ON t.slot = c.slot AND t.k = 0 ORDER BY c.i`,
				`INSERT INTO robots_snapshots (id, origin, fetched_at, status, final_url, body, sha256, outcome, request_id)
					SELECT c.i, c.origin, t.done, 200, c.origin || '/robots.txt', X'`+hex.EncodeToString(body)+`', '`+digest+`', 'parsed', (c.i - 1) * 21 + 1
					FROM gen_chunk c JOIN gen_times t ON t.slot = c.slot AND t.k = 0 ORDER BY c.i`,
				`INSERT INTO requests (id, cycle_id, budget_slot, site, host, origin, url, purpose, node, robots_snapshot_id, robots_rule, robots_line,
					policy_check, delay_ms, sent_at, completed_at, status, bytes, duration_ms, outcome)
					SELECT (c.i - 1) * 21 + 1 + t.k, c.i, t.k, c.name, 'www.' || c.name, c.origin, c.origin || '/p/' || t.k || '.html', 'page', 'bench', c.i,
					'Disallow: /private/', 2, 'allowed (policy v0)', 2000, t.sent, t.done, 200, 4096, 80, 'ok'
					FROM gen_chunk c JOIN gen_times t ON t.slot = c.slot AND t.k BETWEEN 1 AND 20 ORDER BY c.i, t.k`,
			)
		}
	}
	for _, q := range setup {
		if err := exec(q); err != nil {
			return err
		}
	}
	for lo := 1; lo <= sites; lo += crawlListChunk {
		hi := min(lo+crawlListChunk-1, sites)
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, q := range stmts {
			q = strings.NewReplacer("{{LO}}", fmt.Sprint(lo), "{{HI}}", fmt.Sprint(hi)).Replace(q)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				tx.Rollback()
				return fmt.Errorf("generate: %w\n%s", err, q)
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if seal {
			if _, err := store.AppendLog(ctx); err != nil {
				return err
			}
		}
	}
	tail := append(indexes, fmt.Sprintf(`UPDATE policy_state SET version = %d`, sites/1000))
	if pg {
		for _, t := range []string{"sites", "crawl_cycles", "requests", "robots_snapshots", "policy_events"} {
			tail = append(tail, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', 'id'), GREATEST((SELECT MAX(id) FROM %s), 1))`, t, t))
		}
	} else {
		// A sampled ANALYZE: a full one reads every index of a 9 GB file.
		tail = append(tail, `DROP TABLE temp.gen_times`, `DROP TABLE temp.gen_chunk`, `PRAGMA analysis_limit = 1000`)
	}
	tail = append(tail, `ANALYZE`)
	for _, q := range tail {
		if err := exec(q); err != nil {
			return err
		}
	}
	return nil
}
