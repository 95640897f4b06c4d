package crawler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/webbotauth"
)

// Reasons a request is not sent, found inside the reservation transaction.
var (
	// ErrExcluded means the policy gate answered that the site is excluded.
	ErrExcluded = errors.New("crawler: site is excluded")
	// ErrBudgetSpent means the cycle has no budget slot left.
	ErrBudgetSpent = errors.New("crawler: budget spent")
	// ErrLeaseLost means this crawler no longer holds the host's lease.
	ErrLeaseLost = errors.New("crawler: host lease lost")
)

// logicalError reports whether err is an answer of a transaction's own
// logic (nothing to send, ask again) rather than a database failure.
func logicalError(err error) bool {
	var skip *errSkip
	return errors.Is(err, errStale) || errors.Is(err, ErrBudgetSpent) || errors.Is(err, ErrLeaseLost) || errors.Is(err, errNotWanted) ||
		errors.Is(err, ErrExcluded) || errors.As(err, &skip)
}

// acquire tries to take the lease key (a host, or "cycle:SITE") for this
// crawler. It returns the row's next_at when taken, or busyUntil (the
// lease's expiry) when another live crawler holds it. An expired lease of a
// crawler that died is taken over; since that crawler's last request ended
// before the expiry at the latest, next_at moves to the expiry plus gap.
// When then is not nil, it runs in the same transaction once the lease is
// taken; when it fails, the lease is not taken either, and acquire returns
// its error. ended (when not nil) is given the hosts whose open rows a
// takeover closed, and when (see abandon).
func (c *Crawler) acquire(ctx context.Context, key string, gap time.Duration, ended takeover, then func(tx db.WriteTx) error) (nextAt time.Time, busyUntil time.Time, err error) {
	if then == nil {
		// A lease no one has held yet may be one INSERT, where the
		// engine makes that cheaper than a transaction.
		now := c.now()
		ok, err := c.w.FreshLease(ctx, key, c.holder, now.Add(c.opts.LeaseTTL), now)
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("crawler: lease %s: %w", key, err)
		}
		if ok {
			return now.UTC(), time.Time{}, nil
		}
	}
	for attempt := 0; attempt < 10; attempt++ {
		now := c.now()
		exp := now.Add(c.opts.LeaseTTL)
		var (
			got  bool
			busy time.Time
		)
		tx := c.w.Lease
		if then != nil {
			tx = c.w.Refusable
		}
		err = tx(ctx, func(tx db.WriteTx) error {
			var err error
			got, nextAt, busy, err = c.takeLease(ctx, tx, key, gap, now, exp, ended)
			if err != nil || !got || then == nil {
				return err
			}
			return then(tx)
		})
		var skip *errSkip
		if errors.As(err, &skip) {
			return time.Time{}, time.Time{}, err
		}
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("crawler: lease %s: %w", key, err)
		}
		if got {
			return nextAt.UTC(), time.Time{}, nil
		}
		if !busy.IsZero() {
			return time.Time{}, busy, nil
		}
	}
	return time.Time{}, c.clock.Now().Add(time.Second), nil
}

// takeLease is acquire's work in tx: it takes the lease key for this
// crawler until exp when it can, and reports whether it did and the
// lease's next_at (see acquire), or busy, the expiry of another live
// crawler's lease on key. ended is abandon's.
func (c *Crawler) takeLease(ctx context.Context, tx db.WriteTx, key string, gap time.Duration, now, exp time.Time, ended takeover) (got bool, nextAt, busy time.Time, err error) {
	ok, err := db.InsertLease(ctx, tx, key, c.holder, exp, now)
	if err != nil || ok {
		return ok, now, time.Time{}, err
	}
	l, err := db.ReadLease(ctx, tx, key)
	if err != nil {
		return false, time.Time{}, time.Time{}, err
	}
	switch {
	case l.Holder == c.holder:
		ok, err = db.RenewLease(ctx, tx, key, c.holder, exp)
		nextAt = l.NextAt
	case l.Holder == "":
		ok, err = db.ClaimLease(ctx, tx, key, c.holder, exp)
		nextAt = l.NextAt
	case l.ExpiresAt.After(now):
		return false, time.Time{}, l.ExpiresAt, nil
	default:
		nextAt = l.NextAt
		if t := l.ExpiresAt.Add(gap); t.After(nextAt) {
			nextAt = t.UTC().Truncate(time.Microsecond)
		}
		c.log.Info("lease taken over from a crawler that stopped renewing it", "lease", key, "from", l.Holder, "expired_at", l.ExpiresAt)
		ok, err = db.TakeOverLease(ctx, tx, key, c.holder, exp, nextAt, l.Holder, now)
		if err == nil && ok {
			err = c.abandon(ctx, tx, key, l.Holder, l.ExpiresAt, ended)
		}
	}
	if err != nil {
		return false, time.Time{}, time.Time{}, err
	}
	return ok, nextAt, time.Time{}, nil
}

