package crawler_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestConnectionPerGap: a host's connection is kept for its next request
// across a short gap, and closed after each answer across a long one (issue
// 14: an idle connection costs both ends memory for the whole gap), as the
// web server saw it (one client port per connection).
func TestConnectionPerGap(t *testing.T) {
	for _, tc := range []struct {
		name         string
		keepAliveGap time.Duration // 0: the crawler's own
		wantConns    func(requests int) int
	}{
		{name: "gap shorter than the keep-alive limit", wantConns: func(int) int { return 1 }},
		{name: "gap longer than the keep-alive limit", keepAliveGap: testDelay / 2, wantConns: func(n int) int { return n }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 4})
			c := e.crawler(t, nil)
			if tc.keepAliveGap > 0 {
				c.SetKeepAliveGap(tc.keepAliveGap)
			}
			if r := e.crawl(t, c, "plain-000.test")["plain-000.test"]; r.Pages != 4 {
				t.Fatalf("crawl: %+v, want 4 pages", r)
			}
			hits := e.web.Hits()
			e.web.CheckPolite(t, hits, testDelay)
			conns := map[string]bool{}
			for _, h := range hits {
				conns[h.RemoteAddr] = true
			}
			if want := tc.wantConns(len(hits)); len(conns) != want {
				t.Errorf("%d requests came over %d connections, want %d", len(hits), len(conns), want)
			}
		})
	}
}

// TestConnectionClosedAfterLastRequest: across a short gap the connection
// is kept for the host's next request, but not after the request that
// takes the cycle's last budget slot: nothing follows it, so it asks the
// server to close (Connection: close) rather than leave an idle
// connection for the crawler's end to close.
func TestConnectionClosedAfterLastRequest(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: crawler.Budget + 5})
	c := e.crawler(t, nil)
	if r := e.crawl(t, c, "plain-000.test")["plain-000.test"]; r.Pages != crawler.Budget {
		t.Fatalf("crawl: %+v, want %d pages", r, crawler.Budget)
	}
	hits := e.web.Hits()
	slices.SortFunc(hits, func(a, b testweb.Hit) int { return a.Seq - b.Seq })
	conns := map[string]bool{}
	for i, h := range hits {
		conns[h.RemoteAddr] = true
		closing := strings.EqualFold(h.Header.Get("Connection"), "close")
		if last := i == len(hits)-1; closing != last {
			t.Errorf("request %d of %d (%s): Connection: close sent %v, want %v", i+1, len(hits), h.Path, closing, last)
		}
	}
	if len(hits) != crawler.Budget+1 || len(conns) != 1 {
		t.Errorf("%d requests over %d connections, want %d (robots.txt and the budget) over 1", len(hits), len(conns), crawler.Budget+1)
	}
}
