package audit_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/dbtest"
	"github.com/lohisoft/lohibot/policy/audit"
)

// writeOutsideCycles logs n page requests of n/10 sites outside any crawl
// cycle, in batches: each is a budget violation (no-cycle).
func writeOutsideCycles(t *testing.T, w *logWriter, n int) {
	t.Helper()
	st := 200
	reqs := make([]db.Request, 0, n)
	for i := range n {
		site := fmt.Sprintf("s%04d.example", i/10)
		sent := t0.Add(time.Duration(i%10) * time.Minute)
		c := sent.Add(time.Second)
		reqs = append(reqs, db.Request{Site: site, Host: site, Origin: "https://" + site, URL: fmt.Sprintf("https://%s/p%d", site, i),
			Method: "GET", Purpose: db.PurposePage, SentAt: sent, CompletedAt: &c, Status: &st, Outcome: "ok"})
	}
	if err := w.store.DB.WithContext(w.ctx).CreateInBatches(reqs, 100).Error; err != nil {
		t.Fatal(err)
	}
}

// TestStreamAcrossBatches: a log longer than several read-ahead batches
// (the stream reads one batch while the rules check the one before) is
// checked whole and in order, site by site; and an error from emit stops
// the audit at once, is returned as it is, and leaves no goroutine behind.
func TestStreamAcrossBatches(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		const n = 3500
		writeOutsideCycles(t, w, n)
		opts := &audit.Options{Rules: []string{audit.RuleBudget}}
		_, vs, sum := runAudit(t, w, opts)
		if len(vs) != n || sum.Requests != n || sum.Sites != n/10 {
			t.Fatalf("%d violations over %d requests of %d sites, want %d over %d of %d", len(vs), sum.Requests, sum.Sites, n, n, n/10)
		}
		for i := 1; i < len(vs); i++ {
			a, b := vs[i-1], vs[i]
			if a.Site > b.Site || (a.Site == b.Site && a.Requests[0].SentAt.After(b.Requests[0].SentAt)) {
				t.Fatalf("violation %d (%s, %v) comes after %d (%s, %v)", i, b.Site, b.Requests[0].SentAt, i-1, a.Site, a.Requests[0].SentAt)
			}
		}

		before := runtime.NumGoroutine()
		stop := errors.New("stop")
		calls := 0
		_, err := audit.Run(w.ctx, w.store, opts, func(audit.Violation) error {
			calls++
			if calls == 1500 {
				return stop
			}
			return nil
		})
		if err != stop {
			t.Errorf("Run with emit failing = %v, want the emit's error as it is", err)
		}
		if calls != 1500 {
			t.Errorf("emit called %d times, want 1500 (none after its error)", calls)
		}
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if g := runtime.NumGoroutine(); g > before {
			t.Errorf("%d goroutines after Run, %d before", g, before)
		}
	})
}
