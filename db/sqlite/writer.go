package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/internal/writeq"
	"github.com/lohisoft/lohibot/internal/batch"
	"github.com/lohisoft/lohibot/internal/clock"
)

// maxGroup bounds the callers committed together.
const maxGroup = 256

// Checkpoints of the writer's WAL.
const (
	// checkpointEvery is how often the checkpointer copies committed pages
	// from the WAL into the database file while the writer keeps up: each
	// checkpoint is small, and so are its waits for the disk, which the
	// syncer's fsync (that every request waits for) shares.
	checkpointEvery = 100 * time.Millisecond
	// checkpointBusyEvery is how often it does while the writer never
	// found itself idle since the last checkpoint: the writer then sets
	// the crawl's speed, and a page committed many times between two
	// checkpoints is copied once (checkpoints every 100 ms of a busy
	// writer wrote a quarter more to the disk, and slowed a large crawl).
	checkpointBusyEvery = 500 * time.Millisecond
	// walRestartFrames is the WAL length (in pages) past which the writer
	// has the WAL started over from its beginning: 32 MiB of 4 KiB pages,
	// so that the writer's own checkpoint, which waits for the disk, comes
	// seldom; a longer WAL slows every page read that misses SQLite's
	// cache (one hash table per 4,096 pages of WAL).
	walRestartFrames = 8192
)

// errRefused is the answer of a reservation refused by its own result:
// it wrote nothing, or what it wrote is undone.
var errRefused = errors.New("sqlite: reservation refused")

// Writer is the SQLite db.Writer. One goroutine (writer) owns a connection
// of its own to the database file and commits the pending work of all
// callers in one transaction; a second (syncer) makes each committed group
// durable with one fsync of the WAL before its callers are answered; a
// third (checkpointer) copies the WAL into the database file on a
// connection of its own. The records' seal is written by the writer too,
// in its turn (db.Store.SealVia), until Close.
type Writer struct {
	store   *db.Store
	clock   clock.Clock
	log     *slog.Logger
	refused func(error) bool

	writes   chan *writeq.Op // to the writer
	reserves chan *writeq.Op // to the writer, taken first
	done     chan struct{}   // closed when the writer, syncer and checkpointer stopped
	stop     context.CancelFunc
	unseal   func()

	walDirty   atomic.Bool // the writer committed since the last checkpoint
	walLong    atomic.Bool // the WAL is long: the writer should let it start over
	writerIdle atomic.Bool // the writer found no caller waiting since the last checkpoint
}

// NewWriter opens the writer's and the checkpointer's connections to
// store's database file and starts them. It does I/O.
func NewWriter(ctx context.Context, store *db.Store, o db.WriterOptions) (*Writer, error) {
	w := newWriter(store, o)
	lc, ck, wal, err := openWriter(ctx, store)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.stop = cancel
	var wg sync.WaitGroup
	synced := make(chan syncGroup, 64)
	sg := newSyncGate()
	wg.Go(func() { w.writer(wctx, lc, synced, sg) })
	wg.Go(func() {
		defer wal.close()
		syncer(synced, wal.sync, sg.answered)
	})
	wg.Go(func() { w.checkpointer(wctx, ck) })
	go func() {
		wg.Wait()
		close(w.done)
	}()
	w.unseal = store.SealVia(func(ctx context.Context, f func(tx db.WriteTx) error) error { return w.Write(ctx, f) })
	return w, nil
}

// newWriter returns a Writer over store with o, its goroutines not
// started.
func newWriter(store *db.Store, o db.WriterOptions) *Writer {
	w := &Writer{store: store, clock: clock.Or(o.Clock), log: o.Log, refused: o.Refused,
		writes: make(chan *writeq.Op), reserves: make(chan *writeq.Op), done: make(chan struct{})}
	if w.log == nil {
		w.log = slog.Default()
	}
	if w.refused == nil {
		w.refused = func(error) bool { return false }
	}
	return w
}

// logical reports whether err is an answer of a caller's own logic (see
// db.WriterOptions.Refused) rather than a database failure.
func (w *Writer) logical(err error) bool {
	return errors.Is(err, errRefused) || w.refused(err)
}

