package crawler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/batch"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/webbotauth"
)

// Reasons a request is not sent, found inside the reservation transaction.
var (
	// ErrExcluded means the policy gate answered that the site is excluded.
	ErrExcluded = errors.New("crawler: site is excluded")
	// ErrBudgetSpent means the cycle has no budget slot left.
	ErrBudgetSpent = errors.New("crawler: budget spent")
	// ErrLeaseLost means this crawler no longer holds the host's lease.
	ErrLeaseLost = errors.New("crawler: host lease lost")
)

// logicalError reports whether err is an answer of a transaction's own
// logic (nothing to send, ask again) rather than a database failure.
func logicalError(err error) bool {
	var skip *errSkip
	return errors.Is(err, errStale) || errors.Is(err, ErrBudgetSpent) || errors.Is(err, ErrLeaseLost) ||
		errors.Is(err, ErrExcluded) || errors.As(err, &skip)
}

// withTx runs f in a write transaction: f is handed to a writer goroutine,
// which commits the work of many callers in one transaction (group
// commit): on SQLite the one writer, with prepared statements (see
// runGroup); on PostgreSQL its one writer too (see pgWriter). Either way a
// caller refused by a logical error leaves nothing behind. f may run twice
// (it must only set its results), when another f of its group failed or
// was refused after it wrote.
func (c *Crawler) withTx(ctx context.Context, f func(tx db.WriteTx) error) error {
	return c.write(ctx, c.writes, &writeOp{f: f})
}

// stateTx is withTx for the crawler's own state (leases, a cycle opened or
// ended): on SQLite its caller is answered once its group committed, not
// once the WAL is on disk. None of it is evidence that a request was
// sent, and none of it needs to be durable before the next request is:
// that request's reservation is answered only after a sync of the WAL,
// which holds every group committed before it (the WAL is written in
// order). A crash before that sync loses the state change, and no
// request depended on it.
func (c *Crawler) stateTx(ctx context.Context, f func(tx db.WriteTx) error) error {
	return c.write(ctx, c.writes, &writeOp{f: f, early: true})
}

// reserveTx is withTx for a request's reservation (begin), which a site
// waits on before it may send: a writer takes every reservation waiting
// before the other work (completions, which the site's gap overlaps),
// so a busy writer delays requests no more than it must. On PostgreSQL f
// is one statement (db.ReserveRequest), which writes nothing when it
// refuses: it runs without a savepoint (writeOp.noSavepoint), or as pipe,
// in a pipeline.
func (c *Crawler) reserveTx(ctx context.Context, f func(tx db.WriteTx) error, pipe func(p *db.Pipeline) func() error) error {
	return c.write(ctx, c.reserves, &writeOp{f: f, pipe: pipe, noSavepoint: true})
}

// refusableTx is stateTx for work that is refused, now and then, after it
// wrote (a cycle opened with its lease, when the site was visited
// recently: see startCycle): it runs in a savepoint of its own on SQLite,
// so that a refusal costs the rest of its group nothing (see runGroup). On
// PostgreSQL it is withLeaseTx.
func (c *Crawler) refusableTx(ctx context.Context, f func(tx db.WriteTx) error) error {
	if c.pg {
		return c.withLeaseTx(ctx, f)
	}
	return c.write(ctx, c.writes, &writeOp{f: f, early: true, savepoint: true})
}

// write hands w (its f and flags set) to the writers on to and waits for
// its answer.
func (c *Crawler) write(ctx context.Context, to chan<- *writeOp, w *writeOp) error {
	w.ctx, w.done = ctx, make(chan error, 1)
	select {
	case to <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.writerDone:
		return errWriterStopped
	}
	return <-w.done
}

// writeOp is one caller's work for the SQLite writer.
type writeOp struct {
	ctx  context.Context
	f    func(tx db.WriteTx) error
	done chan error
	// early answers the caller on commit, before the sync (stateTx).
	early bool
	// savepoint runs f in a savepoint of its own on SQLite (refusableTx).
	savepoint bool
	// answerOnRun answers the caller as soon as f ran, before its group
	// commits, when f wrote nothing (SQLite): what f read under the
	// writer's write lock holds whether the group commits or not (confirm).
	answerOnRun bool
	// answered is set by the SQLite writer once the caller has its answer:
	// the op is not run or answered again.
	answered bool
	// noSavepoint says f writes nothing when it returns a logical error
	// (see logicalError) on PostgreSQL: it is one statement that refuses
	// by its result (a reservation), or it never refuses (a completion).
	// The PostgreSQL writers run it without a savepoint.
	noSavepoint bool
	// pipe, when set, is f's work as statements queued on a pipeline
	// (PostgreSQL): it returns the function that gives f's answer once
	// the pipeline ran. Like f, it may run twice.
	pipe func(p *db.Pipeline) func() error
}

// maxGroup bounds the callers committed together.
const maxGroup = 256