// release gives a lease back, keeping next_at (raised to nextAt when later)
// so that the next holder keeps the gap.
func (c *Crawler) release(ctx context.Context, key string, nextAt time.Time) error {
	return c.w.LeaseStmt(ctx, func(tx db.WriteTx) error {
		if !nextAt.IsZero() {
			nextAt = nextAt.UTC().Truncate(time.Microsecond)
		}
		return db.ReleaseLease(ctx, tx, key, c.holder, c.now(), nextAt)
	})
}

// renewAll pushes back the expiry of every lease this crawler holds.
func (c *Crawler) renewAll(ctx context.Context) error {
	return c.w.LeaseStmt(ctx, func(tx db.WriteTx) error {
		// Where lease statements run beside the writer's groups, rows a
		// group has locked are passed over (the completion in that group renews its host's lease
		// itself), so the heartbeat never waits for, nor deadlocks with,
		// a group.
		return db.RenewLeases(ctx, tx, c.holder, c.now().Add(c.opts.LeaseTTL))
	})
}

// releaseAll gives back every lease this crawler still holds.
func (c *Crawler) releaseAll(ctx context.Context) error {
	return c.w.LeaseStmt(ctx, func(tx db.WriteTx) error {
		return db.ReleaseLeases(ctx, tx, c.holder, c.now())
	})
}

// reqRow is a request about to be sent.
type reqRow struct {
	CycleID    *int64
	Site       string
	Host       string
	Origin     string
	URL        string
	Purpose    string
	Attempt    int
	RedirectOf *int64
	SnapshotID *int64
	Rule       string
	Line       int
	Delay      time.Duration // the gap in force before this request
	Cond       db.Validators // sent as If-None-Match / If-Modified-Since when set
	// Budget is the cycle's page budget, for a page request: the request
	// given its last slot is the cycle's last (see lastOfCycle).
	Budget int
	// At is when the request is to be sent, if later than its
	// reservation: the log row's sent_at (see exchangeDue).
	At time.Time
	// renewed is the host lease's expiry when the reservation renewed it.
	renewed time.Time

	// Filled by begin.
	ID       int64
	Slot     int
	SentAt   time.Time
	Verdict  policy.Verdict
	Budgeted bool
}

// lastOfCycle says the request took its cycle's last budget slot: the
// cycle sends nothing after it (fetchPage ends the cycle when every slot
// is reserved, before any retry or robots.txt).
func (r *reqRow) lastOfCycle() bool {
	return r.Purpose == db.PurposePage && r.Budget > 0 && r.Slot >= r.Budget
}

// askGate asks the policy gate about site (the gate reads the policy
// version and applies any change committed since it last looked) and keeps
// the answer for begin.
func (c *Crawler) askGate(ctx context.Context, site string) (policy.Verdict, error) {
	var v policy.Verdict
	err := c.retry(ctx, func() (err error) {
		v, err = c.gate.Check(ctx, site)
		return err
	})
	if err != nil {
		return policy.Verdict{}, fmt.Errorf("crawler: %w", err)
	}
	c.verdicts.Store(site, v)
	return v, nil
}

