package audit

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/retryafter"
)

// hostState is what the politeness rule remembers of one host.
type hostState struct {
	// The request that holds the host longest so far, and until when.
	hasOpen     bool
	openUntil   time.Time
	openForever bool // a request that never completed and whose cycle never ended
	openBy      RequestRef

	// retry is the Retry-After wait the next request must honour, if any.
	retry *retryWait
	// stopped maps a cycle to the 401/403/407 or challenge that ended the
	// host's part of it.
	stopped map[int64]RequestRef
}

// retryWait is a Retry-After the next request to a host must honour.
type retryWait struct {
	by        RequestRef
	header    string
	notBefore time.Time
}

// checkPoliteness applies the politeness rule to one request.
func (a *auditor) checkPoliteness(ctx context.Context, s *siteState, r *row) error {
	a.count(RulePoliteness, 1, 0)
	hs := s.hosts[r.dhost]
	if hs == nil {
		hs = &hostState{}
		s.hosts[r.dhost] = hs
		if !a.opts.Since.IsZero() {
			if err := a.prime(ctx, hs, r); err != nil {
				return err
			}
		}
	}
	ref := r.ref()
	cite := func(check, evidence string, others ...RequestRef) error {
		return a.report(Violation{Site: s.name, Rule: RulePoliteness, Check: check,
			Requests: append(others, ref), Evidence: evidence})
	}

	// One request in flight per host.
	switch {
	case hs.hasOpen && hs.openForever:
		if err := cite(CheckOverlap, fmt.Sprintf("request %d to %s was sent at %s while request %d, sent at %s, was still open: it never completed and its cycle never ended",
			r.id, r.dhost, fmtTime(r.sentAt), hs.openBy.ID, fmtTime(hs.openBy.SentAt)), hs.openBy); err != nil {
			return err
		}
	case hs.hasOpen && r.sentAt.Before(hs.openUntil):
		ev := fmt.Sprintf("request %d to %s was sent at %s, %s before request %d ended at %s: two requests to one host were in flight at once",
			r.id, r.dhost, fmtTime(r.sentAt), fmtDur(hs.openUntil.Sub(r.sentAt)), hs.openBy.ID, fmtTime(hs.openUntil))
		if hs.openBy.CompletedAt == nil {
			ev = fmt.Sprintf("request %d to %s was sent at %s while request %d, which never completed, counts as open until its cycle ended at %s",
				r.id, r.dhost, fmtTime(r.sentAt), hs.openBy.ID, fmtTime(hs.openUntil))
		}
		if err := cite(CheckOverlap, ev, hs.openBy); err != nil {
			return err
		}
	case hs.hasOpen:
		need, why, err := a.delayInForce(ctx, s, r)
		if err != nil {
			return err
		}
		if gap := r.sentAt.Sub(hs.openUntil); gap < need {
			if err := cite(CheckTooSoon, fmt.Sprintf("request %d to %s started %s after request %d ended at %s; the delay in force was %s (%s)",
				r.id, r.dhost, fmtDur(gap), hs.openBy.ID, fmtTime(hs.openUntil), fmtDur(need), why.String()), hs.openBy); err != nil {
				return err
			}
		}
	}

	// Retry-After.
	if w := hs.retry; w != nil {
		hs.retry = nil
		if r.sentAt.Before(w.notBefore) {
			if err := cite(CheckRetryAfter, fmt.Sprintf("request %d answered %d with Retry-After %q, so no request to %s before %s; request %d was sent at %s, %s too early",
				w.by.ID, *w.by.Status, w.header, r.dhost, fmtTime(w.notBefore), r.id, fmtTime(r.sentAt), fmtDur(w.notBefore.Sub(r.sentAt))), w.by); err != nil {
				return err
			}
		}
	}

	// Logins, paywalls and bot protection end the host's cycle.
	if r.cycleID != 0 {
		if by, ok := hs.stopped[r.cycleID]; ok {
			if err := cite(CheckAfterAuth, fmt.Sprintf("request %d to %s answered %s at %s, which ends the host's part of cycle %d; request %d was sent after it, at %s",
				by.ID, r.dhost, stopReason(by), fmtTime(by.SentAt), r.cycleID, r.id, fmtTime(r.sentAt)), by); err != nil {
				return err
			}
		}
	}
	a.remember(hs, r, ref)
	return nil
}

