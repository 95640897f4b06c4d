package crawler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
)

// TestLookupKeepsNames checks that a host name's addresses are kept for
// dnsKeep: asked again within it, the resolver is not asked (its new
// record is not seen); after it, the name is resolved again.
func TestLookupKeepsNames(t *testing.T) {
	srv, res := localResolver(t)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := newLookuper(res, func() time.Time { return now })
	ctx := context.Background()
	lookup := func() string {
		t.Helper()
		addrs, err := l.lookup(ctx, "kept.test")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(addrs)
	}
	if _, err := l.lookup(ctx, "kept.test"); err == nil {
		t.Fatal("kept.test resolved before it had a record")
	}
	srv.AddA("kept.test", "192.0.2.1")
	if got := lookup(); got != "[192.0.2.1]" {
		t.Fatalf("first lookup = %s, want [192.0.2.1] (a failed lookup is not kept)", got)
	}
	srv.AddA("kept.test", "192.0.2.2")
	now = now.Add(dnsKeep - time.Second)
	if got := lookup(); got != "[192.0.2.1]" {
		t.Errorf("lookup within %v = %s, want the kept [192.0.2.1]", dnsKeep, got)
	}
	now = now.Add(2 * time.Second)
	if got := lookup(); got != "[192.0.2.1 192.0.2.2]" {
		t.Errorf("lookup after %v = %s, want [192.0.2.1 192.0.2.2]", dnsKeep, got)
	}
}

// TestAnchorSinkBounds checks the bound on the link texts a crawler holds
// before they are written: a link text with the source, target and text of
// one held replaces it; up to maxAnchors every one is held; past it, one
// whose target and text are held already is coalesced, a new one is held
// up to twice maxAnchors, and past that it is dropped; each counted.
func TestAnchorSinkBounds(t *testing.T) {
	c := &Crawler{gate: &policy.Gate{}}
	s := &anchorSink{c: c, held: map[anchorKey]anchorEntry{}, targets: map[anchorTarget]struct{}{}, sources: map[uint64]uint8{},
		loop: &flushLoop{kick: make(chan struct{}, 1)}}
	page := func(n int, links ...heldLink) heldPage {
		id := int64(n)
		return heldPage{from: fmt.Sprintf("https://a.example/%d", n), id: &id, seen: time.Unix(int64(n), 0), links: links}
	}
	link := func(i int) heldLink {
		return heldLink{to: fmt.Sprintf("https://b.example/%d", i), toSite: "b.example", text: "b"}
	}
	s.add("a.example", page(1, link(0), heldLink{to: "https://a.example/", text: "home"}))
	s.add("a.example", page(1, link(0)))
	if len(s.held) != 2 {
		t.Fatalf("%d link texts held, want 2 (the same source, target and text held once)", len(s.held))
	}
	for k, e := range s.held {
		if k.to == "https://a.example/" && e.toSite != "a.example" || k.to != "https://a.example/" && e.toSite != "b.example" {
			t.Errorf("%+v %+v: wrong target site", k, e)
		}
		if e.fromSite != "a.example" || *e.id != 1 || !e.seen.Equal(time.Unix(1, 0)) {
			t.Errorf("%+v %+v: not its page's site, request and time", k, e)
		}
	}
	for i := 1; len(s.held) < maxAnchors; i++ {
		s.add("a.example", page(2, link(i)))
	}
	s.add("a.example", page(3, link(5))) // target and text held from page 2
	if got := c.stats.anchorsCoalesced.Load(); got != 1 || len(s.held) != maxAnchors {
		t.Errorf("full, a held target and text: %d coalesced, %d held; want 1 and %d", got, len(s.held), maxAnchors)
	}
	s.add("a.example", page(3, heldLink{to: "https://b.example/new", toSite: "b.example", text: "new"}))
	if len(s.held) != maxAnchors+1 {
		t.Errorf("full, a new target and text: %d held, want %d", len(s.held), maxAnchors+1)
	}
	for i := 0; len(s.held) < 2*maxAnchors; i++ {
		s.add("a.example", page(4, heldLink{to: fmt.Sprintf("https://c.example/%d", i), toSite: "c.example", text: "c"}))
	}
	s.add("a.example", page(5, heldLink{to: "https://c.example/newer", toSite: "c.example", text: "newer"}))
	if got := c.stats.anchorsDropped.Load(); got != 1 || len(s.held) != 2*maxAnchors {
		t.Errorf("twice full: %d dropped, %d held; want 1 and %d", got, len(s.held), 2*maxAnchors)
	}
	select {
	case <-s.loop.kick:
	default:
		t.Error("a full sink did not ask for a write")
	}
}

// newTestCrawler is a crawler on s with the default options, node "t" and
// a silent log; the caller closes it (before s).
func newTestCrawler(t *testing.T, s *db.Store) *Crawler {
	t.Helper()
	c, err := New(context.Background(), s, policy.New(s, nil), &Options{Node: "t", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