// begin is the reservation transaction written before a request is sent: it
// reads the policy version and makes sure the gate's answer for the site was
// given at that very version (else the gate is asked again: a policy change
// committed since), makes sure this crawler's lease on the host outlasts
// the request, reserves a budget slot for a page request (never given
// back), and writes the request's log row with sent_at. It returns
// ErrExcluded, ErrBudgetSpent or ErrLeaseLost when the request must not be
// sent.
//
// The lease is renewed (and found still held) only when less than
// leaseRenewBelow of it is left as this crawler last wrote it
// (hs.leaseUntil): until its expiry no other crawler may take it (acquire
// takes over expired leases only), so a lease with more left is held, and
// will be for the whole request. Renewing it at every request cost a row
// update per request.
//
// The gate's last answer for the site is reused while the version read in
// the transaction is the one it was given at: the set of excluded sites is
// the same at the same version, so the answer is exactly what asking again
// would give, without a second read of the version per request.
func (c *Crawler) begin(ctx context.Context, hs *hostState, r *reqRow) error {
	for attempt := 0; ; attempt++ {
		var v policy.Verdict
		last, ok := c.verdicts.Load(r.Site)
		if ok && attempt == 0 && !last.(policy.Verdict).Excluded {
			v = last.(policy.Verdict)
		} else {
			var err error
			v, err = c.askGate(ctx, r.Site)
			if err != nil {
				return err
			}
		}
		r.Verdict = v
		if v.Excluded {
			return ErrExcluded
		}
		err := c.reserve(ctx, hs, r, v)
		stale := errors.Is(err, errStale)
		if stale && attempt < 20 {
			continue
		}
		if err != nil {
			if errors.Is(err, ErrBudgetSpent) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrExcluded) {
				return err
			}
			return fmt.Errorf("crawler: request log: %w", err)
		}
		if !r.renewed.IsZero() {
			hs.leaseUntil = r.renewed
		}
		c.stats.requests.Add(1)
		return nil
	}
}

// leaseRenewBelow is how much of a host's lease must be left when a
// request is sent: the request's timeout and a margin (for the
// completion's write, an unread answer's grace and the clocks of a fleet),
// at least half the lease.
func (c *Crawler) leaseRenewBelow() time.Duration {
	return max(c.opts.LeaseTTL/2, c.opts.Timeout+leaseMargin)
}

// leaseMargin is what a lease has left beyond a request's timeout when the
// request is sent (leaseRenewBelow).
const leaseMargin = 5 * time.Second

// reserve is begin's reservation of r, given the gate's verdict v (not
// excluded): it fills r's ID, Slot, SentAt and renewed. It returns
// errStale when the policy version is no longer v's (ask the gate again),
// ErrLeaseLost or ErrBudgetSpent when r must not be sent; a refusal
// leaves nothing written.
func (c *Crawler) reserve(ctx context.Context, hs *hostState, r *reqRow, v policy.Verdict) error {
	res := c.reservation(hs, r, v)
	refusal, err := c.w.Reserve(ctx, res)
	return reserveAnswer(r, res, refusal, err)
}

// reservation returns the reservation of r to hs's host, given the gate's
// verdict v. A request reserved ahead of its time is logged as sent at
// that time: it is not sent earlier (exchangeDue). The host's lease is
// renewed when less than leaseRenewBelow of it is left as this crawler
// last wrote it (see begin), and every time on an engine whose
// reservations always renew it (db.Traits.LeaseEveryRequest).
func (c *Crawler) reservation(hs *hostState, r *reqRow, v policy.Verdict) *db.Reservation {
	now := c.now()
	sent := now
	if r.At.After(now) {
		sent = r.At
	}
	row := db.Request{CycleID: r.CycleID, Site: r.Site, Host: r.Host, Origin: r.Origin, URL: r.URL,
		Purpose: r.Purpose, Node: c.opts.Node, Attempt: r.Attempt, RedirectOf: r.RedirectOf, RobotsSnapshotID: r.SnapshotID,
		RobotsRule: r.Rule, RobotsLine: r.Line, PolicyCheck: v.String(), DelayMS: r.Delay.Milliseconds(), SentAt: sent}
	return &db.Reservation{Request: &row, Version: v.Version, Holder: c.holder,
		LeaseExpires: now.Add(c.opts.LeaseTTL), Renew: hs.leaseUntil.Sub(now) < c.leaseRenewBelow(),
		Budgeted: r.Purpose == db.PurposePage}
}

// reserveAnswer fills r from its reservation res, answered refusal (or
// err), and returns reserve's answer.
func reserveAnswer(r *reqRow, res *db.Reservation, refusal db.Refusal, err error) error {
	switch {
	case err != nil:
		return err
	case refusal == db.RefusedStale:
		return errStale // a policy change committed since the gate answered
	case refusal == db.RefusedLease:
		return ErrLeaseLost
	case refusal == db.RefusedBudget:
		return ErrBudgetSpent
	}
	r.ID, r.SentAt = res.Request.ID, res.Request.SentAt
	if s := res.Request.BudgetSlot; s != nil {
		r.Slot = *s
	}
	r.renewed = time.Time{}
	if res.Renew {
		r.renewed = res.LeaseExpires
	}
	return nil
}

var errStale = errors.New("crawler: policy changed")

