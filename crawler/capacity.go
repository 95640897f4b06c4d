package crawler

import (
	"context"
	"iter"
	"math"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// paceWeight is the weight of one request in the moving averages of pace:
// the capacity follows a change of the web's answers or the machine's load
// within a few hundred requests.
const paceWeight = 0.02

// capacityMargin is how many more sites than the measured pace needs a
// crawler takes up: the averages lag, and a site's steps between its
// requests (the writes, the gate) are not all in its period.
const capacityMargin = 1.1

// pace measures what the crawler's request slots serve: how long a page
// request holds its slot (robots.txt, one request of a cycle's 21 and
// often answered at once, would make the first measures short), and how
// long a host's requests come apart (slot to slot: the request, the gap,
// the writes in between). A site sends at most
// one request per period, so MaxInFlight slots keep busy about
// MaxInFlight × period / hold sites.
type pace struct {
	mu     sync.Mutex
	hold   float64 // seconds a request holds its slot (moving average)
	period float64 // seconds from one request's slot to its host's next (moving average)
	gap    float64 // seconds of the hosts' gaps (moving average)
	n      int     // requests noted
	// wait is the seconds a host that is due waits for a request slot
	// (a moving average of weight waitWeight).
	wait float64
}

// waitWeight is the weight of one request in the moving average of the
// wait for a slot: it follows a crawler that became saturated within
// a few dozen requests.
const waitWeight = 0.1

// noteWait adds the time a host that was due waited for a request slot.
func (p *pace) noteWait(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wait += waitWeight * (d.Seconds() - p.wait)
}

// saturated says the request slots hold the sites back: a host that is
// due waits longer for a slot, on average, than its gap.
func (p *pace) saturated() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gap > 0 && p.wait > p.gap
}

// note adds one request's hold and, when the host had a request before
// it in this process, the period since that one; a period longer than a
// few gaps (a Retry-After, a backoff, the host's previous cycle) is
// clipped, so that a site that waits long counts as one that sends
// seldom, not as one that never does.
func (p *pace) note(hold, period, gap time.Duration) {
	if hold <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The mean of the first requests, then a moving average.
	p.n++
	w := max(paceWeight, 1/float64(p.n))
	avg := func(v *float64, x float64) {
		if *v == 0 {
			*v = x
		} else {
			*v += w * (x - *v)
		}
	}
	avg(&p.hold, hold.Seconds())
	avg(&p.gap, gap.Seconds())
	if period > 0 {
		avg(&p.period, min(period, 4*gap+hold).Seconds())
	}
}

// sites is how many sites keep slots request slots busy at the measured
// pace, and whether there is a measure yet. Until a host has had two
// requests, a period is the hold and the gap: the first answers, a
// fraction of a second into a crawl, then set the pace.
func (p *pace) sites(slots int) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold == 0 {
		return 0, false
	}
	period := p.period
	if period == 0 {
		period = p.hold + p.gap
	}
	n := float64(slots) * max(period/p.hold, 1) * capacityMargin
	if n > math.MaxInt32 {
		return math.MaxInt32, true
	}
	return int(math.Ceil(n)), true
}

// SiteCapacity returns how many sites this crawler can keep at work at
// once: as many as its request slots (Options.MaxInFlight) serve at the
// pace measured so far (each site sends at most one request per gap), and
// MaxInFlight before any measure; never more than MaxSitesParallel. On an
// engine one crawler uses at a time, it is MaxSitesParallel. On one a fleet
// shares (db.Traits.Shared), the fleet shares the crawl list by it: a crawler takes up a
// site only while it has the capacity to send its requests, so that a
// site started is one its crawler serves at once, and the sites it could
// not serve are left to a crawler that can.
func (c *Crawler) SiteCapacity() int {
	if !c.traits.Shared {
		return c.opts.MaxSitesParallel
	}
	n, ok := c.pace.sites(c.opts.MaxInFlight)
	if !ok {
		n = c.opts.MaxInFlight
	}
	return max(1, min(n, c.opts.MaxSitesParallel))
}

// atWork is how many sites this crawler has at work: starting (not those
// watching another crawler's lease) or crawling.
func (c *Crawler) atWork() int {
	return len(c.starting) + int(c.sitesRunning.Load())
}

// hasRoom says this crawler has room for one more site: fewer than
// SiteCapacity sites at work. Where a fleet shares the list (db.Traits.Shared) it counts work,
// not sites: while its sites at work have fewer page requests left than
// SiteCapacity fresh cycles would have, up to twice SiteCapacity sites
// (and never more than MaxSitesParallel). A site near its cycle's end
// holds its slots only a few requests longer, and a site taken up then
// rather than when one ends starts that much earlier: the last sites of a
// list, each at least Budget+1 requests one gap apart, no longer start
// only once others have ended.
func (c *Crawler) hasRoom() bool {
	n := c.SiteCapacity()
	at := c.atWork()
	if !c.traits.Shared {
		return at < n
	}
	left := c.work.Load() + int64(len(c.starting))*Budget
	return at < min(2*n, c.opts.MaxSitesParallel) && left < int64(n)*Budget
}

// noteWork counts left as the page requests r's cycle has left (Budget
// less what it spent; 0 once it ends) in the crawler's work.
func (c *Crawler) noteWork(r *siteRun, left int) {
	c.work.Add(int64(left - r.counted))
	r.counted = left
}

// waitRoom waits until this crawler has room for a site (hasRoom), and
// reports whether ctx let it.
func (c *Crawler) waitRoom(ctx context.Context) bool {
	for !c.hasRoom() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return ctx.Err() == nil
}

// byCapacity yields what seq yields, taking the next one only once this
// crawler has room for another site (waitRoom): a lister that claims the
// crawl list as its sites are taken claims by what the crawler can serve.
func (c *Crawler) byCapacity(ctx context.Context, seq iter.Seq2[Target, error]) iter.Seq2[Target, error] {
	return func(yield func(Target, error) bool) {
		if !c.waitRoom(ctx) {
			return
		}
		for t, err := range seq {
			if !yield(t, err) || err != nil {
				return
			}
			// (CrawlEach has counted the site as starting by now.)
			if !c.waitRoom(ctx) {
				return
			}
		}
	}
}

// FleetShare returns this crawler's share of the requests logged after
// afterID (db.Store.LastRequestID before its crawl began) and how many
// other crawlers of the fleet still hold leases. Called after Close, which
// gives this crawler's leases back, it tells the last crawler of a fleet
// to finish that the crawl is done.
func (c *Crawler) FleetShare(ctx context.Context, afterID int64) (db.FleetShare, error) {
	return c.store.FleetShare(ctx, afterID, c.opts.Node, c.holder, c.now())
}
