package policy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// ErrNotExcluded is returned when re-including a site that is not excluded.
var ErrNotExcluded = errors.New("policy: site is not excluded")

// ErrNotListed is returned when removing a site that is not on the crawl list.
var ErrNotListed = errors.New("policy: site is not on the crawl list")

// ErrNoActor is returned when a change that needs a named person has none.
var ErrNoActor = errors.New("policy: who made the change must be named")

// DefaultUnverifiedHold is how long an unverified exclusion keeps the
// site's index entries (hidden from search) before they are purged.
const DefaultUnverifiedHold = 30 * 24 * time.Hour

// Options configures a Policy. A nil *Options is the zero value.
type Options struct {
	// Now returns the current time. Nil means db.Now.
	Now func() time.Time
	// UnverifiedHold is how long an unverified exclusion keeps the site's
	// index entries, hidden from search, before PurgeDue purges them.
	// Zero means DefaultUnverifiedHold.
	UnverifiedHold time.Duration
}

// Policy reads and changes which sites may be crawled. It is safe for
// concurrent use; every method does I/O on the store.
type Policy struct {
	store *db.Store
	tx    *db.Tx // nil, or the transaction every change and read runs in (In)
	now   func() time.Time
	hold  time.Duration
}

// New returns a Policy over store.
func New(store *db.Store, opts *Options) *Policy {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = db.Now
	}
	if o.UnverifiedHold <= 0 {
		o.UnverifiedHold = DefaultUnverifiedHold
	}
	return &Policy{store: store, now: o.Now, hold: o.UnverifiedHold}
}

// WithUnverifiedHold returns a copy of p whose unverified exclusions keep
// the site's index entries for d (see Options.UnverifiedHold).
func (p *Policy) WithUnverifiedHold(d time.Duration) *Policy {
	c := *p
	if d > 0 {
		c.hold = d
	}
	return &c
}

// WithNow returns a copy of p that reads the time from now.
func (p *Policy) WithNow(now func() time.Time) *Policy {
	c := *p
	c.now = now
	return &c
}

// Store returns the store the policy works on.
func (p *Policy) Store() *db.Store { return p.store }

// In returns a copy of p whose reads and changes happen inside tx, each
// change in its own savepoint, so that they commit or roll back with what
// else tx does. The copy is valid only while tx is.
func (p *Policy) In(tx *db.Tx) *Policy {
	c := *p
	c.tx = tx
	return &c
}

// inTx runs fn in a new transaction, or in a savepoint of p.tx.
func (p *Policy) inTx(ctx context.Context, fn func(tx *db.Tx) error) error {
	if p.tx != nil {
		return p.tx.InTx(ctx, fn)
	}
	return p.store.InTx(ctx, fn)
}

// reader is what the policy reads, from the store or from p.tx.
type reader interface {
	Exclusion(ctx context.Context, site string) (*db.Exclusion, error)
	Exclusions(ctx context.Context) ([]db.Exclusion, error)
	SiteEvents(ctx context.Context, site string) ([]db.PolicyEvent, error)
	Sites(ctx context.Context) ([]db.Site, error)
	ExcludedListedSites(ctx context.Context) ([]string, error)
	ExclusionsToPurge(ctx context.Context, now time.Time) ([]db.Exclusion, error)
}

// reader returns p.tx when set, else the store.
func (p *Policy) reader() reader {
	if p.tx != nil {
		return p.tx
	}
	return p.store
}

// Change describes who asks for a policy change, and why.
type Change struct {
	Actor    string // a staff member's name, or an email sender
	Reason   string
	Evidence string // an email's Message-ID; empty means the actor is the evidence
	Source   string // "cli", "mail", "review", ...
	Detail   string // optional JSON with more evidence
	// Unverified marks an exclusion asked for by someone whose right to
	// speak for the site is not proven (an email without a trusted,
	// aligned authentication). False, the zero value, is a verified
	// change: a staff member's.
	Unverified bool
}

// ExcludeResult is what Exclude did for one input.
type ExcludeResult struct {
	Input     string        `json:"input"`
	Site      string        `json:"site"`
	Already   bool          `json:"already_excluded"`
	Exclusion *db.Exclusion `json:"exclusion"`
	// Purged counts what the exclusion deleted from the index: the site's
	// pages and the link texts pointing to it.
	Purged db.IndexPurge `json:"index_purged"`
}

// SitesOf normalises every input with SiteOf and returns the sites in input
// order, or an error naming every input that is not a site (errors.Join of
// *SiteError). Nothing is half-done on error: callers use it to
// validate a whole command before changing anything.
func SitesOf(inputs []string) ([]string, error) {
	if len(inputs) == 0 {
		return nil, &SiteError{"", "no site given"}
	}
	sites := make([]string, len(inputs))
	var errs []error
	for i, in := range inputs {
		s, err := SiteOf(in)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sites[i] = s
	}
	if len(errs) > 0 {
		// Every bad input at once, one per line, so one correction fixes all.
		return nil, errors.Join(errs...)
	}
	return sites, nil
}

