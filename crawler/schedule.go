package crawler

import (
	"context"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/lohisoft/lohibot/db"
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
		page, err := c.store.DueSites(ctx, q)
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
// round to it at the end (all of the list once, first last). Crawlers of
// a fleet each start at a different point of the list, so that they do
// not all queue for the same sites' cycles.
func ListedFrom(ctx context.Context, store *db.Store, first string) iter.Seq2[Target, error] {
	return func(yield func(Target, error) bool) {
		// list yields the sites named after after, up to upTo when it is
		// set, and says whether to go on.
		list := func(after, upTo string) bool {
			for {
				page, err := store.SitesAfter(ctx, after, duePage)
				if err != nil {
					yield(Target{}, err)
					return false
				}
				for _, s := range page {
					if upTo != "" && s.Name > upTo {
						return true
					}
					if !yield(target(s.Name, s.StartURL), nil) {
						return false
					}
				}
				if len(page) < duePage {
					return true
				}
				after = page[len(page)-1].Name
			}
		}
		if list(first, "") && first != "" {
			list("", first)
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

// claimSizes says, for a crawl list of total sites, how many sites make a
// block that a crawler claims (ListAll), and how many blocks it claims at
// first. A block is 64 sites, or a sixteenth of a shorter list (at least
// 8), so that two crawlers share a short list too. The first claim is of
// as many blocks as the crawler starts sites at once (starting), but of
// half the list at most, which leaves the other half to a crawler that
// starts at the same time.
func claimSizes(total int64, starting int) (block, ahead int) {
	block = int(min(64, max(8, (total+15)/16)))
	blocks := int((total + int64(block) - 1) / int64(block))
	ahead = max(1, min((starting+block-1)/block, (blocks+1)/2))
	return block, ahead
}

// othersWait is how long ListAll waits, once this crawler's own sites have
// started, before it yields the blocks other crawlers claimed: two gaps,
// but no more than a lease heartbeat (a third of the lease TTL), and a
// second at least. Those sites are then watched (startCycle: a
// goroutine, a batched start that finds the lease held, reads of the
// leases each second), which costs the machine while the other crawlers
// still start theirs; a crawler that died is taken over only once its
// leases expire (--lease-ttl, a minute by default), so the wait loses
// nothing. Measured with BenchmarkCrawlFleet (1,000 sites at 1 s, two
// crawlers on a 2-core machine shared with PostgreSQL and the local
// web, six alternated runs), the watching began while the other
// crawler's sites were still starting, and the two crawlers' last first
// request came 0.43-0.52 s after the start; with the wait, 0.38-0.48 s
// (one crawler: 0.38-0.47 s).
func othersWait(delay, leaseTTL time.Duration) time.Duration {
	return max(min(2*delay, leaseTTL/3), time.Second)
}

// claimKey is the lease key of the block of the crawl list that starts at
// site (ListAll).
func claimKey(site string) string { return "start:" + site }

// ListAll yields the whole crawl list for a crawl of all of it, by name,
// from the start of a block of sites chosen at random and coming round to
// it, each site once.
//
// On PostgreSQL, where crawlers of a fleet share the list, every crawler
// cuts it into the same blocks (claimSizes), and claims each block before
// it yields its sites (a lease, db.Store.ClaimBlocks, held until the
// crawler closes): a few blocks at first, then one more each time a
// block's worth of its sites has started (at the pace the start slots
// allow anyway), so that a crawler that starts a moment after another
// still finds blocks of a short list to claim. A block another crawler
// claimed is passed over, and yielded last, once this crawler's own sites
// have started and a moment more has passed (othersWait): by then that
// crawler has started its sites, and those this crawler meets are watched
// as before (startCycle), so that a crawler that dies is still taken
// over.
// Two crawlers that each went through the whole list met on the same
// sites' cycles: measured with BenchmarkCrawlFleet (1,000 sites), one of
// them often started most of the list (979 of 1,000 sites in one run)
// while the other's starts only cost the machine.
//
// On SQLite it yields the list from the same random point (ListedFrom).
// total is the length of the list (db.Store.CountSites).
func (c *Crawler) ListAll(ctx context.Context, total int64) iter.Seq2[Target, error] {
	return func(yield func(Target, error) bool) {
		claimBlock, ahead := claimSizes(total, cap(c.starting))
		listPage := 16 * claimBlock
		blocks := (total + int64(claimBlock) - 1) / int64(claimBlock)
		// The list is started after first: the end of a block.
		first := ""
		if k := rand.Int64N(max(blocks, 1)); k > 0 {
			var err error
			if first, err = c.store.SiteNameAt(ctx, k*int64(claimBlock)-1); err != nil {
				yield(Target{}, err)
				return
			}
		}
		if !c.pg {
			for t, err := range ListedFrom(ctx, c.store, first) {
				if !yield(t, err) {
					return
				}
			}
			return
		}
		// span is a block passed over: the sites after after, up to last.
		type span struct{ after, last string }
		var (
			later   []span
			claimed bool // a claim was made
		)
		// walk yields the sites after after, up to upTo when it is set, a
		// block at a time, and says whether to go on.
		walk := func(after, upTo string) bool {
			for {
				page, err := c.store.SitesAfter(ctx, after, listPage)
				if err != nil {
					yield(Target{}, err)
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
					} else if !c.startingAtMost(ctx, max(ahead-1, 1)*claimBlock) {
						return false
					}
					var keys []string
					for i := from; i < len(page) && len(keys) < n; i += claimBlock {
						keys = append(keys, claimKey(page[i].Name))
					}
					mine, err := c.claim(ctx, keys)
					if err != nil {
						yield(Target{}, err)
						return false
					}
					for range keys {
						to := min(from+claimBlock, len(page))
						if !mine[claimKey(page[from].Name)] {
							prev := after
							if from > 0 {
								prev = page[from-1].Name
							}
							later = append(later, span{prev, page[to-1].Name})
						} else {
							for _, s := range page[from:to] {
								if !yield(target(s.Name, s.StartURL), nil) {
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
		// have started, and othersAfter more.
		if !c.startingAtMost(ctx, 0) || c.sleep(ctx, c.othersAfter) != nil {
			return
		}
		for _, b := range later {
			// (Read again: sites added to the block meanwhile are in it.)
			for after := b.after; ; {
				page, err := c.store.SitesAfter(ctx, after, claimBlock)
				if err != nil {
					yield(Target{}, err)
					return
				}
				for _, s := range page {
					if s.Name > b.last {
						page = nil
						break
					}
					if !yield(target(s.Name, s.StartURL), nil) {
						return
					}
					after = s.Name
				}
				if len(page) < claimBlock {
					break
				}
			}
		}
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

// claim claims the blocks of the crawl list keys name for this crawler
// (db.Store.ClaimBlocks) until it closes, and returns those it holds.
func (c *Crawler) claim(ctx context.Context, keys []string) (map[string]bool, error) {
	release, err := c.leaseConn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	now := c.now()
	return c.store.ClaimBlocks(ctx, keys, c.holder, now, now.Add(c.opts.LeaseTTL))
}
