package audit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot/db"
)

// ErrUnknownHead is returned (wrapped) by Run when Options.Head names no
// block of the seal chain.
var ErrUnknownHead = errors.New("audit: unknown chain head")

// integrityRun is the integrity rule running in the background while the
// other rules read the request log: the two read different tables, so on a
// machine with more than one core the audit takes about as long as the
// longer of them instead of their sum. Its problems wait in a bounded
// channel and are reported after the other rules', in the order VerifySeals
// finds them, as if it had run last.
type integrityRun struct {
	limit    int64 // the last block counted (Options.Head), -1: all
	problems chan db.SealProblem
	done     chan struct{} // closed when rep and err are set
	rep      *db.SealReport
	err      error
	cancel   context.CancelFunc
}

// integrityBacklog bounds the problems waiting to be reported.
const integrityBacklog = 256

// startIntegrity starts the integrity rule: it recomputes the seal chain
// and reports each record changed, deleted, inserted or backdated after
// sealing, and each broken block. With Options.Head, only what was sealed up
// to that block counts (an unknown Head fails here, before anything runs).
// With Options.Sites, it checks those sites' records and the blocks that
// sealed them, not the whole chain. finishIntegrity must be called, or the
// run's stop on error.
func (a *auditor) startIntegrity(ctx context.Context) (*integrityRun, error) {
	run := &integrityRun{limit: -1, problems: make(chan db.SealProblem, integrityBacklog), done: make(chan struct{})}
	if a.opts.Head != "" {
		b, err := a.store.SealBlockByHash(ctx, a.opts.Head)
		if db.IsNotFound(err) {
			return nil, fmt.Errorf("%w %q: no block of this database's seal chain has that hash (was the report made from another database?)", ErrUnknownHead, a.opts.Head)
		}
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		run.limit = b.ID
	}
	// For some sites, their rows and the blocks that sealed them (see
	// db.Store.VerifySiteSeals); for all, the whole chain.
	verify := a.store.VerifySeals
	if len(a.opts.Sites) > 0 {
		verify = func(ctx context.Context, emit func(db.SealProblem) error) (*db.SealReport, error) {
			return a.store.VerifySiteSeals(ctx, a.opts.Sites, emit)
		}
	}
	ctx, run.cancel = context.WithCancel(ctx)
	go func() {
		defer close(run.done)
		defer close(run.problems)
		run.rep, run.err = verify(ctx, func(p db.SealProblem) error {
			if run.limit >= 0 && (p.BlockID == 0 || p.BlockID > run.limit) {
				return nil // sealed after the head, or not sealed at all
			}
			select {
			case run.problems <- p:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return run, nil
}

// stop ends a run whose problems will not be reported, and waits
// for it.
func (run *integrityRun) stop() {
	if run == nil {
		return
	}
	run.cancel()
	for range run.problems {
	}
	<-run.done
}

// finishIntegrity reports the run's problems and sums it up.
func (a *auditor) finishIntegrity(run *integrityRun) error {
	defer run.stop()
	for p := range run.problems {
		if err := a.report(Violation{Rule: RuleIntegrity, Check: p.Check, Requests: []RequestRef{},
			Evidence: p.Evidence, Table: p.Table, RowID: p.RowID, Block: p.BlockID}); err != nil {
			return err
		}
	}
	<-run.done
	if run.err != nil {
		return fmt.Errorf("audit: integrity: %w", run.err)
	}
	rep := run.rep
	a.count(RuleIntegrity, rep.Rows+rep.Unsealed, 0)
	ss := &SealSummary{Blocks: rep.Blocks, SealedRows: rep.Rows, Unsealed: rep.Unsealed}
	if rep.Head != nil {
		ss.Head, ss.HeadBlock, ss.Checked = rep.Head.Hash, rep.Head.ID, rep.Head.Hash
	}
	if a.opts.Head != "" {
		ss.Checked = strings.ToLower(strings.TrimSpace(a.opts.Head))
	}
	a.summary.Seal = ss
	return nil
}
