package crawler_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// listAll returns the sites ListAll yields, in order.
func listAll(t *testing.T, c *crawler.Crawler, store *db.Store) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	total, err := store.CountSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tg, err := range c.ListAll(ctx, total) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tg.Site)
	}
	return names
}

// rotation reports whether names is sorted round from one of its sites
// (the list from some point, coming round to it), each once.
func rotation(names, sorted []string) bool {
	if len(names) != len(sorted) || len(names) == 0 {
		return false
	}
	i := slices.Index(sorted, names[0])
	return i >= 0 && slices.Equal(names, append(slices.Clone(sorted[i:]), sorted[:i]...))
}

// TestClaimSizes: a block is 64 sites, or a sixteenth of a shorter list
// (at least 8); the first claim covers the sites started at once, and half
// the list at most.
func TestClaimSizes(t *testing.T) {
	for _, tt := range []struct {
		total        int64
		starting     int
		block, ahead int
	}{
		{1, 512, 8, 1},
		{50, 512, 8, 4},
		{200, 512, 13, 8},
		{200, 64, 13, 5},
		{1000, 512, 63, 8},
		{1024, 512, 64, 8},
		{1_000_000, 512, 64, 8},
		{1_000_000, 64, 64, 1},
	} {
		if block, ahead := crawler.ClaimSizes(tt.total, tt.starting); block != tt.block || ahead != tt.ahead {
			t.Errorf("ClaimSizes(%d, %d) = %d, %d; want %d, %d", tt.total, tt.starting, block, ahead, tt.block, tt.ahead)
		}
	}
}

// TestOthersWait: the blocks other crawlers claimed wait two gaps, no more
// than a third of the lease TTL, and a second at least.
func TestOthersWait(t *testing.T) {
	for _, tt := range []struct{ delay, ttl, want time.Duration }{
		{50 * time.Millisecond, time.Minute, time.Second},
		{time.Second, time.Minute, 2 * time.Second},
		{5 * time.Second, time.Minute, 10 * time.Second},
		{time.Minute, time.Minute, 20 * time.Second},
		{5 * time.Second, 3 * time.Second, time.Second},
	} {
		if got := crawler.OthersWait(tt.delay, tt.ttl); got != tt.want {
			t.Errorf("OthersWait(%v, %v) = %v, want %v", tt.delay, tt.ttl, got, tt.want)
		}
	}
}

// TestListAll: a crawl of all the list yields each site once, from the
// start of a block chosen at random (ClaimSizes), on both engines. On
// PostgreSQL a crawler claims each block as it yields it, and yields the
// blocks another crawler claimed last; the claims go when the crawler
// closes, and a claim left to expire is taken.
func TestListAll(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		e := newEnvDSN(t, dsn)
		const n = 200 // 15 whole blocks of 13 and a part
		size, _ := crawler.ClaimSizes(n, 512)
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("list-%03d.test", i))
		}
		if _, err := e.pol.AddSites(ctx, names, policy.Change{Actor: "test", Source: "test"}); err != nil {
			t.Fatal(err)
		}
		sorted, err := sitesByName(ctx, e.store)
		if err != nil {
			t.Fatal(err)
		}
		starts := map[string]bool{}
		for range 20 {
			c := e.crawler(t, nil)
			got := listAll(t, c, e.store)
			if !rotation(got, sorted) {
				t.Fatalf("ListAll yielded %d sites from %v: want each of the %d once, in name order from one of them", len(got), got[:min(2, len(got))], len(sorted))
			}
			if i := slices.Index(sorted, got[0]); i%size != 0 {
				t.Fatalf("ListAll started at the list's site %d (%s), want the start of a block of %d", i, got[0], size)
			}
			starts[got[0]] = true
			c.Close()
		}
		if len(starts) < 2 {
			t.Errorf("20 crawls of all the list all started at %v: want a start chosen at random", starts)
		}
		if e.store.Dialect != db.Postgres {
			return
		}

		// Another crawler holds the second block: this one yields the
		// others first, from the first block, and the second last.
		other := "crawler-b/1/x"
		now := db.Now()
		block := func(i int) string { return "start:" + sorted[size*i] }
		blocks := (n + size - 1) / size
		if got, err := e.store.ClaimBlocks(ctx, []string{block(1)}, other, now, now.Add(time.Minute)); err != nil || !got[block(1)] {
			t.Fatalf("ClaimBlocks(%s) = %v, %v", block(1), got, err)
		}
		var got []string
		c := e.crawler(t, nil)
		for {
			c.SetOthersAfter(0)
			got = listAll(t, c, e.store)
			if got[0] == sorted[0] {
				break
			}
			// A start chosen at random: 1 in 16 is the first block.
			c.Close()
			c = e.crawler(t, nil)
		}
		want := append(slices.Clone(sorted[:size]), sorted[2*size:]...)
		want = append(want, sorted[size:2*size]...)
		if !slices.Equal(got, want) {
			t.Errorf("with the second block claimed by another crawler, ListAll yielded %v ... %v; want the other blocks first, it last", got[:2], got[len(got)-2:])
		}
		holders := func() map[string]string {
			t.Helper()
			var keys []string
			for i := range blocks {
				keys = append(keys, block(i))
			}
			ls, err := e.store.Leases(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for k, l := range ls {
				out[k] = l.Holder
			}
			return out
		}
		h := holders()
		for i := range blocks {
			want := c.Holder()
			if i == 1 {
				want = other
			}
			if h[block(i)] != want {
				t.Errorf("block %d claimed by %q, want %q", i, h[block(i)], want)
			}
		}
		// A second crawler while the first is running: every block is
		// claimed, it still yields every site once, and claims none.
		// They come once othersAfter has passed.
		c2 := e.crawler(t, nil)
		const wait = 300 * time.Millisecond
		c2.SetOthersAfter(wait)
		began := time.Now()
		var first time.Duration
		got = got[:0]
		for tg, err := range c2.ListAll(ctx, int64(n)) {
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				first = time.Since(began)
			}
			got = append(got, tg.Site)
		}
		if !rotation(got, sorted) {
			t.Errorf("with every block claimed, ListAll yielded %d sites: want each of the %d once", len(got), len(sorted))
		}
		if first < wait {
			t.Errorf("with every block claimed by others, ListAll yielded its first site after %v: want the wait, %v, first", first, wait)
		}
		if h2 := holders(); !maps.Equal(h2, h) {
			t.Errorf("a crawler with every block claimed by others changed the claims: %v, were %v", h2, h)
		}
		// Closed, the first crawler gives its blocks back; the other's
		// claim, left to expire, is taken once expired.
		c.Close()
		if _, err := dbtest.SQL(e.store).ExecContext(ctx, `UPDATE host_leases SET expires_at = $1 WHERE host = $2`, now.Add(-time.Second), block(1)); err != nil {
			t.Fatal(err)
		}
		c2.Close()
		c3 := e.crawler(t, nil)
		c3.SetOthersAfter(0)
		listAll(t, c3, e.store)
		for i, holder := range holders() {
			if holder != c3.Holder() {
				t.Errorf("after the other claims ended, %s is claimed by %q, want the new crawler %q", i, holder, c3.Holder())
			}
		}
	})
}

// sitesByName returns the crawl list's names in name order.
func sitesByName(ctx context.Context, store *db.Store) ([]string, error) {
	var out []string
	for tg, err := range crawler.Listed(ctx, store) {
		if err != nil {
			return nil, err
		}
		out = append(out, tg.Site)
	}
	return out, nil
}
