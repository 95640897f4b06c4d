package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// writeState is what a reservation or a completion may change: the
// request log, the budget ledger, the leases, the index and the links
// found.
type writeState struct {
	requests int64
	spent    []int
	leases   map[string]string // host: holder expires_at next_at
	pages    int64
	links    []string
}

func readWriteState(t *testing.T, s *db.Store, cycles ...int64) writeState {
	t.Helper()
	ctx := context.Background()
	var st writeState
	if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM requests`).Scan(&st.requests); err != nil {
		t.Fatal(err)
	}
	if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM pages`).Scan(&st.pages); err != nil {
		t.Fatal(err)
	}
	for _, id := range cycles {
		var spent int
		var links string
		if err := dbtest.Gorm(s).WithContext(ctx).Raw(`SELECT spent, links_found FROM crawl_cycles WHERE id = ?`, id).Row().Scan(&spent, &links); err != nil {
			t.Fatal(err)
		}
		st.spent, st.links = append(st.spent, spent), append(st.links, links)
	}
	var leases []db.HostLease
	if err := dbtest.Gorm(s).WithContext(ctx).Order("host").Find(&leases).Error; err != nil {
		t.Fatal(err)
	}
	st.leases = map[string]string{}
	for _, l := range leases {
		st.leases[l.Host] = fmt.Sprintf("%s %s %s", l.Holder, l.ExpiresAt.UTC().Format(time.RFC3339Nano), l.NextAt.UTC().Format(time.RFC3339Nano))
	}
	return st
}

