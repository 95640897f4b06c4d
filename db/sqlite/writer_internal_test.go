package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/internal/writeq"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
)

// Refusals of the tests' callers: answers of their own logic.
var (
	errBudget = errors.New("budget spent")
	errLease  = errors.New("lease lost")
	errSkip   = errors.New("visited recently")
)

// logical is the tests' db.WriterOptions.Refused.
func logical(err error) bool {
	return errors.Is(err, errBudget) || errors.Is(err, errLease) || errors.Is(err, errSkip)
}

// TestLiteWriterDurability checks how the crawler's SQLite connections keep
// the request log durable: the checkpointer's connection
// commits with synchronous=FULL (2), the fast path's default (see
// db/lite's TestOpenPragmas); the writer's commits with NORMAL (1)
// because its syncer writes the WAL to disk before any caller is answered
// (TestSyncerAnswersAfterSync).
func TestLiteWriterDurability(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "l.db")
	s, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, ck, wal, err := openWriter(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer ck.Close()
	defer wal.close()
	var sync int64
	if err := ck.QueryRow(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if sync != 2 {
		t.Errorf("checkpointer: PRAGMA synchronous = %d, want 2 (FULL)", sync)
	}
	var auto int64
	if err := w.QueryRow(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Errorf("writer: PRAGMA wal_autocheckpoint = %d, want 0 (the checkpointer's)", auto)
	}
	if err := w.QueryRow(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if sync != 1 {
		t.Errorf("writer: PRAGMA synchronous = %d, want 1 (NORMAL, with the syncer's fsync)", sync)
	}
	if wal.path != path+"-wal" {
		t.Errorf("WAL file = %s, want %s-wal", wal.path, path)
	}
	if _, err := w.Exec(ctx, "INSERT INTO sites (name, start_url, added_at, added_by) VALUES ('a.example', 'https://a.example/', '2026-01-01 00:00:00', 't')"); err != nil {
		t.Fatal(err)
	}
	if err := wal.sync(); err != nil {
		t.Errorf("WAL sync: %v", err)
	}
}

// TestSyncerAnswersAfterSync checks that no caller of a committed group is
// answered before the WAL sync returns, that one sync serves every group
// committed meanwhile, and that a failed sync answers each caller with an
// error (its request is then not sent).
func TestSyncerAnswersAfterSync(t *testing.T) {
	synced := make(chan syncGroup, 8)
	release := make(chan error)
	called := make(chan struct{}, 4)
	syncs := 0
	done := make(chan struct{})
	go func() {
		syncer(synced, func() error {
			syncs++
			called <- struct{}{}
			return <-release
		}, nil)
		close(done)
	}()
	op := func() *writeq.Op { return &writeq.Op{Done: make(chan error, 1)} }
	a, b, c := op(), op(), op()
	synced <- syncGroup{ops: []*writeq.Op{a, b}, results: []error{nil, errBudget}}
	<-called // the syncer took the first group and is syncing
	synced <- syncGroup{ops: []*writeq.Op{c}, results: []error{nil}}
	if len(a.Done)+len(b.Done) != 0 {
		t.Fatal("a caller was answered before its WAL sync returned")
	}
	release <- nil
	if err := <-a.Done; err != nil {
		t.Errorf("a: %v, want nil", err)
	}
	if err := <-b.Done; !errors.Is(err, errBudget) {
		t.Errorf("b: %v, want its own result, errBudget", err)
	}
	// c waits for the next sync, which fails.
	<-called
	release <- errors.New("disk gone")
	if err := <-c.Done; err == nil {
		t.Error("c: answered nil after a failed sync, want an error")
	}
	close(synced)
	<-done
	if syncs != 2 {
		t.Errorf("%d syncs, want 2", syncs)
	}
}

// TestWriterRollsBackLogicalErrors checks that a caller whose work ends in
// a logical error (budget spent, lease lost, ...) leaves nothing of it in
// the database on SQLite, as on PostgreSQL, while the other callers of the
// same group commit.
func TestWriterRollsBackLogicalErrors(t *testing.T) {
	ctx := context.Background()
	s, err := db.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := NewWriter(ctx, s, db.WriterOptions{Refused: logical})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	add := func(name string, fail error) error {
		return c.Write(ctx, func(tx db.WriteTx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO sites (name, start_url, added_at, added_by) VALUES (?, ?, ?, 't')`,
				name, "https://"+name+"/", db.Now()); err != nil {
				return err
			}
			return fail
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- add("kept.example", nil) }()
	go func() { errs <- add("dropped.example", errBudget) }()
	var spent int
	for range 2 {
		if err := <-errs; errors.Is(err, errBudget) {
			spent++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if spent != 1 {
		t.Fatalf("%d callers got errBudget, want 1", spent)
	}
	if _, err := s.Site(ctx, "kept.example"); err != nil {
		t.Errorf("kept.example: %v, want stored", err)
	}
	if _, err := s.Site(ctx, "dropped.example"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("dropped.example: %v, want db.ErrNotFound (its work rolled back)", err)
	}
}

// TestRunGroupRefusals checks how the SQLite writer's group leaves nothing
// of a refused caller's work without a savepoint per caller: a caller
// refused before it wrote costs the others nothing; one refused after it
// wrote has the others run again without it (each committed once), unless
// it ran in a savepoint (Writer.Refusable); a caller whose context ended is not
// run.
func TestRunGroupRefusals(t *testing.T) {
	ctx := context.Background()
	s, lc := writerDB(t)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	calls := map[string]int{}
	op := func(opCtx context.Context, name string, write bool, answer error) *writeq.Op {
		return &writeq.Op{Ctx: opCtx, F: func(tx db.WriteTx) error {
			calls[name]++
			if write {
				if err := insertSite(tx, name); err != nil {
					return err
				}
			}
			return answer
		}}
	}
	savepointed := func(op *writeq.Op) *writeq.Op {
		op.Savepoint = true
		return op
	}
	for _, tc := range []struct {
		name  string
		ops   []*writeq.Op
		want  []error
		calls map[string]int
		kept  []string
		gone  []string
	}{{
		name:  "refused before writing",
		ops:   []*writeq.Op{op(ctx, "a1.example", true, nil), op(ctx, "b1.example", false, errBudget), op(ctx, "c1.example", true, nil)},
		want:  []error{nil, errBudget, nil},
		calls: map[string]int{"a1.example": 1, "b1.example": 1, "c1.example": 1},
		kept:  []string{"a1.example", "c1.example"},
	}, {
		name: "refused after writing",
		ops: []*writeq.Op{op(ctx, "a2.example", true, nil), op(ctx, "b2.example", true, errLease),
			op(ctx, "c2.example", true, nil), op(ended, "d2.example", true, nil)},
		want:  []error{nil, errLease, nil, context.Canceled},
		calls: map[string]int{"a2.example": 2, "b2.example": 1, "c2.example": 1},
		kept:  []string{"a2.example", "c2.example"},
		gone:  []string{"b2.example", "d2.example"},
	}, {
		name:  "refused after writing in a savepoint",
		ops:   []*writeq.Op{op(ctx, "a3.example", true, nil), savepointed(op(ctx, "b3.example", true, errSkip)), op(ctx, "c3.example", true, nil)},
		want:  []error{nil, errSkip, nil},
		calls: map[string]int{"a3.example": 1, "b3.example": 1, "c3.example": 1},
		kept:  []string{"a3.example", "c3.example"},
		gone:  []string{"b3.example"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clear(calls)
			results, err := runGroup(lc, tc.ops, logical)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				if !errors.Is(results[i], want) || (want == nil && results[i] != nil) {
					t.Errorf("caller %d answered %v, want %v", i, results[i], want)
				}
			}
			if fmt.Sprint(calls) != fmt.Sprint(tc.calls) {
				t.Errorf("runs %v, want %v", calls, tc.calls)
			}
			for _, name := range tc.kept {
				if _, err := s.Site(ctx, name); err != nil {
					t.Errorf("%s: %v, want stored", name, err)
				}
			}
			for _, name := range tc.gone {
				if _, err := s.Site(ctx, name); !errors.Is(err, db.ErrNotFound) {
					t.Errorf("%s: %v, want db.ErrNotFound", name, err)
				}
			}
		})
	}
}

// TestAnswerEarly checks that the callers of Note in a committed group
// are answered at once, with their own results, and the others are left
// to the syncer, in order, with theirs.
func TestAnswerEarly(t *testing.T) {
	op := func(early bool) *writeq.Op { return &writeq.Op{Done: make(chan error, 1), Early: early} }
	lease, begin, cycle, complete := op(true), op(false), op(true), op(false)
	g := answerEarly([]*writeq.Op{lease, begin, cycle, complete}, []error{nil, errBudget, errLease, nil})
	if len(lease.Done) != 1 || <-lease.Done != nil {
		t.Error("the lease's caller was not answered nil at once")
	}
	if len(cycle.Done) != 1 || !errors.Is(<-cycle.Done, errLease) {
		t.Error("the cycle's caller was not answered its own result at once")
	}
	if len(begin.Done)+len(complete.Done) != 0 {
		t.Error("a caller that needs the WAL on disk was answered before the sync")
	}
	if len(g.ops) != 2 || g.ops[0] != begin || g.ops[1] != complete || !errors.Is(g.results[0], errBudget) || g.results[1] != nil {
		t.Errorf("left for the syncer: %d ops, results %v; want begin (errBudget) then complete (nil)", len(g.ops), g.results)
	}
}

// TestAnswerOnRun checks the writer's answer to a caller that asked for it
// as soon as its work ran (Confirm): one that only read is answered before
// its group commits, and once, even when the group then fails; one that
// wrote is answered with its group.
func TestAnswerOnRun(t *testing.T) {
	ctx := context.Background()
	s, lc := writerDB(t)
	insert := func(name string) func(tx db.WriteTx) error {
		return func(tx db.WriteTx) error { return insertSite(tx, name) }
	}
	read := func(tx db.WriteTx) error {
		_, err := db.PolicyVersionForWrite(ctx, tx)
		return err
	}
	op := func(f func(tx db.WriteTx) error) *writeq.Op {
		return &writeq.Op{Ctx: ctx, F: f, Done: make(chan error, 1), Early: true, AnswerOnRun: true}
	}

	// Answered before the group commits: the op after it in the group
	// waits until the answer has come.
	reader, writer := op(read), op(insert("a.example"))
	answered := make(chan bool, 1)
	slow := &writeq.Op{Ctx: ctx, Done: make(chan error, 1), Early: true, F: func(tx db.WriteTx) error {
		select {
		case <-reader.Done:
			answered <- true
		case <-time.After(5 * time.Second):
			answered <- false
		}
		return nil
	}}
	ops := []*writeq.Op{reader, writer, slow}
	results, err := runGroup(lc, ops, logical)
	if err != nil {
		t.Fatal(err)
	}
	if !<-answered {
		t.Error("a caller that only read was not answered before its group committed")
	}
	if len(writer.Done) != 0 {
		t.Error("a caller that wrote was answered before its group committed")
	}
	answerEarly(ops, results)
	if len(writer.Done) != 1 || <-writer.Done != nil || len(slow.Done) != 1 {
		t.Error("the callers that wrote were not answered on commit")
	}
	if len(reader.Done) != 0 {
		t.Error("the caller that only read was answered twice")
	}
	if _, err := s.Site(ctx, "a.example"); err != nil {
		t.Errorf("a.example: %v, want stored", err)
	}
}

// TestCheckpointerPace checks how often the checkpointer copies the WAL:
// every checkpointEvery when the writer was idle since the last copy, and
// only every checkpointBusyEvery when it was busy throughout.
func TestCheckpointerPace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, _ := writerDB(t)
	lc := fastConn(t, s, db.FastOptions{}) // the checkpointer closes it
	fc := clocktest.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	c := newWriter(s, db.WriterOptions{Clock: fc, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.checkpointer(ctx, lc) // closes lc
	}()
	time.Sleep(20 * time.Millisecond) // its ticker is made
	copied := func() bool {           // whether the checkpointer took the commit
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if !c.walDirty.Load() {
				return true
			}
			time.Sleep(time.Millisecond)
		}
		return false
	}
	tick := func() {
		fc.Advance(checkpointEvery)
		time.Sleep(20 * time.Millisecond) // the tick is handled
	}

	// Idle writer: copied at the next tick.
	c.walDirty.Store(true)
	c.writerIdle.Store(true)
	tick()
	if !copied() {
		t.Fatal("idle writer: not copied at the first tick")
	}
	// Busy writer: not before checkpointBusyEvery since the last copy.
	c.walDirty.Store(true)
	for i := time.Duration(1); i < checkpointBusyEvery/checkpointEvery; i++ {
		tick()
		if !c.walDirty.Load() {
			t.Fatalf("busy writer: copied %v after the last copy, want %v", i*checkpointEvery, checkpointBusyEvery)
		}
	}
	tick()
	if !copied() {
		t.Fatalf("busy writer: not copied %v after the last copy", checkpointBusyEvery)
	}
	cancel()
	<-done
}

// writerDB returns a new SQLite database and a fast-path connection to it,
// as the writer has, both closed when the test ends.
func writerDB(t *testing.T) (*db.Store, *db.FastConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	s, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	lc := fastConn(t, s, db.FastOptions{})
	t.Cleanup(lc.Close)
	return s, lc
}

// fastConn opens another fast-path connection to s's file, with o; the
// caller closes it.
func fastConn(t *testing.T, s *db.Store, o db.FastOptions) *db.FastConn {
	t.Helper()
	path, err := s.SQLiteFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lc, err := db.OpenFastConn(path, o)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// insertSite adds name to the crawl list in tx: a write the tests can see.
func insertSite(tx db.WriteTx, name string) error {
	_, err := tx.Exec(context.Background(), `INSERT INTO sites (name, start_url, added_at, added_by) VALUES (?, ?, ?, 't')`,
		name, "https://"+name+"/", db.Now())
	return err
}

// TestWriterHoldsGroupWhileSyncing checks the SQLite writer's pace: a
// caller that comes while the syncer is idle is committed at once; those
// that come while it syncs wait, without the write lock (another
// connection may write meanwhile), and are committed together, in one
// group, when the sync ends; a caller that only reads is answered at once.
func TestWriterHoldsGroupWhileSyncing(t *testing.T) {
	ctx := context.Background()
	s, c, synced, sg := startWriter(t)
	take, answer := handSyncer(t, synced, sg)
	ran := make(chan string, 8)
	insert := func(name string) *writeq.Op {
		return &writeq.Op{Ctx: ctx, Done: make(chan error, 1), F: func(tx db.WriteTx) error {
			ran <- name
			return insertSite(tx, name)
		}}
	}
	// The syncer is idle: committed at once, alone.
	a := insert("a.example")
	sendWrite(t, c.writes, a)
	ga := take()
	if len(ga.ops) != 1 || ga.ops[0] != a {
		t.Fatalf("first group: %d callers, want a alone", len(ga.ops))
	}
	<-ran

	// The syncer is at work on a's group: b, c and d wait, a reader is
	// answered at once, another connection can write, and nothing is
	// committed until the sync ends.
	ops := []*writeq.Op{insert("b.example"), insert("c.example"), insert("d.example")}
	sendWrite(t, c.writes, ops[0])
	sendWrite(t, c.reserves, ops[1])
	sendWrite(t, c.writes, ops[2])
	reader := &writeq.Op{Ctx: ctx, Done: make(chan error, 1), AnswerOnRun: true, F: func(tx db.WriteTx) error {
		_, err := db.PolicyVersionForWrite(ctx, tx)
		return err
	}}
	sendWrite(t, c.reserves, reader)
	select {
	case err := <-reader.Done:
		if err != nil {
			t.Fatalf("reader: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a caller that only read waited for the sync")
	}
	other := fastConn(t, s, db.FastOptions{})
	defer other.Close()
	wrote := make(chan error, 1)
	go func() {
		if err := other.Begin(); err != nil {
			wrote <- err
			return
		}
		if err := insertSite(other, "x.example"); err != nil {
			other.Rollback()
			wrote <- err
			return
		}
		wrote <- other.Commit()
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatalf("another connection's write: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the writer held the write lock while the syncer was at work")
	}
	select {
	case name := <-ran:
		t.Fatalf("%s ran while the syncer was at work", name)
	case g := <-synced:
		t.Fatalf("a group of %d committed while the syncer was at work", len(g.ops))
	case <-time.After(100 * time.Millisecond):
	}
	answer(ga)
	if err := <-a.Done; err != nil {
		t.Fatalf("a: %v", err)
	}
	gb := take()
	if len(gb.ops) != 3 { // b, c and d: the reader had its answer
		t.Fatalf("group after the sync: %d callers to answer, want b, c and d", len(gb.ops))
	}
	for _, op := range ops {
		if len(op.Done) != 0 {
			t.Fatal("a caller was answered before its sync")
		}
	}
	answer(gb)
	for _, op := range ops {
		if err := <-op.Done; err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a.example", "b.example", "c.example", "d.example", "x.example"} {
		if _, err := s.Site(ctx, name); err != nil {
			t.Errorf("%s: %v, want stored", name, err)
		}
	}
}

// TestWriterGroupFails checks that when a group fails as a whole, each of
// its callers is tried alone: the one at fault gets its error, the others
// are committed, and a caller answered already is not answered again.
func TestWriterGroupFails(t *testing.T) {
	ctx := context.Background()
	s, c, synced, sg := startWriter(t)
	take, answer := handSyncer(t, synced, sg)
	// A first caller keeps the syncer at work while the others come, so
	// that they make one group.
	sendWrite(t, c.writes, &writeq.Op{Ctx: ctx, Done: make(chan error, 1), F: func(tx db.WriteTx) error { return insertSite(tx, "a.example") }})
	ga := take()
	reader := &writeq.Op{Ctx: ctx, Done: make(chan error, 1), AnswerOnRun: true, F: func(tx db.WriteTx) error {
		_, err := db.PolicyVersionForWrite(ctx, tx)
		return err
	}}
	good := &writeq.Op{Ctx: ctx, Done: make(chan error, 1), F: func(tx db.WriteTx) error { return insertSite(tx, "b.example") }}
	failing := &writeq.Op{Ctx: ctx, Done: make(chan error, 1), F: func(db.WriteTx) error { return errors.New("disk full") }}
	sendWrite(t, c.reserves, reader)
	if err := <-reader.Done; err != nil {
		t.Fatalf("reader: %v", err)
	}
	sendWrite(t, c.writes, good)
	sendWrite(t, c.writes, failing)
	answer(ga) // good and failing make one group, which fails
	if err := <-failing.Done; err == nil || err.Error() != "disk full" {
		t.Fatalf("the failing caller was answered %v, want its error", err)
	}
	gb := take() // good, alone
	if len(gb.ops) != 1 || gb.ops[0] != good {
		t.Fatalf("after the failure: a group of %d, want the good caller alone", len(gb.ops))
	}
	answer(gb)
	if err := <-good.Done; err != nil {
		t.Fatalf("good: %v", err)
	}
	if len(reader.Done) != 0 {
		t.Error("the reader was answered twice")
	}
	if _, err := s.Site(ctx, "b.example"); err != nil {
		t.Errorf("b.example: %v, want stored", err)
	}
}

// startWriter starts the SQLite writer on a new database, with the
// syncer left to the test (synced, sg); the writer stops when the test
// ends.
func startWriter(t *testing.T) (*db.Store, *Writer, chan syncGroup, *syncGate) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, _ := writerDB(t)
	lc := fastConn(t, s, db.FastOptions{SyncLater: true}) // the writer closes it
	c := newWriter(s, db.WriterOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	synced, sg := make(chan syncGroup, 64), newSyncGate()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.writer(ctx, lc, synced, sg)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return s, c, synced, sg
}

// handSyncer is the syncer, by hand: take waits for the next group the
// writer committed; answer answers the callers of gs and tells the writer
// the sync is done.
func handSyncer(t *testing.T, synced chan syncGroup, sg *syncGate) (take func() syncGroup, answer func(gs ...syncGroup)) {
	take = func() syncGroup {
		t.Helper()
		select {
		case g := <-synced:
			return g
		case <-time.After(5 * time.Second):
			t.Fatal("no group committed")
			return syncGroup{}
		}
	}
	answer = func(gs ...syncGroup) {
		for _, g := range gs {
			for i, op := range g.ops {
				op.Done <- g.results[i]
			}
		}
		sg.answered(len(gs))
	}
	return take, answer
}

// sendWrite hands op to the writer on to.
func sendWrite(t *testing.T, to chan *writeq.Op, op *writeq.Op) {
	t.Helper()
	select {
	case to <- op:
	case <-time.After(5 * time.Second):
		t.Fatal("the writer took no caller")
	}
}

// TestIndexWorkLast checks the order in which the writer takes its
// callers: reservations, then other writes, and index work (Index) only
// when neither waits.
func TestIndexWorkLast(t *testing.T) {
	w := newWriter(nil, db.WriterOptions{})
	w.reserves, w.writes, w.index = make(chan *writeq.Op, 1), make(chan *writeq.Op, 1), make(chan *writeq.Op, 1)
	index, write, reserve := &writeq.Op{}, &writeq.Op{}, &writeq.Op{}
	w.index <- index
	w.writes <- write
	w.reserves <- reserve
	ctx := context.Background()
	for i, want := range []struct {
		op    *writeq.Op
		index bool
		name  string
	}{{reserve, false, "reservation"}, {write, false, "write"}, {index, true, "index work"}} {
		op, isIndex := w.next(ctx)
		if op != want.op || isIndex != want.index {
			t.Errorf("take %d: got op %p (index %v), want the %s %p (index %v)", i+1, op, isIndex, want.name, want.op, want.index)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if op, _ := w.next(cctx); op != nil {
		t.Errorf("next with no caller and ctx ended = %p, want nil", op)
	}
}
