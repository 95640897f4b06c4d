package crawler

import (
	"context"
	"iter"
	"net/url"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
)

// Defaults of DiscoverOptions.
const (
	DefaultDiscoverMinLinks = 2
	DefaultDiscoverMaxNew   = 1000
	DefaultDiscoverFlush    = 2 * time.Second
)

// maxPendingPairs bounds the (candidate, linking site) pairs new to a
// crawler that it holds before it writes them (about 50 bytes each, the
// names shared with the links'): past it the next write is started at
// once, and past four times it the page that found them waits for it.
// Pairs are never dropped, since a candidate's count of linking sites must
// stay exact; the writes are off the requests' path (db.Writer.Index) and
// go before the link texts' (anchorSink), so a page waits only when they
// fall that far behind.
const maxPendingPairs = 1 << 16

// maxRecordedPairs bounds the pairs a crawler remembers as written, so
// that it does not write them again (about 50 bytes each): past it, it
// forgets them all (writing a pair again changes nothing but costs a
// write).
const maxRecordedPairs = 1 << 18

// DiscoverOptions turns on discovery from links (Options.Discover): every
// link of a crawled page to another site makes that site a candidate, and
// a candidate linked from MinLinks distinct sites joins the crawl list.
type DiscoverOptions struct {
	// MinLinks is how many distinct sites must link to a candidate before
	// it is added. Zero means DefaultDiscoverMinLinks.
	MinLinks int
	// MaxNew bounds the sites added: over the crawler's life or, with
	// PerDay, over any 24 hours (counted in the database, so it holds
	// across restarts and a fleet). Zero adds none: candidates are still
	// recorded.
	MaxNew int
	// PerDay makes MaxNew a bound per 24 hours, and has the sites added
	// as soon as they qualify, for a scheduler that reads the crawl list
	// (serve). Without it the sites are added once the crawl's own targets
	// are all taken up, and crawled in the same run (WithDiscovered).
	PerDay bool
	// FlushEvery is how often the candidates found are written. Zero
	// means DefaultDiscoverFlush.
	FlushEvery time.Duration
}

// discoverer aggregates the candidates a crawler finds in memory, per
// candidate and linking site, and writes them every FlushEvery: a few
// statements per flush, never one per link.
type discoverer struct {
	c    *Crawler
	opts DiscoverOptions

	mu      sync.Mutex // guards pending, pairs, recorded, nrecorded, ready, promote
	pending map[string]*pendingCandidate
	pairs   int
	// recorded are the pairs written already, by linking site: the
	// sites a crawler crawls link to the same sites page after page.
	recorded  map[string]map[string]struct{}
	nrecorded int
	// ready are the sites added and not yet handed to WithDiscovered.
	ready []Target
	// promote is set once sites may be added (PerDay, or the crawl's own
	// targets all taken up).
	promote bool

	flushMu sync.Mutex // one flush at a time; guards added and last
	added   int        // sites added over the crawler's life
	last    time.Time  // of the last flush
	// writing holds a token while candidates are written (capacity 1):
	// the link texts' writes wait for it (see awaitWrites).
	writing chan struct{}

	loop *flushLoop // flushes every FlushEvery, or when poked
}

// pendingCandidate is what was found of one candidate since the last
// flush.
type pendingCandidate struct {
	start string
	from  map[string]struct{}
}

// linkedSite is another site a page links to, and the link.
type linkedSite struct {
	site string
	link *url.URL
}

func newDiscoverer(c *Crawler, o DiscoverOptions) *discoverer {
	if o.MinLinks <= 0 {
		o.MinLinks = DefaultDiscoverMinLinks
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = DefaultDiscoverFlush
	}
	d := &discoverer{c: c, opts: o, pending: map[string]*pendingCandidate{}, recorded: map[string]map[string]struct{}{},
		writing: make(chan struct{}, 1), promote: o.PerDay}
	d.loop = startFlushLoop(c.clock, o.FlushEvery, func() {
		// Not cut short by close: what it took from pending would be lost.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d.flush(ctx)
	})
	return d
}