// openWriter opens the SQLite writer's own connection to the file the
// store uses, and one for its checkpoints.
func (c *Crawler) openWriter(ctx context.Context) (w, ck *db.FastConn, wal *walFile, err error) {
	path, err := c.store.SQLiteFile(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("crawler: database writer: %w", err)
	}
	// The writer commits with synchronous=NORMAL; its syncer makes each
	// commit durable before answering (see syncer). Checkpoints are the
	// checkpointer's (and, now and then, the writer's own: see writer),
	// never a commit's.
	if w, err = db.OpenFastConn(path, db.FastOptions{SyncLater: true, ManualCheckpoints: true}); err == nil {
		if ck, err = db.OpenFastConn(path, db.FastOptions{}); err != nil {
			w.Close()
		}
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("crawler: database writer: %w", err)
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

// Checkpoints of the SQLite writer's WAL.
const (
	// checkpointEvery is how often the checkpointer copies committed pages
	// from the WAL into the database file while the writer keeps up: each
	// checkpoint is small, and so are its waits for the disk, which the
	// syncer's fsync (that every request waits for) shares.
	checkpointEvery = 100 * time.Millisecond
	// checkpointBusyEvery is how often it does while the writer never
	// found itself idle since the last checkpoint: the writer is then what
	// sets the crawl's speed, and a page committed many times between two
	// checkpoints is copied once. At 3,000 sites crawled at once every
	// index page a site writes to is committed a few times a second:
	// checkpoints every 100 ms wrote a quarter more to the disk
	// (BenchmarkCrawlScale: 3.1-3.3 GB against 2.4-2.6 GB) and made the
	// crawl 10-12 % slower.
	checkpointBusyEvery = 500 * time.Millisecond
	// walRestartFrames is the WAL length (in pages) past which the writer
	// has the WAL started over from its beginning: 32 MiB of 4 KiB pages,
	// so that the writer's own checkpoint, which waits for the disk, comes
	// seldom (see writer); but every page read that misses SQLite's cache
	// searches one hash table per 4,096 pages of WAL, and at 32,768 the
	// 200-site crawl was 5 % slower.
	walRestartFrames = 8192
)

// checkpointer copies what the writer committed from the WAL into the
// database file, every checkpointEvery while there is anything new (every
// checkpointBusyEvery while the writer is busy throughout), with
// passive checkpoints on its own connection lc: they never block the
// writer, and their waits for the disk (two fsyncs each) are not the
// writer's, whose requests would wait behind them. It stops (and closes
// lc) when ctx ends.
//
// The WAL starts over from its beginning only when a transaction starts
// with every page of it checkpointed, which a checkpoint running beside a
// busy writer never leaves behind; so once the WAL is walRestartFrames
// long, the checkpointer copies at once what was committed during its
// checkpoint, and asks the writer to copy the few pages left itself (see
// writer).
func (c *Crawler) checkpointer(ctx context.Context, lc *db.FastConn) {
	defer lc.Close()
	t := c.clock.NewTicker(checkpointEvery)
	defer t.Stop()
	var last time.Time // of the last checkpoint
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if !c.walDirty.Load() || !c.writerIdle.Load() && c.clock.Now().Sub(last) < checkpointBusyEvery {
			continue
		}
		c.walDirty.Store(false) // (a commit from now on sets it again)
		c.writerIdle.Store(false)
		last = c.clock.Now()
		frames, err := lc.Checkpoint()
		if err != nil {
			c.log.Warn("database checkpoint failed", "err", err)
			continue
		}
		if frames >= walRestartFrames {
			if _, err := lc.Checkpoint(); err != nil {
				c.log.Warn("database checkpoint failed", "err", err)
				continue
			}
			c.walLong.Store(true)
		}
	}
}

// writer is the SQLite writer goroutine: it owns the connection lc and
// commits the pending work of all callers in one transaction. A caller
// whose work ends in a logical error (see logicalError) leaves nothing of
// it behind, as on PostgreSQL: work refused before it wrote anything (the
// usual case: a refusal is found by the reads and conditional writes that
// come first) costs nothing to undo; work refused after it wrote has the
// group rolled back and run again without it. (Each caller's work in a
// savepoint of its own did the same, but SQLite copies every page a
// savepoint touches first: a tenth of the writer's time.) A committed
// group goes to the syncer, which answers its callers once the WAL is on
// disk (see syncer): the writer goes on with the next group meanwhile. It
// stops (and closes lc) when ctx ends.
//
// The writer commits at the syncer's pace: while the syncer is writing
// earlier groups to disk, the callers that come wait, and make one group
// when it is done (or once maxGroup wait). They lose little by that: what
// a group commits during a sync waits for the next sync anyway. The
// writer then commits once per sync rather than once per handful of
// callers, and each page a group changes (the request log's index pages
// above all) is written to the WAL once rather than once per commit; and
// it leaves the database's write lock free while the disk works, for the
// others who write to it (an exclusion from the CLI or the mail watcher
// waits for that lock). A confirm (a read, unless it withdraws its
// request) is run at once: its caller waits for nothing else.
//
// Measured against a commit whenever the writer was free
// (BenchmarkCrawl, 500 x 30 at 200 ms: 3,200-4,400 commits for 10,500
// requests): 1.52-1.60x the bound against 1.63-1.73x, 3,000 x 25 at 1 s
// 1.55-1.58x against 1.60-1.64x. Keeping the group open during the sync
// and running each caller's work as it came was as fast, but held the
// write lock nearly all the time: an exclusion made meanwhile waited up to
// 4 s for it, against 0.7-1.9 s before and 0.5-0.6 s now.
func (c *Crawler) writer(ctx context.Context, lc *db.FastConn, synced chan<- syncGroup, sg *syncGate) {
	defer lc.Close()
	defer close(synced)
	committed := func(ops []*writeOp, results []error, wrote bool) {
		g := answerEarly(ops, results)
		if len(g.ops) == 0 && !wrote {
			return // (confirms that only read: nothing to sync)
		}
		sg.pending.Add(1)
		synced <- g
		c.walDirty.Store(true)
		if c.walLong.Swap(false) {
			// Copy what the checkpointer has not yet, so that the next
			// transaction starts the WAL over (unless a reader still
			// uses it: then the checkpointer asks again).
			if _, err := lc.Checkpoint(); err != nil {
				c.log.Warn("database checkpoint failed", "err", err)
			}
		}
	}
	// run commits ops as one group; when the group fails as a whole, each
	// of its callers is tried alone, so that one caller's failure never
	// fails the others.
	run := func(ops []*writeOp) {
		before := lc.TotalChanges()
		results, err := runGroup(lc, ops)
		if err == nil {
			committed(ops, results, lc.TotalChanges() != before)
			return
		}
		for _, op := range ops {
			if op.answered {
				continue
			}
			results, err := runGroup(lc, []*writeOp{op})
			if err != nil {
				if !op.answered {
					op.done <- err
				}
				continue
			}
			committed([]*writeOp{op}, results, true)
		}
	}
	for {
		op := nextWrite(ctx, c.reserves, c.writes, func() { c.writerIdle.Store(true) })
		if op == nil {
			return
		}
		ops := takeWrites(c.reserves, c.writes, []*writeOp{op}, maxGroup)
		// While the syncer is at work, what a group commits waits for its
		// next sync anyway: the callers that come meanwhile wait for it
		// to end, without the write lock, and then make one group. A
		// confirm, which waits for its answer only, is run at once.
		if sg.pending.Load() > 0 {
			var confirms []*writeOp
			ops, confirms = splitConfirms(ops)
			if len(confirms) > 0 {
				run(confirms)
			}
		}
		for len(ops) < maxGroup && sg.pending.Load() > 0 {
			var op *writeOp
			select {
			case <-sg.idle:
				continue
			case <-ctx.Done():
			case op = <-c.reserves:
			case op = <-c.writes:
			}
			if op == nil {
				break
			}
			if op.answerOnRun {
				run([]*writeOp{op})
				continue
			}
			ops = append(ops, op)
		}
		if len(ops) > 0 {
			run(ops)
		}
	}
}

// splitConfirms splits ops into the confirms among them
// (writeOp.answerOnRun), which are answered as soon as they ran, and the
// others, each in their order.
func splitConfirms(ops []*writeOp) (rest, confirms []*writeOp) {
	rest = ops[:0:0]
	for _, op := range ops {
		if op.answerOnRun {
			confirms = append(confirms, op)
		} else {
			rest = append(rest, op)
		}
	}
	return rest, confirms
}

// syncGate tells the SQLite writer whether the syncer is at work.
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

// nextWrite waits for a caller on first or writes, first's before the
// others, and returns it; nil once ctx ended. It calls idle, when not
// nil, each time it finds no caller waiting.
func nextWrite(ctx context.Context, first, writes <-chan *writeOp, idle func()) *writeOp {
	select {
	case op := <-first:
		return op
	default:
	}
	select {
	case op := <-writes:
		return op
	default:
	}
	if idle != nil {
		idle()
	}
	select {
	case <-ctx.Done():
		return nil
	case op := <-first:
		return op
	case op := <-writes:
		return op
	}
}

// takeWrites adds to ops the callers waiting, those on first before the
// others, up to limit in all.
func takeWrites(first, writes <-chan *writeOp, ops []*writeOp, limit int) []*writeOp {
	return batch.Drain(writes, batch.Drain(first, ops, limit), limit)
}

// runGroup runs the work of ops in one transaction of lc and commits it,
// and returns what each caller is to be answered: nil, or its logical
// error (the work of a caller refused leaves nothing behind, see writer).
// When it returns an error, nothing was committed.
func runGroup(lc *db.FastConn, ops []*writeOp) ([]error, error) {
	results := make([]error, len(ops))
	refused := make([]bool, len(ops)) // answered already: not run again
	for again := true; again; {
		again = false
		if err := lc.Begin(); err != nil {
			return nil, err
		}
		for i, op := range ops {
			if refused[i] || op.answered {
				refused[i] = true
				continue
			}
			if err := op.ctx.Err(); err != nil {
				results[i], refused[i] = err, true
				continue
			}
			if op.savepoint {
				if err := lc.Savepoint(); err != nil {
					lc.Rollback()
					return nil, err
				}
			}
			before := lc.TotalChanges()
			err := op.f(lc)
			if err != nil && !logicalError(err) {
				lc.Rollback()
				return nil, err
			}
			results[i] = err
			if op.answerOnRun && !op.savepoint && lc.TotalChanges() == before {
				// It only read, under the write lock: answered now, not
				// run again.
				op.done <- err
				op.answered, refused[i] = true, true
				continue
			}
			if op.savepoint {
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

// answerEarly answers the callers of stateTx among ops, a group just
// committed, with their results, and returns the others, to be answered
// once the WAL is on disk (syncer). The group goes to the syncer even when
// none is left: what it committed reaches the disk soon either way.
func answerEarly(ops []*writeOp, results []error) syncGroup {
	var g syncGroup
	for i, op := range ops {
		if op.answered {
			continue
		}
		if op.early {
			op.done <- results[i]
		} else {
			g.ops, g.results = append(g.ops, op), append(g.results, results[i])
		}
	}
	return g
}

// syncGroup is a group the writer committed, waiting for the WAL to reach
// the disk: its callers and what each is to be answered.
type syncGroup struct {
	ops     []*writeOp
	results []error
}

// syncer answers the callers of the groups the writer committed once
// what they wrote is durable: it takes every group committed so far, has
// the WAL written to disk with one fsync (sync), and answers them. This is
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
			err = fmt.Errorf("crawler: request log not written to disk: %w", err)
		}
		for _, g := range groups {
			for i, op := range g.ops {
				if err != nil {
					op.done <- err
				} else {
					op.done <- g.results[i]
				}
			}
		}
		if answered != nil {
			answered(len(groups))
		}
	}
}

// commitGroups is the PostgreSQL writers' loop: it takes the callers
// waiting on first and writes in groups of at most limit (whoever is
// queued when a group starts, those on first before the others: the group
// grows while the last commit is on its way to disk) and commits each
// group with run, which answers every caller of a group it committed.
// When a group fails as a whole, each of its callers is tried alone, so
// that one caller's failure never fails the others. It blocks until ctx
// ends.
func commitGroups(ctx context.Context, first, writes <-chan *writeOp, limit int, run func([]*writeOp) error) {
	for {
		op := nextWrite(ctx, first, writes, nil)
		if op == nil {
			return
		}
		ops := takeWrites(first, writes, []*writeOp{op}, limit)
		if err := run(ops); err != nil {
			// (A caller answered already, before the group failed, is
			// not answered again: see writeOp.answerOnRun.)
			if len(ops) == 1 {
				if !ops[0].answered {
					ops[0].done <- err
				}
				continue
			}
			for _, op := range ops {
				if op.answered {
					continue
				}
				if err := run([]*writeOp{op}); err != nil && !op.answered {
					op.done <- err
				}
			}
		}
	}
}

// errWriterStopped answers writes after Close.
var errWriterStopped = errors.New("crawler: closed")

// acquire tries to take the lease key (a host, or "cycle:SITE") for this
// crawler. It returns the row's next_at when taken, or busyUntil (the
// lease's expiry) when another live crawler holds it. An expired lease of a
// crawler that died is taken over; since that crawler's last request ended
// before the expiry at the latest, next_at moves to the expiry plus gap.
// When then is not nil, it runs in the same transaction once the lease is
// taken; when it fails, the lease is not taken either, and acquire returns
// its error.
func (c *Crawler) acquire(ctx context.Context, key string, gap time.Duration, then func(tx db.WriteTx) error) (nextAt time.Time, busyUntil time.Time, err error) {
	if c.pg && then == nil {
		// A lease no one has held yet is one INSERT: committed on its own,
		// without a transaction around it.
		release, err := c.leaseConn(ctx)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		now := c.now()
		ok, err := db.InsertLease(ctx, c.store.AutoCommit(), key, c.holder, now.Add(c.opts.LeaseTTL), now)
		release()
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("crawler: lease %s: %w", key, err)
		}
		if ok {
			return now.UTC(), time.Time{}, nil
		}
	}
	for attempt := 0; attempt < 10; attempt++ {
		now := c.now()
		exp := now.Add(c.opts.LeaseTTL)
		var (
			got  bool
			busy time.Time
		)
		tx := c.withLeaseTx
		if then != nil {
			tx = c.refusableTx
		}
		err = tx(ctx, func(tx db.WriteTx) error {
			var err error
			got, nextAt, busy, err = c.takeLease(ctx, tx, key, gap, now, exp)
			if err != nil || !got || then == nil {
				return err
			}
			return then(tx)
		})
		var skip *errSkip
		if errors.As(err, &skip) {
			return time.Time{}, time.Time{}, err
		}
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("crawler: lease %s: %w", key, err)
		}
		if got {
			return nextAt.UTC(), time.Time{}, nil
		}
		if !busy.IsZero() {
			return time.Time{}, busy, nil
		}
	}
	return time.Time{}, c.clock.Now().Add(time.Second), nil
}

