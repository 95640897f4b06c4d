package crawler

import (
	"context"
	"iter"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/engine"
)

// duePage is how many sites one query of the crawl list reads.
const duePage = 1000

// DueSites returns up to limit sites of the crawl list that are due for a
// cycle, never-crawled and interrupted ones first, then those whose last
// cycle started longest ago: not excluded, not being crawled (a live cycle
// lease, cycleKey, held by this crawler or another of the fleet), and
// never crawled, interrupted, or last started Options.RecrawlAfter ago or
// more (the rule startCycle applies again under the lease). Sites for which
// skip reports true are passed over. It reads the list a page at a time
// from an index, so its cost does not grow with the list's length.
func (c *Crawler) DueSites(ctx context.Context, limit int, skip func(site string) bool) ([]Target, error) {
	now := c.now()
	q := db.DueQuery{Cutoff: now.Add(-c.opts.RecrawlAfter), Now: now, LeasePrefix: cycleKey(""), Limit: min(max(limit, 1), duePage)}
	var out []Target
	for len(out) < limit {
		var page []db.DueSite
		err := c.retry(ctx, func() (err error) {
			page, err = c.store.DueSites(ctx, q)
			return err
		})
		if err != nil {
			return out, err
		}
		for _, d := range page {
			if skip == nil || !skip(d.Name) {
				out = append(out, target(d.Name, d.StartURL))
				if len(out) == limit {
					break
				}
			}
		}
		if len(page) < q.Limit {
			break
		}
		last := page[len(page)-1]
		q.AfterDue, q.AfterName = last.DueSince, last.Name
	}
	return out, nil
}

// Listed yields every site of the crawl list, excluded ones included (the
// crawl refuses them at the gate), by name, reading the list a page at a
// time so that a list of any length costs one page of memory. A database
// error ends the sequence and is yielded with an empty Target.
func Listed(ctx context.Context, store *db.Store) iter.Seq2[Target, error] {
	return ListedFrom(ctx, store, "")
}

// ListedFrom is Listed starting after the site named first and coming
// round to it at the end (all of the list once, first last).
func ListedFrom(ctx context.Context, store *db.Store, first string) iter.Seq2[Target, error] {
	return targets(store.ListFrom(ctx, first))
}

// targets is the crawl targets of the listed sites.
func targets(sites iter.Seq2[db.ListedSite, error]) iter.Seq2[Target, error] {
	return func(yield func(Target, error) bool) {
		for s, err := range sites {
			if err != nil {
				yield(Target{}, err)
				return
			}
			if !yield(target(s.Name, s.StartURL), nil) {
				return
			}
		}
	}
}

// target is the target of a listed site: its start URL, or https://SITE/.
func target(site, start string) Target {
	if start == "" {
		start = "https://" + site + "/"
	}
	return Target{Site: site, StartURL: start}
}

// othersWait is how long ListAll waits, once this crawler's own sites have
// started, before it yields the blocks other crawlers claimed: two gaps,
// but no more than a lease heartbeat (a third of the lease TTL), and a
// second at least. Those sites are then watched (startCycle: a
// goroutine, a batched start that finds the lease held, reads of the
// leases each second), which costs the machine while the other crawlers
// still start theirs; a crawler that died is taken over only once its
// leases expire (--lease-ttl, a minute by default), so the wait loses
// nothing.
func othersWait(delay, leaseTTL time.Duration) time.Duration {
	return max(min(2*delay, leaseTTL/3), time.Second)
}

// ListAll yields the whole crawl list for a crawl of all of it, by name,
// from the start of a block of sites chosen at random and coming round to
// it, each site once: the engine's db.Lister decides the order, and on a
// database a fleet shares, which crawler takes up which block first.
// total is the length of the list (db.Store.CountSites).
//
// On an engine a fleet shares (db.Traits.Shared) the list is taken by
// capacity: the next site is read (and with it, at a block's end, the next
// block claimed) only once this crawler has room for it (hasRoom), and
// the first claim is of the sites its capacity covers. A crawler therefore
// holds at most a block of sites claimed but not started, and the sites it
// could not serve at once are left to the crawlers that can, which also
// take up the unstarted sites of the blocks others claimed (db.Lister).
// A site another crawler is on is watched to its cycle's end, so that the
// crawl ends together: once the list is gone through, a crawler with room
// asks for such sites, and a saturated crawler hands them over at a gap
// (handover.go).
func (c *Crawler) ListAll(ctx context.Context, total int64) iter.Seq2[Target, error] {
	starting := cap(c.starting)
	if c.traits.Shared {
		starting = c.SiteCapacity()
	}
	l := engine.NewLister(c.store, db.ListPace{Holder: c.holder, LeaseTTL: c.opts.LeaseTTL, Clock: c.clock,
		Starting: starting, StartingAtMost: c.startingAtMost, OthersAfter: c.othersAfter, Turn: c.w.Turn})
	seq := targets(l.List(ctx, total))
	if !c.traits.Shared {
		return seq
	}
	c.fleetWatch.Store(true)
	seq = c.byCapacity(ctx, seq)
	return func(yield func(Target, error) bool) {
		for t, err := range seq {
			if !yield(t, err) {
				return
			}
		}
		c.listDone.Store(true)
	}
}

// startingAtMost waits until at most n sites are starting (Crawler.starting)
// and reports whether ctx let it.
func (c *Crawler) startingAtMost(ctx context.Context, n int) bool {
	for len(c.starting) > n {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}
