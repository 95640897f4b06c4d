package audit

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// maxCited is how many requests a budget violation cites at most.
const maxCited = 50

// cycleCount counts the page requests of one cycle on the site being read.
type cycleCount struct {
	id        int64
	count     int
	limit     int
	budget    int // the cycle's own budget column, 0 when the cycle row is missing
	started   time.Time
	straddles bool // the cycle started before Since: earlier pages are counted at the end
}

// countBudget counts one page request against its cycle's budget.
func (a *auditor) countBudget(s *siteState, r *row) error {
	if r.cycleID == 0 {
		a.count(RuleBudget, 1, 0)
		return a.report(Violation{Site: s.name, Rule: RuleBudget, Check: CheckNoCycle, Requests: []RequestRef{r.ref()},
			Evidence: fmt.Sprintf("page request %d to %s was sent at %s outside any crawl cycle, so no budget slot was reserved for it",
				r.id, r.url, fmtTime(r.sentAt))})
	}
	cc := s.cycles[r.cycleID]
	if cc == nil {
		a.count(RuleBudget, 1, 0)
		cc = &cycleCount{id: r.cycleID, limit: MaxPages, budget: r.cycle.budget, started: r.cycle.started}
		if r.hasCycle && r.cycle.budget > 0 && r.cycle.budget < MaxPages {
			cc.limit = r.cycle.budget
		}
		cc.straddles = !a.opts.Since.IsZero() && (!r.hasCycle || r.cycle.started.Before(a.opts.Since))
		s.cycles[r.cycleID] = cc
	}
	cc.count++
	return nil
}

// finishBudget reports the cycles of a site that spent too much.
func (a *auditor) finishBudget(ctx context.Context, s *siteState) error {
	ids := make([]int64, 0, len(s.cycles))
	for id := range s.cycles {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		cc := s.cycles[id]
		total := cc.count
		if cc.straddles {
			refs, err := a.cyclePages(ctx, s.name, id)
			if err != nil {
				return err
			}
			total = len(refs)
		}
		if total <= cc.limit {
			continue
		}
		refs, err := a.cyclePages(ctx, s.name, id)
		if err != nil {
			return err
		}
		cited := refs[min(cc.limit, len(refs)):]
		if len(cited) > maxCited {
			cited = cited[:maxCited]
		}
		limit := fmt.Sprintf("the public page promises at most %d pages per site", MaxPages)
		if cc.limit < MaxPages {
			limit = fmt.Sprintf("the cycle's own budget was %d", cc.limit)
		}
		ev := fmt.Sprintf("cycle %d of %s", id, s.name)
		if !cc.started.IsZero() {
			ev += fmt.Sprintf(" (started %s)", fmtTime(cc.started))
		}
		ev += fmt.Sprintf(" made %d page requests, counting redirect hops, retries and requests that never completed; %s. The requests cited are those past the limit",
			total, limit)
		if len(refs)-cc.limit > maxCited {
			ev += fmt.Sprintf(" (the first %d)", maxCited)
		}
		if err := a.report(Violation{Site: s.name, Rule: RuleBudget, Check: CheckOverBudget, Requests: cited, Evidence: ev}); err != nil {
			return err
		}
	}
	return nil
}

// cyclePages reads the page requests of one cycle on one site sent
// (withdrawn ones left out), in the order they were sent (only called for cycles that need it: those past their
// budget, or straddling Since).
func (a *auditor) cyclePages(ctx context.Context, site string, cycle int64) ([]RequestRef, error) {
	var refs []RequestRef
	err := a.store.CycleRequests(ctx, site, cycle, func(q *db.AuditRequest) error {
		if r := rowOf(q, a.authorities); r.isPage && r.outcome != db.OutcomeWithdrawn {
			refs = append(refs, r.ref())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return refs, nil
}
