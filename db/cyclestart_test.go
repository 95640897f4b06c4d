package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestStartCyclesLeased checks the one-statement start of sites' cycles on
// PostgreSQL in each case it meets, a site alone and sites together: it
// starts a cycle, with the site's lease, only when the site is due (its
// last cycle neither running nor recent) and no one holds the lease (new,
// or given back), and leases the host only with a cycle started; anything
// else is left as it was.
func TestStartCyclesLeased(t *testing.T) {
	s := dbtest.Open(t, "postgres")
	ctx := context.Background()
	now := db.Now().Truncate(time.Millisecond)
	auto := s.AutoCommit()
	q := func(site, host string) db.CycleSite {
		return db.CycleSite{Site: site, LeaseKey: "cycle:" + site, Host: host}
	}
	batch := func(sites ...db.CycleSite) db.CycleStarts {
		return db.CycleStarts{Holder: "me", Node: "n1", Now: now, Expires: now.Add(time.Minute),
			Cutoff: now.Add(-7 * 24 * time.Hour), Budget: 20, DelayMS: 1500, Sites: sites}
	}
	startAll := func(t *testing.T, sites ...db.CycleSite) []db.CycleStarted {
		t.Helper()
		rs, err := s.StartCyclesLeased(ctx, batch(sites...))
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != len(sites) {
			t.Fatalf("%d answers for %d sites", len(rs), len(sites))
		}
		return rs
	}
	start := func(t *testing.T, c db.CycleSite) db.CycleStarted {
		t.Helper()
		return startAll(t, c)[0]
	}
	cycles := func(t *testing.T, site string) int {
		t.Helper()
		var n int
		if err := auto.QueryRow(ctx, `SELECT COUNT(*) FROM crawl_cycles WHERE site = ?`, site).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	lease := func(t *testing.T, key string) db.HostLease {
		t.Helper()
		l, err := db.ReadLease(ctx, auto, key)
		if err != nil {
			t.Fatalf("lease %s: %v", key, err)
		}
		return l
	}
	exec := func(t *testing.T, sql string, args ...any) {
		t.Helper()
		if _, err := auto.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	// cycle adds a cycle of site started at started, with status.
	cycle := func(t *testing.T, site, status string, started time.Time) {
		t.Helper()
		id, err := db.InsertCycle(ctx, auto, site, "old", started, 20, 1000)
		if err != nil {
			t.Fatal(err)
		}
		exec(t, `UPDATE crawl_cycles SET status = ? WHERE id = ?`, status, id)
	}
	for _, site := range []string{"new.example", "again.example", "recent.example", "running.example", "taken.example", "hostbusy.example"} {
		exec(t, `INSERT INTO sites (name, added_at) VALUES (?, ?)`, site, now)
	}

	t.Run("new site", func(t *testing.T) {
		r := start(t, q("new.example", "www.new.example"))
		if r.CycleID == 0 || r.HadCycle || !r.HostLeased || !r.HostNext.Equal(now) {
			t.Fatalf("got %+v, want the lease, a first cycle and the host leased from now", r)
		}
		var (
			site, node, status string
			budget, spent      int
			delay              int64
			started            time.Time
		)
		if err := auto.QueryRow(ctx, `SELECT site, node, status, budget, spent, delay_ms, started_at FROM crawl_cycles WHERE id = ?`, r.CycleID).
			Scan(&site, &node, &status, &budget, &spent, &delay, &started); err != nil {
			t.Fatal(err)
		}
		if site != "new.example" || node != "n1" || status != db.CycleRunning || budget != 20 || spent != 0 || delay != 1500 || !started.Equal(now) {
			t.Errorf("cycle: %s %s %s budget %d spent %d delay %d started %s", site, node, status, budget, spent, delay, started)
		}
		for _, key := range []string{"cycle:new.example", "www.new.example"} {
			if l := lease(t, key); l.Holder != "me" || !l.ExpiresAt.Equal(now.Add(time.Minute)) {
				t.Errorf("lease %s: %+v, want held by me for a minute", key, l)
			}
		}
		// Held (by this crawler, as by any other): nothing more is done.
		if r := start(t, q("new.example", "www.new.example")); r.CycleID != 0 || r.HostLeased {
			t.Errorf("again while held: %+v, want nothing", r)
		}
		if n := cycles(t, "new.example"); n != 1 {
			t.Errorf("%d cycles, want 1", n)
		}
	})

	t.Run("due again", func(t *testing.T) {
		// Crawled two weeks ago; both leases given back, the host's with
		// its next time.
		cycle(t, "again.example", db.CycleDone, now.Add(-14*24*time.Hour))
		hostNext := now.Add(3 * time.Second)
		exec(t, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES ('cycle:again.example', '', ?, ?), ('again.example', '', ?, ?)`,
			now.Add(-time.Hour), now.Add(-time.Hour), now.Add(-time.Hour), hostNext)
		r := start(t, q("again.example", "again.example"))
		if r.CycleID == 0 || !r.HadCycle || !r.HostLeased || !r.HostNext.Equal(hostNext) {
			t.Fatalf("got %+v, want the lease, a new cycle and the host from its next time %s", r, hostNext)
		}
		if n := cycles(t, "again.example"); n != 2 {
			t.Errorf("%d cycles, want 2", n)
		}
	})

	for _, c := range []struct {
		site, status string
		started      time.Time
	}{
		{"recent.example", db.CycleDone, now.Add(-time.Hour)},               // visited recently
		{"running.example", db.CycleRunning, now.Add(-30 * 24 * time.Hour)}, // its crawler gave its lease back mid-cycle
	} {
		t.Run(c.site, func(t *testing.T) {
			cycle(t, c.site, c.status, c.started)
			exec(t, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES (?, '', ?, ?)`, "cycle:"+c.site, now.Add(-time.Hour), now.Add(-time.Hour))
			r := start(t, q(c.site, c.site))
			if r.CycleID != 0 || !r.HadCycle || r.HostLeased {
				t.Fatalf("got %+v, want nothing done (left for the crawler to judge)", r)
			}
			if l := lease(t, "cycle:"+c.site); l.Holder != "" || !l.ExpiresAt.Equal(now.Add(-time.Hour)) {
				t.Errorf("lease changed: %+v", l)
			}
			if n := cycles(t, c.site); n != 1 {
				t.Errorf("%d cycles, want 1", n)
			}
			if _, err := db.ReadLease(ctx, auto, c.site); err == nil {
				t.Error("host leased without a cycle")
			}
		})
	}

	t.Run("held by another crawler", func(t *testing.T) {
		// Another live crawler, and one that stopped and left its lease
		// to expire (taken over by the crawler's transaction, not here).
		for _, exp := range []time.Time{now.Add(time.Minute), now.Add(-time.Minute)} {
			exec(t, `DELETE FROM host_leases WHERE host = 'cycle:taken.example'`)
			exec(t, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES ('cycle:taken.example', 'other', ?, ?)`, exp, now)
			if r := start(t, q("taken.example", "taken.example")); r.CycleID != 0 || r.HostLeased {
				t.Errorf("lease expiring at %s: got %+v, want nothing", exp, r)
			}
			if l := lease(t, "cycle:taken.example"); l.Holder != "other" || !l.ExpiresAt.Equal(exp) {
				t.Errorf("lease changed: %+v", l)
			}
		}
		if n := cycles(t, "taken.example"); n != 0 {
			t.Errorf("%d cycles, want 0", n)
		}
		// A lease someone holds is read, not locked: the statement does
		// not wait for a transaction that holds its row (its holder's
		// renewal, say).
		exec(t, `UPDATE host_leases SET expires_at = ? WHERE host = 'cycle:taken.example'`, now.Add(time.Minute))
		tx, err := s.BeginWrite(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec(ctx, `SELECT holder FROM host_leases WHERE host = 'cycle:taken.example' FOR UPDATE`); err != nil {
			t.Fatal(err)
		}
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if rs, err := s.StartCyclesLeased(tctx, batch(q("taken.example", "taken.example"))); err != nil || rs[0].CycleID != 0 {
			t.Errorf("while its row is locked: %+v, %v; want nothing, at once", rs, err)
		}
	})

	t.Run("host held by another crawler", func(t *testing.T) {
		exec(t, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES ('hostbusy.example', 'other', ?, ?)`, now.Add(time.Minute), now)
		r := start(t, q("hostbusy.example", "hostbusy.example"))
		if r.CycleID == 0 || r.HostLeased {
			t.Fatalf("got %+v, want the cycle started without its host", r)
		}
		if l := lease(t, "hostbusy.example"); l.Holder != "other" {
			t.Errorf("host lease taken from its holder: %+v", l)
		}
		// No start host: no host lease asked for.
		exec(t, `INSERT INTO sites (name, added_at) VALUES ('nohost.example', ?)`, now)
		if r := start(t, q("nohost.example", "")); r.CycleID == 0 || r.HostLeased {
			t.Errorf("without a host: %+v", r)
		}
	})

	t.Run("together", func(t *testing.T) {
		// Sites in every case at once: each answered as alone, in order.
		for _, site := range []string{"b1.example", "b2.example", "b3.example", "b4.example"} {
			exec(t, `INSERT INTO sites (name, added_at) VALUES (?, ?)`, site, now)
		}
		cycle(t, "b2.example", db.CycleDone, now.Add(-time.Hour)) // visited recently
		exec(t, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES ('cycle:b3.example', 'other', ?, ?)`, now.Add(time.Minute), now)
		rs := startAll(t, q("b1.example", "www.b1.example"), q("b2.example", "b2.example"), q("b3.example", "b3.example"),
			q("b4.example", ""))
		if rs[0].CycleID == 0 || rs[0].HadCycle || !rs[0].HostLeased {
			t.Errorf("new site: %+v, want a first cycle and its host", rs[0])
		}
		if rs[1].CycleID != 0 || !rs[1].HadCycle || rs[1].HostLeased {
			t.Errorf("visited recently: %+v, want nothing", rs[1])
		}
		if rs[2].CycleID != 0 || rs[2].HostLeased {
			t.Errorf("taken: %+v, want nothing", rs[2])
		}
		if rs[3].CycleID == 0 || rs[3].HostLeased || rs[3].CycleID == rs[0].CycleID {
			t.Errorf("no start host: %+v, want a cycle of its own and no host", rs[3])
		}
		for site, want := range map[string]int{"b1.example": 1, "b2.example": 1, "b3.example": 0, "b4.example": 1} {
			if n := cycles(t, site); n != want {
				t.Errorf("%s: %d cycles, want %d", site, n, want)
			}
		}
		if _, err := db.ReadLease(ctx, auto, "b2.example"); err == nil {
			t.Error("host of a site visited recently leased")
		}
		var ids []int64
		if err := func() error {
			rows, err := dbtest.SQL(s).QueryContext(ctx, `SELECT id FROM crawl_cycles WHERE site = $1`, "b1.example")
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return rows.Err()
		}(); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 1 || ids[0] != rs[0].CycleID {
			t.Errorf("b1.example's cycles %v, answered %d", ids, rs[0].CycleID)
		}

		// A site twice is refused, and nothing is done; a host named by
		// two sites is leased with the first only.
		exec(t, `INSERT INTO sites (name, added_at) VALUES ('b5.example', ?), ('b6.example', ?)`, now, now)
		if _, err := s.StartCyclesLeased(ctx, batch(q("b5.example", "b5.example"), q("b5.example", "b5.example"))); err == nil {
			t.Error("a site twice in a batch: no error")
		}
		if n := cycles(t, "b5.example"); n != 0 {
			t.Errorf("after the refused batch: %d cycles", n)
		}
		rs = startAll(t, q("b5.example", "shared.example"), q("b6.example", "shared.example"))
		if rs[0].CycleID == 0 || !rs[0].HostLeased || rs[1].CycleID == 0 || rs[1].HostLeased {
			t.Errorf("a host named twice: %+v", rs)
		}
	})
}
