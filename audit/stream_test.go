package audit_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
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
	if err := dbtest.Gorm(w.store).WithContext(w.ctx).CreateInBatches(reqs, 100).Error; err != nil {
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

// TestBackgroundRulesReportAfterStream: the signatures and integrity rules
// run beside the stream, but their violations come after the stream's,
// signatures then integrity, all of them, even when more wait than the
// backlog holds.
func TestBackgroundRulesReportAfterStream(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		w.create(&db.SigningKey{KeyID: "key-a", JWK: "{}", NotBefore: at(-time.Hour), RecordedAt: at(-time.Hour)})
		w.create(&db.SigningRun{Node: "n1", KeyID: "key-a", StartedAt: at(0)})
		const n = 300 // unsigned requests of a signing run, outside any cycle
		st := 200
		reqs := make([]db.Request, 0, n)
		for i := range n {
			sent := at(time.Duration(i) * time.Minute)
			c := sent.Add(time.Second)
			reqs = append(reqs, db.Request{Site: "example.org", Host: "www.example.org", Origin: "https://www.example.org",
				URL: fmt.Sprintf("https://www.example.org/p%d", i), Method: "GET", Purpose: db.PurposePage, Node: "n1",
				SentAt: sent, CompletedAt: &c, Status: &st, Outcome: "ok"})
		}
		if err := dbtest.Gorm(w.store).WithContext(w.ctx).CreateInBatches(reqs, 100).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := w.store.AppendLog(w.ctx); err != nil {
			t.Fatal(err)
		}
		w.exec("UPDATE requests SET url = 'https://www.example.org/edited' WHERE id = ?", reqs[7].ID)

		_, vs, sum := runAudit(t, w, nil)
		phase := func(rule string) int {
			switch rule {
			case audit.RuleSignatures:
				return 1
			case audit.RuleIntegrity:
				return 2
			}
			return 0
		}
		count := map[int]int{}
		for i, v := range vs {
			count[phase(v.Rule)]++
			if i > 0 && phase(v.Rule) < phase(vs[i-1].Rule) {
				t.Fatalf("violation %d (%s) comes after one of %s", i, v.Rule, vs[i-1].Rule)
			}
		}
		if count[0] == 0 || count[1] != n || count[2] != 1 {
			t.Errorf("%d stream, %d signatures, %d integrity violations; want some, %d and 1", count[0], count[1], count[2], n)
		}
		if int64(len(vs)) != sum.Violations() {
			t.Errorf("%d violations reported, the summary counts %d", len(vs), sum.Violations())
		}
	})
}
