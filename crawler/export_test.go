package crawler

import (
	"time"

	"github.com/lohisoft/lohibot/db"
)

// CacheSizes returns how many hosts, robots.txt entries and resolved host
// names the crawler keeps in memory (tests of the bounded caches).
func (c *Crawler) CacheSizes() (hosts, robots, names int) {
	c.hostsMu.Lock()
	hosts = len(c.hosts)
	c.hostsMu.Unlock()
	c.robotsMu.Lock()
	robots = len(c.robots)
	c.robotsMu.Unlock()
	return hosts, robots, c.lookups.names.Len()
}

// ClaimSizes is db.ListBlocks: the block of the crawl list a crawler claims,
// and how many blocks it claims at first (ListAll).
func ClaimSizes(total int64, starting int) (block, ahead int) { return db.ListBlocks(total, starting) }

// SetOthersAfter sets how long ListAll waits, once the crawler's own sites
// have started, before it yields the blocks other crawlers claimed
// (othersWait).
func (c *Crawler) SetOthersAfter(d time.Duration) { c.othersAfter = d }

// OthersWait is othersWait.
func OthersWait(delay, leaseTTL time.Duration) time.Duration { return othersWait(delay, leaseTTL) }
