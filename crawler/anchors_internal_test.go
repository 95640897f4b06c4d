package crawler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// TestAnchorSinkWrites checks what the sink writes: the link texts held,
// none pointing at a URL found noindex before the write, those stored
// before a URL was found noindex removed by the next write, none from or
// to an excluded site; and that Close writes what is still held.
func TestAnchorSinkWrites(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		pol := policy.New(s, nil)
		if _, err := pol.Exclude(ctx, []string{"gone.example"}, policy.Change{Actor: "staff", Reason: "test", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
		c := newTestCrawler(t, s)
		id := int64(1)
		page := func(from string, links ...heldLink) heldPage {
			return heldPage{from: from, id: &id, seen: time.Now(), links: links}
		}
		texts := func(site string) map[string]bool {
			t.Helper()
			as, err := s.AnchorsTo(ctx, site)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]bool{}
			for _, a := range as {
				out[a.FromURL+" -> "+a.ToURL+" "+a.AnchorText] = true
			}
			return out
		}
		c.anchors.add("a.example", page("https://a.example/",
			heldLink{to: "https://a.example/later-noindex", text: "later"},
			heldLink{to: "https://a.example/noindex", text: "hidden"},
			heldLink{to: "https://b.example/", toSite: "b.example", text: "bee"},
			heldLink{to: "https://www.gone.example/", toSite: "gone.example", text: "gone"}))
		c.anchors.add("gone.example", page("https://gone.example/", heldLink{to: "https://b.example/x", toSite: "b.example", text: "from gone"}))
		c.noindex.Add("https://a.example/noindex", struct{}{})
		c.anchors.flush()
		if got := texts("a.example"); len(got) != 1 || !got["https://a.example/ -> https://a.example/later-noindex later"] {
			t.Errorf("link texts to a.example: %v; want only the one to later-noindex (noindex left out)", got)
		}
		if got := texts("b.example"); len(got) != 1 || !got["https://a.example/ -> https://b.example/ bee"] {
			t.Errorf("link texts to b.example: %v; want only a.example's (none from the excluded site)", got)
		}
		if got := texts("gone.example"); len(got) != 0 {
			t.Errorf("link texts to the excluded site: %v; want none", got)
		}
		c.noindex.Add("https://a.example/later-noindex", struct{}{})
		c.anchors.unindexed("https://a.example/later-noindex")
		c.anchors.add("b.example", page("https://b.example/", heldLink{to: "https://a.example/", toSite: "a.example", text: "ay"}))
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if got := texts("a.example"); len(got) != 1 || !got["https://b.example/ -> https://a.example/ ay"] {
			t.Errorf("link texts to a.example after Close: %v; want b.example's, held until Close (later-noindex's removed)", got)
		}
		if st := c.Stats(); st.LinkTexts != 3 {
			t.Errorf("Stats().LinkTexts = %d, want 3", st.LinkTexts)
		}
	})
}

// TestAnchorSinkKeepsSourcesPerText checks that the sink keeps the link
// texts of at most MaxSourcesPerText pages for one target and text, counts
// the others as repeated, and still keeps another text for that target,
// the same text for another target, and a page's link text seen again.
func TestAnchorSinkKeepsSourcesPerText(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		c := newTestCrawler(t, s)
		id := int64(1)
		const pages = MaxSourcesPerText + 5
		for i := range pages {
			from := fmt.Sprintf("https://a%02d.example/", i)
			c.anchors.add(fmt.Sprintf("a%02d.example", i), heldPage{from: from, id: &id, seen: time.Now(), links: []heldLink{
				{to: "https://b.example/", toSite: "b.example", text: "news"},
				{to: "https://c.example/", toSite: "c.example", text: "news"},
			}})
		}
		// The first page again, and a new text from the last page.
		c.anchors.add("a00.example", heldPage{from: "https://a00.example/", id: &id, seen: time.Now(),
			links: []heldLink{{to: "https://b.example/", toSite: "b.example", text: "news"}}})
		last := fmt.Sprintf("https://a%02d.example/", pages-1)
		c.anchors.add(fmt.Sprintf("a%02d.example", pages-1), heldPage{from: last, id: &id, seen: time.Now(),
			links: []heldLink{{to: "https://b.example/", toSite: "b.example", text: "daily news"}}})
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		count := func(site, text string) int {
			t.Helper()
			as, err := s.AnchorsTo(ctx, site)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, a := range as {
				if a.AnchorText == text {
					n++
				}
			}
			return n
		}
		if n := count("b.example", "news"); n != MaxSourcesPerText {
			t.Errorf("%d link texts \"news\" to b.example, want %d", n, MaxSourcesPerText)
		}
		if n := count("c.example", "news"); n != MaxSourcesPerText {
			t.Errorf("%d link texts \"news\" to c.example, want %d", n, MaxSourcesPerText)
		}
		if n := count("b.example", "daily news"); n != 1 {
			t.Errorf("%d link texts \"daily news\" to b.example, want 1", n)
		}
		st := c.Stats()
		if st.LinkTextsRepeated != 2*(pages-MaxSourcesPerText) {
			t.Errorf("Stats().LinkTextsRepeated = %d, want %d", st.LinkTextsRepeated, 2*(pages-MaxSourcesPerText))
		}
		if st.LinkTexts != 2*MaxSourcesPerText+1 {
			t.Errorf("Stats().LinkTexts = %d, want %d", st.LinkTexts, 2*MaxSourcesPerText+1)
		}
	})
}