// takeLease is acquire's work in tx: it takes the lease key for this
// crawler until exp when it can, and reports whether it did and the
// lease's next_at (see acquire), or busy, the expiry of another live
// crawler's lease on key.
func (c *Crawler) takeLease(ctx context.Context, tx db.WriteTx, key string, gap time.Duration, now, exp time.Time) (got bool, nextAt, busy time.Time, err error) {
	ok, err := db.InsertLease(ctx, tx, key, c.holder, exp, now)
	if err != nil || ok {
		return ok, now, time.Time{}, err
	}
	l, err := db.ReadLease(ctx, tx, key)
	if err != nil {
		return false, time.Time{}, time.Time{}, err
	}
	switch {
	case l.Holder == c.holder:
		ok, err = db.RenewLease(ctx, tx, key, c.holder, exp)
		nextAt = l.NextAt
	case l.Holder == "":
		ok, err = db.ClaimLease(ctx, tx, key, c.holder, exp)
		nextAt = l.NextAt
	case l.ExpiresAt.After(now):
		return false, time.Time{}, l.ExpiresAt, nil
	default:
		nextAt = l.NextAt
		if t := l.ExpiresAt.Add(gap); t.After(nextAt) {
			nextAt = t.UTC().Truncate(time.Microsecond)
		}
		c.log.Info("lease taken over from a crawler that stopped renewing it", "lease", key, "from", l.Holder, "expired_at", l.ExpiresAt)
		ok, err = db.TakeOverLease(ctx, tx, key, c.holder, exp, nextAt, l.Holder, now)
		if err == nil && ok {
			err = c.abandon(ctx, tx, key, l.Holder, l.ExpiresAt)
		}
	}
	if err != nil {
		return false, time.Time{}, time.Time{}, err
	}
	return ok, nextAt, time.Time{}, nil
}

