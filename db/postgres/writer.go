package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/internal/writeq"
	"github.com/lohisoft/lohibot/internal/clock"
)

// Group commit on PostgreSQL.
const (
	// maxGroup bounds the callers committed together: in a transaction
	// (not a pipeline) a cycle's write has a savepoint, and PostgreSQL
	// keeps the subtransactions of a transaction cheaply only up to 64.
	maxGroup = 48
	// leaseTurns bounds the lease transactions and statements (Lease,
	// LeaseStmt, FreshLease, and through Turn the batched cycle starts
	// and the crawl list's claims) a crawler runs at once, of the pool's
	// connections (db.PostgresConns): the rest, at least one, stay for
	// the writer and for reads, which thousands of sites starting at once
	// would otherwise queue behind.
	leaseTurns = db.PostgresConns - 1
)

// A pool of fewer than two connections would leave lease work no turn
// (leaseTurns zero): this does not compile then.
var _ = [db.PostgresConns - 2]struct{}{}

// errRefused is the answer of a reservation refused by its own result: one
// statement, which wrote nothing.
var errRefused = errors.New("postgres: reservation refused")

// Writer is the PostgreSQL db.Writer. One writer goroutine commits the
// pending work of many callers in one transaction (group commit), so that
// a busy crawler pays one WAL flush per group rather than per request: the
// writes that come while a group commits make the next group (more
// writers, each waiting for its own flush, committed smaller groups for
// more of the server's CPU, and no faster). Each caller's work runs inside
// a savepoint, unless it needs none (a reservation, which is one
// statement, and a completion, which never refuses): a refusal undoes that
// caller's writes only, and a database error undoes the group, whose
// callers are then run alone, each in its own transaction. A caller is
// answered only after its group committed, so a request is logged and its
// budget slot reserved before it is sent.
type Writer struct {
	store   *db.Store
	clock   clock.Clock
	refused func(error) bool

	writes   chan *writeq.Op // to the writer
	reserves chan *writeq.Op // to the writer, taken first
	done     chan struct{}   // closed when the writer stopped
	stop     context.CancelFunc
	turns    chan struct{} // one token per lease transaction running (leaseTurns)
	// loseCommit, when set (tests), is asked after each group committed
	// whether to answer it as a connection lost before the commit's
	// answer came back: its callers get errLostCommit, their work
	// committed.
	loseCommit func() bool
}

// errLostCommit is the error of a group loseCommit lost: a connection lost
// as the commit's answer came back.
var errLostCommit = fmt.Errorf("postgres: commit's answer lost: %w", io.ErrUnexpectedEOF)

// NewWriter starts the writer over store's pool.
func NewWriter(ctx context.Context, store *db.Store, o db.WriterOptions) *Writer {
	w := newWriter(store, o)
	w.start(ctx)
	return w
}

// start starts w's goroutine.
func (w *Writer) start(ctx context.Context) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.stop = cancel
	go func() {
		defer close(w.done)
		commitGroups(wctx, w.reserves, w.writes, maxGroup, func(ops []*writeq.Op) error { return w.commit(wctx, ops) })
	}()
}

