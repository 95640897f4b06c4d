package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// inWrite runs f in a write transaction of the crawler's kind on s: a
// FastConn on SQLite, a PoolTx on PostgreSQL; f's error rolls it back.
func inWrite(t *testing.T, s *db.Store, f func(tx db.WriteTx) error) error {
	t.Helper()
	ctx := context.Background()
	if s.Dialect == db.SQLite {
		path, err := s.SQLiteFile(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.OpenFastConn(path, db.FastOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Begin(); err != nil {
			t.Fatal(err)
		}
		if err := f(c); err != nil {
			c.Rollback()
			return err
		}
		return c.Commit()
	}
	tx, err := s.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// TestWritePath runs the crawler's write-path queries on both engines,
// through both kinds of WriteTx, and checks what they leave in the
// database.
func TestWritePath(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now()
		if err := s.CreateSite(ctx, &db.Site{Name: "a.example", StartURL: "https://a.example/", AddedAt: now, AddedBy: "t"}); err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		const budget = 3
		var cycleID, reqID int64
		must(inWrite(t, s, func(tx db.WriteTx) error {
			if v, err := db.PolicyVersionForWrite(ctx, tx); err != nil || v != 0 {
				return fmt.Errorf("policy version %d, %v; want 0", v, err)
			}
			// Leases.
			if ok, err := db.InsertLease(ctx, tx, "a.example", "c1", now.Add(time.Minute), now); err != nil || !ok {
				return fmt.Errorf("insert lease: %v %v", ok, err)
			}
			if ok, err := db.InsertLease(ctx, tx, "a.example", "c2", now.Add(time.Minute), now); err != nil || ok {
				return fmt.Errorf("insert a held lease: %v %v, want false", ok, err)
			}
			if ok, err := db.RenewLease(ctx, tx, "a.example", "c2", now.Add(time.Hour)); err != nil || ok {
				return fmt.Errorf("renew another's lease: %v %v, want false", ok, err)
			}
			if ok, err := db.ClaimLease(ctx, tx, "a.example", "c2", now.Add(time.Hour)); err != nil || ok {
				return fmt.Errorf("claim a held lease: %v %v, want false", ok, err)
			}
			next := now.Add(5 * time.Second)
			if err := db.ReleaseLease(ctx, tx, "a.example", "c1", now, next); err != nil {
				return err
			}
			l, err := db.ReadLease(ctx, tx, "a.example")
			if err != nil || l.Holder != "" || !l.NextAt.Equal(next) {
				return fmt.Errorf("released lease %+v, %v; want no holder, next_at %v", l, err, next)
			}
			if ok, err := db.ClaimLease(ctx, tx, "a.example", "c2", now.Add(-time.Second)); err != nil || !ok {
				return fmt.Errorf("claim a free lease: %v %v", ok, err)
			}
			if ok, err := db.TakeOverLease(ctx, tx, "a.example", "c3", now.Add(time.Minute), next, "c2", now); err != nil || !ok {
				return fmt.Errorf("take over an expired lease: %v %v", ok, err)
			}
			if err := db.RenewLeases(ctx, tx, "c3", now.Add(2*time.Minute)); err != nil {
				return err
			}
			if l, err := db.ReadLease(ctx, tx, "a.example"); err != nil || l.Holder != "c3" || !l.ExpiresAt.Equal(now.Add(2*time.Minute)) {
				return fmt.Errorf("after take-over and renewal %+v, %v", l, err)
			}
			// Cycles and the budget.
			if _, err := db.LastCycle(ctx, tx, "a.example"); !errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("last cycle of a new site: %v, want ErrNotFound", err)
			}
			cycleID, err = db.InsertCycle(ctx, tx, "a.example", "n1", now, budget, 200)
			if err != nil {
				return err
			}
			for want := 1; want <= budget+1; want++ {
				slot, ok, err := db.ReserveBudgetSlot(ctx, tx, cycleID)
				if err != nil {
					return err
				}
				if want <= budget && (!ok || slot != want) || want > budget && ok {
					return fmt.Errorf("reservation %d: slot %d, %v", want, slot, ok)
				}
			}
			if err := db.SetCycleNode(ctx, tx, cycleID, "n2"); err != nil {
				return err
			}
			if cy, err := db.LastCycle(ctx, tx, "a.example"); err != nil || cy.ID != cycleID || cy.Spent != budget || cy.DelayMS != 200 || cy.Status != db.CycleRunning {
				return fmt.Errorf("last cycle %+v, %v", cy, err)
			}
			// Requests, snapshot, index.
			slot := 1
			r := db.Request{CycleID: &cycleID, BudgetSlot: &slot, Site: "a.example", Host: "a.example", Origin: "https://a.example",
				URL: "https://a.example/", Purpose: db.PurposePage, Node: "n2", PolicyCheck: "allowed", DelayMS: 200, SentAt: now}
			if err := db.InsertRequest(ctx, tx, &r); err != nil || r.ID == 0 {
				return fmt.Errorf("insert request: id %d, %v", r.ID, err)
			}
			reqID = r.ID
			done, status := now.Add(time.Second), 200
			if err := db.CompleteRequest(ctx, tx, &db.Request{ID: reqID, CompletedAt: &done, Status: &status, Bytes: 10, Outcome: "ok", ETag: `"e"`}); err != nil {
				return err
			}
			open := db.Request{Site: "a.example", Host: "a.example", Origin: "https://a.example", URL: "https://a.example/x",
				Purpose: db.PurposePage, Node: "n2", SentAt: now}
			if err := db.InsertRequest(ctx, tx, &open); err != nil {
				return err
			}
			if n, err := db.AbandonSiteRequests(ctx, tx, "a.example", "c3", "abandoned", "why", now.Add(time.Hour)); err != nil || n != 1 {
				return fmt.Errorf("abandon: %d, %v; want the one open request", n, err)
			}
			if n, err := db.AbandonHostRequests(ctx, tx, "a.example", "abandoned", "why", now.Add(time.Hour)); err != nil || n != 0 {
				return fmt.Errorf("abandon again: %d, %v; want 0", n, err)
			}
			// A request reserved ahead and withdrawn: completed, not sent.
			wd := db.Request{Site: "a.example", Host: "a.example", Origin: "https://a.example", URL: "https://a.example/w",
				Purpose: db.PurposePage, Node: "n2", SentAt: now}
			if err := db.InsertRequest(ctx, tx, &wd); err != nil {
				return err
			}
			if err := db.WithdrawRequest(ctx, tx, wd.ID, now, "not sent"); err != nil {
				return err
			}
			var outcome string
			if err := tx.QueryRow(ctx, `SELECT outcome FROM requests WHERE id = ? AND completed_at IS NOT NULL`, wd.ID).Scan(&outcome); err != nil || outcome != db.OutcomeWithdrawn {
				return fmt.Errorf("withdrawn request: outcome %q, %v", outcome, err)
			}
			// A page request logged with the cycle's last budget slot and
			// never sent gives the slot back: the cycle still gets its
			// whole budget of requests that were sent.
			last := budget
			wdp := db.Request{CycleID: &cycleID, BudgetSlot: &last, Site: "a.example", Host: "a.example", Origin: "https://a.example",
				URL: "https://a.example/p", Purpose: db.PurposePage, Node: "n2", SentAt: now}
			if err := db.InsertRequest(ctx, tx, &wdp); err != nil {
				return err
			}
			if err := db.WithdrawRequest(ctx, tx, wdp.ID, now, "not sent"); err != nil {
				return err
			}
			var gone bool
			if err := tx.QueryRow(ctx, `SELECT budget_slot IS NULL FROM requests WHERE id = ?`, wdp.ID).Scan(&gone); err != nil || !gone {
				return fmt.Errorf("withdrawn page request keeps its budget slot (%v, %v); want none", !gone, err)
			}
			if cy, err := db.LastCycle(ctx, tx, "a.example"); err != nil || cy.Spent != budget-1 {
				return fmt.Errorf("cycle after a withdrawn page request: %+v, %v; want spent %d", cy, err, budget-1)
			}
			slot, ok, err := db.ReserveBudgetSlot(ctx, tx, cycleID)
			if err != nil || !ok || slot != budget {
				return fmt.Errorf("slot given back: reserved again %d, %v, %v; want %d", slot, ok, err, budget)
			}
			again := db.Request{CycleID: &cycleID, BudgetSlot: &slot, Site: "a.example", Host: "a.example", Origin: "https://a.example",
				URL: "https://a.example/p", Purpose: db.PurposePage, Node: "n2", SentAt: now}
			if err := db.InsertRequest(ctx, tx, &again); err != nil {
				return fmt.Errorf("request on the slot given back: %w", err)
			}
			if err := db.WithdrawRequest(ctx, tx, again.ID, now, "not sent"); err != nil {
				return err
			}
			sn := &db.RobotsSnapshot{Origin: "https://a.example", FetchedAt: now, Status: 200, Body: []byte("User-agent: *"), Outcome: db.RobotsParsed, RequestID: &reqID}
			if err := db.InsertRobotsSnapshot(ctx, tx, sn); err != nil || sn.ID == 0 {
				return fmt.Errorf("snapshot: id %d, %v", sn.ID, err)
			}
			for _, u := range []string{"https://a.example/", "https://a.example/gone"} {
				if err := db.UpsertPage(ctx, tx, &db.Page{URL: u, Site: "a.example", Title: "old", Status: 200, FetchedAt: now, RequestID: &reqID}); err != nil {
					return err
				}
			}
			if err := db.UpsertPage(ctx, tx, &db.Page{URL: "https://a.example/", Site: "a.example", Title: "new", Status: 200, FetchedAt: now, RequestID: &reqID}); err != nil {
				return err
			}
			if err := db.DeletePage(ctx, tx, "https://a.example/gone"); err != nil {
				return err
			}
			var anchors []db.Anchor
			for i := range 120 { // three inserts of at most 50
				anchors = append(anchors, db.Anchor{FromURL: "https://b.example/", ToURL: fmt.Sprintf("https://a.example/%d", i%110),
					ToSite: "a.example", AnchorText: fmt.Sprintf("t%d", i%110), SeenAt: now, RequestID: &reqID})
			}
			if err := db.UpsertAnchors(ctx, tx, anchors); err != nil {
				return err
			}
			if err := db.DeleteAnchorsTo(ctx, tx, "https://a.example/0"); err != nil {
				return err
			}
			return db.EndCycle(ctx, tx, cycleID, "a.example", db.CycleDone, "done", now.Add(time.Minute))
		}))
		reqs, err := s.SiteRequests(ctx, "a.example")
		if err != nil || len(reqs) != 5 {
			t.Fatalf("requests %d, %v; want 5 (three withdrawn)", len(reqs), err)
		}
		if r := reqs[0]; r.ID != reqID || r.Status == nil || *r.Status != 200 || r.ETag != `"e"` || r.CompletedAt == nil {
			t.Errorf("completed request %+v", r)
		}
		if r := reqs[1]; r.Outcome != "abandoned" || r.CompletedAt == nil {
			t.Errorf("abandoned request %+v", r)
		}
		pages, err := s.SitePages(ctx, "a.example")
		if err != nil || len(pages) != 1 || pages[0].Title != "new" {
			t.Errorf("pages %+v, %v; want the one upserted page, title new", pages, err)
		}
		if a, err := s.AnchorsTo(ctx, "a.example"); err != nil || len(a) != 109 {
			t.Errorf("%d anchors, %v; want 109 (110 distinct, one deleted)", len(a), err)
		}
		cycles, err := s.SiteCycles(ctx, "a.example")
		if err != nil || len(cycles) != 1 || cycles[0].Status != db.CycleDone || cycles[0].Node != "n2" || cycles[0].FinishedAt == nil {
			t.Errorf("cycles %+v, %v", cycles, err)
		}
		var due time.Time
		if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT due_since FROM sites WHERE name = 'a.example'`).Scan(&due); err != nil || !due.Equal(now) {
			t.Errorf("site due_since %v, %v; want the cycle's start %v", due, err, now)
		}
		// A write transaction's error leaves nothing behind.
		boom := errors.New("boom")
		if err := inWrite(t, s, func(tx db.WriteTx) error {
			if err := db.ReleaseLeases(ctx, tx, "c3", now); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("rolled back: %v", err)
		}
		exp, held, err := s.LeaseExpiry(ctx, "a.example")
		if err != nil || !held || !exp.Equal(now.Add(2*time.Minute)) {
			t.Errorf("lease after a rolled-back release: held %v until %v, %v", held, exp, err)
		}
		if empty, err := s.Empty(ctx); err != nil || empty {
			t.Errorf("Empty = %v, %v; want false", empty, err)
		}
		var sent []int64
		if err := s.RequestsSent(ctx, now.Add(-time.Second), now.Add(time.Second), func(r db.SentRequest) error {
			sent = append(sent, r.ID)
			return nil
		}); err != nil || len(sent) != 2 {
			t.Errorf("requests sent: %v, %v; want 2 (not the withdrawn one)", sent, err)
		}
	})
}

// TestSavepoints checks the group commit's savepoints on both kinds of
// WriteTx: what a caller did is undone by RollbackToSavepoint, what the
// group did before stays.
func TestSavepoints(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now()
		insert := func(tx db.WriteTx, key string) error {
			_, err := db.InsertLease(ctx, tx, key, "h", now, now)
			return err
		}
		if s.Dialect == db.SQLite {
			path, err := s.SQLiteFile(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c, err := db.OpenFastConn(path, db.FastOptions{SyncLater: true, ManualCheckpoints: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, step := range []func() error{
				c.Begin, func() error { return insert(c, "kept") },
				c.Savepoint, func() error { return insert(c, "undone") }, c.RollbackToSavepoint, c.ReleaseSavepoint,
				c.Savepoint, func() error { return insert(c, "released") }, c.ReleaseSavepoint,
				c.Commit,
			} {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Checkpoint(); err != nil {
				t.Errorf("checkpoint: %v", err)
			}
		} else {
			tx, err := s.BeginWrite(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []func() error{
				func() error { return insert(tx, "kept") },
				func() error { return tx.Savepoint(ctx) }, func() error { return insert(tx, "undone") },
				func() error { return tx.RollbackToSavepoint(ctx) },
				func() error { return tx.Savepoint(ctx) }, func() error { return insert(tx, "released") },
				tx.Commit,
			} {
				if err := step(); err != nil {
					tx.Rollback()
					t.Fatal(err)
				}
			}
		}
		for key, want := range map[string]bool{"kept": true, "undone": false, "released": true} {
			if _, held, err := s.LeaseExpiry(ctx, key); err != nil || held != want {
				t.Errorf("lease %s: held %v, %v; want %v", key, held, err, want)
			}
		}
	})
}