// release gives a lease back, keeping next_at (raised to nextAt when later)
// so that the next holder keeps the gap.
func (c *Crawler) release(ctx context.Context, key string, nextAt time.Time) error {
	return c.leaseStmt(ctx, func(tx db.WriteTx) error {
		if !nextAt.IsZero() {
			nextAt = nextAt.UTC().Truncate(time.Microsecond)
		}
		return db.ReleaseLease(ctx, tx, key, c.holder, c.now(), nextAt)
	})
}

// renewAll pushes back the expiry of every lease this crawler holds.
func (c *Crawler) renewAll(ctx context.Context) error {
	return c.leaseStmt(ctx, func(tx db.WriteTx) error {
		// On PostgreSQL, rows a writer's group has locked are passed
		// over (the completion in that group renews its host's lease
		// itself), so the heartbeat never waits for, nor deadlocks with,
		// a group.
		return db.RenewLeases(ctx, tx, c.holder, c.now().Add(c.opts.LeaseTTL))
	})
}

// releaseAll gives back every lease this crawler still holds.
func (c *Crawler) releaseAll(ctx context.Context) error {
	return c.leaseStmt(ctx, func(tx db.WriteTx) error {
		return db.ReleaseLeases(ctx, tx, c.holder, c.now())
	})
}

