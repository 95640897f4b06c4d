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

// TestConcurrentWritersAndGates runs three "processes" (each with its own
// connection pool: a watcher, a crawler and staff) adding exclusions and
// checking them at once. No exclusion may be lost, no error may surface, and
// each writer's gate must see its own exclusion at the next check.
func TestConcurrentWritersAndGates(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const writers, perWriter = 3, 40
		var wg sync.WaitGroup
		errs := make(chan error, writers*perWriter)
		for w := 0; w < writers; w++ {
			p, _ := openPolicy(t, dsn)
			gate, err := p.NewGate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer gate.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perWriter; i++ {
					site := fmt.Sprintf("w%d-%d.example.com", w, i)
					// Every other request names the same shared site: repeats are
					// recorded, never lost.
					inputs := []string{site}
					if i%2 == 0 {
						inputs = append(inputs, "shared.example.org")
					}
					if _, err := p.Exclude(ctx, inputs, policy.Change{Actor: fmt.Sprintf("writer%d", w)}); err != nil {
						errs <- err
						return
					}
					v, err := gate.Check(ctx, "example.com")
					if err != nil {
						errs <- err
						return
					}
					if !v.Excluded {
						errs <- fmt.Errorf("writer %d: gate does not see example.com after excluding %s", w, site)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		p, s := openPolicy(t, dsn)
		list, err := p.Exclusions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// w0-0.example.com etc. all normalise to example.com; the shared site
		// is one more.
		if len(list) != 2 {
			t.Errorf("exclusions = %d, want 2 (example.com, example.org)", len(list))
		}
		var events int64
		dbtest.Gorm(s).Model(&db.PolicyEvent{}).Count(&events)
		want := int64(writers*perWriter + writers*perWriter/2)
		if events != want {
			t.Errorf("policy events = %d, want %d: a request was lost", events, want)
		}
		var versions []int64
		dbtest.Gorm(s).Model(&db.PolicyEvent{}).Order("version").Pluck("version", &versions)
		for i, v := range versions {
			if v != int64(i+1) {
				t.Fatalf("event versions have a gap at %d: %v", i, v)
			}
		}
	})
}

// TestSimultaneousExclusionsOfOneSite has several writers exclude the same
// new site at the same instant, round after round: exactly one exclusion and
// the rest recorded as repeats, and no writer may fail.
func TestSimultaneousExclusionsOfOneSite(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const writers, rounds = 6, 15
		pols := make([]*policy.Policy, writers)
		for i := range pols {
			pols[i], _ = openPolicy(t, dsn)
		}
		for round := 0; round < rounds; round++ {
			site := fmt.Sprintf("round%d.example", round)
			start := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for i, p := range pols {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if _, err := p.Exclude(ctx, []string{site}, policy.Change{Actor: fmt.Sprint("writer", i)}); err != nil {
						errs <- err
					}
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		_, s := openPolicy(t, dsn)
		for round := 0; round < rounds; round++ {
			site := fmt.Sprintf("round%d.example", round)
			if n := countEvents(t, s, site, db.EventExclude); n != 1 {
				t.Errorf("%s: %d exclude events, want 1", site, n)
			}
			if n := countEvents(t, s, site, db.EventExcludeRepeat); n != writers-1 {
				t.Errorf("%s: %d repeat events, want %d", site, n, writers-1)
			}
		}
	})
}
