package translog_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/translog"
)

// benchLog returns a store on SQLite whose log has n leaves (20,000,000
// unless LOHIBOT_LOG_BENCH_LEAVES says otherwise), built synthetically: its
// stored-hash table is full (random hashes, one statement), and its last
// leaves are the records of one site (an exclusion event, 25 requests, a
// robots.txt snapshot), the only rows of the evidence tables.
// LOHIBOT_LOG_BENCH_DB keeps the file between runs.
func benchLog(b *testing.B) (*db.Store, int64) {
	b.Helper()
	n := int64(20_000_000)
	if s := os.Getenv("LOHIBOT_LOG_BENCH_LEAVES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 100 {
			b.Fatalf("LOHIBOT_LOG_BENCH_LEAVES: %q", s)
		}
		n = v
	}
	ctx := context.Background()
	path := os.Getenv("LOHIBOT_LOG_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "log.db")
	}
	_, statErr := os.Stat(path)
	s, err := db.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if statErr == nil {
		size, err := s.LogSize(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("reusing %s: %d leaves", path, size)
		return s, size
	}
	start := time.Now()
	now := db.Now().Add(-time.Hour)
	stmts := []struct {
		q    string
		args []any
	}{
		{`WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
			INSERT INTO log_hashes (id, hash) SELECT x, randomblob(32) FROM c`, []any{tlog.StoredHashCount(n) - 1}},
		{`INSERT INTO policy_events (id, version, happened_at, kind, site, actor, reason, source) VALUES (1, 1, ?, 'exclude', 'shop.example', 'w@shop.example', 'email', 'mail')`, []any{now}},
		{`INSERT INTO robots_snapshots (id, origin, fetched_at, status, body, sha256, outcome) VALUES (1, 'https://www.shop.example', ?, 200, 'User-agent: *', 'x', 'parsed')`, []any{now}},
		{`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 25)
			INSERT INTO requests (id, site, host, origin, url, purpose, sent_at, completed_at, status, outcome)
			SELECT x, 'shop.example', 'www.shop.example', 'https://www.shop.example', 'https://www.shop.example/p' || x, 'page', ?, ?, 200, 'ok' FROM c`, []any{now, now}},
		{`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 25)
			INSERT INTO log_leaves (idx, tbl, row_id, salt) SELECT ? + x, 'requests', x, randomblob(16) FROM c`, []any{n - 28}},
		{`INSERT INTO log_leaves (idx, tbl, row_id, salt) VALUES (?, 'robots_snapshots', 1, randomblob(16)), (?, 'policy_events', 1, randomblob(16))`, []any{n - 2, n - 1}},
		{`INSERT INTO log_cursor (tbl, hw, pending) VALUES ('requests', 25, ''), ('policy_events', 1, ''), ('robots_snapshots', 1, ''), ('mail_messages', 0, '')`, nil},
	}
	for _, st := range stmts {
		if err := dbtest.Gorm(s).Exec(st.q, st.args...).Error; err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built a log of %d leaves in %s", n, time.Since(start).Round(time.Millisecond))
	return s, n
}

func benchKey(b *testing.B) *translog.Key {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	k, err := translog.NewKey(priv, translog.DefaultOrigin)
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkLogAt20M measures, on a log of 20,000,000 leaves on SQLite,
// what 'log prove SITE' does (open and check the checkpoint, prove the
// site's 27 records) and what 'log checkpoint' does (append 100 new
// records, sign). The goals: under 100 ms and under 1 s.
//
//	go test -run '^$' -bench LogAt20M -benchtime 10x ./translog
func BenchmarkLogAt20M(b *testing.B) {
	s, n := benchLog(b)
	ctx := context.Background()
	key := benchKey(b)
	l := translog.New(s, "")
	b.Run("prove", func(b *testing.B) {
		msg, c, err := l.Checkpoint(ctx, key)
		if err != nil || c.Size < n {
			b.Fatalf("Checkpoint = %+v, %v", c, err)
		}
		for b.Loop() {
			c, err := l.Open(ctx, msg)
			if err != nil {
				b.Fatal(err)
			}
			ps, err := l.ProveSite(ctx, "shop.example", c.Size)
			if err != nil || len(ps) != 27 {
				b.Fatalf("ProveSite = %d proofs, %v; want 27", len(ps), err)
			}
		}
	})
	b.Run("checkpoint", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if err := dbtest.Gorm(s).Exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100)
				INSERT INTO requests (site, host, origin, url, purpose, sent_at, completed_at, status, outcome)
				SELECT 'other.example', 'other.example', 'https://other.example', 'https://other.example/p' || x, 'page', ?, ?, 200, 'ok' FROM c`,
				db.Now(), db.Now()).Error; err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, _, err := l.Checkpoint(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
	})
}
