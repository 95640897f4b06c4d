package crawler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// TestInterruptedBeforeSentIsWithdrawn stops a crawl (as SIGTERM stops
// serve) while a page request, logged and budgeted, waits for its
// connection, and then crawls again as a restarted process would: the
// request never reached the site, so it is withdrawn, gives its budget slot
// back, and the site gets its whole budget of page requests after the
// restart, as the web server counts them.
func TestInterruptedBeforeSentIsWithdrawn(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w, err := testweb.Start(&testweb.Options{Plain: 1, PagesPerSite: 30})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		s := dbtest.OpenDSN(t, dsn)
		pol := policy.New(s, nil)
		res, err := resolver.New(w.DNSAddr)
		if err != nil {
			t.Fatal(err)
		}
		opts := func() *Options {
			return &Options{Node: "test", Delay: 50 * time.Millisecond, AllowPrivate: true, Resolver: res,
				Timeout: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		}
		site := w.Plain()[0]
		targets := []Target{{Site: site.Name, StartURL: site.StartURL}}

		// The first process: every request dials, and the 6th dial (the
		// robots.txt, then the 5th page) is where the stop comes.
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		c1, err := New(ctx, s, pol, opts())
		if err != nil {
			t.Fatal(err)
		}
		c1.keepAliveGap = -1
		var dials atomic.Int32
		fresh := c1.client.fresh
		c1.client.fresh = func() *http.Client {
			cl := fresh()
			tr := cl.Transport.(*http.Transport)
			dial := tr.DialContext
			tr.DialContext = func(dctx context.Context, network, addr string) (net.Conn, error) {
				if dials.Add(1) == 6 {
					stop()
					time.Sleep(100 * time.Millisecond)
					return nil, errors.New("test: no connection once stopped")
				}
				return dial(dctx, network, addr)
			}
			return cl
		}
		c1.client.cur = c1.client.fresh()
		rs, err := c1.Crawl(ctx, targets)
		if !errors.Is(err, context.Canceled) || len(rs) != 1 || rs[0].Status != SiteStopped {
			t.Fatalf("stopped crawl = %+v, %v; want the site stopped, context canceled", rs, err)
		}
		if err := c1.Close(); err != nil {
			t.Fatal(err)
		}
		if n := w.PageHitsPerSite(w.Hits())[site.Name]; n != 4 {
			t.Fatalf("page requests before the stop = %d, want 4", n)
		}

		// The restarted process takes the cycle up again.
		c2, err := New(context.Background(), s, pol, opts())
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rs, err = c2.Crawl(cctx, targets)
		if err != nil || len(rs) != 1 || rs[0].Status != SiteCrawled || rs[0].Reason != reasonBudgetSpent {
			t.Fatalf("crawl after the restart = %+v, %v; want crawled, budget spent", rs, err)
		}
		if n := w.PageHitsPerSite(w.Hits())[site.Name]; n != Budget {
			t.Errorf("page requests the web server received = %d, want %d (the budget)", n, Budget)
		}

		var rows []db.Request
		if err := dbtest.Gorm(s).Where("purpose = ?", db.PurposePage).Order("id").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		sent, withdrawn := 0, 0
		for _, r := range rows {
			switch {
			case r.Outcome == db.OutcomeWithdrawn:
				withdrawn++
				if r.BudgetSlot != nil {
					t.Errorf("withdrawn request %d (%s) keeps budget slot %d, want none", r.ID, r.URL, *r.BudgetSlot)
				}
				if r.CompletedAt == nil {
					t.Errorf("withdrawn request %d not completed", r.ID)
				}
			case r.Outcome == "interrupted":
				t.Errorf("request %d (%s) logged interrupted (%q): it never left the machine", r.ID, r.URL, r.Error)
				sent++
			default:
				sent++
			}
		}
		if sent != Budget || withdrawn != 1 {
			t.Errorf("page requests logged: %d sent, %d withdrawn; want %d sent, 1 withdrawn", sent, withdrawn, Budget)
		}
		var cycles []db.CrawlCycle
		if err := dbtest.Gorm(s).Where("site = ?", site.Name).Find(&cycles).Error; err != nil {
			t.Fatal(err)
		}
		if len(cycles) != 1 || cycles[0].Spent != Budget || cycles[0].Status != db.CycleDone {
			t.Errorf("cycles = %+v, want one, done, spent %d", cycles, Budget)
		}
		sum, err := audit.Run(context.Background(), s, nil, func(v audit.Violation) error {
			t.Errorf("audit: %s %s: %s", v.Rule, v.Check, v.Evidence)
			return nil
		})
		if err != nil || !sum.OK() {
			t.Errorf("audit = %+v, %v; want no violation", sum, err)
		}
	})
}
