package audit

import "context"

// backgroundRun is a rule checked on a goroutine of its own while the
// stream runs (the signatures rule: it reads the log apart). Its violations
// wait in a bounded channel and are reported when the auditor finishes the
// run, in the order found, as if it had run then.
type backgroundRun struct {
	vs     chan Violation
	done   chan struct{} // closed when checked and err are set
	cancel context.CancelFunc

	checked int64
	err     error
}

// backgroundBacklog bounds the violations waiting to be reported.
const backgroundBacklog = 256

// startBackground runs check on a goroutine of its own; check calls report
// with each violation and returns how much it checked.
func startBackground(ctx context.Context, check func(ctx context.Context, report func(Violation) error) (int64, error)) *backgroundRun {
	run := &backgroundRun{vs: make(chan Violation, backgroundBacklog), done: make(chan struct{})}
	ctx, run.cancel = context.WithCancel(ctx)
	go func() {
		defer close(run.done)
		defer close(run.vs)
		run.checked, run.err = check(ctx, func(v Violation) error {
			select {
			case run.vs <- v:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return run
}

// stop ends a run whose violations will not be reported, and waits for
// it; it may be called after finishBackground.
func (run *backgroundRun) stop() {
	run.cancel()
	for range run.vs {
	}
	<-run.done
}

// finishBackground reports the run's violations, waits for it and returns
// how much it checked, or its error.
func (a *auditor) finishBackground(run *backgroundRun) (int64, error) {
	for v := range run.vs {
		if err := a.report(v); err != nil {
			return 0, err
		}
	}
	<-run.done
	return run.checked, run.err
}
