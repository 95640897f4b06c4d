package crawler

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// TestTakeoverKeepsGapAfterAbandon takes over the cycle of a crawler that
// stopped (its disk full, say) with a request left open, after it had given
// its host's lease back: the row is closed as abandoned at the cycle
// lease's expiry, a minute after the request really ended, and the host's
// next request must keep the gap after that time, as the log tells it: the
// delay, and a longer robots.txt Crawl-delay read later. The takeover comes
// 1 ms after the lease expired, on a fake clock. When the stopped crawler
// gave its cycle's lease back too (its cycle's end failed, its release did
// not), the row is closed when the cycle is taken up again: at its host
// lease's release, or then. So too when it recorded its cycle's end
// (stopped) and gave both leases back although the request's completion
// failed: the resumed cycle's end no longer bounds the row.
func TestTakeoverKeepsGapAfterAbandon(t *testing.T) {
	for _, left := range []string{leftExpired, leftGivenBack, leftStopped} {
		t.Run(left, func(t *testing.T) { takeoverKeepsGap(t, left) })
	}
}

// What a stopped crawler left of a site's cycle (takeoverKeepsGap).
const (
	leftExpired   = "lease expired"    // the cycle running, its lease expired
	leftGivenBack = "lease given back" // the cycle running, its lease given back
	leftStopped   = "cycle stopped"    // the cycle's end recorded (stopped), its lease given back
)

func takeoverKeepsGap(t *testing.T, left string) {
	givenBack := left != leftExpired
	const delay = time.Second
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		expired := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		fc := clocktest.New(expired.Add(time.Millisecond))
		c, err := New(ctx, s, policy.New(s, nil), &Options{Node: "t", Clock: fc, Delay: delay,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()

		// What the stopped crawler left: its cycle running and its lease,
		// expired; the start host's lease given back with a next_at long
		// past; an open request to it and one to the site's other host.
		sent := expired.Add(-time.Minute)
		var (
			ids   []int64
			cycle int64
		)
		if err := c.w.Lease(ctx, func(tx db.WriteTx) error {
			var err error
			cycle, err = db.InsertCycle(ctx, tx, "a.example", "dead", sent.Add(-time.Minute), Budget, delay.Milliseconds())
			if err != nil {
				return err
			}
			holder := "dead/1/x"
			if givenBack {
				holder = ""
			}
			if _, err := db.InsertLease(ctx, tx, cycleKey("a.example"), holder, expired, sent); err != nil {
				return err
			}
			if _, err := db.InsertLease(ctx, tx, "www.a.example", "", sent.Add(time.Second), sent.Add(delay)); err != nil {
				return err
			}
			for _, host := range []string{"www.a.example", "a.example"} {
				r := &db.Request{CycleID: &cycle, Site: "a.example", Host: host, Origin: "https://" + host, URL: "https://" + host + "/",
					Purpose: db.PurposePage, Node: "dead", PolicyCheck: "allowed (policy v0)", SentAt: sent}
				if err := db.InsertRequest(ctx, tx, r); err != nil {
					return err
				}
				ids = append(ids, r.ID)
			}
			if left == leftStopped {
				return db.EndCycle(ctx, tx, cycle, "a.example", db.CycleStopped, "error: disk full", sent.Add(time.Second))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}

		r, res := c.startSite(ctx, Target{Site: "a.example", StartURL: "https://www.a.example/"}, nil)
		if r == nil {
			t.Fatalf("not started: %+v", res)
		}
		defer func() {
			r.finish = func(SiteResult) {}
			r.end(ctx, db.CycleStopped, "test")
		}()
		if r.cy.ID != cycle || !r.cy.Resumed {
			t.Fatalf("cycle %d (resumed %v), want cycle %d taken up again", r.cy.ID, r.cy.Resumed, cycle)
		}
		// When the cycle is taken up again: the start host's lease was
		// given back a second after the request; the other host has none.
		closed := map[string]time.Time{"www.a.example": expired, "a.example": expired}
		if givenBack {
			closed = map[string]time.Time{"www.a.example": sent.Add(time.Second), "a.example": fc.Now()}
		}
		for _, id := range ids {
			var row db.Request
			if err := dbtest.Gorm(s).First(&row, id).Error; err != nil {
				t.Fatal(err)
			}
			if want := closed[row.Host]; row.Outcome != OutcomeAbandoned || row.CompletedAt == nil || !row.CompletedAt.Equal(want) {
				t.Fatalf("request %d to %s: outcome %q, completed at %v; want abandoned at %v", id, row.Host, row.Outcome, row.CompletedAt, want)
			}
		}

		hs := r.hosts.m["www.a.example"]
		if hs == nil || !hs.leased {
			t.Fatalf("start host %+v: want leased", hs)
		}
		for _, gap := range []time.Duration{delay, 5 * time.Second} {
			hs.gap = gap // the delay, then a robots.txt Crawl-delay
			if wait, want := c.untilDue(hs), max(closed["www.a.example"].Add(gap).Sub(fc.Now()), 0); wait != want {
				t.Errorf("gap %v: the start host's next request waits %v, want %v (the gap after the abandon time)", gap, wait, want)
			}
		}
		other := r.hosts.get("a.example")
		other.gap = delay
		if wait, want := c.untilDue(other), closed["a.example"].Add(delay).Sub(fc.Now()); wait != want {
			t.Errorf("the other host's next request waits %v, want %v", wait, want)
		}
		// Another crawler that took the given-back host would keep the
		// delay too.
		var l db.HostLease
		if err := dbtest.Gorm(s).Where("host = ?", "a.example").First(&l).Error; err == nil && l.NextAt.Before(closed["a.example"].Add(delay)) {
			t.Errorf("a.example's next_at %v, want no earlier than %v", l.NextAt, closed["a.example"].Add(delay))
		}
	})
}