// reqRow is a request about to be sent.
type reqRow struct {
	CycleID    *int64
	Site       string
	Host       string
	Origin     string
	URL        string
	Purpose    string
	Attempt    int
	RedirectOf *int64
	SnapshotID *int64
	Rule       string
	Line       int
	Delay      time.Duration // the gap in force before this request
	Cond       db.Validators // sent as If-None-Match / If-Modified-Since when set
	// Budget is the cycle's page budget, for a page request: the request
	// given its last slot is the cycle's last (see lastOfCycle).
	Budget int
	// At is when the request is to be sent, if later than its
	// reservation: the log row's sent_at (see exchangeDue).
	At time.Time
	// renewed is the host lease's expiry when the reservation renewed it.
	renewed time.Time

	// Filled by begin.
	ID       int64
	Slot     int
	SentAt   time.Time
	Verdict  policy.Verdict
	Budgeted bool
}

// lastOfCycle says the request took its cycle's last budget slot: the
// cycle sends nothing after it (fetchPage ends the cycle when every slot
// is reserved, before any retry or robots.txt).
func (r *reqRow) lastOfCycle() bool {
	return r.Purpose == db.PurposePage && r.Budget > 0 && r.Slot >= r.Budget
}

// askGate asks the policy gate about site (the gate reads the policy
// version and applies any change committed since it last looked) and keeps
// the answer for begin.
func (c *Crawler) askGate(ctx context.Context, site string) (policy.Verdict, error) {
	v, err := c.gate.Check(ctx, site)
	if err != nil {
		return policy.Verdict{}, fmt.Errorf("crawler: %w", err)
	}
	c.verdicts.Store(site, v)
	return v, nil
}

// begin is the reservation transaction written before a request is sent: it
// reads the policy version and makes sure the gate's answer for the site was
// given at that very version (else the gate is asked again: a policy change
// committed since), makes sure this crawler's lease on the host outlasts
// the request, reserves a budget slot for a page request (never given
// back), and writes the request's log row with sent_at. It returns
// ErrExcluded, ErrBudgetSpent or ErrLeaseLost when the request must not be
// sent.
//
// The lease is renewed (and found still held) only when less than
// leaseRenewBelow of it is left as this crawler last wrote it
// (hs.leaseUntil): until its expiry no other crawler may take it (acquire
// takes over expired leases only), so a lease with more left is held, and
// will be for the whole request. Renewing it at every request cost a row
// update per request.
//
// The gate's last answer for the site is reused while the version read in
// the transaction is the one it was given at: the set of excluded sites is
// the same at the same version, so the answer is exactly what asking again
// would give, without a second read of the version per request.
func (c *Crawler) begin(ctx context.Context, hs *hostState, r *reqRow) error {
	for attempt := 0; ; attempt++ {
		var v policy.Verdict
		last, ok := c.verdicts.Load(r.Site)
		if ok && attempt == 0 && !last.(policy.Verdict).Excluded {
			v = last.(policy.Verdict)
		} else {
			var err error
			v, err = c.askGate(ctx, r.Site)
			if err != nil {
				return err
			}
		}
		r.Verdict = v
		if v.Excluded {
			return ErrExcluded
		}
		err := c.reserveTx(ctx, func(tx db.WriteTx) error { return c.reserve(ctx, tx, hs, r, v) },
			func(p *db.Pipeline) func() error { return c.reservePipe(p, hs, r, v) })
		stale := errors.Is(err, errStale)
		if stale && attempt < 20 {
			continue
		}
		if err != nil {
			if errors.Is(err, ErrBudgetSpent) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrExcluded) {
				return err
			}
			return fmt.Errorf("crawler: request log: %w", err)
		}
		if !r.renewed.IsZero() {
			hs.leaseUntil = r.renewed
		}
		c.stats.requests.Add(1)
		return nil
	}
}

