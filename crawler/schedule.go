package crawler

import (
	"context"
	"iter"

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
