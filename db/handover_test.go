package db_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// errNotAsked is a handover's refusal in the test below.
var errNotAsked = errors.New("not asked")

// TestHandoverLeases runs the statements of a site's handover between
// crawlers (db.TakeLease, db.GiveLease) as the crawler does, on
// PostgreSQL, racing: a request for a site (want:SITE) is answered at most
// once, however many transactions try at once; a request withdrawn
// (db.ReleaseLease) is answered by none, and the site's lease stays with
// its holder; a crawler that no longer holds the site's lease cannot give
// it.
func TestHandoverLeases(t *testing.T) {
	if os.Getenv("LOHIBOT_TEST_POSTGRES") == "" {
		t.Skip("LOHIBOT_TEST_POSTGRES not set")
	}
	ctx := context.Background()
	s := dbtest.Open(t, "postgres")
	now := db.Now()
	exp := now.Add(time.Minute)
	const (
		cycle, want = "cycle:a.example", "want:a.example"
		a, b        = "crawler-a/1/x", "crawler-b/2/y"
	)
	handover := func(from, to string) error {
		return inWrite(t, s, func(tx db.WriteTx) error {
			ok, err := db.TakeLease(ctx, tx, want, to, db.Now())
			if err != nil || !ok {
				return errors.Join(err, errNotAsked)
			}
			if ok, err := db.GiveLease(ctx, tx, cycle, from, to, exp); err != nil || !ok {
				return errors.Join(err, errors.New("lease not held"))
			}
			return nil
		})
	}
	holder := func() string {
		var h string
		if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT holder FROM host_leases WHERE host = $1`, cycle).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	put := func(key, h string) {
		if err := inWrite(t, s, func(tx db.WriteTx) error { return db.PutLease(ctx, tx, key, h, exp, now) }); err != nil {
			t.Fatal(err)
		}
	}

	// b holds the site; a asks for it; eight handovers race.
	put(cycle, b)
	put(want, a)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		passed int
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := handover(b, a)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				passed++
			case !errors.Is(err, errNotAsked):
				t.Errorf("handover: %v", err)
			}
		}()
	}
	wg.Wait()
	if passed != 1 || holder() != a {
		t.Errorf("%d handovers passed, the lease is held by %q; want 1, %q", passed, holder(), a)
	}

	// b asks for it back, then withdraws: no handover.
	put(want, b)
	if err := inWrite(t, s, func(tx db.WriteTx) error { return db.ReleaseLease(ctx, tx, want, b, db.Now(), time.Time{}) }); err != nil {
		t.Fatal(err)
	}
	if err := handover(a, b); !errors.Is(err, errNotAsked) || holder() != a {
		t.Errorf("handover after the request was withdrawn: %v, held by %q; want refused, %q", err, holder(), a)
	}

	// a asks again, and b, which no longer holds the lease, tries to
	// give it: nothing changes, the request included.
	put(want, a)
	if err := handover(b, a); err == nil || holder() != a {
		t.Errorf("handover by a crawler that does not hold the lease: %v, held by %q", err, holder())
	}
	if ls, err := s.Leases(ctx, []string{want}); err != nil || ls[want].Holder != a {
		t.Errorf("the request after a refused handover: %+v, %v; want still %q's", ls[want], err, a)
	}
}
