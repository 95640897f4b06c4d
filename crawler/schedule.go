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

// claimBlock is how many sites of the crawl list a crawler claims at a
// time on PostgreSQL (ListAll), and listPage how many it reads at once
// (whole blocks).
const (
	claimBlock = 64
	listPage   = 16 * claimBlock
)

// claimKey is the lease key of the block of the crawl list that starts at
// site (ListAll).
func claimKey(site string) string { return "start:" + site }

// ListAll yields the whole crawl list for a crawl of all of it, by name,
// from the start of a block of claimBlock sites chosen at random and
// coming round to it, each site once.
//
// On PostgreSQL, where crawlers of a fleet share the list, every crawler
// cuts it into the same blocks, and claims each block before it yields its
// sites (a lease, db.Store.ClaimBlocks, held until the crawler closes): as
// many blocks at first as it starts sites at once, then one at a time as
// it needs them. A block another crawler claimed is passed over, and
// yielded last, once this crawler's own sites have started: by then that
// crawler has started its sites, and those this crawler meets are watched
// as before (startCycle), so that a crawler that dies is still taken over.
// Two crawlers that each went through the whole list met on the same
// sites' cycles: measured with BenchmarkCrawlFleet (1,000 sites), one of
// them often started most of the list (979 of 1,000 sites in one run)
// while the other's starts only cost the machine.
//
// On SQLite it yields the list from the same random point (ListedFrom).
// total is the length of the list (db.Store.CountSites).
func (c *Crawler) ListAll(ctx context.Context, total int64) iter.Seq2[Target, error] {
	return func(yield func(Target, error) bool) {
		blocks := (total + claimBlock - 1) / claimBlock
		// The list is started after first: the end of a block.
		first := ""
		if k := rand.Int64N(max(blocks, 1)); k > 0 {
			var err error
			if first, err = c.store.SiteNameAt(ctx, k*claimBlock-1); err != nil {
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
			ahead   = (cap(c.starting) + claimBlock - 1) / claimBlock
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
		// have started.
		for len(c.starting) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
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