// now is the time on the writer's clock as the database keeps it.
func (w *Writer) now() time.Time { return w.clock.Now().UTC().Truncate(time.Microsecond) }

// call hands op to the writer on to and waits for its answer (one that
// says the disk is full wraps db.ErrDiskFull).
func (w *Writer) call(ctx context.Context, to chan<- *writeq.Op, op *writeq.Op) error {
	return db.MarkDiskFull(writeq.Call(ctx, to, w.done, op))
}

// Reserve implements db.Writer: the reservation is taken before the other
// work waiting, so a busy writer delays requests no more than it must. A
// reservation refused after it renewed the host's lease has its group
// run again without it.
func (w *Writer) Reserve(ctx context.Context, res *db.Reservation) (db.Refusal, error) {
	var refusal db.Refusal
	err := w.call(ctx, w.reserves, &writeq.Op{F: func(tx db.WriteTx) error {
		var err error
		if refusal, err = db.ReserveRequest(ctx, tx, res); err == nil && refusal != db.Reserved {
			return errRefused
		}
		return err
	}})
	if errors.Is(err, errRefused) {
		return refusal, nil
	}
	return db.Reserved, err
}

// Confirm implements db.Writer. It runs with the reservations, ahead of
// other work, and is answered as soon as it ran when it found nothing
// changed (a change not seen takes the write lock after its group, so its
// time is later still), on commit when it withdrew the request.
func (w *Writer) Confirm(ctx context.Context, c db.Confirmation) (bool, error) {
	withdrawn := false
	err := w.call(ctx, w.reserves, &writeq.Op{Early: true, AnswerOnRun: true, F: func(tx db.WriteTx) error {
		withdrawn = false
		version, err := db.PolicyVersionForWrite(ctx, tx)
		if err != nil || version == c.Version {
			return err
		}
		excluded, err := db.ExcludedSince(ctx, tx, c.Site, c.Version)
		if err != nil || !excluded {
			return err
		}
		withdrawn = true
		return db.WithdrawRequest(ctx, tx, c.RequestID, w.now(), db.Withdrawn(version))
	}})
	return withdrawn && err == nil, err
}

// Withdraw implements db.Writer.
func (w *Writer) Withdraw(ctx context.Context, id int64, reason string) error {
	return w.Note(ctx, func(tx db.WriteTx) error { return db.WithdrawRequest(ctx, tx, id, w.now(), reason) })
}

// Complete implements db.Writer (pipe is for engines that pipeline).
func (w *Writer) Complete(ctx context.Context, f db.WriteFunc, _ db.PipeFunc) error {
	return w.Write(ctx, f)
}

// End implements db.Writer.
func (w *Writer) End(ctx context.Context, f db.WriteFunc, _ db.PipeFunc) error {
	return w.Note(ctx, f)
}

// Write implements db.Writer.
func (w *Writer) Write(ctx context.Context, f db.WriteFunc) error {
	return w.call(ctx, w.writes, &writeq.Op{F: f})
}

// Note implements db.Writer: the caller is answered once its group
// committed, not once the WAL is on disk. None of the crawler's own state
// needs to be durable before the next request is: that request's
// reservation is answered only after a sync of the WAL, which holds every
// group committed before it (the WAL is written in order).
func (w *Writer) Note(ctx context.Context, f db.WriteFunc) error {
	return w.call(ctx, w.writes, &writeq.Op{F: f, Early: true})
}

// Refusable implements db.Writer: f runs in a savepoint of its own, so
// that its refusal costs the rest of its group nothing.
func (w *Writer) Refusable(ctx context.Context, f db.WriteFunc) error {
	return w.call(ctx, w.writes, &writeq.Op{F: f, Early: true, Savepoint: true})
}

// Lease implements db.Writer: SQLite has one writer, so it is Note.
func (w *Writer) Lease(ctx context.Context, f db.WriteFunc) error { return w.Note(ctx, f) }

// LeaseStmt implements db.Writer: it is Note.
func (w *Writer) LeaseStmt(ctx context.Context, f db.WriteFunc) error { return w.Note(ctx, f) }

