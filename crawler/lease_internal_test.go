package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/policy"
)

// TestBeginRenewsLeaseWhenLow checks that a request's reservation renews
// the host's lease on SQLite only when less than leaseRenewBelow of it is
// left (it was renewed with every request, a row update each), that it
// renews it then, and that a lease another crawler took over meanwhile is
// found lost and nothing is logged (on PostgreSQL the reservation's one
// statement renews, and so checks, the lease every time).
func TestBeginRenewsLeaseWhenLow(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		fc := clocktest.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
		c, err := New(ctx, s, policy.New(s, nil), &Options{Node: "t", Clock: fc, Timeout: 10 * time.Second, LeaseTTL: time.Minute,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		const host = "a.example"
		expiry := func() (time.Time, string) {
			t.Helper()
			var l db.HostLease
			err := c.w.Lease(ctx, func(tx db.WriteTx) error {
				var err error
				l, err = db.ReadLease(ctx, tx, host)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return l.ExpiresAt.UTC(), l.Holder
		}
		hs := c.hostState(host)
		send := func() error {
			row := &reqRow{Site: host, Host: host, Origin: "https://" + host, URL: "https://" + host + "/robots.txt", Purpose: db.PurposeRobots}
			if err := c.leaseHost(ctx, hs); err != nil {
				t.Fatal(err)
			}
			return c.begin(ctx, hs, row)
		}
		acquired := fc.Now()
		if err := send(); err != nil {
			t.Fatal(err)
		}
		if got, _ := expiry(); !got.Equal(acquired.Add(time.Minute)) {
			t.Fatalf("lease expires at %v after it was taken, want %v", got, acquired.Add(time.Minute))
		}
		// Half a lease and more left: not renewed (an engine whose
		// reservations always renew it renews it every time).
		fc.Advance(10 * time.Second)
		if err := send(); err != nil {
			t.Fatal(err)
		}
		want := acquired.Add(time.Minute)
		if c.traits.LeaseEveryRequest {
			want = fc.Now().Add(time.Minute)
		}
		if got, _ := expiry(); !got.Equal(want) {
			t.Errorf("lease expires at %v with 50 s left, want %v", got, want)
		}
		// Less than half left (the heartbeat's renewals not counted):
		// renewed with the request.
		fc.Advance(25 * time.Second)
		if err := send(); err != nil {
			t.Fatal(err)
		}
		if got, _ := expiry(); !got.Equal(fc.Now().Add(time.Minute)) {
			t.Errorf("lease expires at %v with 25 s left, want renewed to %v", got, fc.Now().Add(time.Minute))
		}
		// Taken over by another crawler after it expired: lost.
		hs.leaseUntil = fc.Now()
		if err := c.w.Lease(ctx, func(tx db.WriteTx) error {
			_, err := db.TakeOverLease(ctx, tx, host, "other", fc.Now().Add(time.Hour), fc.Now(), c.holder, fc.Now().Add(2*time.Minute))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, holder := expiry(); holder != "other" {
			t.Fatalf("lease held by %q, want other", holder)
		}
		before := c.stats.requests.Load()
		if err := send(); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("request on a lease taken over: %v, want ErrLeaseLost", err)
		}
		if n := c.stats.requests.Load(); n != before {
			t.Errorf("%d requests logged on a lost lease", n-before)
		}
	})
}

// TestConfirmReservedAhead checks a request reserved ahead of its time
// (exchangeDue): it is logged as sent at that time; at that time confirm
// lets it go when nothing changed, or when only another site was excluded
// meanwhile, and completes it as withdrawn (never sent) when its own site
// was.
func TestConfirmReservedAhead(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t, "sqlite")
	fc := clocktest.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	pol := policy.New(s, nil)
	c, err := New(ctx, s, pol, &Options{Node: "t", Clock: fc, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const host = "a.example"
	hs := c.hostState(host)
	if err := c.leaseHost(ctx, hs); err != nil {
		t.Fatal(err)
	}
	reserve := func() *reqRow {
		t.Helper()
		at := fc.Now().Add(40 * time.Millisecond)
		row := &reqRow{Site: host, Host: host, Origin: "https://" + host, URL: "https://" + host + "/robots.txt", Purpose: db.PurposeRobots, At: at}
		if err := c.begin(ctx, hs, row); err != nil {
			t.Fatal(err)
		}
		if !row.SentAt.Equal(at) {
			t.Fatalf("sent_at %v, want the planned %v", row.SentAt, at)
		}
		return row
	}
	outcome := func(id int64) string {
		t.Helper()
		var o string
		if err := dbtest.Gorm(s).Raw("SELECT outcome FROM requests WHERE id = ?", id).Scan(&o).Error; err != nil {
			t.Fatal(err)
		}
		return o
	}
	exclude := func(site string) {
		t.Helper()
		if _, err := pol.Exclude(ctx, []string{site}, policy.Change{Actor: "staff", Reason: "test", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
	}

	row := reserve()
	if err := c.confirm(ctx, row); err != nil || outcome(row.ID) != "" {
		t.Errorf("nothing changed: confirm %v, outcome %q; want nil, still open", err, outcome(row.ID))
	}
	row = reserve()
	exclude("b.example")
	if err := c.confirm(ctx, row); err != nil || outcome(row.ID) != "" {
		t.Errorf("another site excluded: confirm %v, outcome %q; want nil, still open", err, outcome(row.ID))
	}
	row = reserve()
	exclude(host)
	if err := c.confirm(ctx, row); !errors.Is(err, ErrExcluded) {
		t.Errorf("its site excluded: confirm %v, want ErrExcluded", err)
	}
	if o := outcome(row.ID); o != db.OutcomeWithdrawn {
		t.Errorf("the request not sent has outcome %q, want %q", o, db.OutcomeWithdrawn)
	}
}

// TestExclusionWaitsOutReservedAhead checks the exclusion's side of a
// request reserved ahead of its time on PostgreSQL, where the crawler does
// not confirm it at that time: an exclusion of its site committed after
// the reservation takes a time no earlier than the request's sent_at (db.Tx.AwaitReservedAhead),
// so the request, sent then, was sent before the exclusion; a request
// reserved after the exclusion is refused.
func TestExclusionWaitsOutReservedAhead(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t, "postgres")
	pol := policy.New(s, nil)
	c := newTestCrawler(t, s)
	defer c.Close()
	const host = "a.example"
	hs := c.hostState(host)
	if err := c.leaseHost(ctx, hs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.askGate(ctx, host); err != nil {
		t.Fatal(err)
	}
	row := &reqRow{Site: host, Host: host, Origin: "https://" + host, URL: "https://" + host + "/robots.txt",
		Purpose: db.PurposeRobots, At: c.now().Add(maxReserveAhead)}
	if err := c.begin(ctx, hs, row); err != nil {
		t.Fatal(err)
	}
	if !row.SentAt.Equal(row.At) {
		t.Fatalf("sent_at %v, want the planned %v", row.SentAt, row.At)
	}
	res, err := pol.Exclude(ctx, []string{host}, policy.Change{Actor: "staff", Reason: "test", Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if at := res[0].Exclusion.ExcludedAt; at.Before(row.SentAt) {
		t.Errorf("excluded at %v, before the request reserved ahead was due (%v)", at, row.SentAt)
	}
	next := &reqRow{Site: host, Host: host, Origin: "https://" + host, URL: "https://" + host + "/", Purpose: db.PurposeRobots}
	if err := c.begin(ctx, hs, next); !errors.Is(err, ErrExcluded) {
		t.Errorf("a request reserved after the exclusion: %v, want ErrExcluded", err)
	}
}

// TestStartTakesFirstHostLease checks, on both engines, that starting a
// site takes its cycle's lease, opens the cycle and takes the start URL's
// host's lease in one write (the host is leased before any request), that
// the cycle's end gives both back, that a site visited recently is skipped
// with neither lease taken, and that a start host another crawler holds is
// left to it: the cycle starts, the host waits.
func TestStartTakesFirstHostLease(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		c := newTestCrawler(t, s)
		defer c.Close()
		holders := func() map[string]string {
			t.Helper()
			var ls []db.HostLease
			if err := dbtest.Gorm(s).Find(&ls).Error; err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for _, l := range ls {
				m[l.Host] = l.Holder
			}
			return m
		}
		r, res := c.startSite(ctx, Target{Site: "a.example", StartURL: "https://www.a.example/"}, nil)
		if r == nil {
			t.Fatalf("not started: %+v", res)
		}
		want := map[string]string{"cycle:a.example": c.holder, "www.a.example": c.holder}
		if got := holders(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("leases after the start %v, want %v", got, want)
		}
		if hs := r.hosts.m["www.a.example"]; hs == nil || !hs.leased || hs.leaseUntil.IsZero() {
			t.Errorf("start host's state %+v, want leased", hs)
		}
		r.finish = func(SiteResult) {}
		r.end(ctx, db.CycleDone, "test")
		want = map[string]string{"cycle:a.example": "", "www.a.example": ""}
		if got := holders(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("leases after the end %v, want %v", got, want)
		}
		// Visited just now: skipped, nothing taken.
		r, res = c.startSite(ctx, Target{Site: "a.example", StartURL: "https://www.a.example/"}, nil)
		if r != nil || res.Status != SiteSkipped {
			t.Fatalf("second start: %+v, want skipped", res)
		}
		if got := holders(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("leases after a skipped start %v, want %v", got, want)
		}
		// Another crawler holds the next site's start host.
		now := db.Now()
		if err := c.w.Lease(ctx, func(tx db.WriteTx) error {
			_, err := db.InsertLease(ctx, tx, "www.b.example", "other", now.Add(time.Hour), now)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		r, res = c.startSite(ctx, Target{Site: "b.example", StartURL: "https://www.b.example/"}, nil)
		if r == nil {
			t.Fatalf("b.example not started: %+v", res)
		}
		if hs := r.hosts.m["www.b.example"]; hs == nil || hs.leased || holders()["www.b.example"] != "other" {
			t.Errorf("a start host another crawler holds: state %+v, holder %q; want left to other", hs, holders()["www.b.example"])
		}
	})
}

// TestLeaseReadsCoalesce checks that the sites waiting on other crawlers'
// cycle leases read them together: fifty asking at once cost two queries
// (the first asker's, then one for everyone who asked while it ran), not
// fifty, and each gets its own lease's expiry, or none.
func TestLeaseReadsCoalesce(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t, "sqlite")
	c := newTestCrawler(t, s)
	defer c.Close()
	now := db.Now()
	if err := c.w.Lease(ctx, func(tx db.WriteTx) error {
		for i := range 40 {
			if _, err := db.InsertLease(ctx, tx, fmt.Sprintf("cycle:s%d.example", i), "other", now.Add(time.Duration(i)*time.Second), now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		queries int
		first   = make(chan struct{})
		release = make(chan struct{})
	)
	read := c.leaseReads.read
	c.leaseReads.read = func(ctx context.Context, keys []string) (map[string]db.HostLease, error) {
		mu.Lock()
		queries++
		n := queries
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release // everyone else asks meanwhile
		}
		return read(ctx, keys)
	}
	type answer struct {
		exp  time.Time
		held bool
		err  error
	}
	answers := make([]answer, 50)
	var wg sync.WaitGroup
	ask := func(i int) {
		defer wg.Done()
		exp, held, err := c.leaseExpiry(ctx, fmt.Sprintf("cycle:s%d.example", i))
		answers[i] = answer{exp, held, err}
	}
	wg.Add(50)
	go ask(0)
	<-first
	for i := 1; i < 50; i++ {
		go ask(i)
	}
	testutil.Eventually(t, 0, "49 askers waiting", func() bool {
		c.leaseReads.mu.Lock()
		defer c.leaseReads.mu.Unlock()
		return c.leaseReads.next != nil && len(c.leaseReads.next.keys) == 49
	})
	close(release)
	wg.Wait()
	if queries != 2 {
		t.Errorf("%d queries for 50 askers, want 2", queries)
	}
	for i, a := range answers {
		want := answer{held: i < 40}
		if i < 40 {
			want.exp = now.Add(time.Duration(i) * time.Second)
		}
		if a.err != nil || a.held != want.held || !a.exp.Equal(want.exp) {
			t.Errorf("lease %d: %v, held %v, %v; want %v, held %v", i, a.exp, a.held, a.err, want.exp, want.held)
		}
	}
}

// TestWatchSkipsOnHostRenewal checks, on PostgreSQL, how a site whose
// cycle another crawler holds is left to it: as soon as that crawler
// renews the start host's lease (each of its requests does), the site is
// skipped, without waiting for the cycle lease's renewal (a heartbeat); a
// host lease renewed by someone else, or not renewed at all (its holder
// may have died), keeps the site watched, so that it can be taken over.
func TestWatchSkipsOnHostRenewal(t *testing.T) {
	s := dbtest.Open(t, "postgres")
	for _, tt := range []struct {
		name      string
		site      string
		renewedBy string // "": the host lease is not renewed
		skipped   bool
	}{
		{"renewed by the cycle's holder", "holder.example", "other", true},
		{"renewed by someone else", "else.example", "third", false},
		{"not renewed", "idle.example", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newTestCrawler(t, s)
			defer c.Close()
			site := tt.site
			host := "www." + site
			now := db.Now()
			if err := c.w.Lease(ctx, func(tx db.WriteTx) error {
				if _, err := db.InsertLease(ctx, tx, cycleKey(site), "other", now.Add(time.Hour), now); err != nil {
					return err
				}
				_, err := db.InsertLease(ctx, tx, host, "other", now.Add(time.Hour), now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			renewed := make(chan struct{})
			go func() {
				defer close(renewed)
				for i := 1; tt.renewedBy != ""; i++ {
					// As the holder's requests do, every 200 ms.
					if err := c.w.Lease(ctx, func(tx db.WriteTx) error {
						_, err := tx.Exec(ctx, `UPDATE host_leases SET holder = ?, expires_at = ? WHERE host = ?`,
							tt.renewedBy, now.Add(time.Hour+time.Duration(i)*time.Second), host)
						return err
					}); err != nil {
						t.Error(err)
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Millisecond):
					}
				}
			}()
			// Watched with a read a second: skipped at the second read
			// once renewed; otherwise still watched after four reads.
			wait := 4 * time.Second
			if tt.skipped {
				wait = 15 * time.Second // (a slow machine: the test ends when skipped)
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			r, res := c.startSite(wctx, Target{Site: site, StartURL: "https://" + host + "/"}, nil)
			close(stop)
			<-renewed
			if r != nil {
				t.Fatalf("started a site another crawler holds: %+v", res)
			}
			if skipped := res.Status == SiteSkipped && res.Reason == "another crawler is on it"; skipped != tt.skipped {
				t.Errorf("%+v; skipped %v, want %v", res, skipped, tt.skipped)
			}
		})
	}
}
