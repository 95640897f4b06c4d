package crawler

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// TestPGLeaseStatements checks the leases on PostgreSQL, where a fresh
// lease is one INSERT and a release one UPDATE, each committed on its own:
// a crawler takes a lease no one held, another crawler finds it busy until
// it is given back, then takes it with the next_at it was given back with.
func TestPGLeaseStatements(t *testing.T) {
	dsn := dbtest.DSN(t, "postgres")
	ctx := context.Background()
	s := dbtest.OpenDSN(t, dsn)
	newCrawler := func(node string) *Crawler {
		c, err := New(ctx, s, policy.New(s, nil), &Options{Node: node, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := newCrawler("a"), newCrawler("b")
	next, busy, err := a.acquire(ctx, "x.test", time.Second, nil, nil)
	if err != nil || !busy.IsZero() || next.IsZero() {
		t.Fatalf("a.acquire = %v, %v, %v; want it taken", next, busy, err)
	}
	// Committed: another connection sees it at once.
	exp, held, err := s.LeaseExpiry(ctx, "x.test")
	if err != nil || !held || !exp.After(next) {
		t.Fatalf("lease after a.acquire: %v, %v, %v; want held until after %v", exp, held, err, next)
	}
	if _, busy, err := b.acquire(ctx, "x.test", time.Second, nil, nil); err != nil || busy.IsZero() {
		t.Fatalf("b.acquire of a held lease: busy %v, %v; want busy", busy, err)
	}
	later := a.now().Add(time.Hour).Truncate(time.Microsecond)
	if err := a.release(ctx, "x.test", later); err != nil {
		t.Fatal(err)
	}
	next, busy, err = b.acquire(ctx, "x.test", time.Second, nil, nil)
	if err != nil || !busy.IsZero() || !next.Equal(later) {
		t.Fatalf("b.acquire after the release = %v, %v, %v; want taken, next_at %v", next, busy, err, later)
	}
}
