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

// TestHeldAnchors checks how a site holds the link texts of its pages:
// written with the page that makes anchorPages pages' worth (or the
// site's share of maxHeldAnchors), those pointing at a page found noindex
// meanwhile dropped, each written with its own page, request and site;
// and from the second-last page of the budget on, with each page.
func TestHeldAnchors(t *testing.T) {
	c := &Crawler{gate: &policy.Gate{}} // a gate that has read no exclusion
	c.sitesRunning.Add(1)
	r := &siteRun{c: c, site: "a.example", cy: &cycle{Budget: Budget}}
	page := func(n int, links ...heldLink) heldPage {
		id := int64(n)
		return heldPage{from: fmt.Sprintf("https://a.example/%d", n), id: &id, seen: time.Unix(int64(n), 0), links: links}
	}
	for n := 1; n < anchorPages; n++ {
		k := &completion{}
		r.holdAnchors(page(n, heldLink{to: "https://a.example/noindex", text: "x"}, heldLink{to: fmt.Sprintf("https://b.example/%d", n), toSite: "b.example", text: "b"}), k)
		if k.Anchors != nil {
			t.Fatalf("page %d wrote %d link texts, want them held", n, len(k.Anchors))
		}
	}
	r.dropAnchorsTo("https://a.example/noindex")
	k := &completion{}
	r.holdAnchors(page(anchorPages, heldLink{to: "https://a.example/", text: "home"}), k)
	if len(k.Anchors) != anchorPages {
		t.Fatalf("page %d wrote %d link texts, want %d (one per page, the noindex ones dropped)", anchorPages, len(k.Anchors), anchorPages)
	}
	for _, a := range k.Anchors {
		n := *a.RequestID
		if a.FromURL != fmt.Sprintf("https://a.example/%d", n) || !a.SeenAt.Equal(time.Unix(n, 0)) {
			t.Errorf("%+v: not its own page's request and time", a)
		}
		if want := "b.example"; a.ToURL != "https://a.example/" && a.ToSite != want {
			t.Errorf("%+v: to_site %q, want %q", a, a.ToSite, want)
		}
		if a.ToURL == "https://a.example/" && a.ToSite != "a.example" {
			t.Errorf("%+v: to_site %q, want the site's own", a, a.ToSite)
		}
	}
	if r.heldLinks() != 0 || len(r.held) != 0 || r.takeAnchors() != nil {
		t.Error("link texts still held after they were written")
	}
	// With many sites running, a site's share is smaller than a page.
	c.sitesRunning.Store(maxHeldAnchors)
	k = &completion{}
	r.holdAnchors(page(1, heldLink{to: "https://a.example/", text: "home"}), k)
	if len(k.Anchors) != 1 {
		t.Errorf("over the crawler's bound: %d written, want the page's 1", len(k.Anchors))
	}
	// Near the end of the budget: held until the second-last page, which
	// writes them all; the last page writes its own.
	c.sitesRunning.Store(1)
	for n := 1; n <= Budget; n++ {
		r.cy.Spent = n
		k := &completion{}
		r.holdAnchors(page(n, heldLink{to: "https://a.example/", text: "home"}), k)
		switch {
		case n == Budget-1 && len(k.Anchors) != (Budget-1)%anchorPages:
			t.Errorf("page %d (second-last) wrote %d link texts, want the %d held", n, len(k.Anchors), (Budget-1)%anchorPages)
		case n == Budget && len(k.Anchors) != 1:
			t.Errorf("page %d (last) wrote %d link texts, want its own 1", n, len(k.Anchors))
		case n < Budget-1 && n%anchorPages != 0 && k.Anchors != nil:
			t.Errorf("page %d wrote %d link texts, want them held", n, len(k.Anchors))
		}
	}
	if len(r.held) != 0 {
		t.Errorf("%d pages' link texts held at the end of the budget, want none", len(r.held))
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
