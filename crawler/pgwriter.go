package crawler

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/lohisoft/lohibot/db"
)

// PostgreSQL group commit.
const (
	// pgWriters is how many PostgreSQL writer goroutines (and connections)
	// a crawler runs. One, as on SQLite: the writes that come while a
	// group commits make the next group, so the busier the crawler, the
	// more writes a commit carries. Four writers, each waiting for its own
	// WAL flush, committed groups of few writes: in the fleet benchmark
	// (1,000 sites x 25 pages at 1 s, one crawler) 0.62-0.74 commits per
	// request, where one writer commits 0.20-0.30 times, and PostgreSQL
	// took a third less CPU for the crawl (6.3-9.1 s against 10.7-13.3 s)
	// with the crawl as fast (1.066-1.095 x the bound against
	// 1.077-1.092 x; two crawlers 1.088-1.114 x against 1.091-1.123 x).
	pgWriters = 1
	// pgMaxGroup bounds the callers committed together on PostgreSQL: in
	// a transaction (not a pipeline) a cycle's write has a savepoint, and
	// PostgreSQL keeps the subtransactions of a transaction cheaply only
	// up to 64.
	pgMaxGroup = 48
	// pgLeaseConns bounds the lease transactions and statements
	// (withLeaseTx, leaseStmt, the batched starts of runStartBatch) a
	// crawler runs at once on PostgreSQL, of the pool's connections
	// (db.PostgresConns): the rest, at least one, stay for the writer and
	// for reads. When
	// thousands of sites each opened a cycle in a lease transaction of
	// their own, unbounded, they held every connection, and the writers
	// (the sites' first reservations) and the policy's reads queued
	// behind them for up to a second. Four rather than eight (with two
	// start batches rather than four): in the fleet benchmark the peak
	// went from 7-9.5 connections per process to 5-7, and the crawl was
	// no slower (one crawler 1.064-1.079 x the bound against
	// 1.069-1.095 x, two 1.084-1.123 x against 1.098-1.120 x, nine runs
	// each, alternated). Now one fewer than the pool holds
	// (db.PostgresConns).
	pgLeaseConns = db.PostgresConns - 1
)

// A pool of fewer than two connections would leave the lease statements
// no turn (pgLeaseConns zero): this does not compile then.
var _ = [db.PostgresConns - 2]struct{}{}

// startPGWriters starts the PostgreSQL writers; done is closed when they
// have all stopped (after ctx ends).
func (c *Crawler) startPGWriters(ctx context.Context, done chan struct{}) {
	var wg sync.WaitGroup
	for range pgWriters {
		wg.Go(func() { c.pgWriter(ctx) })
	}
	go func() {
		wg.Wait()
		close(done)
	}()
}

// pgWriter is a PostgreSQL writer goroutine: it commits the pending work of
// many callers in one transaction (group commit), as the SQLite writer
// does, so that a busy crawler pays one WAL flush per group rather than per
// request. Each caller's work runs inside a savepoint, unless it needs none
// (writeOp.noSavepoint: a reservation, which is one statement, and a
// completion, which never refuses): a logical error (nothing to send:
// excluded, budget spent, lease lost, a stale policy) undoes that caller's
// writes only, and a database error undoes the group,
// whose callers are then run alone, each in its own transaction. A caller
// is answered only after its group committed, so a request is still logged
// and its budget slot reserved before it is sent. It stops when ctx ends.
func (c *Crawler) pgWriter(ctx context.Context) {
	commitGroups(ctx, c.reserves, c.writes, pgMaxGroup, func(ops []*writeOp) error { return c.pgCommit(ctx, ops) })
}

// pgCommit runs the group ops in one transaction and answers their callers
// once it committed (see pgWriter). It returns the error that failed the
// group as a whole, when one did; then no caller is answered, unless the
// group is one caller with a logical error.
func (c *Crawler) pgCommit(ctx context.Context, ops []*writeOp) error {
	if !slices.ContainsFunc(ops, func(op *writeOp) bool { return op.pipe == nil }) {
		return c.pgPipeline(ctx, ops)
	}
	tx, err := c.store.BeginWrite(ctx)
	if err != nil {
		return err
	}
	alone := len(ops) == 1
	results := make([]error, len(ops))
	for i, op := range ops {
		if err := op.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		// An op that writes nothing when it refuses needs no savepoint;
		// a database error fails the group anyway.
		saved := !alone && !op.noSavepoint
		if saved {
			if err := tx.Savepoint(ctx); err != nil {
				tx.Rollback()
				return err
			}
		}
		err := op.f(tx)
		switch {
		case err == nil:
		case !logicalError(err):
			tx.Rollback()
			return err
		case alone:
			tx.Rollback()
			op.done <- err
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
	for i, op := range ops {
		op.done <- results[i]
	}
	return nil
}

// pgPipeline is pgCommit for a group whose ops all have a pipe: their
// statements go to PostgreSQL in one pipeline (one round trip, one
// transaction, committed when it returns: db.Store.RunPipeline), and each
// caller is answered once it committed.
func (c *Crawler) pgPipeline(ctx context.Context, ops []*writeOp) error {
	var (
		p       db.Pipeline
		answers = make([]func() error, len(ops))
	)
	for i, op := range ops {
		if op.ctx.Err() == nil {
			answers[i] = op.pipe(&p)
		}
	}
	if err := c.store.RunPipeline(ctx, &p); err != nil {
		return fmt.Errorf("crawler: database: %w", err)
	}
	for i, op := range ops {
		if answers[i] == nil {
			op.done <- op.ctx.Err()
		} else {
			op.done <- answers[i]()
		}
	}
	return nil
}

// withLeaseTx runs f, which takes, renews or gives back leases, in a
// transaction of its own on PostgreSQL, outside the writers' groups: lease
// rows are what two crawlers of a fleet contend for, and a group holding
// one while waiting for another crawler's would hold up (or deadlock with)
// everything else in it. On SQLite, which has one writer, it is stateTx.
func (c *Crawler) withLeaseTx(ctx context.Context, f func(tx db.WriteTx) error) error {
	if !c.pg {
		return c.stateTx(ctx, f)
	}
	release, err := c.leaseConn(ctx)
	if err != nil {
		return err
	}
	defer release()
	tx, err := c.store.BeginWrite(ctx)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// leaseStmt is withLeaseTx for f that runs one statement: on PostgreSQL it
// runs without a transaction around it (committed on its own, one round
// trip).
func (c *Crawler) leaseStmt(ctx context.Context, f func(tx db.WriteTx) error) error {
	if !c.pg {
		return c.stateTx(ctx, f)
	}
	release, err := c.leaseConn(ctx)
	if err != nil {
		return err
	}
	defer release()
	return f(c.store.AutoCommit())
}

// leaseConn takes one of the pgLeaseConns turns for a lease transaction
// or statement on PostgreSQL, and returns the func that gives it back.
func (c *Crawler) leaseConn(ctx context.Context) (func(), error) {
	select {
	case c.leaseConns <- struct{}{}:
		return func() { <-c.leaseConns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
