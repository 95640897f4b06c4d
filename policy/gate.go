package policy

import (
	"context"
	"fmt"
	"sync"

	"github.com/lohisoft/lohibot/db"
)

// Verdict is the Gate's answer for one site.
type Verdict struct {
	Site     string
	Excluded bool
	// Version is the policy version the answer was given at; the crawler
	// records it in the request log as evidence of the check.
	Version int64
}

// String renders the verdict for the request log.
func (v Verdict) String() string {
	if v.Excluded {
		return fmt.Sprintf("excluded (policy v%d)", v.Version)
	}
	return fmt.Sprintf("allowed (policy v%d)", v.Version)
}

// Gate answers "may I fetch this site now?" before every request. It keeps
// the set of excluded sites in memory and, on every call, reads the policy
// version (one indexed single-row read); when another process has committed
// a change, it applies the new events before answering. So an exclusion
// committed anywhere is seen by the very next Check in every process.
//
// A Gate is safe for concurrent use by multiple goroutines.
type Gate struct {
	watch *db.PolicyWatch

	catchUpMu sync.Mutex // serialises catchUp, so events apply in order

	mu       sync.RWMutex // guards excluded and version
	excluded map[string]struct{}
	version  int64
}

// NewGate loads every exclusion into memory and returns a Gate. It does I/O.
func (p *Policy) NewGate(ctx context.Context) (*Gate, error) {
	w, err := p.store.NewPolicyWatch(ctx)
	if err != nil {
		return nil, fmt.Errorf("policy: gate: %w", err)
	}
	g := &Gate{watch: w, excluded: make(map[string]struct{})}
	if err := g.load(ctx); err != nil {
		w.Close()
		return nil, err
	}
	return g, nil
}

// Close releases the Gate's prepared statement.
func (g *Gate) Close() error { return g.watch.Close() }

// load reads the full exclusion set at a consistent version.
func (g *Gate) load(ctx context.Context) error {
	version, set, err := g.watch.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("policy: gate load: %w", err)
	}
	g.mu.Lock()
	g.excluded, g.version = set, version
	g.mu.Unlock()
	return nil
}

// Check answers whether site (as returned by SiteOf) may be fetched now. It
// does one small read of the database, plus the new events when the policy
// changed since the last call.
func (g *Gate) Check(ctx context.Context, site string) (Verdict, error) {
	version, err := g.watch.Version(ctx)
	if err != nil {
		return Verdict{}, fmt.Errorf("policy: gate: %w", err)
	}
	g.mu.RLock()
	seen := g.version
	g.mu.RUnlock()
	if version > seen {
		if err := g.catchUp(ctx, version); err != nil {
			return Verdict{}, err
		}
	}
	g.mu.RLock()
	_, excluded := g.excluded[site]
	v := g.version
	g.mu.RUnlock()
	return Verdict{Site: site, Excluded: excluded, Version: v}, nil
}

// Excluded reports whether site was excluded at the version the gate last
// read (the last Check's, in any goroutine), without I/O: for what needs no
// fresher answer than the last request's, such as keeping no link text
// for an excluded site's pages.
func (g *Gate) Excluded(site string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.excluded[site]
	return ok
}

// catchUp applies the exclude and re-include events with versions in
// (g.version, target]. A committed policy_state version V implies every event
// up to V is committed too (writers bump the version under its row lock and
// insert the event in the same transaction), so nothing can be skipped.
func (g *Gate) catchUp(ctx context.Context, target int64) error {
	g.catchUpMu.Lock()
	defer g.catchUpMu.Unlock()
	g.mu.RLock()
	seen := g.version
	g.mu.RUnlock()
	if target <= seen {
		return nil // another goroutine caught up meanwhile
	}
	events, err := g.watch.Changes(ctx, seen, target)
	if err != nil {
		return fmt.Errorf("policy: gate: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range events {
		switch e.Kind {
		case db.EventExclude:
			g.excluded[e.Site] = struct{}{}
		case db.EventReinclude:
			delete(g.excluded, e.Site)
		}
	}
	g.version = target
	return nil
}