// confirm checks, once the time a request was reserved ahead for has come
// (exchangeDue), that its site was not excluded since its reservation
// (db.Writer.Confirm): if it was, the request is completed as withdrawn
// (db.OutcomeWithdrawn) and confirm returns ErrExcluded. The check is
// ordered with every policy change: a change it does not see commits after
// it, so at a time later than the request's sent_at, as the audit's
// exclusions rule asks.
func (c *Crawler) confirm(ctx context.Context, r *reqRow) error {
	withdrawn, err := c.w.Confirm(ctx, db.Confirmation{RequestID: r.ID, Site: r.Site, Version: r.Verdict.Version})
	if err != nil {
		c.withdraw(ctx, r)
		return fmt.Errorf("crawler: request log: %w", err)
	}
	if withdrawn {
		return ErrExcluded
	}
	return nil
}

// withdraw completes a request reserved ahead of its time that will not be
// sent (its crawl was interrupted meanwhile, or its check failed) as
// withdrawn. When that fails, the row stays open, and is closed as
// abandoned when another crawler takes the host's lease over.
func (c *Crawler) withdraw(ctx context.Context, r *reqRow) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := c.w.Withdraw(ctx, r.ID, "not sent: the crawl was interrupted before its time"); err != nil {
		c.log.Warn("reservation of a request not sent left open", "id", r.ID, "url", r.URL, "err", err)
	}
}

// Reservations ahead of time (exchangeDue).
const (
	// maxReserveAhead bounds how long before its time a request is
	// reserved: where an exclusion of its site waits for it
	// (db.Traits.HeldAhead), it waits at most this long before it takes
	// its time (db.Tx.AwaitReservedAhead).
	maxReserveAhead = db.MaxReserveAhead
)

// reserveAhead is how long before a request's time its reservation is
// written, so that the wait for the database falls in the host's gap
// rather than after it; at most a quarter of the gap and maxReserveAhead.
// It is twice the recent time a reservation took, plus 1 ms; on an engine
// whose policy changes wait out the requests reserved ahead
// (db.Traits.HeldAhead), maxReserveAhead while at least a quarter of the
// request slots are free (a request reserved ahead holds its slot until it
// is sent; the quarter is left to requests due at once, such as new
// sites' first): a writer's group at the moment sites that started
// together write their link texts or end takes far longer than the
// average reservation, and a reservation timed on the average came that
// late after the gap.
func (c *Crawler) reserveAhead(gap time.Duration) time.Duration {
	ahead := 2*time.Duration(c.reserveTook.Load()) + time.Millisecond
	if c.traits.HeldAhead && 4*len(c.inFlight) < 3*cap(c.inFlight) {
		ahead = maxReserveAhead
	}
	return min(ahead, gap/4, maxReserveAhead)
}

// noteReserve adds d, the time a reservation took, to the moving average
// reserveAhead reads (weight 1/8).
func (c *Crawler) noteReserve(d time.Duration) {
	for {
		old := c.reserveTook.Load()
		if c.reserveTook.CompareAndSwap(old, old+(int64(d)-old)/8) {
			return
		}
	}
}

// completion is what is written after a request.
type completion struct {
	ID             int64
	Host           string
	CompletedAt    time.Time
	Status         int // 0: no response
	Bytes          int64
	Duration       time.Duration
	RetryAfter     string
	RetryNotBefore *time.Time
	Outcome        string
	Error          string
	NextAt         time.Time        // when the next request to the host may start
	Stamp          webbotauth.Stamp // what the request was signed with (Web Bot Auth)
	Validators     db.Validators    // the response's ETag and Last-Modified (page requests)

	Page    *db.Page // stored (upserted) when set
	Unindex string   // URL removed from the index when set
	// Found are the same-site URLs the page linked to that were new to
	// the cycle (recorded for a crawler that resumes it after a crash).
	Found    []string
	CycleID  *int64
	Snapshot *db.RobotsSnapshot // stored when set; its ID is filled
	// Refused are URLs robots.txt refused since the last write, recorded
	// with it (db.InsertRobotsRefusals).
	Refused []db.RobotsRefusal
}

// complete writes the request's outcome, the host's next_at and what the
// response adds to the index, in one transaction. It uses a context that
// survives ctx's cancellation, so an interrupted crawl still completes its
// rows, and that outlasts the writer's wait for an unreachable database
// (db.RetryBudget).
func (c *Crawler) complete(ctx context.Context, k *completion) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), db.RetryBudget+30*time.Second)
	defer cancel()
	write, pipe := c.completionWrite(k)
	return c.w.Complete(ctx, func(tx db.WriteTx) error { return write(ctx, tx) },
		func(p *db.Pipeline) func() error {
			pipe(p)
			return func() error { return nil }
		})
}