// remember updates the host's state with a request that was sent.
func (a *auditor) remember(hs *hostState, r *row, ref RequestRef) {
	if end, ok := r.end(); !ok {
		if !hs.openForever {
			hs.openForever, hs.openBy = true, ref
		}
	} else if !hs.openForever && (!hs.hasOpen || end.After(hs.openUntil)) {
		hs.openUntil, hs.openBy = end, ref
	}
	hs.hasOpen = true
	if r.completed && r.hasStatus && (r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable) && strings.TrimSpace(r.retryAfter) != "" {
		if nb, ok := retryafter.NotBefore(r.retryAfter, r.completedAt); ok {
			hs.retry = &retryWait{by: ref, header: r.retryAfter, notBefore: nb}
		}
	}
	if r.cycleID != 0 && stops(r) {
		if hs.stopped == nil {
			hs.stopped = make(map[int64]RequestRef)
		}
		if _, ok := hs.stopped[r.cycleID]; !ok {
			hs.stopped[r.cycleID] = ref
		}
	}
}

// stops reports whether a response ends the host's cycle: 401, 403, 407, or
// a page the crawler recognised as a challenge.
func stops(r *row) bool {
	if r.hasStatus {
		switch r.status {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired:
			return true
		}
	}
	return r.outcome == "challenge"
}

func stopReason(ref RequestRef) string {
	if ref.Outcome == "challenge" {
		if ref.Status != nil {
			return fmt.Sprintf("a challenge page (status %d)", *ref.Status)
		}
		return "a challenge page"
	}
	if ref.Status != nil {
		return fmt.Sprintf("status %d", *ref.Status)
	}
	return ref.Outcome
}

// delaySource says where the delay in force before a request comes from,
// for evidence; String words it. It is only worded when a violation cites
// it: the audit works it out for every request.
type delaySource struct {
	cycle      bool // the request's cycle has a --delay
	cycleID    int64
	cycleDelay time.Duration
	snapshot   *snapshot // the robots.txt whose Crawl-delay is longer, if any
}

func (d delaySource) String() string {
	switch {
	case d.snapshot != nil && d.cycle:
		return fmt.Sprintf("Crawl-delay %s of robots.txt snapshot %d, longer than the --delay %s of cycle %d",
			fmtDur(d.snapshot.crawlDelay), d.snapshot.id, fmtDur(d.cycleDelay), d.cycleID)
	case d.snapshot != nil:
		return fmt.Sprintf("Crawl-delay %s of robots.txt snapshot %d", fmtDur(d.snapshot.crawlDelay), d.snapshot.id)
	case d.cycle:
		return fmt.Sprintf("--delay %s of cycle %d", fmtDur(d.cycleDelay), d.cycleID)
	}
	return "no delay set"
}

// delayInForce is the minimum gap before r: the cycle's --delay, or the
// Crawl-delay of the robots.txt in force for r's origin (capped at
// MaxCrawlDelay), whichever is longer; and where it comes from.
func (a *auditor) delayInForce(ctx context.Context, s *siteState, r *row) (time.Duration, delaySource, error) {
	need, why := time.Duration(0), delaySource{}
	if r.hasCycle {
		need, why = r.cycle.delay, delaySource{cycle: true, cycleID: r.cycleID, cycleDelay: r.cycle.delay}
	}
	o, err := a.origin(ctx, r)
	if err != nil {
		return 0, why, err
	}
	sn := o.inForce(r.sentAt)
	if sn == nil || sn.outcome != db.RobotsParsed || r.sentAt.Sub(sn.fetchedAt) > MaxSnapshotAge {
		return need, why, nil
	}
	if err := a.load(ctx, o, sn); err != nil {
		return 0, why, err
	}
	if sn.hasDelay && sn.crawlDelay > need {
		need, why.snapshot = sn.crawlDelay, sn
	}
	return need, why, nil
}

// prime loads the last request to r's host before Since, so the first
// request of the audited window is checked against it.
func (a *auditor) prime(ctx context.Context, hs *hostState, r *row) error {
	host := r.dhost
	if u, err := url.Parse(r.url); err == nil {
		host = u.Hostname()
	}
	last, err := a.store.LastRequestToHost(ctx, []string{host, r.dhost}, a.opts.Since)
	if db.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit: read the request before %s on %s: %w", fmtTime(a.opts.Since), r.dhost, err)
	}
	prev := rowOf(last, a.authorities)
	a.remember(hs, &prev, prev.ref())
	return nil
}
