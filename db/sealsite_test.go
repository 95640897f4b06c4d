package db_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// siteSealStore writes three blocks: block 1 seals a.example's first cycle
// (requests 1-3, its robots.txt snapshot, a policy event), block 2
// b.example's (requests 10-12, an event), block 3 a.example's second cycle
// (requests 20-21).
func siteSealStore(t *testing.T, engine string) *db.Store {
	t.Helper()
	s := dbtest.Open(t, engine)
	ctx := context.Background()
	now := db.Now().Add(-time.Hour)
	req := func(id int64, site string, slot int) *db.Request {
		at := now.Add(time.Duration(id) * time.Second)
		done := at.Add(100 * time.Millisecond)
		status := 200
		r := &db.Request{ID: id, Site: site, Host: site, Origin: "https://" + site + ":443", URL: fmt.Sprintf("https://%s/%d", site, id),
			Method: "GET", Purpose: db.PurposePage, SentAt: at, CompletedAt: &done, Status: &status, Outcome: "ok"}
		if slot == 0 {
			r.Purpose, r.URL = db.PurposeRobots, "https://"+site+"/robots.txt"
		} else {
			r.BudgetSlot = &slot
		}
		return r
	}
	batches := [][]any{
		{req(1, "a.example", 0), req(2, "a.example", 1), req(3, "a.example", 2),
			&db.RobotsSnapshot{ID: 1, Origin: "https://a.example:443", FetchedAt: now, Status: 200, Body: []byte("User-agent: *\nAllow: /\n"),
				Sha256: "x", Outcome: db.RobotsParsed},
			&db.PolicyEvent{ID: 1, Version: 1, HappenedAt: now, Kind: db.EventSiteAdd, Site: "a.example", Actor: "staff", Source: "cli"}},
		{req(10, "b.example", 0), req(11, "b.example", 1), req(12, "b.example", 2),
			&db.PolicyEvent{ID: 2, Version: 2, HappenedAt: now.Add(time.Second), Kind: db.EventSiteAdd, Site: "b.example", Actor: "staff", Source: "cli"}},
		{req(20, "a.example", 1), req(21, "a.example", 2)},
	}
	for i, rows := range batches {
		for _, r := range rows {
			if err := dbtest.Gorm(s).WithContext(ctx).Create(r).Error; err != nil {
				t.Fatalf("create %T: %v", r, err)
			}
		}
		if b := seal(t, s); b == nil || b.ID != int64(i+1) {
			t.Fatalf("Seal = %+v, want block %d", b, i+1)
		}
	}
	return s
}

// verifySites returns what VerifySiteSeals finds, as "check table/row" and
// "chain block N".
func verifySites(t *testing.T, s *db.Store, sites ...string) ([]string, *db.SealReport) {
	t.Helper()
	var out []string
	rep, err := s.VerifySiteSeals(context.Background(), sites, func(p db.SealProblem) error {
		out = append(out, problemKey(p))
		return nil
	})
	if err != nil {
		t.Fatalf("VerifySiteSeals(%v): %v", sites, err)
	}
	return out, rep
}

func problemKey(p db.SealProblem) string {
	if p.Table == "" {
		return fmt.Sprintf("%s block %d", p.Check, p.BlockID)
	}
	return fmt.Sprintf("%s %s/%d", p.Check, p.Table, p.RowID)
}

// TestVerifySiteSealsUntouched: untouched records pass; a site's check
// walks the chain from the first block that sealed one of its rows, and
// checks every row of the blocks that did.
func TestVerifySiteSealsUntouched(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := siteSealStore(t, engine)
			for _, tc := range []struct {
				site                  string
				blocks, rows, pending int64
			}{
				{"a.example", 3, 7, 0}, // the rows of blocks 1 and 3; blocks 1 to 3 walked
				{"b.example", 2, 4, 0}, // the rows of block 2; blocks 2 and 3 walked
				{"c.example", 0, 0, 0}, // nothing
			} {
				ps, rep := verifySites(t, s, tc.site)
				if len(ps) != 0 {
					t.Errorf("%s: problems %v, want none", tc.site, ps)
				}
				if rep.Blocks != tc.blocks || rep.Rows != tc.rows || rep.Unsealed != tc.pending || rep.Head == nil || rep.Head.ID != 3 {
					t.Errorf("%s: report = %+v, want %d blocks walked, %d sealed rows checked, %d unsealed, head 3", tc.site, rep, tc.blocks, tc.rows, tc.pending)
				}
			}
			// A new row of a.example, not sealed yet: counted, not a problem.
			now := db.Now()
			status := 200
			if err := dbtest.Gorm(s).Create(&db.Request{ID: 30, Site: "a.example", Host: "a.example", Origin: "https://a.example:443", URL: "https://a.example/30",
				Method: "GET", Purpose: db.PurposePage, SentAt: now, CompletedAt: &now, Status: &status, Outcome: "ok"}).Error; err != nil {
				t.Fatal(err)
			}
			if ps, rep := verifySites(t, s, "a.example"); len(ps) != 0 || rep.Unsealed != 1 {
				t.Errorf("with an unsealed row: problems %v, unsealed %d; want none, 1", ps, rep.Unsealed)
			}
		})
	}
}

