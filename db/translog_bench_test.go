package db_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// BenchmarkLogVerify checks the transparency log of a generated request log
// of 1,000,000 completed requests on SQLite (LOHIBOT_LOG_BENCH_ROWS
// overrides the count) and reports the time of one VerifyLog (the
// integrity rule's work: every leaf recomputed from its row, the tree from
// the leaves) and of the appends that put the rows in the log. The goal:
// under 20 s.
//
//	go test -run '^$' -bench LogVerify -benchtime 1x ./db
func BenchmarkLogVerify(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("LOHIBOT_LOG_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	ctx := context.Background()
	s, err := db.Open(ctx, filepath.Join(b.TempDir(), "log.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	if err := generateRequests(s, n); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d requests in %s", n, time.Since(start).Round(time.Millisecond))
	start, cpuStart := time.Now(), cpuTime()
	size, err := s.AppendLog(ctx)
	if err != nil || size != int64(n) {
		b.Fatalf("AppendLog = %d, %v; want %d", size, err, n)
	}
	appendTime := time.Since(start)
	b.Logf("appended %d leaves in %s (%s of CPU)", size, appendTime.Round(time.Millisecond), (cpuTime() - cpuStart).Round(time.Millisecond))
	for b.Loop() {
		began, cpuBegan := time.Now(), cpuTime()
		rep, err := s.VerifyLog(ctx, func(p db.LogProblem) error {
			b.Fatalf("problem: %+v", p)
			return nil
		})
		if err != nil || rep.Size != int64(n) {
			b.Fatalf("VerifyLog = %+v, %v", rep, err)
		}
		b.ReportMetric(time.Since(began).Seconds(), "s/verify")
		b.ReportMetric((cpuTime() - cpuBegan).Seconds(), "cpu-s/verify")
	}
	b.ReportMetric(appendTime.Seconds()/float64(n)*1e6, "µs/leaf-appended")
}

// generateRequests writes n completed requests, 20 per site, in one
// statement.
func generateRequests(s *db.Store, n int) error {
	return dbtest.Gorm(s).Exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
		INSERT INTO requests (cycle_id, budget_slot, site, host, origin, url, method, purpose, node, attempt, robots_rule, robots_line,
			policy_check, delay_ms, sent_at, completed_at, status, bytes, duration_ms, outcome)
		SELECT x / 20 + 1, x % 20 + 1, 'site' || (x / 20) || '.example', 'www.site' || (x / 20) || '.example',
			'https://www.site' || (x / 20) || '.example', 'https://www.site' || (x / 20) || '.example/page/' || x, 'GET', 'page', 'crawler1', 0,
			'no rule matched', 0, 'allowed (policy v1)', 1000,
			'2026-08-01 12:00:00.123456+00:00', '2026-08-01 12:00:01.234567+00:00', 200, 12345, 111, 'ok'
		FROM c`, n).Error
}

// cpuTime is the process's user and system CPU time so far: on a shared
// machine the wall clock measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
