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

// checkIntegrity applies the integrity rule: it recomputes the seal chain
// and reports each record changed, deleted, inserted or backdated after
// sealing, and each broken block. With Options.Head, only what was sealed up
// to that block counts. With Options.Sites, it checks those sites' records
// and the blocks that sealed them, not the whole chain.
func (a *auditor) checkIntegrity(ctx context.Context) error {
	var limit int64 = -1
	if a.opts.Head != "" {
		b, err := a.store.SealBlockByHash(ctx, a.opts.Head)
		if db.IsNotFound(err) {
			return fmt.Errorf("%w %q: no block of this database's seal chain has that hash (was the report made from another database?)", ErrUnknownHead, a.opts.Head)
		}
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		limit = b.ID
	}
	// For some sites, their rows and the blocks that sealed them (see
	// db.Store.VerifySiteSeals); for all, the whole chain.
	verify := a.store.VerifySeals
	if len(a.opts.Sites) > 0 {
		verify = func(ctx context.Context, emit func(db.SealProblem) error) (*db.SealReport, error) {
			return a.store.VerifySiteSeals(ctx, a.opts.Sites, emit)
		}
	}
	rep, err := verify(ctx, func(p db.SealProblem) error {
		if limit >= 0 && (p.BlockID == 0 || p.BlockID > limit) {
			return nil // sealed after the head, or not sealed at all
		}
		return a.report(Violation{Rule: RuleIntegrity, Check: p.Check, Requests: []RequestRef{},
			Evidence: p.Evidence, Table: p.Table, RowID: p.RowID, Block: p.BlockID})
	})
	if err != nil {
		return fmt.Errorf("audit: integrity: %w", err)
	}
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
