package db

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pipeline is write-path statements queued to be sent to PostgreSQL
// together (Store.RunPipeline): one round trip for all of them, run in one
// transaction, instead of one round trip per statement plus the BEGIN and
// the COMMIT. Only statements that need no answer before the next is sent
// go in one: the reservation (which refuses by its result, writing
// nothing), the completion with its robots.txt snapshot (whose id is read
// back), its link texts or the page it takes out of the index, and the end
// of a cycle. The zero value is an empty pipeline. It is not safe for
// concurrent use.
type Pipeline struct {
	b      pgx.Batch
	locked bool // policyLockSQL is queued
}

// Len returns how many statements are queued.
func (p *Pipeline) Len() int { return p.b.Len() }

// Reserve queues the reservation r (see ReserveRequest). Once the pipeline
// ran, the returned ReserveAnswer says whether it was reserved and, if so, r's
// Request has its ID and BudgetSlot.
func (p *Pipeline) Reserve(r *Reservation) *ReserveAnswer {
	out := new(ReserveAnswer)
	if out.Err = checkRequest(r.Request); out.Err != nil {
		return out
	}
	// The policy version is share-locked once, before the first
	// reservation, rather than by each: every share lock a transaction
	// adds to the row while others hold one rewrites the row's lockers
	// (a new multixact), on the one page every reservation reads.
	if !p.locked {
		p.b.Queue(policyLockSQL)
		p.locked = true
	}
	p.b.Queue(reserveLockedSQL, reserveArgs(r)...).QueryRow(func(row pgx.Row) error {
		// An error reading the row is the reservation's own, not the
		// pipeline's: the statement ran, and its transaction commits.
		out.Refusal, out.Err = scanReservation(row, r)
		return nil
	})
	return out
}

// ReserveAnswer is the answer to a reservation queued on a Pipeline: Refusal,
// or Err when its row could not be read.
type ReserveAnswer struct {
	Refusal Refusal
	Err     error
}

// Finish queues the completion k (see FinishRequest).
func (p *Pipeline) Finish(k *Completion) {
	q, args := finishPG(k)
	p.b.Queue(q, args...)
}

// RobotsSnapshot queues the insert of the robots.txt snapshot s (see
// InsertRobotsSnapshot). Once the pipeline ran, s.ID is the new row's id.
func (p *Pipeline) RobotsSnapshot(s *RobotsSnapshot) {
	p.b.Queue(rebind(Postgres, insertRobotsSnapshotSQL), robotsSnapshotArgs(s)...).QueryRow(func(row pgx.Row) error {
		return row.Scan(&s.ID)
	})
}

// Unindex queues the removal of url's page from the index, and of the link
// texts pointing to it when anchorsToo (see DeletePage, DeleteAnchorsTo).
func (p *Pipeline) Unindex(url string, anchorsToo bool) {
	p.b.Queue(rebind(Postgres, deletePageSQL), url)
	if anchorsToo {
		p.b.Queue(rebind(Postgres, deleteAnchorsToSQL), url)
	}
}

// Anchors queues the link texts anchors (see UpsertAnchors).
func (p *Pipeline) Anchors(anchors []Anchor) {
	for q, args := range anchorInserts(anchors) {
		p.b.Queue(rebind(Postgres, q), args...)
	}
}

// EndCycle queues the end of cycle id of site (see EndCycle).
func (p *Pipeline) EndCycle(id int64, site, status, reason string, now time.Time) {
	p.b.Queue(rebind(Postgres, endCycleSQL(status)), status, now, reason, id, CycleRunning)
	p.b.Queue(rebind(Postgres, SiteDueSinceSQL), id, Epoch, site)
}

// ReleaseLease queues the release of the lease key by holder (see
// ReleaseLease).
func (p *Pipeline) ReleaseLease(key, holder string, now, nextAt time.Time) {
	q, args := releaseLeaseSQL(key, holder, now, nextAt)
	p.b.Queue(rebind(Postgres, q), args...)
}

// errNotPgx says a PostgreSQL store's connection is not pgx's.
var errNotPgx = errors.New("db: pipeline: the PostgreSQL connection is not pgx's")

// RunPipeline sends the statements queued on p to PostgreSQL at once, on a
// connection of the pool, and returns when they have run, in order, in one
// transaction (the implicit transaction of a pipeline, up to its one Sync)
// and it committed: with synchronous_commit on, durably. When a statement
// fails, PostgreSQL skips the rest and rolls the transaction back: nothing
// of p is written, and the error is returned. The store must be
// PostgreSQL. It does I/O.
func (s *Store) RunPipeline(ctx context.Context, p *Pipeline) error {
	if p.Len() == 0 {
		return nil
	}
	conn, err := s.pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNotPgx
		}
		return c.Conn().SendBatch(ctx, &p.b).Close()
	})
}