// TestReserveRequest checks db.ReserveRequest on both engines: a
// reservation writes the log row, takes the next budget slot and renews
// the lease; each refusal (a stale policy version, a lease held by another
// crawler or by no one, a spent budget, no cycle) is reported as such and,
// on PostgreSQL, where the reservation is one statement, writes nothing at
// all, while the reservations beside it in the same transaction commit.
func TestReserveRequest(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now()
		var open, full int64
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(inWrite(t, s, func(tx db.WriteTx) error {
			for _, l := range []struct{ host, holder string }{{"a.example", "me"}, {"b.example", "other"}, {"c.example", ""}} {
				if _, err := db.InsertLease(ctx, tx, l.host, l.holder, now.Add(time.Minute), now); err != nil {
					return err
				}
			}
			var err error
			if open, err = db.InsertCycle(ctx, tx, "a.example", "n", now, 2, 0); err != nil {
				return err
			}
			if full, err = db.InsertCycle(ctx, tx, "b.example", "n", now, 0, 0); err != nil {
				return err
			}
			return nil
		}))
		later := now.Add(time.Hour)
		res := func(host string, cycle *int64, budgeted bool, version int64) *db.Reservation {
			return &db.Reservation{
				Request: &db.Request{CycleID: cycle, Site: host, Host: host, Origin: "https://" + host, URL: "https://" + host + "/",
					Purpose: db.PurposePage, Node: "n", PolicyCheck: "allowed", DelayMS: 1000, SentAt: now},
				Version: version, Holder: "me", LeaseExpires: later, Renew: true, Budgeted: budgeted,
			}
		}
		refusals := []struct {
			name string
			r    *db.Reservation
			want db.Refusal
		}{
			{"stale policy", res("a.example", &open, true, 7), db.RefusedStale},
			{"lease of another", res("b.example", &open, true, 0), db.RefusedLease},
			{"lease of no one", res("c.example", &open, true, 0), db.RefusedLease},
			{"no lease", res("d.example", &open, true, 0), db.RefusedLease},
			{"budget spent", res("a.example", &full, true, 0), db.RefusedBudget},
			{"no cycle", res("a.example", nil, true, 0), db.RefusedBudget},
		}
		before := readWriteState(t, s, open, full)
		for _, tc := range refusals {
			t.Run(tc.name, func(t *testing.T) {
				err := inWrite(t, s, func(tx db.WriteTx) error {
					got, err := db.ReserveRequest(ctx, tx, tc.r)
					if err != nil {
						return err
					}
					if got != tc.want {
						t.Errorf("ReserveRequest = %v, want %v", got, tc.want)
					}
					return nil
				})
				must(err)
				if s.Dialect != db.Postgres && tc.want == db.RefusedBudget {
					return // SQLite renews the lease first: the crawler's savepoint undoes it
				}
				if after := readWriteState(t, s, open, full); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("a refusal wrote:\nbefore %+v\nafter  %+v", before, after)
				}
			})
		}
		if s.Dialect != db.Postgres {
			return // SQLite: see above
		}
		// One transaction: two page reservations and a robots.txt fetch go
		// through, the refusals between them leave nothing.
		var ok []*db.Reservation
		must(inWrite(t, s, func(tx db.WriteTx) error {
			for i, r := range []*db.Reservation{res("a.example", &open, true, 0), res("b.example", &open, true, 0),
				res("a.example", &open, true, 0), res("a.example", &full, true, 0), res("a.example", &open, false, 0)} {
				got, err := db.ReserveRequest(ctx, tx, r)
				if err != nil {
					return err
				}
				if want := i != 1 && i != 3; (got == db.Reserved) != want {
					return fmt.Errorf("reservation %d: %v", i, got)
				}
				if got == db.Reserved {
					ok = append(ok, r)
				}
			}
			return nil
		}))
		after := readWriteState(t, s, open, full)
		if after.requests != before.requests+3 || fmt.Sprint(after.spent) != "[2 0]" {
			t.Errorf("after the group: %d requests, spent %v; want %d, [2 0]", after.requests, after.spent, before.requests+3)
		}
		for i, r := range ok {
			q := r.Request
			var slot *int
			var cycle *int64
			if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT budget_slot, cycle_id FROM requests WHERE id = $1`, q.ID).Scan(&slot, &cycle); err != nil {
				t.Fatalf("reservation %d: request %d: %v", i, q.ID, err)
			}
			switch {
			case r.Budgeted && (slot == nil || q.BudgetSlot == nil || *slot != i+1 || *q.BudgetSlot != *slot):
				t.Errorf("reservation %d: slot %v (returned %v), want %d", i, slot, q.BudgetSlot, i+1)
			case !r.Budgeted && (slot != nil || q.BudgetSlot != nil):
				t.Errorf("unbudgeted reservation: slot %v, want none", slot)
			}
		}
		wantLease := fmt.Sprintf("me %s %s", later.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
		if after.leases["a.example"] != wantLease || after.leases["b.example"] != before.leases["b.example"] {
			t.Errorf("leases after the group: %v; want a.example %q, b.example unchanged", after.leases, wantLease)
		}
	})
}

// TestFinishRequest checks db.FinishRequest on both engines: the request's
// outcome, the lease's delay, the page and the links found, in any
// combination, and a request completed already is left as it is.
func TestFinishRequest(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now()
		var cycle int64
		var ids []int64
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(inWrite(t, s, func(tx db.WriteTx) error {
			if _, err := db.InsertLease(ctx, tx, "a.example", "me", now.Add(time.Minute), now); err != nil {
				return err
			}
			var err error
			if cycle, err = db.InsertCycle(ctx, tx, "a.example", "n", now, 20, 0); err != nil {
				return err
			}
			for i := range 4 {
				r := db.Request{CycleID: &cycle, Site: "a.example", Host: "a.example", Origin: "https://a.example",
					URL: fmt.Sprintf("https://a.example/%d", i), Purpose: db.PurposePage, SentAt: now}
				if err := db.InsertRequest(ctx, tx, &r); err != nil {
					return err
				}
				ids = append(ids, r.ID)
			}
			return nil
		}))
		done := now.Add(time.Second)
		status := 200
		complete := func(i int) *db.Request {
			return &db.Request{ID: ids[i], CompletedAt: &done, Status: &status, Bytes: 100, DurationMS: 5, Outcome: "ok", ETag: `"e"`}
		}
		next := now.Add(time.Hour)
		page := func(i int) *db.Page {
			return &db.Page{URL: fmt.Sprintf("https://a.example/%d", i), Site: "a.example", Title: fmt.Sprintf("t%d", i),
				Status: 200, FetchedAt: done, RequestID: &ids[i]}
		}
		for _, k := range []*db.Completion{
			{Request: complete(0)},
			{Request: complete(1), Page: page(1), CycleID: cycle, Found: []string{"https://a.example/x", "https://a.example/y"}},
			{Request: complete(2), Lease: &db.LeaseDelay{Host: "a.example", Holder: "me", NextAt: next, Expires: next}},
			{Request: complete(3), Page: page(3), Lease: &db.LeaseDelay{Host: "a.example", Holder: "other", NextAt: done, Expires: done},
				CycleID: cycle, Found: []string{"https://a.example/z"}},
			// Completed already: kept as it is.
			{Request: &db.Request{ID: ids[0], CompletedAt: &next, Outcome: "late"}},
		} {
			must(inWrite(t, s, func(tx db.WriteTx) error { return db.FinishRequest(ctx, tx, k) }))
		}
		reqs, err := s.SiteRequests(ctx, "a.example")
		must(err)
		for _, r := range reqs {
			if r.CompletedAt == nil || !r.CompletedAt.Equal(done) || r.Status == nil || *r.Status != 200 || r.Outcome != "ok" || r.ETag != `"e"` {
				t.Errorf("request %d: completed %v, status %v, outcome %q, etag %q; want %v, 200, ok, \"e\"",
					r.ID, r.CompletedAt, r.Status, r.Outcome, r.ETag, done)
			}
		}
		st := readWriteState(t, s, cycle)
		if st.pages != 2 {
			t.Errorf("%d pages, want 2", st.pages)
		}
		if want := "https://a.example/x\nhttps://a.example/y\nhttps://a.example/z\n"; st.links[0] != want {
			t.Errorf("links found %q, want %q", st.links[0], want)
		}
		if want := fmt.Sprintf("me %s %s", next.UTC().Format(time.RFC3339Nano), next.UTC().Format(time.RFC3339Nano)); st.leases["a.example"] != want {
			t.Errorf("lease %q, want %q (delayed by its holder, not by another)", st.leases["a.example"], want)
		}
	})
}

// TestRequestsFillfactor checks that the request log leaves room on its
// pages for its rows' completions on PostgreSQL (migration 12), and that
// the migration, PostgreSQL-only, leaves an SQLite database at the current
// version.
func TestRequestsFillfactor(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		if v, err := s.Version(ctx); err != nil || v != db.SchemaVersion {
			t.Fatalf("Version() = %d, %v; want %d", v, err, db.SchemaVersion)
		}
		if s.Dialect != db.Postgres {
			return
		}
		var opts string
		if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COALESCE(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = 'requests'::regclass`).Scan(&opts); err != nil {
			t.Fatal(err)
		}
		if opts != "fillfactor=70" {
			t.Errorf("requests reloptions = %q, want fillfactor=70", opts)
		}
	})
}

