package audit_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/translog"
)

// TestIntegrityReportedLast: the integrity rule runs alongside the others
// but its violations come after theirs, all of them (more than it holds
// back at once), in id order, naming the table and row; an error from emit
// stops the run and is returned; bytes that are no checkpoint fail before
// anything is reported.
func TestIntegrityReportedLast(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		const n = 300
		var ids []int64
		for i := range n {
			ids = append(ids, w.request(0, db.PurposePage, fmt.Sprintf("https://www.example.org/p%d", i),
				at(time.Duration(i)*time.Minute), noCycle()))
		}
		if _, err := w.store.AppendLog(w.ctx); err != nil {
			t.Fatal(err)
		}
		w.exec("UPDATE requests SET outcome = 'tampered'")

		opts := &audit.Options{Rules: []string{audit.RuleRobots, audit.RuleIntegrity}}
		_, vs, sum := runAudit(t, w, opts)
		if len(vs) != 2*n {
			t.Fatalf("%d violations, want %d robots then %d integrity", len(vs), n, n)
		}
		for i, v := range vs[:n] {
			if v.Rule != audit.RuleRobots || v.Requests[0].ID != ids[i] {
				t.Fatalf("violation %d = %s %s (request %v), want robots for request %d", i, v.Rule, v.Check, v.Requests, ids[i])
			}
		}
		for i, v := range vs[n:] {
			if v.Rule != audit.RuleIntegrity || v.Check != db.LogChanged || v.Table != "requests" || v.RowID != ids[i] {
				t.Fatalf("violation %d = %s %s %s row %d, want integrity %s requests row %d", n+i, v.Rule, v.Check, v.Table, v.RowID, db.LogChanged, ids[i])
			}
		}
		if got := sum.Rules[1]; got.Rule != audit.RuleIntegrity || got.Violations != n || got.Checked != n {
			t.Errorf("integrity summary = %+v, want %d checked, %d violations", got, n, n)
		}

		errStop := errors.New("stop")
		seen := 0
		_, err := audit.Run(w.ctx, w.store, opts, func(v audit.Violation) error {
			seen++
			if v.Rule == audit.RuleIntegrity {
				return errStop
			}
			return nil
		})
		if !errors.Is(err, errStop) || seen != n+1 {
			t.Errorf("Run with emit failing at the first integrity violation = %v after %d violations, want %v after %d", err, seen, errStop, n+1)
		}

		seen = 0
		_, err = audit.Run(w.ctx, w.store, &audit.Options{Checkpoint: []byte("00ff\n")}, func(audit.Violation) error { seen++; return nil })
		if !errors.Is(err, translog.ErrCheckpoint) || seen != 0 {
			t.Errorf("Run with no checkpoint = %v after %d violations, want %v before any", err, seen, translog.ErrCheckpoint)
		}
	})
}
