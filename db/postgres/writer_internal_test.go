package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/internal/writeq"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// budget is the tests' cycle budget.
const budget = 20

// TestGroupRefusals checks the PostgreSQL group commit, where a
// reservation (one statement) and a completion (which never refuses) run
// without a savepoint, in a transaction or in a pipeline: in one group, a
// reservation refused for each reason (a stale policy version, a lease held
// by another crawler, a spent budget) writes nothing and gets its own
// answer, while the reservations and the completion beside it commit; and a
// caller failing with a database error fails alone (its group is run again
// caller by caller), the others of its group commit.
func TestGroupRefusals(t *testing.T) {
	for _, pipelined := range []bool{false, true} {
		name := "transaction"
		if pipelined {
			name = "pipeline"
		}
		t.Run(name, func(t *testing.T) { testGroupRefusals(t, pipelined) })
	}
}

// reservation is a test's reservation and the refusal it was answered.
type reservation struct {
	res     *db.Reservation
	refusal db.Refusal
	op      *writeq.Op
}

func testGroupRefusals(t *testing.T, pipelined bool) {
	ctx := context.Background()
	s := dbtest.Open(t, "postgres")
	w := newWriter(s, db.WriterOptions{})
	const holder = "t/1/x"
	now := db.Now()
	expires := now.Add(time.Minute)
	var open, spent int64
	err := w.Lease(ctx, func(tx db.WriteTx) error {
		for host, h := range map[string]string{"a.test": holder, "b.test": "other", "c.test": holder, "d.test": holder} {
			if _, err := db.InsertLease(ctx, tx, host, h, expires, now); err != nil {
				return err
			}
		}
		var err error
		if open, err = db.InsertCycle(ctx, tx, "a.test", "t", now, budget, 0); err != nil {
			return err
		}
		spent, err = db.InsertCycle(ctx, tx, "c.test", "t", now, 0, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	version, err := db.PolicyVersionForWrite(ctx, s.AutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	reserve := func(host string, cycle *int64, purpose string, version int64) *reservation {
		r := &reservation{res: &db.Reservation{Request: &db.Request{CycleID: cycle, Site: host, Host: host, Origin: "http://" + host,
			URL: "http://" + host + "/", Purpose: purpose, Node: "t", SentAt: now}, Version: version, Holder: holder,
			LeaseExpires: now.Add(2 * time.Minute), Budgeted: purpose == db.PurposePage}}
		r.op = reserveOp(ctx, r.res, &r.refusal)
		r.op.Ctx, r.op.Done = ctx, make(chan error, 1)
		if !pipelined {
			r.op.Pipe = nil
		}
		return r
	}
	op := func(f db.WriteFunc, noSavepoint bool) *writeq.Op {
		return &writeq.Op{Ctx: ctx, F: f, NoSavepoint: noSavepoint, Done: make(chan error, 1)}
	}

	// A group that commits, with a refusal of each kind in it.
	first := reserve("a.test", &open, db.PurposePage, version)
	if err := w.commit(ctx, []*writeq.Op{first.op}); err != nil {
		t.Fatal(err)
	}
	if err := <-first.op.Done; err != nil {
		t.Fatal(err)
	}
	status := 200
	fin := &db.Completion{Request: &db.Request{ID: first.res.Request.ID, CompletedAt: &now, Status: &status, Outcome: "ok"},
		Page: &db.Page{URL: first.res.Request.URL, Site: "a.test", Title: "first", Status: 200, FetchedAt: now, RequestID: &first.res.Request.ID}}
	completion := op(func(tx db.WriteTx) error { return db.FinishRequest(ctx, tx, fin) }, true)
	if pipelined {
		completion.Pipe = func(p *db.Pipeline) func() error {
			p.Finish(fin)
			p.Anchors([]db.Anchor{{FromURL: first.res.Request.URL, ToURL: "http://b.test/", ToSite: "b.test", AnchorText: "b", SeenAt: now, RequestID: &first.res.Request.ID}})
			return func() error { return nil }
		}
	}
	okPage, okRobots := reserve("a.test", &open, db.PurposePage, version), reserve("a.test", &open, db.PurposeRobots, version)
	rs := []*reservation{okPage, reserve("d.test", &open, db.PurposePage, version+1), reserve("b.test", &open, db.PurposePage, version),
		reserve("c.test", &spent, db.PurposePage, version)}
	group := []*writeq.Op{rs[0].op, rs[1].op, rs[2].op, rs[3].op, completion, okRobots.op}
	if err := w.commit(ctx, group); err != nil {
		t.Fatalf("group: %v", err)
	}
	for i, want := range []db.Refusal{db.Reserved, db.RefusedStale, db.RefusedLease, db.RefusedBudget} {
		if err := <-rs[i].op.Done; (err == nil) != (want == db.Reserved) || rs[i].refusal != want {
			t.Errorf("reservation %d: %v, refusal %d; want %d", i, err, rs[i].refusal, want)
		}
	}
	if err := errors.Join(<-completion.Done, <-okRobots.op.Done); err != nil {
		t.Errorf("completion, robots.txt: %v", err)
	}
	reqs, err := s.SiteRequests(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if slot := okPage.res.Request.BudgetSlot; len(reqs) != 3 || slot == nil || *slot != 2 || okRobots.res.Request.ID == 0 || reqs[0].CompletedAt == nil {
		t.Errorf("requests of a.test: %d, slot %v, robots.txt id %d, first completed %v; want 3, slot 2, an id, completed",
			len(reqs), slot, okRobots.res.Request.ID, reqs[0].CompletedAt)
	}
	for _, host := range []string{"b.test", "c.test", "d.test"} {
		if reqs, _ := s.SiteRequests(ctx, host); len(reqs) != 0 {
			t.Errorf("%s: %d requests logged by a refused reservation", host, len(reqs))
		}
	}
	err = w.Lease(ctx, func(tx db.WriteTx) error {
		for _, host := range []string{"b.test", "c.test", "d.test"} {
			l, err := db.ReadLease(ctx, tx, host)
			if err != nil {
				return err
			}
			if !l.ExpiresAt.Equal(expires) {
				t.Errorf("lease of %s expires at %v, want %v (renewed by a refused reservation)", host, l.ExpiresAt, expires)
			}
		}
		cy, err := db.LastCycle(ctx, tx, "c.test")
		if err == nil && cy.Spent != 0 {
			t.Errorf("spent cycle: spent %d, want 0", cy.Spent)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// A group with a caller failing with a database error (a second running
	// cycle of a site; in a pipeline, a NUL byte in a URL): the others
	// still commit.
	queue, none := make(chan *writeq.Op, 8), make(chan *writeq.Op)
	a, b := reserve("a.test", &open, db.PurposePage, version), reserve("a.test", &open, db.PurposePage, version)
	failing := op(func(tx db.WriteTx) error {
		_, err := db.InsertCycle(ctx, tx, "a.test", "t", now, budget, 0)
		return err
	}, false)
	if pipelined {
		bad := reserve("a.test", &open, db.PurposePage, version)
		bad.res.Request.URL += "\x00"
		failing = bad.op
	}
	group = []*writeq.Op{a.op, failing, b.op}
	for _, o := range group {
		queue <- o
	}
	gctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		commitGroups(gctx, queue, none, maxGroup, func(ops []*writeq.Op) error { return w.commit(gctx, ops) })
	}()
	for i, o := range group {
		if err := <-o.Done; (err == nil) != (i != 1) {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	cancel()
	<-stopped
	if sa, sb := a.res.Request.BudgetSlot, b.res.Request.BudgetSlot; sa == nil || sb == nil || *sa != 3 || *sb != 4 {
		t.Errorf("slots %v, %v; want 3, 4", sa, sb)
	}
	if reqs, err := s.SiteRequests(ctx, "a.test"); err != nil || len(reqs) != 5 {
		t.Errorf("requests of a.test: %d, %v; want 5", len(reqs), err)
	}
}

// TestCommitGroupsReservationsFirst checks that a group takes every
// reservation waiting before the other writes: with more of both queued
// than a group holds, the first group is all reservations.
func TestCommitGroupsReservationsFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, writes := make(chan *writeq.Op, 8), make(chan *writeq.Op, 8)
	op := func(name string) *writeq.Op {
		return &writeq.Op{Ctx: ctx, F: func(db.WriteTx) error { return errors.New(name) }, Done: make(chan error, 1)}
	}
	for range 6 {
		writes <- op("completion")
	}
	for range 6 {
		first <- op("reservation")
	}
	groups := make(chan []string, 8)
	go commitGroups(ctx, first, writes, 4, func(ops []*writeq.Op) error {
		var names []string
		for _, o := range ops {
			names = append(names, o.F(nil).Error())
			o.Done <- nil
		}
		groups <- names
		return nil
	})
	var got [][]string
	for len(got) < 3 {
		got = append(got, <-groups)
	}
	want := [][]string{
		{"reservation", "reservation", "reservation", "reservation"},
		{"reservation", "reservation", "completion", "completion"},
		{"completion", "completion", "completion", "completion"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("groups = %v, want %v", got, want)
	}
}

// leasedCycle leases host a.test to holder and opens a cycle of it at now
// through w, and returns the cycle and the policy version a reservation
// names.
func leasedCycle(t *testing.T, w *Writer, s *db.Store, holder string, now time.Time) (cycle, version int64) {
	t.Helper()
	ctx := context.Background()
	err := w.Lease(ctx, func(tx db.WriteTx) error {
		if _, err := db.InsertLease(ctx, tx, "a.test", holder, now.Add(time.Minute), now); err != nil {
			return err
		}
		var err error
		cycle, err = db.InsertCycle(ctx, tx, "a.test", "t", now, budget, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if version, err = db.PolicyVersionForWrite(ctx, s.AutoCommit()); err != nil {
		t.Fatal(err)
	}
	return cycle, version
}

// TestCompletionsPipelined checks that completions go in a pipeline, a
// robots.txt snapshot's (whose id is read back) and a page's taken out of
// the index included: in one group with a reservation, they commit in one
// pipeline, the snapshot's id is filled in, the page and the link texts to
// it are gone.
func TestCompletionsPipelined(t *testing.T) {
	s := dbtest.Open(t, "postgres")
	ctx := context.Background()
	w := NewWriter(ctx, s, db.WriterOptions{})
	defer w.Close()
	const holder = "t/1/x"
	now := db.Now()
	cycle, version := leasedCycle(t, w, s, holder, now)
	reserve := func(url, purpose string) (*db.Request, *writeq.Op) {
		res := &db.Reservation{Request: &db.Request{CycleID: &cycle, Site: "a.test", Host: "a.test", Origin: "http://a.test",
			URL: url, Purpose: purpose, Node: "t", SentAt: now}, Version: version, Holder: holder,
			LeaseExpires: now.Add(time.Minute), Budgeted: purpose == db.PurposePage}
		op := reserveOp(ctx, res, new(db.Refusal))
		op.Ctx, op.Done = ctx, make(chan error, 1)
		return res.Request, op
	}
	robots, op := reserve("http://a.test/robots.txt", db.PurposeRobots)
	gone, op2 := reserve("http://a.test/gone.html", db.PurposePage)
	if err := w.commit(ctx, []*writeq.Op{op, op2}); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(<-op.Done, <-op2.Done); err != nil {
		t.Fatal(err)
	}
	// The page about to answer 404, indexed by an earlier cycle, with a
	// link text to it.
	err := w.Lease(ctx, func(tx db.WriteTx) error {
		if err := db.UpsertPage(ctx, tx, &db.Page{URL: gone.URL, Site: "a.test", Title: "old", Status: 200, FetchedAt: now}); err != nil {
			return err
		}
		return db.UpsertAnchors(ctx, tx, []db.Anchor{{FromURL: "http://b.test/", ToURL: gone.URL, ToSite: "a.test", AnchorText: "gone", SeenAt: now}})
	})
	if err != nil {
		t.Fatal(err)
	}
	snap := &db.RobotsSnapshot{Origin: "http://a.test", FetchedAt: now, Status: 200, FinalURL: robots.URL,
		Body: []byte("User-agent: *\nAllow: /\n"), Sha256: "x", Outcome: db.RobotsParsed, RequestID: &robots.ID}
	ok, notFound := 200, 404
	next, op3 := reserve("http://a.test/next.html", db.PurposePage)
	group := []*writeq.Op{op3,
		{Ctx: ctx, Done: make(chan error, 1), NoSavepoint: true, Pipe: func(p *db.Pipeline) func() error {
			p.Finish(&db.Completion{Request: &db.Request{ID: robots.ID, CompletedAt: &now, Status: &ok, Outcome: "ok"}, CycleID: cycle})
			p.RobotsSnapshot(snap)
			return func() error { return nil }
		}},
		{Ctx: ctx, Done: make(chan error, 1), NoSavepoint: true, Pipe: func(p *db.Pipeline) func() error {
			p.Finish(&db.Completion{Request: &db.Request{ID: gone.ID, CompletedAt: &now, Status: &notFound, Outcome: "noindex"}, CycleID: cycle})
			p.Unindex(gone.URL, true)
			return func() error { return nil }
		}},
	}
	if err := w.commit(ctx, group); err != nil {
		t.Fatal(err)
	}
	for i, o := range group {
		if err := <-o.Done; err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if next.ID == 0 || snap.ID == 0 {
		t.Fatalf("reservation id %d, snapshot id %d: want both read back", next.ID, snap.ID)
	}
	var reqID int64
	if err := s.AutoCommit().QueryRow(ctx, `SELECT request_id FROM robots_snapshots WHERE id = ?`, snap.ID).Scan(&reqID); err != nil || reqID != robots.ID {
		t.Errorf("snapshot %d: request %d (%v), want %d", snap.ID, reqID, err, robots.ID)
	}
	reqs, err := s.SiteRequests(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.ID == gone.ID && (r.Status == nil || *r.Status != 404) {
			t.Errorf("request %d: status %v, want 404", gone.ID, r.Status)
		}
	}
	if pages, err := s.SitePages(ctx, "a.test"); err != nil || len(pages) != 0 {
		t.Errorf("pages of a.test: %d (%v), want the page answered 404 gone", len(pages), err)
	}
	if texts, err := s.AnchorsTo(ctx, "a.test"); err != nil || len(texts) != 0 {
		t.Errorf("link texts to a.test: %d (%v), want those to the noindex page gone", len(texts), err)
	}
}

// TestReserveLostCommit checks a reservation whose connection is lost as
// its commit's answer comes back (it committed, and the writer cannot
// know): before it is tried again, its row is found and withdrawn (never
// sent, its budget slot given back), and the reservation that follows is
// logged as sent no earlier than it is tried, with the slot the lost one
// had.
func TestReserveLostCommit(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t, "postgres")
	w := newWriter(s, db.WriterOptions{})
	lost := 0
	w.loseCommit = func() bool {
		lost++
		return lost == 1
	}
	w.start(ctx)
	defer w.Close()
	const holder = "t/1/x"
	now := db.Now()
	cycle, version := leasedCycle(t, w, s, holder, now)
	sent := now.Add(-time.Second) // reserved for a time already past when it is tried again
	res := &db.Reservation{Request: &db.Request{CycleID: &cycle, Site: "a.test", Host: "a.test", Origin: "http://a.test",
		URL: "http://a.test/", Purpose: db.PurposePage, Node: "t", SentAt: sent}, Version: version, Holder: holder,
		LeaseExpires: now.Add(2 * time.Minute), Budgeted: true}
	lost = 0
	if refusal, err := w.Reserve(ctx, res); err != nil || refusal != db.Reserved {
		t.Fatalf("Reserve: %v, refusal %d", err, refusal)
	}
	if lost < 2 {
		t.Fatalf("the commit was not lost (%d commits)", lost)
	}
	reqs, err := s.SiteRequests(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d rows, want 2 (the lost one withdrawn, the one to send)", len(reqs))
	}
	gone, kept := reqs[0], reqs[1]
	if gone.ID > kept.ID {
		gone, kept = kept, gone
	}
	if gone.Outcome != db.OutcomeWithdrawn || gone.Error != lostReservation || gone.BudgetSlot != nil || gone.CompletedAt == nil {
		t.Errorf("lost row: outcome %q, error %q, slot %v, completed %v; want withdrawn, %q, no slot, completed",
			gone.Outcome, gone.Error, gone.BudgetSlot, gone.CompletedAt, lostReservation)
	}
	if kept.ID != res.Request.ID || kept.BudgetSlot == nil || *kept.BudgetSlot != 1 || kept.CompletedAt != nil {
		t.Errorf("row kept: id %d (answered %d), slot %v, completed %v; want the answer's, slot 1, open",
			kept.ID, res.Request.ID, kept.BudgetSlot, kept.CompletedAt)
	}
	if kept.SentAt.Before(now) {
		t.Errorf("row kept sent at %v, want no earlier than it was tried again (after %v)", kept.SentAt, now)
	}
	// The lease outlives the request sent late by as much as it would have.
	l, err := db.ReadLease(ctx, s.AutoCommit(), "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if want := kept.SentAt.Add(2 * time.Minute); l.ExpiresAt.Before(want) {
		t.Errorf("lease expires %v, want no earlier than %v (2 min after the request's time)", l.ExpiresAt, want)
	}
}