// leaseRenewBelow is how much of a host's lease must be left when a
// request is sent: the request's timeout and a margin (for the
// completion's write, an unread answer's grace and the clocks of a fleet),
// at least half the lease.
func (c *Crawler) leaseRenewBelow() time.Duration {
	return max(c.opts.LeaseTTL/2, c.opts.Timeout+leaseMargin)
}

// leaseMargin is what a lease has left beyond a request's timeout when the
// request is sent (leaseRenewBelow).
const leaseMargin = 5 * time.Second

// reserve is begin's work in the transaction tx: it reserves r, given the
// gate's verdict v (not excluded), and fills r's ID, Slot, SentAt and
// renewed. It returns errStale when the policy version is no longer v's
// (ask the gate again), ErrLeaseLost or ErrBudgetSpent when r must not be
// sent. On PostgreSQL it is one statement, which writes nothing when it
// refuses.
func (c *Crawler) reserve(ctx context.Context, tx db.WriteTx, hs *hostState, r *reqRow, v policy.Verdict) error {
	res := c.reservation(hs, r, v)
	refusal, err := db.ReserveRequest(ctx, tx, res)
	return reserveAnswer(r, res, refusal, err)
}

// reservePipe is reserve's work queued on the pipeline p; the function it
// returns answers once p ran.
func (c *Crawler) reservePipe(p *db.Pipeline, hs *hostState, r *reqRow, v policy.Verdict) func() error {
	res := c.reservation(hs, r, v)
	a := p.Reserve(res)
	return func() error { return reserveAnswer(r, res, a.Refusal, a.Err) }
}

// reservation returns the reservation of r to hs's host, given the gate's
// verdict v. A request reserved ahead of its time is logged as sent at
// that time: it is not sent earlier (exchangeDue). On SQLite the host's
// lease is renewed only when less than leaseRenewBelow of it is left as
// this crawler last wrote it (see begin); PostgreSQL's one statement
// renews it every time.
func (c *Crawler) reservation(hs *hostState, r *reqRow, v policy.Verdict) *db.Reservation {
	now := c.now()
	sent := now
	if r.At.After(now) {
		sent = r.At
	}
	row := db.Request{CycleID: r.CycleID, Site: r.Site, Host: r.Host, Origin: r.Origin, URL: r.URL,
		Purpose: r.Purpose, Node: c.opts.Node, Attempt: r.Attempt, RedirectOf: r.RedirectOf, RobotsSnapshotID: r.SnapshotID,
		RobotsRule: r.Rule, RobotsLine: r.Line, PolicyCheck: v.String(), DelayMS: r.Delay.Milliseconds(), SentAt: sent}
	return &db.Reservation{Request: &row, Version: v.Version, Holder: c.holder,
		LeaseExpires: now.Add(c.opts.LeaseTTL), Renew: c.pg || hs.leaseUntil.Sub(now) < c.leaseRenewBelow(),
		Budgeted: r.Purpose == db.PurposePage}
}

// reserveAnswer fills r from its reservation res, answered refusal (or
// err), and returns reserve's answer.
func reserveAnswer(r *reqRow, res *db.Reservation, refusal db.Refusal, err error) error {
	switch {
	case err != nil:
		return err
	case refusal == db.RefusedStale:
		return errStale // a policy change committed since the gate answered
	case refusal == db.RefusedLease:
		return ErrLeaseLost
	case refusal == db.RefusedBudget:
		return ErrBudgetSpent
	}
	r.ID, r.SentAt = res.Request.ID, res.Request.SentAt
	if s := res.Request.BudgetSlot; s != nil {
		r.Slot = *s
	}
	r.renewed = time.Time{}
	if res.Renew {
		r.renewed = res.LeaseExpires
	}
	return nil
}

var errStale = errors.New("crawler: policy changed")

