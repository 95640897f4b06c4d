package policy_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// TestGateSeesOtherConnections checks that a change committed through
// another store (as another process would) is seen by the very next Check.
func TestGateSeesOtherConnections(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		crawlerSide, _ := openPolicy(t, dsn)
		staffSide, _ := openPolicy(t, dsn)
		if _, err := staffSide.Exclude(ctx, []string{"before.com"}, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		gate, err := crawlerSide.NewGate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer gate.Close()

		check := func(site string, want bool) {
			t.Helper()
			v, err := gate.Check(ctx, site)
			if err != nil {
				t.Fatal(err)
			}
			if v.Excluded != want {
				t.Errorf("Check(%q).Excluded = %v, want %v (version %d)", site, v.Excluded, want, v.Version)
			}
		}
		check("before.com", true)
		check("later.com", false)
		if _, err := staffSide.AddSites(ctx, []string{"other.com"}, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		check("later.com", false)
		if _, err := staffSide.Exclude(ctx, []string{"later.com"}, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		check("later.com", true)
		if _, err := staffSide.Reinclude(ctx, "before.com", policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		check("before.com", false)
		check("later.com", true)
	})
}

// TestGateConcurrentChecks checks that checks made at once, as when
// thousands of sites start together (their reads of the policy version
// are shared), each see every change committed before they were made:
// each goroutine excludes a site through another store and checks it at
// once, while the others do the same.
func TestGateConcurrentChecks(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		crawlerSide, _ := openPolicy(t, dsn)
		staffSide, _ := openPolicy(t, dsn)
		gate, err := crawlerSide.NewGate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer gate.Close()
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for j := range 5 {
					site := fmt.Sprintf("s%d-%d.com", i, j)
					if v, err := gate.Check(ctx, site); err != nil || v.Excluded {
						t.Errorf("Check(%s) before its exclusion = %+v, %v", site, v, err)
						return
					}
					if _, err := staffSide.Exclude(ctx, []string{site}, policy.Change{Actor: "anna"}); err != nil {
						t.Error(err)
						return
					}
					if v, err := gate.Check(ctx, site); err != nil || !v.Excluded {
						t.Errorf("Check(%s) after its exclusion = %+v, %v", site, v, err)
					}
				}
			})
		}
		wg.Wait()
	})
}

// BenchmarkGateCheck measures one gate check with 1,000,000 exclusions in
// an SQLite database (target: under 50 µs), and reports the load time of
// the million (target: under 5 s) as load-s.
func BenchmarkGateCheck(b *testing.B) {
	ctx := context.Background()
	s := dbtest.Open(b, "sqlite")
	const n = 1_000_000
	tx, err := dbtest.SQL(s).BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO exclusions (site, excluded_at, actor, event_id) VALUES (?, ?, 'bench', 0)")
	if err != nil {
		b.Fatal(err)
	}
	now := db.Now()
	for i := 0; i < n; i++ {
		if _, err := stmt.ExecContext(ctx, siteName(i), now); err != nil {
			b.Fatal(err)
		}
	}
	stmt.Close()
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	p := policy.New(s, nil)
	start := testingNow()
	gate, err := p.NewGate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	load := testingNow().Sub(start)
	defer gate.Close()
	if v, _ := gate.Check(ctx, siteName(777)); !v.Excluded {
		b.Fatal("loaded gate does not see an exclusion")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := gate.Check(ctx, siteName(i%(2*n)))
		if err != nil {
			b.Fatal(err)
		}
		if v.Excluded != (i%(2*n) < n) {
			b.Fatal("wrong verdict")
		}
	}
	b.ReportMetric(load.Seconds(), "load-s")
}
