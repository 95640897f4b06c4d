package audit_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// BenchmarkAuditMillion audits a generated log of 1,000,000 requests on
// SQLite (LOHIBOT_AUDIT_BENCH_ROWS overrides the count) and reports the time
// of one whole audit, the process's peak resident memory during it (VmHWM,
// reset before the audit) and the peak Go heap. The goal: under 20 s and
// under 300 MB.
//
//	go test -run '^$' -bench AuditMillion -benchtime 1x ./audit
func BenchmarkAuditMillion(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("LOHIBOT_AUDIT_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("LOHIBOT_AUDIT_BENCH_ROWS: %v", err)
		}
		n = v
	}
	ctx := context.Background()
	// LOHIBOT_AUDIT_BENCH_DB keeps the generated database between runs.
	path := os.Getenv("LOHIBOT_AUDIT_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "audit.db")
	}
	_, statErr := os.Stat(path)
	store, err := db.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	var rows int
	if statErr == nil {
		if err := dbtest.SQL(store).QueryRowContext(ctx, "SELECT COUNT(*) FROM requests").Scan(&rows); err != nil {
			b.Fatal(err)
		}
		b.Logf("reusing %s: %d request rows", path, rows)
	} else {
		start := time.Now()
		if rows, err = generateLog(ctx, store, n); err != nil {
			b.Fatal(err)
		}
		b.Logf("generated %d request rows in %s", rows, time.Since(start).Round(time.Millisecond))
	}
	// The rows are sealed, as a crawl seals them, so the audit's integrity
	// rule recomputes the whole chain.
	start := time.Now()
	if _, err := store.AppendLog(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("sealed in %s", time.Since(start).Round(time.Millisecond))

	for b.Loop() {
		// Return the heap the setup freed (the generator's and Seal's) to
		// the system before the peak is reset, so that VmHWM measures the
		// audit, not memory the runtime has yet to give back.
		debug.FreeOSMemory()
		resetPeakRSS()
		var (
			peakHeap uint64
			stop     = make(chan struct{})
			wg       sync.WaitGroup
		)
		wg.Go(func() {
			// runtime/metrics reads without stopping the world, unlike
			// runtime.ReadMemStats.
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			for {
				metrics.Read(sample)
				peakHeap = max(peakHeap, sample[0].Value.Uint64())
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		})
		began, cpuBegan := time.Now(), cpuTime()
		violations := 0
		sum, err := audit.Run(ctx, store, nil, func(v audit.Violation) error {
			violations++
			return nil
		})
		elapsed, cpu := time.Since(began), cpuTime()-cpuBegan
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		if violations != 0 {
			b.Fatalf("the generated log has %d violations, want 0 (%+v)", violations, sum.Rules)
		}
		hwm := peakRSS()
		b.ReportMetric(elapsed.Seconds(), "s/audit")
		b.ReportMetric(cpu.Seconds(), "cpu-s/audit")
		b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
		b.ReportMetric(float64(hwm)/(1<<20), "MB-VmHWM")
		b.ReportMetric(float64(peakHeap)/(1<<20), "MB-heap-peak")
		b.Logf("audited %d requests in %s (CPU %s): peak RSS %d MB, peak Go heap %d MB; %+v",
			rows, elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond), hwm>>20, peakHeap>>20, sum.Rules)
	}
}

