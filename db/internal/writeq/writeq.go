// Package writeq is what the engines' group-commit writers share: one
// caller's work (Op), how a caller hands it over and waits (Call), and how
// a writer takes the callers waiting (Next, Take).
package writeq

import (
	"context"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/batch"
)

// Op is one caller's work for a writer.
type Op struct {
	Ctx  context.Context
	F    db.WriteFunc
	Done chan error
	// Early answers the caller on commit, before the sync (SQLite:
	// Writer.Note).
	Early bool
	// Savepoint runs F in a savepoint of its own (SQLite:
	// Writer.Refusable).
	Savepoint bool
	// AnswerOnRun answers the caller as soon as F ran, before its group
	// commits, when F wrote nothing (SQLite): what F read under the
	// writer's write lock holds whether the group commits or not
	// (Writer.Confirm).
	AnswerOnRun bool
	// Answered is set by a writer once the caller has its answer: the op
	// is not run or answered again.
	Answered bool
	// NoSavepoint says F writes nothing when it is refused (PostgreSQL):
	// it is one statement that refuses by its result (a reservation), or
	// it never refuses (a completion). The PostgreSQL writer runs it
	// without a savepoint.
	NoSavepoint bool
	// Pipe, when set, is F's work as statements queued on a pipeline
	// (PostgreSQL). Like F, it may run twice.
	Pipe db.PipeFunc
}

// Call hands op (its work and flags set) to a writer on to and waits for
// its answer; ErrWriterClosed once stopped is closed.
func Call(ctx context.Context, to chan<- *Op, stopped <-chan struct{}, op *Op) error {
	op.Ctx, op.Done = ctx, make(chan error, 1)
	select {
	case to <- op:
	case <-ctx.Done():
		return ctx.Err()
	case <-stopped:
		return db.ErrWriterClosed
	}
	return <-op.Done
}

// Next waits for a caller on first or writes, first's before the others,
// and returns it; nil once ctx ended. It calls idle, when not nil, each
// time it finds no caller waiting.
func Next(ctx context.Context, first, writes <-chan *Op, idle func()) *Op {
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

// Take adds to ops the callers waiting, those on first before the others,
// up to limit in all.
func Take(first, writes <-chan *Op, ops []*Op, limit int) []*Op {
	return batch.Drain(writes, batch.Drain(first, ops, limit), limit)
}