// close stops the loop and writes what is left.
func (d *discoverer) close() { d.loop.close() }

// linked appends to out the site of the link lu (site, as SiteOf gives it)
// when discovery is on.
func (d *discoverer) linked(out []linkedSite, site string, lu *url.URL) []linkedSite {
	if d == nil {
		return out
	}
	return append(out, linkedSite{site: site, link: lu})
}

// startOf is the root of the origin of the link lu, where the crawl of its
// site starts once it is added ("" when lu has no usable host).
func startOf(lu *url.URL) string {
	host, err := policy.HostOf(lu.Host)
	if err != nil || (lu.Scheme != "http" && lu.Scheme != "https") {
		return ""
	}
	start := lu.Scheme + "://" + host
	if p := lu.Port(); p != "" {
		start += ":" + p
	}
	return start + "/"
}

// note records that a page of site from links to the sites of links.
func (d *discoverer) note(from string, links []linkedSite) {
	if d == nil || len(links) == 0 {
		return
	}
	d.mu.Lock()
	known := d.recorded[from]
	for _, l := range links {
		if _, ok := known[l.site]; ok {
			continue
		}
		p := d.pending[l.site]
		if p == nil {
			p = &pendingCandidate{start: startOf(l.link), from: map[string]struct{}{}}
			d.pending[l.site] = p
		}
		if _, ok := p.from[from]; !ok {
			p.from[from] = struct{}{}
			d.pairs++
		}
	}
	pairs := d.pairs
	d.mu.Unlock()
	switch {
	case pairs >= 4*maxPendingPairs:
		d.flush(context.Background())
	case pairs >= maxPendingPairs:
		d.loop.poke()
	}
}

// flush writes the candidates found since the last flush and, when sites
// may be added, adds those that qualify (within MaxNew). A failed write is
// logged; candidates are not evidence, and the links are found again next
// cycle.
func (d *discoverer) flush(ctx context.Context) {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	d.mu.Lock()
	pending, promote := d.pending, d.promote
	d.pending, d.pairs = map[string]*pendingCandidate{}, 0
	d.mu.Unlock()
	c := d.c
	d.last = c.clock.Now()
	if len(pending) > 0 {
		links := make([]db.CandidateLinks, 0, len(pending))
		for site, p := range pending {
			cl := db.CandidateLinks{Site: site, StartURL: p.start, From: make([]string, 0, len(p.from))}
			for f := range p.from {
				cl.From = append(cl.From, f)
			}
			links = append(links, cl)
		}
		if err := d.record(ctx, links); err != nil {
			c.log.Warn("discovered sites not recorded", "candidates", len(links), "err", err)
			return
		}
		d.remember(links)
	}
	if !promote {
		return
	}
	limit := d.opts.MaxNew - d.added
	if d.opts.PerDay {
		n, err := c.store.CandidatesAddedSince(ctx, c.now().Add(-24*time.Hour))
		if err != nil {
			c.log.Warn("discovered sites not added", "err", err)
			return
		}
		limit = d.opts.MaxNew - int(n)
	}
	if limit <= 0 {
		return
	}
	added, err := c.pol.AddCandidates(ctx, int64(d.opts.MinLinks), limit,
		policy.Change{Actor: c.opts.Node, Source: policy.SourceDiscovery, Reason: "linked from other sites"})
	if err != nil {
		c.log.Warn("discovered sites not added", "err", err)
		return
	}
	d.added += len(added)
	for _, s := range added {
		c.log.Info("site discovered: added to the crawl list", "site", s.Name, "start", s.StartURL)
	}
	if !d.opts.PerDay {
		d.mu.Lock()
		for _, s := range added {
			d.ready = append(d.ready, Target{Site: s.Name, StartURL: s.StartURL})
		}
		d.mu.Unlock()
	}
}