// TestVerifySiteSealsTamper: each way of tampering with a site's records is
// found by the site's check, naming the table and row (or the block); a
// change in a block that sealed none of the site's rows is left to the
// whole-chain check, which finds it.
func TestVerifySiteSealsTamper(t *testing.T) {
	old := db.Now().Add(-3 * time.Hour)
	cases := []struct {
		name   string
		tamper []string // SQL, ? is old
		site   string
		want   []string
	}{
		{"changed request", []string{`UPDATE requests SET url = 'https://a.example/other' WHERE id = 2`}, "a.example",
			[]string{"changed requests/2"}},
		{"changed snapshot", []string{`UPDATE robots_snapshots SET status = 404 WHERE id = 1`}, "a.example",
			[]string{"changed robots_snapshots/1"}},
		{"changed event", []string{`UPDATE policy_events SET actor = 'someone' WHERE id = 1`}, "a.example",
			[]string{"changed policy_events/1"}},
		{"deleted request", []string{`DELETE FROM requests WHERE id = 21`}, "a.example",
			[]string{"deleted requests/21"}},
		{"inserted request", []string{`INSERT INTO requests (id, site, host, origin, url, purpose, sent_at, completed_at, status, outcome)
			SELECT 15, site, host, origin, url || '/x', purpose, sent_at, completed_at, status, outcome FROM requests WHERE id = 2`}, "a.example",
			[]string{"inserted requests/15"}},
		{"backdated request", []string{`INSERT INTO requests (id, site, host, origin, url, purpose, sent_at, completed_at, status, outcome)
			SELECT 40, site, host, origin, url || '/x', purpose, ?, ?, status, outcome FROM requests WHERE id = 2`}, "a.example",
			[]string{"backdated requests/40"}},
		{"rehashed row", []string{`UPDATE requests SET url = 'https://a.example/other' WHERE id = 3`,
			`UPDATE seal_rows SET hash = 'forged' WHERE tbl = 'requests' AND row_id = 3`}, "a.example",
			[]string{"chain block 1", "changed requests/3"}},
		{"block content", []string{`UPDATE seal_blocks SET row_count = 99 WHERE id = 2`}, "a.example",
			[]string{"chain block 2"}},
		{"other site's block", []string{`UPDATE requests SET url = 'https://b.example/other' WHERE id = 11`}, "a.example",
			nil},
		{"other site's block, its own check", []string{`UPDATE requests SET url = 'https://b.example/other' WHERE id = 11`}, "b.example",
			[]string{"changed requests/11"}},
	}
	for _, engine := range dbtest.Engines() {
		for _, tc := range cases {
			t.Run(engine+"/"+tc.name, func(t *testing.T) {
				s := siteSealStore(t, engine)
				for _, q := range tc.tamper {
					var args []any
					for range strings.Count(q, "?") {
						args = append(args, old)
					}
					if engine == "postgres" {
						q = strings.ReplaceAll(q, "?", "CAST(? AS TIMESTAMPTZ)")
					}
					if err := dbtest.Gorm(s).Exec(q, args...).Error; err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				got, _ := verifySites(t, s, tc.site)
				if !slices.Equal(got, tc.want) {
					t.Errorf("VerifySiteSeals(%s) = %v, want %v", tc.site, got, tc.want)
				}
				// The whole-chain check finds at least as much.
				all, _ := verify(t, s)
				var keys []string
				for _, p := range all {
					keys = append(keys, problemKey(p))
				}
				for _, w := range tc.want {
					if !slices.Contains(keys, w) {
						t.Errorf("VerifySeals = %v, missing %q", keys, w)
					}
				}
				if tc.want == nil && len(keys) == 0 {
					t.Errorf("VerifySeals found nothing; the tamper should show in the whole chain")
				}
			})
		}
	}
}