// completionWrite returns the work of completing a request with k: write,
// and pipe, the same statements queued on a pipeline (a robots.txt
// snapshot's id is read back from it). Either may run twice (a group that
// failed is run again op by op). An engine that pipelines sends a group
// as one pipeline only when each of its writes has one, so every
// completion has one.
func (c *Crawler) completionWrite(k *completion) (write func(ctx context.Context, tx db.WriteTx) error, pipe func(p *db.Pipeline)) {
	if len(k.Error) > 500 {
		k.Error = k.Error[:500]
	}
	var status *int
	if k.Status != 0 {
		status = &k.Status
	}
	var sigCreated, sigExpires *time.Time
	if k.Stamp.KeyID != "" {
		sigCreated, sigExpires = &k.Stamp.Created, &k.Stamp.Expires
	}
	fin := db.Completion{Request: &db.Request{ID: k.ID, CompletedAt: &k.CompletedAt, Status: status, Bytes: k.Bytes,
		DurationMS: k.Duration.Milliseconds(), RetryAfter: k.RetryAfter, RetryNotBefore: k.RetryNotBefore, Outcome: k.Outcome,
		Error: k.Error, SigKeyID: k.Stamp.KeyID, SigCreated: sigCreated, SigExpires: sigExpires,
		ETag: k.Validators.ETag, LastModified: k.Validators.LastModified}, Page: k.Page}
	if p := k.Page; p != nil {
		p.RequestID = &k.ID
	}
	if k.CycleID != nil {
		fin.CycleID, fin.Found = *k.CycleID, k.Found
	}
	// The lease row learns the host's next_at only when it is later than
	// --delay after this request: a crawler that takes the lease over after
	// a crash waits until the lease's expiry plus --delay anyway (acquire),
	// and the expiry is already after this request (begin renewed it by
	// more than the timeout), while a Retry-After, a backoff or a
	// Crawl-delay must outlive a crash. Leaving the host writes it too
	// (release).
	if !k.NextAt.IsZero() && k.NextAt.Sub(k.CompletedAt) > c.opts.Delay {
		fin.Lease = &db.LeaseDelay{Host: k.Host, Holder: c.holder, NextAt: k.NextAt.UTC().Truncate(time.Microsecond),
			Expires: c.now().Add(c.opts.LeaseTTL)}
	}
	write = func(ctx context.Context, tx db.WriteTx) error {
		if err := db.FinishRequest(ctx, tx, &fin); err != nil {
			return fmt.Errorf("crawler: complete request: %w", err)
		}
		if err := db.InsertRobotsRefusals(ctx, tx, k.Refused); err != nil {
			return fmt.Errorf("crawler: robots.txt refusals: %w", err)
		}
		if s := k.Snapshot; s != nil {
			s.RequestID = &k.ID
			if err := db.InsertRobotsSnapshot(ctx, tx, s); err != nil {
				return fmt.Errorf("crawler: robots snapshot: %w", err)
			}
		}
		if k.Unindex != "" {
			if err := db.DeletePage(ctx, tx, k.Unindex); err != nil {
				return fmt.Errorf("crawler: unindex page: %w", err)
			}
			if k.Outcome == "noindex" {
				// Nothing is kept for a noindex page, its inbound link
				// texts included.
				if err := db.DeleteAnchorsTo(ctx, tx, k.Unindex); err != nil {
					return fmt.Errorf("crawler: unindex anchors: %w", err)
				}
			}
		}
		return nil
	}
	pipe = func(p *db.Pipeline) {
		p.Finish(&fin)
		p.RobotsRefusals(k.Refused)
		if s := k.Snapshot; s != nil {
			s.RequestID = &k.ID
			p.RobotsSnapshot(s)
		}
		if k.Unindex != "" {
			p.Unindex(k.Unindex, k.Outcome == "noindex")
		}
	}
	return write, pipe
}

// indexable returns the link texts of anchors that may be stored: those
// not pointing at a URL found noindex since they were found.
// anchors itself is left as it is (a write is tried again after its group
// failed).
func (c *Crawler) indexable(anchors []db.Anchor) []db.Anchor {
	var out []db.Anchor
	for i, a := range anchors {
		switch {
		case c.noindex.Contains(a.ToURL):
			if out == nil {
				out = append(make([]db.Anchor, 0, len(anchors)), anchors[:i]...)
			}
		case out != nil:
			out = append(out, a)
		}
	}
	if out == nil {
		return anchors
	}
	return out
}
