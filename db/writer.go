package db

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lohisoft/lohibot/internal/clock"
)

// WriteFunc is one caller's work in a write transaction. It may run more
// than once (it must only set its results): when another caller's work in
// its group failed, or was refused after it wrote.
type WriteFunc func(tx WriteTx) error

// PipeFunc is a WriteFunc's work as statements queued on a Pipeline, for an
// engine that sends a group's statements in one round trip (PostgreSQL):
// it returns the function that gives the work's answer once the pipeline
// ran. Like a WriteFunc, it may run more than once.
type PipeFunc func(p *Pipeline) func() error

// A Writer commits the crawler's writes. Each engine has its own (package
// db/engine picks it), which commits the work of many callers in one
// transaction (group commit), so that a busy crawler pays one flush to
// disk per group rather than per request. Whatever the engine:
//
//   - a request's reservation is answered only once it is durable, so a
//     request is never sent before its row is on disk;
//   - a caller whose work is refused (a Refusal, or an error its Refused
//     option reports) leaves nothing of it behind, and one caller's
//     failure never fails the others of its group;
//   - on an engine whose server may be unreachable for a moment
//     (PostgreSQL restarted), work that lost its connection waits for it
//     and runs again (Store.Retry), a reservation whose commit's outcome
//     was lost withdrawn first if it landed: the caller sees an error only
//     once the database stayed unreachable for RetryBudget.
//
// A Writer is safe for concurrent use. Its methods block until their work
// is answered, or ctx ends before the work was taken up.
type Writer interface {
	// Reserve writes the reservation res (ReserveRequest) ahead of other
	// work waiting, and answers once it is durable: Reserved, or why it
	// was refused (then nothing of it was written).
	Reserve(ctx context.Context, res *Reservation) (Refusal, error)
	// Confirm checks, once the time a request reserved ahead of it was
	// reserved for has come, that its site was not excluded since the
	// policy version the request was reserved at. If it was, the request
	// is completed as withdrawn (OutcomeWithdrawn) and Confirm reports
	// true. The check is ordered with every policy change: a change it
	// does not see takes its time later. An engine whose policy changes
	// wait out the requests reserved ahead (Traits.HeldAhead) answers
	// false at once.
	Confirm(ctx context.Context, c Confirmation) (withdrawn bool, err error)
	// Withdraw completes the request id, reserved and not sent, as
	// withdrawn for reason. It is the crawler's own state: answered once
	// committed.
	Withdraw(ctx context.Context, id int64, reason string) error
	// Complete runs f (or pipe), a request's completion, which never
	// refuses, and answers once it is durable.
	Complete(ctx context.Context, f WriteFunc, pipe PipeFunc) error
	// End runs f (or pipe), the crawler's own state that never refuses
	// (a cycle's end with its leases given back): answered once
	// committed, and durable with the next request's reservation at the
	// latest.
	End(ctx context.Context, f WriteFunc, pipe PipeFunc) error
	// Write runs f and answers once it is durable.
	Write(ctx context.Context, f WriteFunc) error
	// Note runs f, the crawler's own state (leases, a cycle opened),
	// which no request depends on until that request's own reservation
	// is durable: answered once committed.
	Note(ctx context.Context, f WriteFunc) error
	// Refusable is Note for work refused, now and then, after it wrote
	// (a cycle opened with its lease, when the site was visited
	// recently): the refusal costs the rest of its group nothing.
	Refusable(ctx context.Context, f WriteFunc) error
	// Lease runs f, which takes, renews or gives back leases: on an
	// engine a fleet shares, in a transaction of its own outside the
	// groups (lease rows are what crawlers contend for, and a group
	// waiting for another crawler's lease would hold up everything in
	// it); otherwise as Note.
	Lease(ctx context.Context, f WriteFunc) error
	// LeaseStmt is Lease for f that runs one statement, which an engine
	// may commit on its own, without a transaction around it.
	LeaseStmt(ctx context.Context, f WriteFunc) error
	// FreshLease takes the lease key for holder until expires, with
	// next_at now, when no one has held it yet, in one statement of its
	// own, where the engine makes that cheaper than Lease. It reports
	// false when it did not take the lease so; Lease then decides.
	FreshLease(ctx context.Context, key, holder string, expires, now time.Time) (bool, error)
	// Turn takes one of the turns the crawler's lease work (claims of the
	// crawl list's blocks and batched cycle starts among it) shares, and returns the func that
	// gives it back: it bounds the connections lease work holds.
	Turn(ctx context.Context) (release func(), err error)
	// Traits says what the crawler may rely on with this engine.
	Traits() Traits
	// Close stops the writer once the work it took up is answered. Work
	// handed to it afterwards is refused with ErrWriterClosed.
	Close()
}

// Traits are what the crawler may rely on, or should do, with a Writer's
// engine.
type Traits struct {
	// Batched says reads and cycle starts that many sites make at once
	// are worth batching: each is a round trip to a server that a fleet
	// shares, and a batch frees connections for the writer.
	Batched bool
	// LeaseEveryRequest says every reservation renews its host's lease:
	// a crawler's requests show it alive within a gap.
	LeaseEveryRequest bool
	// HeldAhead says a policy change waits out the requests reserved
	// ahead of their time before it takes its time (Tx.AwaitReservedAhead):
	// they need no Confirm, and may be reserved as early as
	// MaxReserveAhead.
	HeldAhead bool
	// Shared says a fleet of crawlers may share the database: each claims
	// the crawl list in blocks, and takes sites up only as its capacity
	// serves them, so that the fleet shares the work.
	Shared bool
}

// Confirmation is what Writer.Confirm checks: the request RequestID to
// Site, reserved at policy version Version.
type Confirmation struct {
	RequestID int64
	Site      string
	Version   int64
}

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Clock tells the time written by Confirm and Withdraw and times the
	// engine's own work (SQLite's checkpoints). Nil means the system
	// clock.
	Clock clock.Clock
	// Log receives what the writer cannot report to a caller. Nil means
	// slog.Default().
	Log *slog.Logger
	// Refused reports whether err, returned by a caller's WriteFunc, is
	// an answer of the caller's own logic (nothing to do: the work is
	// undone, the caller answered with err) rather than a database
	// failure. Nil means none is.
	Refused func(err error) bool
}

// ErrWriterClosed answers work handed to a Writer after Close.
var ErrWriterClosed = errors.New("db: writer closed")

// Withdrawn is the error text of a request reserved ahead of its time and
// withdrawn by Writer.Confirm: its site was excluded at policy version v.
func Withdrawn(v int64) string {
	return fmt.Sprintf("not sent: the site was excluded at policy v%d before its time", v)
}
