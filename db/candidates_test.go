package db_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestRecordCandidatesFleet: four crawlers (each its own store) record
// overlapping links to the same candidates at once, several times over;
// each candidate's linked_from is the number of distinct linking sites,
// counted once whoever wrote a pair first, and its first and last seen
// times bracket the writes.
func TestRecordCandidatesFleet(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const crawlers, candidates, linkers = 4, 40, 30
		start := db.Now()
		var wg sync.WaitGroup
		errs := make(chan error, crawlers)
		for c := 0; c < crawlers; c++ {
			s, err := db.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			wg.Go(func() {
				for round := 0; round < 3; round++ {
					var links []db.CandidateLinks
					for i := 0; i < candidates; i++ {
						// Candidate i is linked from sites 0..i%linkers; each
						// crawler finds an overlapping part of them.
						cl := db.CandidateLinks{Site: fmt.Sprintf("cand-%02d.example", i), StartURL: "https://x/"}
						for f := 0; f <= i%linkers; f++ {
							if (f+c+round)%2 == 0 || f%crawlers == c {
								cl.From = append(cl.From, fmt.Sprintf("from-%02d.example", f))
							}
						}
						links = append(links, cl)
					}
					if err := s.RecordCandidates(ctx, links, db.Now()); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		s := dbtest.OpenDSN(t, dsn)
		got, err := s.CandidatesAfter(ctx, "", "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != candidates {
			t.Fatalf("%d candidates, want %d", len(got), candidates)
		}
		for _, c := range got {
			var i int
			fmt.Sscanf(c.Site, "cand-%02d.example", &i)
			if want := int64(i%linkers + 1); c.LinkedFrom != want {
				t.Errorf("%s: linked_from %d, want %d", c.Site, c.LinkedFrom, want)
			}
			if c.Status != db.CandidateWaiting || c.FirstSeen.Before(start) || c.LastSeen.Before(c.FirstSeen) || c.LastSeen.After(db.Now()) {
				t.Errorf("%s: status %q, first seen %s, last seen %s (writes from %s)", c.Site, c.Status, c.FirstSeen, c.LastSeen, start)
			}
		}
	})
}

// TestCandidateStatus: a candidate is listed excluded while its site is
// excluded, whatever its stored status, added once on the crawl list, and
// waiting again after a re-inclusion; EligibleCandidates never returns an
// excluded or listed site, nor one linked from too few sites.
func TestCandidateStatus(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now()
		links := []db.CandidateLinks{
			{Site: "a.example", From: []string{"x.example", "y.example"}},
			{Site: "b.example", From: []string{"x.example", "y.example", "z.example"}},
			{Site: "c.example", From: []string{"x.example"}},
			{Site: "d.example", From: []string{"x.example", "y.example"}},
		}
		if err := s.RecordCandidates(ctx, links, now); err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *db.Tx) error {
			return tx.CreateExclusion(ctx, &db.Exclusion{Site: "b.example", ExcludedAt: now, Actor: "staff"})
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *db.Tx) error {
			return tx.CreateSite(ctx, &db.Site{Name: "d.example", StartURL: "https://d.example/", AddedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
		var eligible []db.Candidate
		if err := s.InTx(ctx, func(tx *db.Tx) (err error) {
			eligible, err = tx.EligibleCandidates(ctx, 2, 10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(eligible) != 1 || eligible[0].Site != "a.example" {
			t.Errorf("eligible = %+v; want a.example alone (b excluded, c linked once, d listed)", eligible)
		}
		status := func() map[string]string {
			cs, err := s.CandidatesAfter(ctx, "", "", 10)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, c := range cs {
				out[c.Site] = c.Status
			}
			return out
		}
		if got, want := status(), map[string]string{"a.example": "waiting", "b.example": "excluded", "c.example": "waiting", "d.example": "added"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
		if ex, err := s.CandidatesAfter(ctx, db.CandidateExcluded, "", 10); err != nil || len(ex) != 1 || ex[0].Site != "b.example" {
			t.Errorf("CandidatesAfter(excluded) = %+v, %v; want b.example", ex, err)
		}
		if err := s.InTx(ctx, func(tx *db.Tx) error {
			_, err := tx.DeleteExclusion(ctx, "b.example")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got := status()["b.example"]; got != "waiting" {
			t.Errorf("b.example after re-inclusion: %q, want waiting", got)
		}
		if n, err := s.CandidatesAddedSince(ctx, now.Add(-time.Hour)); err != nil || n != 0 {
			t.Errorf("CandidatesAddedSince = %d, %v; want 0 (nothing added by discovery)", n, err)
		}
	})
}
