package audit

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/translog"
)

// integrityRun is the integrity rule running in the background while the
// other rules read the request log: the two read different tables, so on a
// machine with more than one core the audit takes about as long as the
// longer of them instead of their sum. Its problems wait in a bounded
// channel and are reported after the other rules', in the order VerifyLog
// finds them, as if it had run last.
type integrityRun struct {
	problems chan db.LogProblem
	done     chan struct{} // closed when rep and err are set
	rep      *db.LogReport
	err      error
	cancel   context.CancelFunc
	// cp is the checkpoint to reproduce (Options.Checkpoint); sigErr
	// says why its signature does not verify.
	cp     *translog.Checkpoint
	sigErr error
}

// integrityBacklog bounds the problems waiting to be reported.
const integrityBacklog = 256

// startIntegrity starts the integrity rule: it recomputes every leaf of the
// transparency log from its row and the tree from the leaves, and reports
// each record changed, deleted, inserted or reordered, and a tree that is
// not the leaves'. With Options.Sites, it checks those sites' records
// against the stored tree rather than the whole log (db.VerifySiteLog).
// With Options.Checkpoint, bytes that are no checkpoint
// fail here, before anything runs. finishIntegrity must be called, or the
// run's stop on error.
func (a *auditor) startIntegrity(ctx context.Context) (*integrityRun, error) {
	run := &integrityRun{problems: make(chan db.LogProblem, integrityBacklog), done: make(chan struct{})}
	if a.opts.Checkpoint != nil {
		keys, err := a.store.LogKeys(ctx)
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		cp, err := translog.OpenCheckpoint(a.opts.Checkpoint, keys...)
		if errors.Is(err, translog.ErrSignature) || errors.Is(err, translog.ErrKey) {
			// Checked against the records all the same: the violation
			// names both.
			run.sigErr = err
			cp, err = uncheckedCheckpoint(a.opts.Checkpoint)
		}
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		run.cp = &cp
	}
	ctx, run.cancel = context.WithCancel(ctx)
	go func() {
		defer close(run.done)
		defer close(run.problems)
		// For some sites, their records; for all, the whole log.
		verify := a.store.VerifyLog
		if len(a.opts.Sites) > 0 && run.cp == nil {
			verify = func(ctx context.Context, emit func(db.LogProblem) error) (*db.LogReport, error) {
				return a.store.VerifySiteLog(ctx, a.opts.Sites, emit)
			}
		}
		run.rep, run.err = verify(ctx, func(p db.LogProblem) error {
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

// uncheckedCheckpoint returns the body of a signed checkpoint without
// checking its signature.
func uncheckedCheckpoint(msg []byte) (translog.Checkpoint, error) {
	s := string(msg)
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\n' && s[i+1] == '\n' {
			return translog.ParseCheckpoint(s[:i+1])
		}
	}
	return translog.ParseCheckpoint(s)
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
		v := Violation{Rule: RuleIntegrity, Check: p.Check, Requests: []RequestRef{}, Evidence: p.Evidence, Table: p.Table, RowID: p.RowID}
		if p.Index >= 0 {
			v.Leaf = &p.Index
		}
		if err := a.report(v); err != nil {
			return err
		}
	}
	<-run.done
	if run.err != nil {
		return fmt.Errorf("audit: integrity: %w", run.err)
	}
	rep := run.rep
	a.count(RuleIntegrity, rep.Size+rep.Unlogged, 0)
	ls := &LogSummary{Size: rep.Size, Root: base64.StdEncoding.EncodeToString(rep.Root[:]), Unlogged: rep.Unlogged}
	a.summary.Log = ls
	if cp := run.cp; cp != nil {
		ls.Checkpoint = &cp.Size
		var why string
		switch {
		case run.sigErr != nil:
			why = fmt.Sprintf("the checkpoint's signature does not verify with the log's keys: %v", run.sigErr)
		case cp.Size > rep.Size:
			why = fmt.Sprintf("the checkpoint commits to %d records, the log holds %d: records were deleted or the log cut short", cp.Size, rep.Size)
		default:
			h, err := tlog.TreeHash(cp.Size, rep.Hashes)
			if err != nil {
				why = fmt.Sprintf("the records give no tree of %d leaves: %v", cp.Size, err)
			} else if h != cp.Hash {
				why = fmt.Sprintf("the records give root %s at size %d, the signed checkpoint %s: records it committed to were changed, deleted, inserted or reordered",
					h, cp.Size, cp.Hash)
			}
		}
		if why != "" {
			if err := a.report(Violation{Rule: RuleIntegrity, Check: CheckCheckpoint, Requests: []RequestRef{}, Evidence: why}); err != nil {
				return err
			}
		}
	}
	return nil
}