// remember notes the pairs of links as written.
func (d *discoverer) remember(links []db.CandidateLinks) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range links {
		for _, f := range l.From {
			if d.nrecorded >= maxRecordedPairs {
				clear(d.recorded)
				d.nrecorded = 0
			}
			m := d.recorded[f]
			if m == nil {
				m = map[string]struct{}{}
				d.recorded[f] = m
			}
			if _, ok := m[l.Site]; !ok {
				m[l.Site] = struct{}{}
				d.nrecorded++
			}
		}
	}
}

// record writes links through the crawler's writer, recordPairsPerOp pairs
// per op, as index work (db.Writer.Index): off the requests' path, in
// transactions of their own (the pairs are rows a fleet's crawlers contend
// for, as they do for leases, and a group waiting for another crawler's
// row would hold up every request in it).
func (d *discoverer) record(ctx context.Context, links []db.CandidateLinks) error {
	d.writing <- struct{}{}
	defer func() { <-d.writing }()
	c := d.c
	perOp := recordPairsPerOp
	if c.traits.IndexApart {
		perOp = recordPairsPerOpApart
	}
	for len(links) > 0 {
		n, pairs := 0, 0
		for n < len(links) && pairs < perOp {
			pairs += len(links[n].From)
			n++
		}
		chunk, now := links[:n], c.now()
		links = links[n:]
		if err := c.w.Index(ctx, func(tx db.WriteTx) error { return db.RecordCandidatesIn(ctx, tx, chunk, now) }); err != nil {
			return err
		}
	}
	return nil
}

// awaitWrites returns once no candidates are being written. The link
// texts' writes wait for it: a candidate's pairs are never dropped, and a
// page waits when too many are held, while link texts held too long are
// only coalesced (anchorSink). A nil d returns at once.
func (d *discoverer) awaitWrites() {
	if d == nil {
		return
	}
	d.writing <- struct{}{}
	<-d.writing
}

// recordPairsPerOp is how many pairs one op of the writer records
// at most: a few milliseconds of its time, all a reservation waits behind
// it; recordPairsPerOpApart where that op holds up no reservation
// (db.Traits.IndexApart).
const (
	recordPairsPerOp      = 500
	recordPairsPerOpApart = 2000
)

// takeReady returns a site added and not yet handed out.
func (d *discoverer) takeReady() (Target, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.ready) == 0 {
		return Target{}, false
	}
	t := d.ready[0]
	d.ready = d.ready[1:]
	return t, true
}

// WithDiscovered returns next followed by the sites discovery adds while
// they are crawled (CrawlEach's targets): once next is done, the
// candidates found so far are written and those that qualify are added
// and yielded, and so on while any site is still being crawled (a site
// found on a discovered site is crawled too), until every site taken up
// has finished and nothing more qualifies. Once MaxNew sites were added
// (at once when it is zero), nothing more can be: it ends with next.
// Without discovery it returns next.
func (c *Crawler) WithDiscovered(ctx context.Context, next iter.Seq2[Target, error]) iter.Seq2[Target, error] {
	d := c.disc
	if d == nil || d.opts.PerDay {
		return next
	}
	return func(yield func(Target, error) bool) {
		for t, err := range next {
			if !yield(t, err) || err != nil {
				return
			}
		}
		d.flushMu.Lock()
		none := d.added >= d.opts.MaxNew
		d.flushMu.Unlock()
		if none {
			return // nothing more can be added (Close writes the candidates)
		}
		d.mu.Lock()
		d.promote = true
		d.mu.Unlock()
		for ctx.Err() == nil {
			if t, ok := d.takeReady(); ok {
				if !yield(t, nil) {
					return
				}
				continue
			}
			// Read before the flush: with no site running then, the
			// flush holds every link found.
			idle := c.stats.sites.Load() == c.stats.sitesDone.Load()
			d.flushMu.Lock()
			due := c.clock.Now().Sub(d.last) >= d.opts.FlushEvery
			d.flushMu.Unlock()
			if idle || due {
				d.flush(ctx)
				if t, ok := d.takeReady(); ok {
					if !yield(t, nil) {
						return
					}
					continue
				}
				if idle {
					return
				}
			}
			if c.sleep(ctx, 50*time.Millisecond) != nil {
				return
			}
		}
	}
}