// cpuTime is the CPU time (user and system) this process has used: on a
// machine shared with other work it measures the audit's cost better than
// the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS resets the kernel's VmHWM of this process (Linux 4.0+).
func resetPeakRSS() {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS reads VmHWM from /proc/self/status, in bytes.
func peakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// generateLog writes a clean log of about n requests: sites of two cycles a
// week apart, each cycle one robots.txt fetch and 19 page requests 3 s
// apart, one of them marked noindex; every hundredth site is excluded after
// its last cycle. It uses batched inserts in one transaction.
func generateLog(ctx context.Context, store *db.Store, n int) (int, error) {
	const (
		perCycle = 20
		cycles   = 2
		batch    = 40 // rows per INSERT: 40 × 19 columns stays under SQLite's 999 parameters
	)
	body := []byte("User-agent: *\nDisallow: /private/\n\nUser-agent: LohiSoftBot\nDisallow: /private/\nCrawl-delay: 1\n")
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	sites := max(1, n/(perCycle*cycles))
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

	tx, err := dbtest.SQL(store).BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	const reqCols = "(id, cycle_id, budget_slot, site, host, origin, url, method, purpose, attempt, robots_snapshot_id, robots_rule, robots_line, policy_check, delay_ms, sent_at, completed_at, status, bytes, outcome)"
	var (
		pending []any
		nrows   int
	)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		k := len(pending) / 20
		ph := strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?),", k), ",")
		_, err := tx.ExecContext(ctx, "INSERT INTO requests "+reqCols+" VALUES "+ph, pending...)
		pending = pending[:0]
		return err
	}
	snapStmt, err := tx.PrepareContext(ctx, "INSERT INTO robots_snapshots (id, origin, fetched_at, status, final_url, body, sha256, outcome, request_id) VALUES (?,?,?,?,?,?,?,?,?)")
	if err != nil {
		return 0, err
	}
	cycleStmt, err := tx.PrepareContext(ctx, "INSERT INTO crawl_cycles (id, site, started_at, finished_at, status, budget, spent, delay_ms) VALUES (?,?,?,?,?,?,?,?)")
	if err != nil {
		return 0, err
	}
	eventStmt, err := tx.PrepareContext(ctx, "INSERT INTO policy_events (version, happened_at, kind, site, actor) VALUES (?,?,?,?,?)")
	if err != nil {
		return 0, err
	}
	var reqID, snapID, cycleID, version int64
	for s := range sites {
		site := fmt.Sprintf("s%07d.com", s)
		host := "www." + site
		origin := "https://" + host
		// Spread the sites over time so the hosts interleave.
		siteStart := base.Add(time.Duration(s%5000) * time.Minute)
		for c := range cycles {
			cycleID++
			start := siteStart.Add(time.Duration(c) * 7 * 24 * time.Hour)
			finished := start.Add(time.Duration(perCycle*3+10) * time.Second)
			if _, err := cycleStmt.ExecContext(ctx, cycleID, site, start, finished, db.CycleDone, 20, perCycle-1, 1000); err != nil {
				return 0, err
			}
			reqID++
			robotsReq := reqID
			pending = append(pending, reqID, cycleID, nil, site, host, origin, origin+"/robots.txt", "GET", db.PurposeRobots, 0,
				nil, "", 0, "allowed (policy v0)", 1000, start, start.Add(100*time.Millisecond), 200, len(body), "ok")
			nrows++
			snapID++
			if _, err := snapStmt.ExecContext(ctx, snapID, origin, start.Add(100*time.Millisecond), 200, origin+"/robots.txt", body, hash, db.RobotsParsed, robotsReq); err != nil {
				return 0, err
			}
			for p := 1; p < perCycle; p++ {
				reqID++
				sent := start.Add(time.Duration(p*3) * time.Second)
				out := "ok"
				if p == 7 {
					out = "noindex"
				}
				pending = append(pending, reqID, cycleID, p, site, host, origin, fmt.Sprintf("%s/page/%d.html", origin, p), "GET", db.PurposePage, 0,
					snapID, "Disallow: /private/", 5, "allowed (policy v0)", 1000, sent, sent.Add(200*time.Millisecond), 200, 5000, out)
				nrows++
				if len(pending)/20 >= batch {
					if err := flush(); err != nil {
						return 0, err
					}
				}
			}
		}
		if s%100 == 99 {
			version++
			if _, err := eventStmt.ExecContext(ctx, version, siteStart.Add(30*24*time.Hour), db.EventExclude, site, "bench"); err != nil {
				return 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE policy_state SET version = ?", version); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return nrows, nil
}
