package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestRobotsRefusals checks, on both engines (and through a pipeline on
// PostgreSQL), that the URLs robots.txt refused are recorded once per
// cycle and at most db.MaxRobotsRefusals per cycle, and read back per
// site, oldest first.
func TestRobotsRefusals(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now()
		sid := int64(7)
		var rs []db.RobotsRefusal
		for i := range db.MaxRobotsRefusals + 50 {
			rs = append(rs, db.RobotsRefusal{CycleID: 1, Site: "a.example", URL: fmt.Sprintf("https://a.example/private/%d", i%(db.MaxRobotsRefusals+20)),
				RobotsSnapshotID: &sid, RobotsRule: "Disallow: /private/", RobotsLine: 3, RefusedAt: now})
		}
		if err := db.InsertRobotsRefusals(ctx, s.AutoCommit(), rs); err != nil {
			t.Fatal(err)
		}
		other := []db.RobotsRefusal{{CycleID: 2, Site: "a.example", URL: "https://a.example/private/0", RobotsRule: "Disallow: /", RefusedAt: now.Add(1)}}
		if s.Dialect == db.Postgres {
			var p db.Pipeline
			p.RobotsRefusals(other)
			if err := s.RunPipeline(ctx, &p); err != nil {
				t.Fatal(err)
			}
		} else if err := db.InsertRobotsRefusals(ctx, s.AutoCommit(), other); err != nil {
			t.Fatal(err)
		}
		got, err := s.SiteRobotsRefusals(ctx, "a.example")
		if err != nil {
			t.Fatal(err)
		}
		perCycle := map[int64]int{}
		for _, r := range got {
			perCycle[r.CycleID]++
		}
		if perCycle[1] != db.MaxRobotsRefusals || perCycle[2] != 1 {
			t.Errorf("refusals per cycle = %v, want %d in cycle 1 and 1 in cycle 2", perCycle, db.MaxRobotsRefusals)
		}
		if last := got[len(got)-1]; last.CycleID != 2 || last.RobotsRule != "Disallow: /" {
			t.Errorf("newest refusal = %+v, want cycle 2's", last)
		}
		if f := got[0]; f.RobotsSnapshotID == nil || *f.RobotsSnapshotID != sid || f.RobotsLine != 3 || f.URL != "https://a.example/private/0" {
			t.Errorf("first refusal = %+v", f)
		}
	})
}
