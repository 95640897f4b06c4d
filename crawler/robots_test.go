package crawler_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

func TestFetchRobotsStatuses(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 2, PagesPerSite: 2})
	o := e.options(t)
	o.Timeout = 500 * time.Millisecond
	c := e.crawler(t, o)
	host := "plain-000.test"
	reply := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}
	}
	redirectTo := func(loc string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, loc, http.StatusMovedPermanently) }
	}
	chain := func(n int) {
		for i := 0; i < n; i++ {
			from := "/robots.txt"
			if i > 0 {
				from = fmt.Sprintf("/r%d.txt", i)
			}
			e.web.Handle(host, from, redirectTo(fmt.Sprintf("/r%d.txt", i+1)))
		}
		e.web.Handle(host, fmt.Sprintf("/r%d.txt", n), reply(200, "User-agent: *\nDisallow: /x\n"))
	}
	tests := []struct {
		name     string
		setup    func()
		outcome  string
		requests int // robots.txt requests the server sees
		allowedX bool
	}{
		{"200 parsed", func() { e.web.Handle(host, "/robots.txt", reply(200, "User-agent: *\nDisallow: /x\n")) }, db.RobotsParsed, 1, false},
		{"401 disallow all", func() { e.web.Handle(host, "/robots.txt", reply(401, "login")) }, db.RobotsDisallowAll, 1, false},
		{"403 disallow all", func() { e.web.Handle(host, "/robots.txt", reply(403, "no")) }, db.RobotsDisallowAll, 1, false},
		{"404 allow all", func() { e.web.Handle(host, "/robots.txt", reply(404, "none")) }, db.RobotsAllowAll, 1, true},
		{"410 allow all", func() { e.web.Handle(host, "/robots.txt", reply(410, "gone")) }, db.RobotsAllowAll, 1, true},
		{"429 disallow all", func() { e.web.Handle(host, "/robots.txt", reply(429, "slow")) }, db.RobotsDisallowAll, 1, false},
		{"500 disallow all", func() { e.web.Handle(host, "/robots.txt", reply(500, "oops")) }, db.RobotsDisallowAll, 1, false},
		{"503 disallow all", func() { e.web.Handle(host, "/robots.txt", reply(503, "down")) }, db.RobotsDisallowAll, 1, false},
		{"timeout disallow all", func() {
			e.web.Handle(host, "/robots.txt", func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(3 * time.Second):
				case <-r.Context().Done():
				}
			})
		}, db.RobotsDisallowAll, 1, false},
		{"3 redirects followed", func() { chain(3) }, db.RobotsParsed, 4, false},
		{"5 redirects followed", func() { chain(5) }, db.RobotsParsed, 6, false},
		{"6 redirects: unavailable", func() { chain(6) }, db.RobotsAllowAll, 6, true},
		{"cross-site redirect not followed", func() {
			e.web.Handle(host, "/robots.txt", redirectTo(e.web.URL("plain-001.test", "/robots.txt")))
		}, db.RobotsDisallowAll, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.web.Reset()
			tt.setup()
			r, err := c.FetchRobots(context.Background(), e.web.URL(host, "/x"))
			if err != nil {
				t.Fatalf("FetchRobots: %v", err)
			}
			if r.Outcome != tt.outcome {
				t.Errorf("outcome = %q, want %q (status %d, error %q)", r.Outcome, tt.outcome, r.Status, r.Error)
			}
			// The server records a request when its handler returns.
			testutil.Eventually(t, 3*time.Second, "the server's record", func() bool { return len(e.web.Hits()) >= tt.requests })
			var n int
			for _, h := range e.web.Hits() {
				if h.Host != host {
					t.Errorf("request to another host: %s%s", h.Host, h.Path)
				}
				n++
			}
			if n != tt.requests {
				t.Errorf("robots.txt requests = %d, want %d", n, tt.requests)
			}
			if r.Decision.Allowed != tt.allowedX {
				t.Errorf("Decide(/x) = %v (%s), want %v", r.Decision.Allowed, r.Decision.Rule, tt.allowedX)
			}
			var snap db.RobotsSnapshot
			if err := dbtest.Gorm(e.store).Where("id = ?", r.SnapshotID).Take(&snap).Error; err != nil {
				t.Fatalf("snapshot %d: %v", r.SnapshotID, err)
			}
			if snap.Outcome != tt.outcome || snap.RequestID == nil || snap.Origin != "http://"+host+":"+itoa(e.web.Port) {
				t.Errorf("snapshot = %+v, want outcome %q, its request and origin", snap, tt.outcome)
			}
			if tt.outcome == db.RobotsParsed && (len(snap.Body) == 0 || snap.Sha256 == "") {
				t.Errorf("snapshot body %q sha256 %q, want the body and its hash", snap.Body, snap.Sha256)
			}
			// Every hop is logged, hops after the first point at the one before.
			var rows []db.Request
			dbtest.Gorm(e.store).Where("purpose = ? AND id <= ?", db.PurposeRobots, *snap.RequestID).Order("id DESC").Limit(tt.requests).Find(&rows)
			for i, row := range rows {
				if row.CompletedAt == nil || row.BudgetSlot != nil || !strings.HasPrefix(row.PolicyCheck, "allowed") {
					t.Errorf("robots request %d = %+v, want completed, no budget slot, gate asked", row.ID, row)
				}
				if i < len(rows)-1 && (row.RedirectOf == nil || *row.RedirectOf != rows[i+1].ID) {
					t.Errorf("hop %d redirect_of = %v, want %d", row.ID, row.RedirectOf, rows[i+1].ID)
				}
			}
		})
	}
	for _, p := range []string{"/robots.txt", "/r1.txt", "/r2.txt", "/r3.txt", "/r4.txt", "/r5.txt", "/r6.txt"} {
		e.web.Handle(host, p, nil)
	}

	t.Run("excluded site gets no request", func(t *testing.T) {
		e.web.Reset()
		if _, err := e.pol.Exclude(context.Background(), []string{"plain-001.test"}, policy.Change{Actor: "staff", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
		c2 := e.crawler(t, o) // a new gate also sees it; the old one catches up
		for _, cc := range []*crawler.Crawler{c, c2} {
			if _, err := cc.FetchRobots(context.Background(), e.web.URL("plain-001.test", "/")); !errors.Is(err, crawler.ErrExcluded) {
				t.Errorf("FetchRobots of an excluded site: err = %v, want ErrExcluded", err)
			}
		}
		if hs := e.web.Hits(); len(hs) != 0 {
			t.Errorf("server saw %d requests, want 0", len(hs))
		}
	})
}

func TestCrawlDelayCapped(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 2, CrawlDelay: "3600"})
	c := e.crawler(t, nil)
	r, err := c.FetchRobots(context.Background(), e.web.Site(testweb.KindCrawlDelay).StartURL)
	if err != nil {
		t.Fatal(err)
	}
	if r.CrawlDelay != crawler.MaxCrawlDelay {
		t.Errorf("CrawlDelay = %v, want the 60s cap", r.CrawlDelay)
	}
}