// confirm checks, once the time a request was reserved ahead for has come
// (exchangeDue, on SQLite), that its site was not excluded since its
// reservation: if it was, it completes the request as withdrawn
// (db.OutcomeWithdrawn) and returns ErrExcluded. The check
// runs in a writer's transaction, ordered with every policy change (which
// takes the database's write lock before it takes its time: see
// policy.Exclude): a change it does not see commits after it, so at a
// time later than the request's sent_at, as the audit's exclusions rule
// asks.
func (c *Crawler) confirm(ctx context.Context, r *reqRow) error {
	withdrawn := false
	// (With the reservations, ahead of other writes: the request waits on
	// it. Answered as soon as it ran when it found nothing changed: a
	// change not seen takes the write lock after this group's transaction,
	// so its time is later still. Answered on commit when it withdrew a
	// request not sent.)
	err := c.write(ctx, c.reserves, &writeOp{early: true, answerOnRun: true, f: func(tx db.WriteTx) error {
		withdrawn = false
		version, err := db.PolicyVersionForWrite(ctx, tx)
		if err != nil || version == r.Verdict.Version {
			return err
		}
		excluded, err := db.ExcludedSince(ctx, tx, r.Site, r.Verdict.Version)
		if err != nil || !excluded {
			return err
		}
		withdrawn = true
		return db.WithdrawRequest(ctx, tx, r.ID, c.now(), fmt.Sprintf("not sent: the site was excluded at policy v%d before its time", version))
	}})
	if err != nil {
		c.withdraw(ctx, r)
		return fmt.Errorf("crawler: request log: %w", err)
	}
	if withdrawn {
		return ErrExcluded
	}
	return nil
}

// withdraw completes a request reserved ahead of its time that will not be
// sent (its crawl was interrupted meanwhile, or its check failed) as
// withdrawn. When that fails, the row stays open, and is closed as
// abandoned when another crawler takes the host's lease over.
func (c *Crawler) withdraw(ctx context.Context, r *reqRow) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := c.stateTx(ctx, func(tx db.WriteTx) error {
		return db.WithdrawRequest(ctx, tx, r.ID, c.now(), "not sent: the crawl was interrupted before its time")
	})
	if err != nil {
		c.log.Warn("reservation of a request not sent left open", "id", r.ID, "url", r.URL, "err", err)
	}
}

// Reservations ahead of time (exchangeDue).
const (
	// maxReserveAhead bounds how long before its time a request is
	// reserved: on PostgreSQL, an exclusion of its site waits at most this
	// long for it before it takes its time (db.Tx.AwaitReservedAhead).
	maxReserveAhead = db.MaxReserveAhead
)

// reserveAhead is how long before a request's time its reservation is
// written, so that the wait for the database falls in the host's gap
// rather than after it; at most a quarter of the gap and maxReserveAhead.
// On SQLite it is twice the recent time a reservation took, plus 1 ms. On
// PostgreSQL it is maxReserveAhead while at least a quarter of the request
// slots are free (a request reserved ahead holds its slot until it is
// sent; the quarter is left to requests due at once, such as new sites'
// first), and as on SQLite otherwise: there a reservation takes a few ms
// on average, but when sites that started together write their link
// texts or end in the same moment, a writer's group takes 20-100 ms, and
// a reservation timed on the average came that late after the gap. (In
// the fleet benchmark, 1,000 sites at 1 s, one crawler: a request came
// 2.4-3.5 ms after its gap at the median instead of 4.7-5.8 ms, and the
// sites' 8th and 16th pages no longer 15-60 ms late. Before requests were
// reserved ahead, a reservation waited for in the gap added 8-20 ms to
// each gap of that crawl.) With 50 ms and half the slots, that benchmark's
// reservations still came back more than 5 ms after their time in its
// slow groups: 100-690 of each crawler's 10,500 with two crawlers (eight
// runs). With 150 ms, the wave of its requests each second (1,000 in about
// 0.6 s) holds about 240 slots of 512, past half; with 150 ms and a
// quarter, none did in most crawls (at most 292), and a request came
// 0.5-1 ms sooner after its gap on average.
func (c *Crawler) reserveAhead(gap time.Duration) time.Duration {
	ahead := 2*time.Duration(c.reserveTook.Load()) + time.Millisecond
	if c.pg && 4*len(c.inFlight) < 3*cap(c.inFlight) {
		ahead = maxReserveAhead
	}
	return min(ahead, gap/4, maxReserveAhead)
}

// noteReserve adds d, the time a reservation took, to the moving average
// reserveAhead reads (weight 1/8).
func (c *Crawler) noteReserve(d time.Duration) {
	for {
		old := c.reserveTook.Load()
		if c.reserveTook.CompareAndSwap(old, old+(int64(d)-old)/8) {
			return
		}
	}
}

// completion is what is written after a request.
type completion struct {
	ID             int64
	Host           string
	CompletedAt    time.Time
	Status         int // 0: no response
	Bytes          int64
	Duration       time.Duration
	RetryAfter     string
	RetryNotBefore *time.Time
	Outcome        string
	Error          string
	NextAt         time.Time        // when the next request to the host may start
	Stamp          webbotauth.Stamp // what the request was signed with (Web Bot Auth)
	Validators     db.Validators    // the response's ETag and Last-Modified (page requests)

	Page    *db.Page    // stored (upserted) when set
	Unindex string      // URL removed from the index when set
	Anchors []db.Anchor // link texts to store, each with its RequestID
	// Found are the same-site URLs the page linked to that were new to
	// the cycle (recorded for a crawler that resumes it after a crash).
	Found    []string
	CycleID  *int64
	Snapshot *db.RobotsSnapshot // stored when set; its ID is filled
}