// FreshLease implements db.Writer: a statement of its own would cost a
// group of its own; the lease is taken in Lease's transaction.
func (w *Writer) FreshLease(context.Context, string, string, time.Time, time.Time) (bool, error) {
	return false, nil
}

// Turn implements db.Writer: lease work holds no connection of its own.
func (w *Writer) Turn(context.Context) (func(), error) { return func() {}, nil }

// Traits implements db.Writer: none of them.
func (w *Writer) Traits() db.Traits { return db.Traits{} }

// Close implements db.Writer.
func (w *Writer) Close() {
	if w.unseal != nil {
		w.unseal()
	}
	w.stop()
	<-w.done
}

// openWriter opens the writer's own connection to the file store uses,
// and one for its checkpoints. The writer commits with
// synchronous=NORMAL; its syncer makes each commit durable before
// answering (see syncer). Checkpoints are the checkpointer's (and, now and
// then, the writer's own: see writer), never a commit's.
func openWriter(ctx context.Context, store *db.Store) (w, ck *db.FastConn, wal *walFile, err error) {
	path, err := store.SQLiteFile(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sqlite: database writer: %w", err)
	}
	if w, err = db.OpenFastConn(path, db.FastOptions{SyncLater: true, ManualCheckpoints: true}); err == nil {
		if ck, err = db.OpenFastConn(path, db.FastOptions{}); err != nil {
			w.Close()
		}
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sqlite: database writer: %w", err)
	}
	return w, ck, &walFile{path: path + "-wal"}, nil
}

// walFile is the WAL file of the SQLite database the writer commits to.
type walFile struct {
	path string
	f    *os.File
}

// sync writes what the WAL file holds to disk. The file is opened on first
// use (the first commit created it), and opened again if it was replaced:
// syncing a file SQLite no longer uses would prove nothing.
func (w *walFile) sync() error {
	if w.f != nil {
		open, err1 := w.f.Stat()
		now, err2 := os.Stat(w.path)
		if err1 != nil || err2 != nil || !os.SameFile(open, now) {
			w.f.Close()
			w.f = nil
		}
	}
	if w.f == nil {
		f, err := os.Open(w.path)
		if err != nil {
			return err
		}
		w.f = f
	}
	return w.f.Sync()
}

// close closes the file.
func (w *walFile) close() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// checkpointer copies what the writer committed from the WAL into the
// database file, every checkpointEvery while there is anything new (every
// checkpointBusyEvery while the writer is busy throughout), with passive
// checkpoints on its own connection lc: they never block the writer, and
// their waits for the disk (two fsyncs each) are not the writer's, whose
// requests would wait behind them. It stops (and closes lc) when ctx ends.
//
// The WAL starts over from its beginning only when a transaction starts
// with every page of it checkpointed, which a checkpoint running beside a
// busy writer never leaves behind; so once the WAL is walRestartFrames
// long, the checkpointer copies at once what was committed during its
// checkpoint, and asks the writer to copy the few pages left itself (see
// writer).
func (w *Writer) checkpointer(ctx context.Context, lc *db.FastConn) {
	defer lc.Close()
	t := w.clock.NewTicker(checkpointEvery)
	defer t.Stop()
	var last time.Time // of the last checkpoint
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if !w.walDirty.Load() || !w.writerIdle.Load() && w.clock.Now().Sub(last) < checkpointBusyEvery {
			continue
		}
		w.walDirty.Store(false) // (a commit from now on sets it again)
		w.writerIdle.Store(false)
		last = w.clock.Now()
		frames, err := lc.Checkpoint()
		if err != nil {
			w.log.Warn("database checkpoint failed", "err", err)
			continue
		}
		if frames >= walRestartFrames {
			if _, err := lc.Checkpoint(); err != nil {
				w.log.Warn("database checkpoint failed", "err", err)
				continue
			}
			w.walLong.Store(true)
		}
	}
}