// newWriter returns a Writer over store with o, its goroutine not started.
func newWriter(store *db.Store, o db.WriterOptions) *Writer {
	w := &Writer{store: store, clock: clock.Or(o.Clock), refused: o.Refused, writes: make(chan *writeq.Op), reserves: make(chan *writeq.Op),
		done: make(chan struct{}), turns: make(chan struct{}, leaseTurns)}
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

// call hands op to the writer on to and waits for its answer (an error
// that says the disk is full wraps db.ErrDiskFull).
func (w *Writer) call(ctx context.Context, to chan<- *writeq.Op, op *writeq.Op) error {
	return db.MarkDiskFull(writeq.Call(ctx, to, w.done, op))
}

// Reserve implements db.Writer: one statement (the lease is renewed every
// time), without a savepoint, taken before the other work waiting, in a
// pipeline when its whole group pipelines.
//
// While the database is unreachable it waits (db.Store.Retry). When the
// connection was lost, whether the reservation committed is unknown: before
// it is tried again, a row of it that landed is found and withdrawn (not
// sent), and the reservation is tried again as of now, so that its row
// tells when the request is sent and the policy is checked again.
func (w *Writer) Reserve(ctx context.Context, res *db.Reservation) (db.Refusal, error) {
	var (
		refusal db.Refusal
		lost    bool // the last try lost its connection: its outcome is unknown
	)
	err := w.store.Retry(ctx, func() error {
		if lost {
			if err := w.resolve(ctx, res); err != nil {
				return err
			}
			lost = false
		}
		err := w.call(ctx, w.reserves, reserveOp(ctx, res, &refusal))
		lost = db.Transient(err)
		return err
	})
	if errors.Is(err, errRefused) {
		return refusal, nil
	}
	return db.Reserved, err
}

// lostReservation is the error text of a reservation withdrawn because its
// connection was lost as it committed.
const lostReservation = "not sent: the database connection was lost as it was reserved"

// resolve finds out whether the reservation res, whose connection was lost,
// landed: if its row is there, it is withdrawn (the request was not sent,
// and its budget slot is given back); either way res is made ready to be
// reserved again, as of now at the earliest, its lease's expiry as far
// after that as it was after the time it was first reserved for.
func (w *Writer) resolve(ctx context.Context, res *db.Reservation) error {
	q := res.Request
	now := w.clock.Now().UTC().Truncate(time.Microsecond)
	tx, err := w.store.BeginWrite(ctx)
	if err != nil {
		return err
	}
	if _, err := db.WithdrawLost(ctx, tx, q, now, lostReservation); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	q.ID, q.BudgetSlot = 0, nil
	if late := now.Sub(q.SentAt); late > 0 {
		q.SentAt = now
		res.LeaseExpires = res.LeaseExpires.Add(late)
	}
	return nil
}

// reserveOp is the op of the reservation res, which sets *refusal each
// time it runs, and answers errRefused when it was refused.
func reserveOp(ctx context.Context, res *db.Reservation, refusal *db.Refusal) *writeq.Op {
	res.Renew = true
	answer := func(r db.Refusal, err error) error {
		*refusal = r
		if err == nil && r != db.Reserved {
			return errRefused
		}
		return err
	}
	return &writeq.Op{NoSavepoint: true,
		F: func(tx db.WriteTx) error { return answer(db.ReserveRequest(ctx, tx, res)) },
		Pipe: func(p *db.Pipeline) func() error {
			a := p.Reserve(res)
			return func() error { return answer(a.Refusal, a.Err) }
		}}
}

// Confirm implements db.Writer: a policy change waits out the requests
// reserved ahead before it takes its time (db.Tx.AwaitReservedAhead), so
// there is nothing to check.
func (w *Writer) Confirm(context.Context, db.Confirmation) (bool, error) { return false, nil }

// Withdraw implements db.Writer: retried while the database is
// unreachable (withdrawing twice changes nothing).
func (w *Writer) Withdraw(ctx context.Context, id int64, reason string) error {
	return w.store.Retry(ctx, func() error {
		return w.call(ctx, w.writes, &writeq.Op{F: func(tx db.WriteTx) error {
			return db.WithdrawRequest(ctx, tx, id, w.clock.Now().UTC().Truncate(time.Microsecond), reason)
		}})
	})
}

// Complete implements db.Writer: without a savepoint, in a pipeline when
// its whole group pipelines; retried while the database is unreachable (a
// completion is written once: it completes only a row not completed yet).
func (w *Writer) Complete(ctx context.Context, f db.WriteFunc, pipe db.PipeFunc) error {
	return w.store.Retry(ctx, func() error {
		return w.call(ctx, w.writes, &writeq.Op{F: f, Pipe: pipe, NoSavepoint: true})
	})
}

// End implements db.Writer: as Complete (PostgreSQL answers every caller
// once its group committed, which is durable).
func (w *Writer) End(ctx context.Context, f db.WriteFunc, pipe db.PipeFunc) error {
	return w.Complete(ctx, f, pipe)
}

// Write implements db.Writer: retried while the database is unreachable.
func (w *Writer) Write(ctx context.Context, f db.WriteFunc) error {
	return w.store.Retry(ctx, func() error { return w.call(ctx, w.writes, &writeq.Op{F: f}) })
}

// Note implements db.Writer: as Write.
func (w *Writer) Note(ctx context.Context, f db.WriteFunc) error { return w.Write(ctx, f) }

// Refusable implements db.Writer: what is refused now and then takes
// leases (a cycle's), so it is Lease.
func (w *Writer) Refusable(ctx context.Context, f db.WriteFunc) error { return w.Lease(ctx, f) }

// Lease implements db.Writer: f runs in a transaction of its own, outside
// the writer's groups, on one of the lease turns; retried while the
// database is unreachable (with no turn held while it waits).
func (w *Writer) Lease(ctx context.Context, f db.WriteFunc) error {
	return w.store.Retry(ctx, func() error { return w.lease(ctx, f) })
}

// lease is Lease, tried once.
func (w *Writer) lease(ctx context.Context, f db.WriteFunc) error {
	release, err := w.Turn(ctx)
	if err != nil {
		return err
	}
	defer release()
	tx, err := w.store.BeginWrite(ctx)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Index implements db.Writer: as Lease, in a transaction of its own
// outside the writer's groups, on one of the lease turns.
func (w *Writer) Index(ctx context.Context, f db.WriteFunc) error { return w.Lease(ctx, f) }

// LeaseStmt implements db.Writer: f's one statement is committed on its
// own (one round trip), on one of the lease turns; retried while the
// database is unreachable.
func (w *Writer) LeaseStmt(ctx context.Context, f db.WriteFunc) error {
	return w.store.Retry(ctx, func() error {
		release, err := w.Turn(ctx)
		if err != nil {
			return err
		}
		defer release()
		return f(w.store.AutoCommit())
	})
}

// FreshLease implements db.Writer: one INSERT, committed on its own. (Tried
// again after a lost commit that landed, it answers false: Lease then
// finds the lease this crawler's.)
func (w *Writer) FreshLease(ctx context.Context, key, holder string, expires, now time.Time) (bool, error) {
	var ok bool
	err := w.LeaseStmt(ctx, func(tx db.WriteTx) error {
		var err error
		ok, err = db.InsertLease(ctx, tx, key, holder, expires, now)
		return err
	})
	return ok, err
}

// Turn implements db.Writer.
func (w *Writer) Turn(ctx context.Context) (func(), error) {
	select {
	case w.turns <- struct{}{}:
		return func() { <-w.turns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Traits implements db.Writer: a fleet shares the server.
func (w *Writer) Traits() db.Traits {
	return db.Traits{Batched: true, LeaseEveryRequest: true, HeldAhead: true, Shared: true, IndexApart: true}
}

// Close implements db.Writer.
func (w *Writer) Close() {
	w.stop()
	<-w.done
}

// commitGroups is the writer's loop: it takes the callers waiting on first
// and writes in groups of at most limit (whoever is queued when a group
// starts, those on first before the others: the group grows while the
// last commit is on its way to disk) and commits each group with run,
// which answers every caller of a group it committed. When a group fails
// as a whole, each of its callers is tried alone, so that one caller's
// failure never fails the others; but when the group lost its connection
// (db.Transient), every caller is answered with that error. It blocks
// until ctx ends.
func commitGroups(ctx context.Context, first, writes <-chan *writeq.Op, limit int, run func([]*writeq.Op) error) {
	for {
		op := writeq.Next(ctx, first, writes, nil)
		if op == nil {
			return
		}
		ops := writeq.Take(first, writes, []*writeq.Op{op}, limit)
		if err := run(ops); err != nil {
			if db.Transient(err) {
				// The connection was lost: the group may have
				// committed, so no caller is run again here; each
				// finds out and tries again (db.Store.Retry).
				for _, op := range ops {
					if !op.Answered {
						op.Done <- err
					}
				}
				continue
			}
			// (A caller answered already, before the group failed, is
			// not answered again: see writeq.Op.AnswerOnRun.)
			if len(ops) == 1 {
				if !ops[0].Answered {
					ops[0].Done <- err
				}
				continue
			}
			for _, op := range ops {
				if op.Answered {
					continue
				}
				if err := run([]*writeq.Op{op}); err != nil && !op.Answered {
					op.Done <- err
				}
			}
		}
	}
}

// commit runs the group ops in one transaction and answers their callers
// once it committed. It returns the error that failed the group as a
// whole, when one did; then no caller is answered, unless the group is one
// caller with a logical error.
func (w *Writer) commit(ctx context.Context, ops []*writeq.Op) error {
	if !slices.ContainsFunc(ops, func(op *writeq.Op) bool { return op.Pipe == nil }) {
		return w.pipeline(ctx, ops)
	}
	tx, err := w.store.BeginWrite(ctx)
	if err != nil {
		return err
	}
	alone := len(ops) == 1
	results := make([]error, len(ops))
	for i, op := range ops {
		if err := op.Ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		// An op that writes nothing when it refuses needs no savepoint;
		// a database error fails the group anyway.
		saved := !alone && !op.NoSavepoint
		if saved {
			if err := tx.Savepoint(ctx); err != nil {
				tx.Rollback()
				return err
			}
		}
		err := op.F(tx)
		switch {
		case err == nil:
		case !w.logical(err):
			tx.Rollback()
			return err
		case alone:
			tx.Rollback()
			op.Done <- err
			return nil
		default:
			if saved {
				if err := tx.RollbackToSavepoint(ctx); err != nil {
					tx.Rollback()
					return err
				}
			}
			results[i] = err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if w.loseCommit != nil && w.loseCommit() {
		return errLostCommit
	}
	for i, op := range ops {
		op.Done <- results[i]
	}
	return nil
}

// pipeline is commit for a group whose ops all have a pipe: their
// statements go to PostgreSQL in one pipeline (one round trip, one
// transaction, committed when it returns: db.Store.RunPipeline), and each
// caller is answered once it committed.
func (w *Writer) pipeline(ctx context.Context, ops []*writeq.Op) error {
	var (
		p       db.Pipeline
		answers = make([]func() error, len(ops))
	)
	for i, op := range ops {
		if op.Ctx.Err() == nil {
			answers[i] = op.Pipe(&p)
		}
	}
	if err := w.store.RunPipeline(ctx, &p); err != nil {
		return fmt.Errorf("postgres: database: %w", err)
	}
	if w.loseCommit != nil && w.loseCommit() {
		return errLostCommit
	}
	for i, op := range ops {
		if answers[i] == nil {
			op.Done <- op.Ctx.Err()
		} else {
			op.Done <- answers[i]()
		}
	}
	return nil
}