// TestPipelineWaitsForPolicyChange checks that a reservation in a pipeline
// reads the policy version under the share lock taken at the pipeline's
// start: while a policy change is in progress the pipeline waits for it,
// and once it commits the reservation, given the version before it, is
// refused as stale and writes nothing.
func TestPipelineWaitsForPolicyChange(t *testing.T) {
	dsn := dbtest.DSN(t, "postgres")
	ctx := context.Background()
	s := dbtest.OpenDSN(t, dsn)
	now := db.Now()
	var cycle int64
	if err := inWrite(t, s, func(tx db.WriteTx) error {
		if _, err := db.InsertLease(ctx, tx, "a.example", "me", now.Add(time.Minute), now); err != nil {
			return err
		}
		var err error
		cycle, err = db.InsertCycle(ctx, tx, "a.example", "n", now, 20, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	change, err := s.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := change.Exec(ctx, `UPDATE policy_state SET version = version + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	var p db.Pipeline
	r := &db.Reservation{
		Request: &db.Request{CycleID: &cycle, Site: "a.example", Host: "a.example", Origin: "https://a.example", URL: "https://a.example/",
			Purpose: db.PurposePage, SentAt: now},
		Version: 0, Holder: "me", LeaseExpires: now.Add(time.Hour), Renew: true, Budgeted: true,
	}
	answer := p.Reserve(r)
	done := make(chan error, 1)
	go func() { done <- s.RunPipeline(ctx, &p) }()
	select {
	case err := <-done:
		t.Fatalf("the pipeline ran (%v) while a policy change held the version", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := change.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if answer.Err != nil || answer.Refusal != db.RefusedStale {
		t.Errorf("reservation at the old version: %v, %v; want RefusedStale", answer.Refusal, answer.Err)
	}
	if st := readWriteState(t, s, cycle); st.requests != 0 || st.spent[0] != 0 {
		t.Errorf("a stale reservation wrote: %d requests, spent %d", st.requests, st.spent[0])
	}
}

// TestPipelineEndCycle checks that a cycle's end queued on a pipeline
// writes what EndCycle writes in a transaction: a done cycle's status,
// reason and end, its links_found cleared and its site due from its start;
// a stopped one keeps its links and its site is due at once.
func TestPipelineEndCycle(t *testing.T) {
	s := dbtest.Open(t, "postgres")
	ctx := context.Background()
	start := db.Now().Add(-time.Hour)
	end := start.Add(time.Minute)
	cycles := map[string]int64{}
	if err := inWrite(t, s, func(tx db.WriteTx) error {
		for _, site := range []string{"done.example", "stopped.example"} {
			if _, err := tx.Exec(ctx, `INSERT INTO sites (name, added_at) VALUES (?, ?)`, site, start); err != nil {
				return err
			}
			id, err := db.InsertCycle(ctx, tx, site, "n", start, 20, 0)
			if err != nil {
				return err
			}
			if err := db.AddCycleLinks(ctx, tx, id, []string{"https://" + site + "/a"}); err != nil {
				return err
			}
			cycles[site] = id
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var p db.Pipeline
	p.EndCycle(cycles["done.example"], "done.example", db.CycleDone, "budget spent", end)
	p.EndCycle(cycles["stopped.example"], "stopped.example", db.CycleStopped, "interrupted", end)
	if err := s.RunPipeline(ctx, &p); err != nil {
		t.Fatal(err)
	}
	for site, want := range map[string]struct {
		status, reason string
		links          int
		due            time.Time
	}{
		"done.example":    {db.CycleDone, "budget spent", 0, start},
		"stopped.example": {db.CycleStopped, "interrupted", 1, db.Epoch},
	} {
		var (
			status, reason string
			finished, due  time.Time
		)
		if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT c.status, c.reason, c.finished_at, s.due_since FROM crawl_cycles c JOIN sites s ON s.name = c.site WHERE c.id = $1`,
			cycles[site]).Scan(&status, &reason, &finished, &due); err != nil {
			t.Fatal(err)
		}
		links, err := s.CycleLinksFound(ctx, cycles[site])
		if err != nil {
			t.Fatal(err)
		}
		if status != want.status || reason != want.reason || !finished.Equal(end) || len(links) != want.links || !due.Equal(want.due) {
			t.Errorf("%s: status %q, reason %q, finished %v, %d links, due since %v; want %q, %q, %v, %d, %v",
				site, status, reason, finished, len(links), due, want.status, want.reason, end, want.links, want.due)
		}
	}
}

// TestLeases checks the batched read of leases: each key's holder and
// expiry, none for a key without a lease, across more keys than one query
// takes.
func TestLeases(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		s := dbtest.OpenDSN(t, dsn)
		ctx := context.Background()
		now := db.Now()
		holder := func(i int) string { return fmt.Sprintf("crawler-%d", i%3) }
		var keys []string
		if err := inWrite(t, s, func(tx db.WriteTx) error {
			for i := range 700 {
				key := fmt.Sprintf("cycle:s%d.example", i)
				keys = append(keys, key)
				if i%7 == 0 {
					continue // no lease
				}
				if _, err := db.InsertLease(ctx, tx, key, holder(i), now.Add(time.Duration(i)*time.Millisecond), now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Leases(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 600 {
			t.Errorf("%d leases read, want 600", len(got))
		}
		for i, key := range keys {
			l, held := got[key]
			if held != (i%7 != 0) || held && (!l.ExpiresAt.Equal(now.Add(time.Duration(i)*time.Millisecond)) || l.Holder != holder(i) || l.Host != key) {
				t.Errorf("%s: held %v: %+v", key, held, l)
			}
		}
	})
}