// writer is the writer goroutine: it owns the connection lc and commits
// the pending work of all callers in one transaction. A caller whose work
// ends in a logical error leaves nothing of it behind: work refused before
// it wrote anything (the usual case: a refusal is found by the reads and
// conditional writes that come first) costs nothing to undo; work refused
// after it wrote has the group rolled back and run again without it (a
// savepoint per caller did the same, but SQLite copies every page a
// savepoint touches first). A committed group goes to the syncer, which
// answers its callers once the WAL is on disk: the writer goes on with the
// next group meanwhile. It stops (and closes lc) when ctx ends.
//
// The writer commits at the syncer's pace: while the syncer is writing
// earlier groups to disk, the callers that come wait, and make one group
// when it is done (or once maxGroup wait). What a group commits during a
// sync waits for the next sync anyway; the writer then commits once per
// sync, each page a group changes is written to the WAL once rather than
// once per commit, and the database's write lock is free while the disk
// works, for the others who write to it (an exclusion from the CLI or the
// mail watcher waits for that lock). A confirm (a read, unless it
// withdraws its request) is run at once: its caller waits for nothing
// else.
func (w *Writer) writer(ctx context.Context, lc *db.FastConn, synced chan<- syncGroup, sg *syncGate) {
	defer lc.Close()
	defer close(synced)
	committed := func(ops []*writeq.Op, results []error, wrote bool) {
		g := answerEarly(ops, results)
		if len(g.ops) == 0 && !wrote {
			return // (confirms that only read: nothing to sync)
		}
		sg.pending.Add(1)
		synced <- g
		w.walDirty.Store(true)
		if w.walLong.Swap(false) {
			// Copy what the checkpointer has not yet, so that the next
			// transaction starts the WAL over (unless a reader still
			// uses it: then the checkpointer asks again).
			if _, err := lc.Checkpoint(); err != nil {
				w.log.Warn("database checkpoint failed", "err", err)
			}
		}
	}
	// run commits ops as one group; when the group fails as a whole, each
	// of its callers is tried alone, so that one caller's failure never
	// fails the others.
	run := func(ops []*writeq.Op) {
		before := lc.TotalChanges()
		results, err := runGroup(lc, ops, w.logical)
		if err == nil {
			committed(ops, results, lc.TotalChanges() != before)
			return
		}
		for _, op := range ops {
			if op.Answered {
				continue
			}
			results, err := runGroup(lc, []*writeq.Op{op}, w.logical)
			if err != nil {
				if !op.Answered {
					op.Done <- err
				}
				continue
			}
			committed([]*writeq.Op{op}, results, true)
		}
	}
	for {
		op := writeq.Next(ctx, w.reserves, w.writes, func() { w.writerIdle.Store(true) })
		if op == nil {
			return
		}
		ops := writeq.Take(w.reserves, w.writes, []*writeq.Op{op}, maxGroup)
		// While the syncer is at work, what a group commits waits for its
		// next sync anyway: the callers that come meanwhile wait for it
		// to end, without the write lock, and then make one group. A
		// confirm, which waits for its answer only, is run at once.
		if sg.pending.Load() > 0 {
			var confirms []*writeq.Op
			ops, confirms = splitConfirms(ops)
			if len(confirms) > 0 {
				run(confirms)
			}
		}
		for len(ops) < maxGroup && sg.pending.Load() > 0 {
			var op *writeq.Op
			select {
			case <-sg.idle:
				continue
			case <-ctx.Done():
			case op = <-w.reserves:
			case op = <-w.writes:
			}
			if op == nil {
				break
			}
			if op.AnswerOnRun {
				run([]*writeq.Op{op})
				continue
			}
			ops = append(ops, op)
		}
		if len(ops) > 0 {
			run(ops)
		}
	}
}

// splitConfirms splits ops into the confirms among them (Op.AnswerOnRun),
// which are answered as soon as they ran, and the others, each in their
// order.
func splitConfirms(ops []*writeq.Op) (rest, confirms []*writeq.Op) {
	rest = ops[:0:0]
	for _, op := range ops {
		if op.AnswerOnRun {
			confirms = append(confirms, op)
		} else {
			rest = append(rest, op)
		}
	}
	return rest, confirms
}

// syncGate tells the writer whether the syncer is at work.
type syncGate struct {
	pending atomic.Int64  // groups handed to the syncer and not yet answered
	idle    chan struct{} // (capacity 1) signalled each time the syncer answered groups
}

func newSyncGate() *syncGate { return &syncGate{idle: make(chan struct{}, 1)} }