// complete writes the request's outcome, the host's next_at and what the
// response adds to the index, in one transaction. It uses a context that
// survives ctx's cancellation, so an interrupted crawl still completes its
// rows.
func (c *Crawler) complete(ctx context.Context, k *completion) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	write, pipe := c.completionWrite(k)
	// A completion never refuses: it needs no savepoint. On PostgreSQL its
	// statements go in a pipeline.
	return c.write(ctx, c.writes, &writeOp{noSavepoint: true,
		f: func(tx db.WriteTx) error { return write(ctx, tx) },
		pipe: func(p *db.Pipeline) func() error {
			pipe(p)
			return func() error { return nil }
		}})
}

// completionWrite returns the work of completing a request with k: write,
// and pipe, the same statements queued on a pipeline (a robots.txt
// snapshot's id is read back from it). Either may run twice (a group that
// failed is run again op by op). A group of writes goes to PostgreSQL as
// one pipeline only when each of its writes has one: a robots.txt
// snapshot's completion without one made every group of a crawl's start
// (each holding one or more) run statement by statement, a round trip
// each, and the sites' first reservations waited behind them.
func (c *Crawler) completionWrite(k *completion) (write func(ctx context.Context, tx db.WriteTx) error, pipe func(p *db.Pipeline)) {
	if len(k.Error) > 500 {
		k.Error = k.Error[:500]
	}
	var status *int
	if k.Status != 0 {
		status = &k.Status
	}
	var sigCreated, sigExpires *time.Time
	if k.Stamp.KeyID != "" {
		sigCreated, sigExpires = &k.Stamp.Created, &k.Stamp.Expires
	}
	fin := db.Completion{Request: &db.Request{ID: k.ID, CompletedAt: &k.CompletedAt, Status: status, Bytes: k.Bytes,
		DurationMS: k.Duration.Milliseconds(), RetryAfter: k.RetryAfter, RetryNotBefore: k.RetryNotBefore, Outcome: k.Outcome,
		Error: k.Error, SigKeyID: k.Stamp.KeyID, SigCreated: sigCreated, SigExpires: sigExpires,
		ETag: k.Validators.ETag, LastModified: k.Validators.LastModified}, Page: k.Page}
	if p := k.Page; p != nil {
		p.RequestID = &k.ID
	}
	if k.CycleID != nil {
		fin.CycleID, fin.Found = *k.CycleID, k.Found
	}
	// The lease row learns the host's next_at only when it is later than
	// --delay after this request: a crawler that takes the lease over after
	// a crash waits until the lease's expiry plus --delay anyway (acquire),
	// and the expiry is already after this request (begin renewed it by
	// more than the timeout), while a Retry-After, a backoff or a
	// Crawl-delay must outlive a crash. Leaving the host writes it too
	// (release).
	if !k.NextAt.IsZero() && k.NextAt.Sub(k.CompletedAt) > c.opts.Delay {
		fin.Lease = &db.LeaseDelay{Host: k.Host, Holder: c.holder, NextAt: k.NextAt.UTC().Truncate(time.Microsecond),
			Expires: c.now().Add(c.opts.LeaseTTL)}
	}
	write = func(ctx context.Context, tx db.WriteTx) error {
		if err := db.FinishRequest(ctx, tx, &fin); err != nil {
			return fmt.Errorf("crawler: complete request: %w", err)
		}
		if s := k.Snapshot; s != nil {
			s.RequestID = &k.ID
			if err := db.InsertRobotsSnapshot(ctx, tx, s); err != nil {
				return fmt.Errorf("crawler: robots snapshot: %w", err)
			}
		}
		if k.Unindex != "" {
			if err := db.DeletePage(ctx, tx, k.Unindex); err != nil {
				return fmt.Errorf("crawler: unindex page: %w", err)
			}
			if k.Outcome == "noindex" {
				// Nothing is kept for a noindex page, its inbound link
				// texts included.
				if err := db.DeleteAnchorsTo(ctx, tx, k.Unindex); err != nil {
					return fmt.Errorf("crawler: unindex anchors: %w", err)
				}
			}
		}
		if err := db.UpsertAnchors(ctx, tx, c.indexable(k.Anchors)); err != nil {
			return fmt.Errorf("crawler: anchors: %w", err)
		}
		return nil
	}
	pipe = func(p *db.Pipeline) {
		p.Finish(&fin)
		if s := k.Snapshot; s != nil {
			s.RequestID = &k.ID
			p.RobotsSnapshot(s)
		}
		if k.Unindex != "" {
			p.Unindex(k.Unindex, k.Outcome == "noindex")
		}
		p.Anchors(c.indexable(k.Anchors))
	}
	return write, pipe
}

// indexable returns the link texts of anchors that may be stored: those
// not pointing at a URL found noindex since they were found.
// anchors itself is left as it is (a write is tried again after its group
// failed).
func (c *Crawler) indexable(anchors []db.Anchor) []db.Anchor {
	var out []db.Anchor
	for i, a := range anchors {
		switch {
		case c.noindex.Contains(a.ToURL):
			if out == nil {
				out = append(make([]db.Anchor, 0, len(anchors)), anchors[:i]...)
			}
		case out != nil:
			out = append(out, a)
		}
	}
	if out == nil {
		return anchors
	}
	return out
}
