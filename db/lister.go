package db

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/lohisoft/lohibot/internal/clock"
)

// A Lister yields the crawl list for a crawl of all of it (lohibot crawl
// --all). Each engine has its own (package db/engine picks it): on SQLite
// the list is walked by name; on PostgreSQL, which a fleet shares, each
// crawler claims blocks of the list before it yields their sites.
type Lister interface {
	// List yields every site of the crawl list once, by name, from the
	// start of a block of ListBlocks' size chosen at random and coming
	// round to it; total is the length of the list (Store.CountSites). A
	// database error ends the sequence and is yielded with a zero
	// ListedSite. Sites added meanwhile may be yielded or not.
	List(ctx context.Context, total int64) iter.Seq2[ListedSite, error]
}

// ListPace is what a Lister needs of the crawler that takes its sites up.
type ListPace struct {
	// Holder is the lease holder the crawler claims blocks under: a
	// claim lasts until the crawler gives its leases back.
	Holder string
	// LeaseTTL is how long a claim outlives its holder's last heartbeat.
	LeaseTTL time.Duration
	// Clock tells the time of claims and times the wait for OthersAfter.
	// Nil means the system clock.
	Clock clock.Clock
	// Starting is how many sites the crawler takes up at first (on
	// PostgreSQL, the sites its request slots serve): the first claim
	// covers that many sites (ListBlocks).
	Starting int
	// StartingAtMost waits until at most n of the crawler's sites are
	// starting, and reports whether ctx let it: a lister claims one more
	// block each time a block's worth of sites has started.
	StartingAtMost func(ctx context.Context, n int) bool
	// OthersAfter is how long a lister waits, once the crawler's own
	// sites have started, before it yields the blocks other crawlers
	// claimed (their sites are watched then: a crawler that died is still
	// taken over).
	OthersAfter time.Duration
	// Turn, when set, is taken for each claim and given back after it
	// (it bounds the connections a crawler's claims and leases hold).
	Turn func(ctx context.Context) (release func(), err error)
}

// ListBlocks says, for a crawl list of total sites, how many sites make a
// block of it (a fleet's crawlers claim the list a block at a time), and
// how many blocks a crawler claims at first. A block is 64 sites, or a
// sixteenth of a shorter list (at least 8), so that two crawlers share a
// short list too. The first claim is of as many blocks as the crawler
// starts sites at once (starting), but of half the list at most, which
// leaves the other half to a crawler that starts at the same time.
func ListBlocks(total int64, starting int) (block, ahead int) {
	block = int(min(64, max(8, (total+15)/16)))
	blocks := int((total + int64(block) - 1) / int64(block))
	ahead = max(1, min((starting+block-1)/block, (blocks+1)/2))
	return block, ahead
}

// ListStart returns where a crawl of all of a list of total sites, cut in
// blocks of block sites, starts: after the site it returns, the end of a
// block chosen at random ("" for the first). Crawlers of a fleet each
// start at a different point of the list, so that they do not all queue
// for the same sites' cycles.
func (s *Store) ListStart(ctx context.Context, total int64, block int) (string, error) {
	blocks := (total + int64(block) - 1) / int64(block)
	if k := rand.Int64N(max(blocks, 1)); k > 0 {
		return s.SiteNameAt(ctx, k*int64(block)-1)
	}
	return "", nil
}

// listPage is how many sites one query of a walk of the crawl list reads.
const listPage = 1000

// ListFrom yields every site of the crawl list, excluded ones included, by
// name, starting after the site named first and coming round to it at the
// end (all of the list once, first last), reading the list a page at a
// time so that a list of any length costs one page of memory. A database
// error ends the sequence and is yielded with a zero ListedSite.
func (s *Store) ListFrom(ctx context.Context, first string) iter.Seq2[ListedSite, error] {
	return func(yield func(ListedSite, error) bool) {
		// list yields the sites named after after, up to upTo when it is
		// set, and says whether to go on.
		list := func(after, upTo string) bool {
			for {
				page, err := s.SitesAfter(ctx, after, listPage)
				if err != nil {
					yield(ListedSite{}, err)
					return false
				}
				for _, l := range page {
					if upTo != "" && l.Name > upTo {
						return true
					}
					if !yield(l, nil) {
						return false
					}
				}
				if len(page) < listPage {
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

// FleetShare is one crawler's share of a fleet's crawl of the list, as it
// ends its part.
type FleetShare struct {
	// Mine and All are the requests logged since the crawler started: by
	// its node, and by the whole fleet.
	Mine, All int64
	// Others is how many other crawlers still hold a lease (a host, a
	// cycle or a claim of the list): none, and the list is done.
	Others int64
}

// FleetShare returns the share of node in the requests logged after
// afterID (db.Store.LastRequestID when its crawl started), and how many
// holders other than holder still hold a lease unexpired at now. A crawler
// that has given its own leases back first and finds no other holder is
// the last of the fleet to finish.
func (s *Store) FleetShare(ctx context.Context, afterID int64, node, holder string, now time.Time) (FleetShare, error) {
	var f FleetShare
	err := s.pool.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN node = ? THEN 1 ELSE 0 END), 0) FROM requests WHERE id > ?`),
		node, afterID).Scan(&f.All, &f.Mine)
	if err != nil {
		return f, fmt.Errorf("db: requests: %w", err)
	}
	err = s.pool.QueryRowContext(ctx, s.rebind(`SELECT COUNT(DISTINCT holder) FROM host_leases WHERE holder <> '' AND holder <> ? AND expires_at > ?`),
		holder, now).Scan(&f.Others)
	if err != nil {
		return f, fmt.Errorf("db: leases: %w", err)
	}
	return f, nil
}