// answered notes that the syncer answered n groups.
func (sg *syncGate) answered(n int) {
	sg.pending.Add(-int64(n))
	select {
	case sg.idle <- struct{}{}:
	default:
	}
}

// runGroup runs the work of ops in one transaction of lc and commits it,
// and returns what each caller is to be answered: nil, or its logical
// error (logical says which are; the work of a caller refused leaves
// nothing behind, see writer). When it returns an error, nothing was
// committed.
func runGroup(lc *db.FastConn, ops []*writeq.Op, logical func(error) bool) ([]error, error) {
	results := make([]error, len(ops))
	refused := make([]bool, len(ops)) // answered already: not run again
	for again := true; again; {
		again = false
		if err := lc.Begin(); err != nil {
			return nil, err
		}
		for i, op := range ops {
			if refused[i] || op.Answered {
				refused[i] = true
				continue
			}
			if err := op.Ctx.Err(); err != nil {
				results[i], refused[i] = err, true
				continue
			}
			if op.Savepoint {
				if err := lc.Savepoint(); err != nil {
					lc.Rollback()
					return nil, err
				}
			}
			before := lc.TotalChanges()
			err := op.F(lc)
			if err != nil && !logical(err) {
				lc.Rollback()
				return nil, err
			}
			results[i] = err
			if op.AnswerOnRun && !op.Savepoint && lc.TotalChanges() == before {
				// It only read, under the write lock: answered now, not
				// run again.
				op.Done <- err
				op.Answered, refused[i] = true, true
				continue
			}
			if op.Savepoint {
				if err != nil {
					refused[i] = true
					if err := lc.RollbackToSavepoint(); err != nil {
						lc.Rollback()
						return nil, err
					}
				}
				if err := lc.ReleaseSavepoint(); err != nil {
					lc.Rollback()
					return nil, err
				}
				continue
			}
			if err != nil {
				refused[i] = true
				if lc.TotalChanges() != before {
					// Refused after it wrote: the others again, without it.
					lc.Rollback()
					again = true
					break
				}
			}
		}
	}
	if err := lc.Commit(); err != nil {
		lc.Rollback()
		return nil, err
	}
	return results, nil
}

// answerEarly answers the callers of Note among ops, a group just
// committed, with their results, and returns the others, to be answered
// once the WAL is on disk (syncer). The group goes to the syncer even when
// none is left: what it committed reaches the disk soon either way.
func answerEarly(ops []*writeq.Op, results []error) syncGroup {
	var g syncGroup
	for i, op := range ops {
		if op.Answered {
			continue
		}
		if op.Early {
			op.Done <- results[i]
		} else {
			g.ops, g.results = append(g.ops, op), append(g.results, results[i])
		}
	}
	return g
}

// syncGroup is a group the writer committed, waiting for the WAL to reach
// the disk: its callers and what each is to be answered.
type syncGroup struct {
	ops     []*writeq.Op
	results []error
}

// syncer answers the callers of the groups the writer committed once what
// they wrote is durable: it takes every group committed so far, has the
// WAL written to disk with one fsync (sync), and answers them. This is
// synchronous=FULL's guarantee (a request is logged durably before it is
// sent) without its cost: the writer's connection commits with
// synchronous=NORMAL, which writes the WAL without waiting for the disk,
// and the writer commits the next group while the disk works. When the
// sync fails, nothing committed since the last good one is known to be
// durable: its callers get the error (a request not yet sent is not sent).
// Each time it has answered groups it calls answered, when not nil, with
// their number (the writer's syncGate). It returns when synced is closed
// and every group is answered.
func syncer(synced <-chan syncGroup, sync func() error, answered func(n int)) {
	for g := range synced {
		groups := batch.Drain(synced, []syncGroup{g}, 0)
		err := sync()
		if err != nil {
			err = fmt.Errorf("sqlite: request log not written to disk: %w", err)
		}
		for _, g := range groups {
			for i, op := range g.ops {
				if err != nil {
					op.Done <- err
				} else {
					op.Done <- g.results[i]
				}
			}
		}
		if answered != nil {
			answered(len(groups))
		}
	}
}
