// Package postgres is the PostgreSQL engine behind package db's
// interfaces for the crawler, which a fleet of crawlers shares.
package postgres

import (
	"context"
	"iter"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/clock"
)

// Lister is the PostgreSQL crawl list's Lister. Crawlers of a fleet share
// the list: every crawler cuts it into the same blocks (db.ListBlocks) and
// claims each block before it yields its sites (a lease,
// db.Store.ClaimBlocks, held until the crawler gives its leases back): a
// few blocks at first, then one more each time a block's worth of its
// sites has started, so that a crawler that starts a moment after another
// still finds blocks of a short list to claim. A block another crawler
// claimed is passed over, and yielded last, once this crawler's own sites
// have started and ListPace.OthersAfter more has passed: by then that
// crawler has started its sites, and those this crawler meets are only
// watched, so that a crawler that dies is still taken over. Two crawlers
// that each went through the whole list met on the same sites' cycles,
// and the second one's starts only cost the machine.
type Lister struct {
	store *db.Store
	pace  db.ListPace
	clock clock.Clock
}

// NewLister returns the Lister of store's crawl list for a crawler paced
// by pace.
func NewLister(store *db.Store, pace db.ListPace) *Lister {
	return &Lister{store: store, pace: pace, clock: clock.Or(pace.Clock)}
}

// span is a block passed over: the sites after after, up to last.
type span struct{ after, last string }

// List implements db.Lister.
func (l *Lister) List(ctx context.Context, total int64) iter.Seq2[db.ListedSite, error] {
	return func(yield func(db.ListedSite, error) bool) {
		block, ahead := db.ListBlocks(total, l.pace.Starting)
		listPage := 16 * block
		var first string
		err := l.store.Retry(ctx, func() (err error) {
			first, err = l.store.ListStart(ctx, total, block)
			return err
		})
		if err != nil {
			yield(db.ListedSite{}, err)
			return
		}
		var (
			later   []span
			claimed bool // a claim was made
		)
		// walk yields the sites after after, up to upTo when it is set, a
		// block at a time, and says whether to go on.
		walk := func(after, upTo string) bool {
			for {
				page, err := l.sitesAfter(ctx, after, listPage)
				if err != nil {
					yield(db.ListedSite{}, err)
					return false
				}
				full := len(page) == listPage
				for i, s := range page {
					if upTo != "" && s.Name > upTo {
						page, full = page[:i], false
						break
					}
				}
				for from := 0; from < len(page); {
					n := 1
					if !claimed {
						n, claimed = ahead, true
					} else if !l.pace.StartingAtMost(ctx, max(ahead-1, 1)*block) {
						return false
					}
					var keys []string
					for i := from; i < len(page) && len(keys) < n; i += block {
						keys = append(keys, claimKey(page[i].Name))
					}
					mine, err := l.claim(ctx, keys)
					if err != nil {
						yield(db.ListedSite{}, err)
						return false
					}
					for range keys {
						to := min(from+block, len(page))
						if !mine[claimKey(page[from].Name)] {
							prev := after
							if from > 0 {
								prev = page[from-1].Name
							}
							later = append(later, span{prev, page[to-1].Name})
						} else {
							for _, s := range page[from:to] {
								if !yield(s, nil) {
									return false
								}
							}
						}
						from = to
					}
				}
				if !full {
					return true
				}
				after = page[len(page)-1].Name
			}
		}
		if !walk(first, "") || (first != "" && !walk("", first)) {
			return
		}
		if len(later) == 0 {
			return
		}
		// The blocks other crawlers claimed: once this crawler's own sites
		// have started, and OthersAfter more.
		if !l.pace.StartingAtMost(ctx, 0) || clock.Sleep(ctx, l.clock, l.pace.OthersAfter) != nil {
			return
		}
		for _, b := range later {
			// (Read again: sites added to the block meanwhile are in it.)
			for after := b.after; ; {
				page, err := l.sitesAfter(ctx, after, block)
				if err != nil {
					yield(db.ListedSite{}, err)
					return
				}
				for _, s := range page {
					if s.Name > b.last {
						page = nil
						break
					}
					if !yield(s, nil) {
						return
					}
					after = s.Name
				}
				if len(page) < block {
					break
				}
			}
		}
	}
}

// claimKey is the lease key of the block of the crawl list that starts at
// site: a key that can never be a host name.
func claimKey(site string) string { return "start:" + site }

// sitesAfter is db.Store.SitesAfter, waiting while the database is
// unreachable (db.Store.Retry).
func (l *Lister) sitesAfter(ctx context.Context, after string, n int) (page []db.ListedSite, err error) {
	err = l.store.Retry(ctx, func() (err error) {
		page, err = l.store.SitesAfter(ctx, after, n)
		return err
	})
	return page, err
}

// claim claims the blocks of the crawl list keys name for the crawler
// until it gives its leases back, and returns those it holds, waiting
// while the database is unreachable (a claim taken twice is held once).
func (l *Lister) claim(ctx context.Context, keys []string) (mine map[string]bool, err error) {
	err = l.store.Retry(ctx, func() (err error) {
		mine, err = l.claimOnce(ctx, keys)
		return err
	})
	return mine, err
}

// claimOnce is claim, tried once.
func (l *Lister) claimOnce(ctx context.Context, keys []string) (map[string]bool, error) {
	if l.pace.Turn != nil {
		release, err := l.pace.Turn(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	now := l.clock.Now().UTC().Truncate(time.Microsecond)
	return l.store.ClaimBlocks(ctx, keys, l.pace.Holder, now, now.Add(l.pace.LeaseTTL))
}