// Exclude takes the sites named by inputs off the crawl list, in one
// transaction: if any input is not a site, nothing changes. The exclusion
// is visible to every Gate's next check, and search leaves the site's
// pages out at once.
//
// A verified change (staff, or a sender shown to speak for the site)
// deletes in the same transaction what the index keeps of each site (its
// pages and the link texts pointing to it) and records the counts in the
// policy event; the request log, robots.txt snapshots and emails stay as
// evidence. An unverified one keeps them, hidden, until the hold ends
// (Options.UnverifiedHold; PurgeDue purges them then), so that a mistaken
// or malicious request can be undone by Reinclude with nothing lost.
// Excluding an already-excluded site records the request in the event log
// as evidence; a verified one verifies the exclusion and purges what was
// kept or indexed since.
func (p *Policy) Exclude(ctx context.Context, inputs []string, c Change) ([]ExcludeResult, error) {
	sites, err := SitesOf(inputs)
	if err != nil {
		return nil, err
	}
	if c.Evidence == "" {
		c.Evidence = c.Actor
	}
	var results []ExcludeResult
	err = p.inTx(ctx, func(tx *db.Tx) error {
		if err := tx.LockPolicy(ctx); err != nil {
			return err
		}
		// Its time comes after every request to these sites reserved
		// before it.
		if err := tx.AwaitReservedAhead(ctx, sites, p.now()); err != nil {
			return err
		}
		results = results[:0]
		now := p.now()
		for i, site := range sites {
			ex, err := tx.Exclusion(ctx, site)
			switch {
			case err == nil:
				var purged db.IndexPurge
				if !c.Unverified || ex.PurgeAfter == nil {
					// Verified now, or nothing was kept: purge what was
					// kept or indexed since.
					if purged, err = tx.PurgeIndex(ctx, site); err != nil {
						return err
					}
				}
				if _, err := appendPurgeEvent(ctx, tx, now, db.EventExcludeRepeat, site, c, purged); err != nil {
					return err
				}
				if !c.Unverified && ex.PurgeAfter != nil {
					if err := tx.SetExclusionPurgeAfter(ctx, site, nil); err != nil {
						return err
					}
					ex.PurgeAfter = nil
				}
				if !ex.Verified && !c.Unverified {
					// Asked again by someone who speaks for the site.
					if err := tx.VerifyExclusion(ctx, site); err != nil {
						return err
					}
					ex.Verified = true
				}
				results = append(results, ExcludeResult{Input: inputs[i], Site: site, Already: true, Exclusion: ex, Purged: purged})
				continue
			case !errors.Is(err, db.ErrNotFound):
				return err
			}
			var (
				purged     db.IndexPurge
				purgeAfter *time.Time
			)
			if c.Unverified {
				t := now.UTC().Add(p.hold)
				purgeAfter = &t
			} else if purged, err = tx.PurgeIndex(ctx, site); err != nil {
				return err
			}
			ev, err := appendPurgeEvent(ctx, tx, now, db.EventExclude, site, c, purged)
			if err != nil {
				return err
			}
			ex = &db.Exclusion{Site: site, ExcludedAt: now, Actor: c.Actor, Reason: c.Reason,
				Evidence: c.Evidence, Source: c.Source, EventID: ev.ID, Verified: !c.Unverified, PurgeAfter: purgeAfter}
			if err := tx.CreateExclusion(ctx, ex); err != nil {
				return err
			}
			results = append(results, ExcludeResult{Input: inputs[i], Site: site, Exclusion: ex, Purged: purged})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("policy: exclude: %w", err)
	}
	return results, nil
}

// Reinclude puts an excluded site back on the crawl list. It needs a named
// actor (a staff member: re-inclusion is never automatic) and fails with
// ErrNotExcluded when the site is not excluded. An exclusion whose index
// entries are still kept (unverified, within its hold) is undone whole:
// the site comes back with its pages and link texts, searchable again.
// Otherwise the site starts again from an empty index: anything indexed
// while it was excluded (a request in flight at the exclusion, other
// sites' links to it) is purged too.
func (p *Policy) Reinclude(ctx context.Context, input string, c Change) (string, error) {
	site, err := SiteOf(input)
	if err != nil {
		return "", err
	}
	if c.Actor == "" {
		return "", ErrNoActor
	}
	if c.Evidence == "" {
		c.Evidence = c.Actor
	}
	err = p.inTx(ctx, func(tx *db.Tx) error {
		if err := tx.LockPolicy(ctx); err != nil {
			return err
		}
		ex, err := tx.Exclusion(ctx, site)
		if errors.Is(err, db.ErrNotFound) {
			return fmt.Errorf("%w: %s", ErrNotExcluded, site)
		}
		if err != nil {
			return err
		}
		deleted, err := tx.DeleteExclusion(ctx, site)
		if err != nil {
			return err
		}
		if !deleted {
			return fmt.Errorf("%w: %s", ErrNotExcluded, site)
		}
		var purged db.IndexPurge
		if ex.PurgeAfter == nil {
			if purged, err = tx.PurgeIndex(ctx, site); err != nil {
				return err
			}
		}
		_, err = appendPurgeEvent(ctx, tx, p.now(), db.EventReinclude, site, c, purged)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotExcluded) {
			return site, err
		}
		return site, fmt.Errorf("policy: re-include: %w", err)
	}
	return site, nil
}

// PurgeDue purges the index entries kept since unverified exclusions whose
// hold has ended unopposed (Exclusion.PurgeAfter at or before now), each
// site in its own transaction with a db.EventPurge event recording the
// counts, and returns the sites purged. A site re-included or verified in
// the meantime is not touched. Callers run it when they start and then
// now and then (serve, crawl, mail import and watch). It does I/O.
func (p *Policy) PurgeDue(ctx context.Context) ([]string, error) {
	due, err := p.reader().ExclusionsToPurge(ctx, p.now())
	if err != nil {
		return nil, fmt.Errorf("policy: purge: %w", err)
	}
	var done []string
	for _, d := range due {
		purgedSite := false
		err := p.inTx(ctx, func(tx *db.Tx) error {
			purgedSite = false
			if err := tx.LockPolicy(ctx); err != nil {
				return err
			}
			now := p.now()
			ex, err := tx.Exclusion(ctx, d.Site)
			if errors.Is(err, db.ErrNotFound) {
				return nil // re-included meanwhile
			}
			if err != nil {
				return err
			}
			if ex.PurgeAfter == nil || ex.PurgeAfter.After(now) {
				return nil // verified or asked again meanwhile
			}
			purged, err := tx.PurgeIndex(ctx, d.Site)
			if err != nil {
				return err
			}
			if err := tx.SetExclusionPurgeAfter(ctx, d.Site, nil); err != nil {
				return err
			}
			c := Change{Actor: "lohibot", Source: "purge", Evidence: ex.Evidence,
				Reason: fmt.Sprintf("unverified exclusion of %s unopposed since %s", d.Site, ex.ExcludedAt.UTC().Format(time.RFC3339))}
			if _, err := appendPurgeEvent(ctx, tx, now, db.EventPurge, d.Site, c, purged); err != nil {
				return err
			}
			purgedSite = true
			return nil
		})
		if err != nil {
			return done, fmt.Errorf("policy: purge %s: %w", d.Site, err)
		}
		if purgedSite {
			done = append(done, d.Site)
		}
	}
	return done, nil
}

// Exclusions lists the current exclusions, sorted by site.
func (p *Policy) Exclusions(ctx context.Context) ([]db.Exclusion, error) {
	out, err := p.reader().Exclusions(ctx)
	if err != nil {
		return nil, fmt.Errorf("policy: list exclusions: %w", err)
	}
	return out, nil
}

// Check returns the exclusion of the site named by input, or nil when the
// site may be crawled.
func (p *Policy) Check(ctx context.Context, input string) (string, *db.Exclusion, error) {
	site, err := SiteOf(input)
	if err != nil {
		return "", nil, err
	}
	ex, err := p.reader().Exclusion(ctx, site)
	if errors.Is(err, db.ErrNotFound) {
		return site, nil, nil
	}
	if err != nil {
		return site, nil, fmt.Errorf("policy: check: %w", err)
	}
	return site, ex, nil
}

// History returns the policy events of a site, oldest first.
func (p *Policy) History(ctx context.Context, site string) ([]db.PolicyEvent, error) {
	out, err := p.reader().SiteEvents(ctx, site)
	if err != nil {
		return nil, fmt.Errorf("policy: history: %w", err)
	}
	return out, nil
}

// appendEvent bumps the policy version and appends one event carrying it
// (db.Tx.AppendEvent).
func appendEvent(ctx context.Context, tx *db.Tx, now time.Time, kind, site string, c Change) (*db.PolicyEvent, error) {
	return appendPurgeEvent(ctx, tx, now, kind, site, c, db.IndexPurge{})
}

// appendPurgeEvent is appendEvent for a change that purged the site's index
// entries, recording the counts.
func appendPurgeEvent(ctx context.Context, tx *db.Tx, now time.Time, kind, site string, c Change, purged db.IndexPurge) (*db.PolicyEvent, error) {
	ev := &db.PolicyEvent{HappenedAt: now, Kind: kind, Site: site,
		Actor: c.Actor, Reason: c.Reason, Evidence: c.Evidence, Source: c.Source, Detail: c.Detail,
		PurgedPages: purged.Pages, PurgedAnchors: purged.Anchors}
	if err := tx.AppendEvent(ctx, ev); err != nil {
		return nil, err
	}
	return ev, nil
}
