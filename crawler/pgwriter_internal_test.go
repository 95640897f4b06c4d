package crawler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// TestPGGroupRefusals checks the PostgreSQL group commit, where a
// reservation (one statement) and a completion (which never refuses) run
// without a savepoint, in a transaction or in a pipeline: in one group, a
// reservation refused for each reason (a stale policy version, a lease held
// by another crawler, a spent budget) writes nothing and gets its own
// answer, while the reservations and the completion beside it commit; and a
// caller failing with a database error fails alone (its group is run again
// caller by caller), the others of its group commit.
func TestPGGroupRefusals(t *testing.T) {
	for _, pipelined := range []bool{false, true} {
		name := "transaction"
		if pipelined {
			name = "pipeline"
		}
		t.Run(name, func(t *testing.T) { testPGGroupRefusals(t, pipelined) })
	}
}

func testPGGroupRefusals(t *testing.T, pipelined bool) {
	dsn := dbtest.DSN(t, "postgres")
	ctx := context.Background()
	s := dbtest.OpenDSN(t, dsn)
	c := newTestCrawler(t, s)
	defer c.Close()
	now := c.now()
	expires := now.Add(time.Minute)
	var open, spent int64
	err := c.withLeaseTx(ctx, func(tx db.WriteTx) error {
		for host, holder := range map[string]string{"a.test": c.holder, "b.test": "other", "c.test": c.holder, "d.test": c.holder} {
			if _, err := db.InsertLease(ctx, tx, host, holder, expires, now); err != nil {
				return err
			}
		}
		var err error
		if open, err = db.InsertCycle(ctx, tx, "a.test", "t", now, Budget, 0); err != nil {
			return err
		}
		spent, err = db.InsertCycle(ctx, tx, "c.test", "t", now, 0, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.askGate(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	row := func(host string, cycle *int64, purpose string) *reqRow {
		return &reqRow{CycleID: cycle, Site: host, Host: host, Origin: "http://" + host, URL: "http://" + host + "/", Purpose: purpose}
	}
	op := func(f func(tx db.WriteTx) error, noSavepoint bool) *writeOp {
		return &writeOp{ctx: ctx, f: f, noSavepoint: noSavepoint, done: make(chan error, 1)}
	}
	reserve := func(r *reqRow, v policy.Verdict) *writeOp {
		o := reserveOp(ctx, c, r, v)
		if !pipelined {
			o.pipe = nil
		}
		return o
	}

	// A group that commits, with a refusal of each kind in it.
	first := row("a.test", &open, db.PurposePage)
	if err := c.pgCommit(ctx, []*writeOp{reserve(first, v)}); err != nil {
		t.Fatal(err)
	}
	okPage, okRobots := row("a.test", &open, db.PurposePage), row("a.test", &open, db.PurposeRobots)
	stale := v
	stale.Version++
	status := 200
	fin := &db.Completion{Request: &db.Request{ID: first.ID, CompletedAt: &now, Status: &status, Outcome: "ok"},
		Page: &db.Page{URL: first.URL, Site: first.Site, Title: "first", Status: 200, FetchedAt: now, RequestID: &first.ID}}
	completion := op(func(tx db.WriteTx) error { return db.FinishRequest(ctx, tx, fin) }, true)
	if pipelined {
		completion.pipe = func(p *db.Pipeline) func() error {
			p.Finish(fin)
			p.Anchors([]db.Anchor{{FromURL: first.URL, ToURL: "http://b.test/", ToSite: "b.test", AnchorText: "b", SeenAt: now, RequestID: &first.ID}})
			return func() error { return nil }
		}
	}
	group := []*writeOp{
		reserve(okPage, v),
		reserve(row("d.test", &open, db.PurposePage), stale),
		reserve(row("b.test", &open, db.PurposePage), v),
		reserve(row("c.test", &spent, db.PurposePage), v),
		completion,
		reserve(okRobots, v),
	}
	if err := c.pgCommit(ctx, group); err != nil {
		t.Fatalf("group: %v", err)
	}
	for i, want := range []error{nil, errStale, ErrLeaseLost, ErrBudgetSpent, nil, nil} {
		if err := <-group[i].done; !errors.Is(err, want) || (err == nil) != (want == nil) {
			t.Errorf("caller %d: %v, want %v", i, err, want)
		}
	}
	reqs, err := s.SiteRequests(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 || okPage.Slot != 2 || okRobots.ID == 0 || reqs[0].CompletedAt == nil {
		t.Errorf("requests of a.test: %d, slot %d, robots.txt id %d, first completed %v; want 3, slot 2, an id, completed",
			len(reqs), okPage.Slot, okRobots.ID, reqs[0].CompletedAt)
	}
	for _, host := range []string{"b.test", "c.test", "d.test"} {
		if reqs, _ := s.SiteRequests(ctx, host); len(reqs) != 0 {
			t.Errorf("%s: %d requests logged by a refused reservation", host, len(reqs))
		}
	}
	err = c.withLeaseTx(ctx, func(tx db.WriteTx) error {
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
	queue, none := make(chan *writeOp, 8), make(chan *writeOp)
	a, b := row("a.test", &open, db.PurposePage), row("a.test", &open, db.PurposePage)
	failing := op(func(tx db.WriteTx) error {
		_, err := db.InsertCycle(ctx, tx, "a.test", "t", now, Budget, 0)
		return err
	}, false)
	if pipelined {
		bad := row("a.test", &open, db.PurposePage)
		bad.URL += "\x00"
		failing = reserve(bad, v)
	}
	group = []*writeOp{reserve(a, v), failing, reserve(b, v)}
	for _, o := range group {
		queue <- o
	}
	gctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		commitGroups(gctx, queue, none, pgMaxGroup, func(ops []*writeOp) error { return c.pgCommit(gctx, ops) })
	}()
	for i, o := range group {
		if err := <-o.done; (err == nil) != (i != 1) {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	cancel()
	<-stopped
	if a.Slot != 3 || b.Slot != 4 {
		t.Errorf("slots %d, %d; want 3, 4", a.Slot, b.Slot)
	}
	if reqs, err := s.SiteRequests(ctx, "a.test"); err != nil || len(reqs) != 5 {
		t.Errorf("requests of a.test: %d, %v; want 5", len(reqs), err)
	}
}

// TestPGLeaseStatements checks the leases on PostgreSQL, where a fresh
// lease is one INSERT and a release one UPDATE, each committed on its own:
// a crawler takes a lease no one held, another crawler finds it busy until
// it is given back, then takes it with the next_at it was given back with.
func TestPGLeaseStatements(t *testing.T) {
	dsn := dbtest.DSN(t, "postgres")
	ctx := context.Background()
	s := dbtest.OpenDSN(t, dsn)
	newCrawler := func(node string) *Crawler {
		c, err := New(ctx, s, policy.New(s, nil), &Options{Node: node, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := newCrawler("a"), newCrawler("b")
	next, busy, err := a.acquire(ctx, "x.test", time.Second, nil)
	if err != nil || !busy.IsZero() || next.IsZero() {
		t.Fatalf("a.acquire = %v, %v, %v; want it taken", next, busy, err)
	}
	// Committed: another connection sees it at once.
	exp, held, err := s.LeaseExpiry(ctx, "x.test")
	if err != nil || !held || !exp.After(next) {
		t.Fatalf("lease after a.acquire: %v, %v, %v; want held until after %v", exp, held, err, next)
	}
	if _, busy, err := b.acquire(ctx, "x.test", time.Second, nil); err != nil || busy.IsZero() {
		t.Fatalf("b.acquire of a held lease: busy %v, %v; want busy", busy, err)
	}
	later := a.now().Add(time.Hour).Truncate(time.Microsecond)
	if err := a.release(ctx, "x.test", later); err != nil {
		t.Fatal(err)
	}
	next, busy, err = b.acquire(ctx, "x.test", time.Second, nil)
	if err != nil || !busy.IsZero() || !next.Equal(later) {
		t.Fatalf("b.acquire after the release = %v, %v, %v; want taken, next_at %v", next, busy, err, later)
	}
}

// TestPGCompletionsPipelined checks that on PostgreSQL every completion
// goes in a pipeline, a robots.txt snapshot's (whose id is read back) and
// a page's taken out of the index included: in one group with a
// reservation, they commit in one pipeline, the snapshot's id is filled
// in, the page and the link texts to it are gone.
func TestPGCompletionsPipelined(t *testing.T) {
	s := dbtest.Open(t, "postgres")
	ctx := context.Background()
	c := newTestCrawler(t, s)
	defer c.Close()
	now := c.now()
	var cycle int64
	err := c.withLeaseTx(ctx, func(tx db.WriteTx) error {
		if _, err := db.InsertLease(ctx, tx, "a.test", c.holder, now.Add(time.Minute), now); err != nil {
			return err
		}
		var err error
		cycle, err = db.InsertCycle(ctx, tx, "a.test", "t", now, Budget, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.askGate(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	reserve := func(url, purpose string) (*reqRow, *writeOp) {
		r := &reqRow{CycleID: &cycle, Site: "a.test", Host: "a.test", Origin: "http://a.test", URL: url, Purpose: purpose}
		return r, reserveOp(ctx, c, r, v)
	}
	robots, op := reserve("http://a.test/robots.txt", db.PurposeRobots)
	gone, op2 := reserve("http://a.test/gone.html", db.PurposePage)
	if err := c.pgCommit(ctx, []*writeOp{op, op2}); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(<-op.done, <-op2.done); err != nil {
		t.Fatal(err)
	}
	// The page about to answer 404, indexed by an earlier cycle, with a
	// link text to it.
	err = c.withLeaseTx(ctx, func(tx db.WriteTx) error {
		if err := db.UpsertPage(ctx, tx, &db.Page{URL: gone.URL, Site: "a.test", Title: "old", Status: 200, FetchedAt: now}); err != nil {
			return err
		}
		return db.UpsertAnchors(ctx, tx, []db.Anchor{{FromURL: "http://b.test/", ToURL: gone.URL, ToSite: "a.test", AnchorText: "gone", SeenAt: now}})
	})
	if err != nil {
		t.Fatal(err)
	}
	snap := &db.RobotsSnapshot{Origin: "http://a.test", FetchedAt: now, Status: 200, FinalURL: robots.URL,
		Body: []byte("User-agent: *\nAllow: /\n"), Sha256: "x", Outcome: db.RobotsParsed}
	completions := []*completion{
		{ID: robots.ID, Host: "a.test", CompletedAt: now, Status: 200, Outcome: "ok", CycleID: &cycle, Snapshot: snap},
		{ID: gone.ID, Host: "a.test", CompletedAt: now, Status: 404, Outcome: "noindex", CycleID: &cycle, Unindex: gone.URL},
	}
	next, op3 := reserve("http://a.test/next.html", db.PurposePage)
	group := []*writeOp{op3}
	for _, k := range completions {
		write, pipe := c.completionWrite(k)
		if pipe == nil {
			t.Fatalf("completion %+v has no pipeline form", k)
		}
		group = append(group, &writeOp{ctx: ctx, done: make(chan error, 1), noSavepoint: true,
			f:    func(tx db.WriteTx) error { return write(ctx, tx) },
			pipe: func(p *db.Pipeline) func() error { pipe(p); return func() error { return nil } }})
	}
	if err := c.pgCommit(ctx, group); err != nil {
		t.Fatal(err)
	}
	for i, o := range group {
		if err := <-o.done; err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if next.ID == 0 || snap.ID == 0 {
		t.Fatalf("reservation id %d, snapshot id %d: want both read back", next.ID, snap.ID)
	}
	var (
		reqID  int64
		pages  int
		texts  int
		status int
	)
	if err := s.SQL.QueryRowContext(ctx, `SELECT request_id FROM robots_snapshots WHERE id = $1`, snap.ID).Scan(&reqID); err != nil || reqID != robots.ID {
		t.Errorf("snapshot %d: request %d (%v), want %d", snap.ID, reqID, err, robots.ID)
	}
	if err := s.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM pages WHERE url = $1`, gone.URL).Scan(&pages); err != nil || pages != 0 {
		t.Errorf("page answered 404 still indexed (%d, %v)", pages, err)
	}
	if err := s.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM anchors WHERE to_url = $1`, gone.URL).Scan(&texts); err != nil || texts != 0 {
		t.Errorf("link texts to a noindex page kept (%d, %v)", texts, err)
	}
	if err := s.SQL.QueryRowContext(ctx, `SELECT status FROM requests WHERE id = $1`, gone.ID).Scan(&status); err != nil || status != 404 {
		t.Errorf("request %d: status %d (%v), want 404", gone.ID, status, err)
	}
}

// reserveOp is the writer's op for the reservation of r, as begin makes it
// (reserveTx): a statement without a savepoint, with its pipeline form.
func reserveOp(ctx context.Context, c *Crawler, r *reqRow, v policy.Verdict) *writeOp {
	hs := &hostState{host: r.Host}
	return &writeOp{ctx: ctx, done: make(chan error, 1), noSavepoint: true,
		f:    func(tx db.WriteTx) error { return c.reserve(ctx, tx, hs, r, v) },
		pipe: func(p *db.Pipeline) func() error { return c.reservePipe(p, hs, r, v) }}
}