// TestRobotsSnapshotAge: a snapshot serves for 24 hours, then the next page
// request waits for a fresh fetch.
func TestRobotsSnapshotAge(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 2})
	o := e.options(t)
	o.RecrawlAfter = time.Millisecond
	robotsHits := func() int {
		n := 0
		for _, h := range e.web.Hits() {
			if h.Path == "/robots.txt" {
				n++
			}
		}
		return n
	}
	c := e.crawler(t, o)
	e.crawl(t, c, "plain-000.test")
	if n := robotsHits(); n != 1 {
		t.Fatalf("robots.txt fetched %d times, want 1", n)
	}
	// A new crawler (nothing in memory) reuses the stored snapshot.
	c2 := e.crawler(t, o)
	e.crawl(t, c2, "plain-000.test")
	if n := robotsHits(); n != 1 {
		t.Errorf("robots.txt fetched %d times with a fresh snapshot, want 1", n)
	}
	// 25 hours later it is stale.
	if err := dbtest.Gorm(e.store).Exec("UPDATE robots_snapshots SET fetched_at = ?", db.Now().Add(-25*time.Hour)).Error; err != nil {
		t.Fatal(err)
	}
	c3 := e.crawler(t, o)
	e.crawl(t, c3, "plain-000.test")
	if n := robotsHits(); n != 2 {
		t.Errorf("robots.txt fetched %d times after 25 h, want 2", n)
	}
	hs := e.web.HitsFor("plain-000.test")
	var last []string
	for _, h := range hs[len(hs)-3:] {
		last = append(last, h.Path)
	}
	if last[0] != "/robots.txt" {
		t.Errorf("last crawl requested %v, want robots.txt before any page", last)
	}
}
