package crawler

import (
	"context"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// Bounds of the link texts a crawler holds before they are written
// (anchorSink).
const (
	// maxAnchors is how many link texts the sink holds as they come
	// (about 250 bytes each, the strings shared with the page's links).
	// Past it, a link text is held only when its target and text are new
	// to the sink, up to twice as many; past that, none is (see add).
	maxAnchors = 1 << 14
	// anchorsPerOp is how many link texts one write of the sink stores:
	// a few milliseconds of the writer, which is all a reservation waits
	// behind it; anchorsPerOpApart where that write holds up no
	// reservation (db.Traits.IndexApart).
	anchorsPerOp      = 200
	anchorsPerOpApart = 2000
	// anchorFlushEvery is how often the sink writes what it holds when
	// it holds less than half of maxAnchors.
	anchorFlushEvery = 500 * time.Millisecond
	// MaxSourcesPerText is how many pages' link texts a crawler keeps for
	// one target and text: a further page linking there with the same
	// words adds nothing search can use (it finds the target by those
	// words already), so it is not kept (Stats.LinkTextsRepeated). A
	// text new to the target, or another target, is kept as before.
	MaxSourcesPerText = 20
	// maxTextsCounted bounds the targets and texts whose sources the sink
	// counts (8 bytes and a counter each); past it the counts start over.
	maxTextsCounted = 1 << 18
)

// anchorKey is what makes a link text one row: its source page, its
// target and its text (the anchors table's key).
type anchorKey struct{ from, to, text string }

// anchorEntry is the rest of a link text held: the sites of its source
// and target, when it was seen and the request that fetched the source.
type anchorEntry struct {
	fromSite, toSite string
	seen             time.Time
	id               *int64
}

// anchorTarget is a target page and a text pointing to it.
type anchorTarget struct{ to, text string }

// anchorSink holds the link texts of the pages a crawler fetched and
// writes them in the background, in batches sorted by target, through
// db.Writer.Index: off the requests' path, so that a crawl whose pages
// carry many links is not held up by writing them. Memory is bounded:
// when the sink is full, a link text whose target and text it already
// holds (from another page) is coalesced into that one (dropped: search
// finds the target by that text all the same), and past twice the bound
// every new one is dropped; both are counted (Stats). Link texts are
// index content, not evidence: a crawler killed loses those held. Close
// writes everything held, so that what a crawl found is searchable once
// its command returns. It is safe for concurrent use.
type anchorSink struct {
	c *Crawler

	mu      sync.Mutex // guards held, targets, sources, unindex
	held    map[anchorKey]anchorEntry
	targets map[anchorTarget]struct{} // the targets and texts of held
	// sources counts, by a hash of target and text (sourceKey), the
	// pages whose link text the sink took for them (at most
	// MaxSourcesPerText).
	sources map[uint64]uint8
	// unindex are the URLs found noindex since the last write: the
	// write after removes the link texts pointing at them that a write
	// racing with their completion may have stored.
	unindex []string

	flushMu sync.Mutex // one write at a time

	loop *flushLoop // writes every anchorFlushEvery, or when poked
}

func newAnchorSink(c *Crawler) *anchorSink {
	s := &anchorSink{c: c, held: map[anchorKey]anchorEntry{}, targets: map[anchorTarget]struct{}{}, sources: map[uint64]uint8{}}
	s.loop = startFlushLoop(c.clock, anchorFlushEvery, s.flush)
	return s
}

// close stops the loop and writes everything held.
func (s *anchorSink) close() { s.loop.close() }

// add holds the link texts of page (fetched by its request, on site),
// replacing the time and request of those held with the same source,
// target and text, and leaving out those whose target and text
// MaxSourcesPerText pages link with already. It never waits for a write.
func (s *anchorSink) add(site string, page heldPage) {
	if len(page.links) == 0 {
		return
	}
	var repeated, coalesced, dropped int64
	s.mu.Lock()
	for _, l := range page.links {
		toSite := l.toSite
		if toSite == "" {
			toSite = site
		}
		k := anchorKey{from: page.from, to: l.to, text: l.text}
		e := anchorEntry{fromSite: site, toSite: toSite, seen: page.seen, id: page.id}
		if _, ok := s.held[k]; ok {
			s.held[k] = e
			continue
		}
		t := anchorTarget{l.to, l.text}
		h := sourceKey(t)
		if s.sources[h] >= MaxSourcesPerText {
			repeated++
			continue
		}
		_, known := s.targets[t]
		switch {
		case len(s.held) < maxAnchors:
		case known:
			coalesced++
			continue
		case len(s.held) >= 2*maxAnchors:
			dropped++
			continue
		}
		s.held[k] = e
		s.targets[t] = struct{}{}
		if len(s.sources) >= maxTextsCounted {
			clear(s.sources)
		}
		s.sources[h]++
	}
	n := len(s.held)
	s.mu.Unlock()
	s.c.stats.anchorsRepeated.Add(repeated)
	s.c.stats.anchorsCoalesced.Add(coalesced)
	s.c.stats.anchorsDropped.Add(dropped)
	if n >= maxAnchors/2 {
		s.loop.poke()
	}
}

// sourceSeed seeds sourceKey.
var sourceSeed = maphash.MakeSeed()

// sourceKey is the key of target and text in anchorSink.sources.
func sourceKey(t anchorTarget) uint64 { return maphash.Comparable(sourceSeed, t) }

// unindexed notes that url was found noindex: the next write removes the
// link texts pointing at it (those held are not written: see
// Crawler.indexable).
func (s *anchorSink) unindexed(url string) {
	s.mu.Lock()
	s.unindex = append(s.unindex, url)
	s.mu.Unlock()
}

// flush writes what the sink holds, sorted by target (the order of the
// table's key: each write touches few of its pages), anchorsPerOp link
// texts a write. Link texts pointing at a URL found noindex, or from or
// to a site excluded, are left out. A failed write is logged: its link
// texts are lost, and found again next cycle.
func (s *anchorSink) flush() {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	held, unindex := s.held, s.unindex
	if len(held) > 0 {
		s.held, s.targets = make(map[anchorKey]anchorEntry, len(held)), map[anchorTarget]struct{}{}
	} else {
		held = nil // the sink keeps its empty map; this write reads none of it
	}
	s.unindex = nil
	s.mu.Unlock()
	c := s.c
	all := make([]db.Anchor, 0, len(held))
	for k, e := range held {
		if c.gate.Excluded(e.toSite) || c.gate.Excluded(e.fromSite) {
			continue // nothing is kept of an excluded site's pages
		}
		all = append(all, db.Anchor{FromURL: k.from, ToURL: k.to, ToSite: e.toSite, AnchorText: k.text, SeenAt: e.seen, RequestID: e.id})
	}
	held = nil
	slices.SortFunc(all, func(a, b db.Anchor) int {
		if x := strings.Compare(a.ToURL, b.ToURL); x != 0 {
			return x
		}
		if x := strings.Compare(a.FromURL, b.FromURL); x != 0 {
			return x
		}
		return strings.Compare(a.AnchorText, b.AnchorText)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	perOp := anchorsPerOp
	if c.traits.IndexApart {
		perOp = anchorsPerOpApart
	}
	for chunk := range slices.Chunk(all, perOp) {
		c.disc.awaitWrites()
		var n int
		err := c.w.Index(ctx, func(tx db.WriteTx) error {
			// Checked in the write: a URL found noindex before it is left
			// out; one found after has its completion, or the next write
			// (unindex), remove what it stored.
			keep := c.indexable(chunk)
			n = len(keep)
			return db.StoreAnchors(ctx, tx, keep)
		})
		if err != nil {
			c.log.Warn("link texts not recorded", "link_texts", len(chunk), "err", err)
			continue
		}
		c.stats.anchors.Add(int64(n))
	}
	if len(unindex) > 0 {
		err := c.w.Index(ctx, func(tx db.WriteTx) error {
			for _, u := range unindex {
				if err := db.DeleteAnchorsTo(ctx, tx, u); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			c.log.Warn("link texts to noindex pages not removed", "urls", len(unindex), "err", err)
		}
	}
}
