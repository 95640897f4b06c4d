package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestLatestRobotsSnapshots checks, on both engines, the read of many
// origins' snapshots at once: each origin's newest (by fetch time, then
// id), an origin without one left out, and the same answer as
// LatestRobotsSnapshot gives for each.
func TestLatestRobotsSnapshots(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now().Truncate(time.Millisecond)
		auto := s.AutoCommit()
		add := func(origin string, fetched time.Time, body string) int64 {
			t.Helper()
			sn := &db.RobotsSnapshot{Origin: origin, FetchedAt: fetched, Status: 200, Body: []byte(body), Outcome: db.RobotsParsed}
			if err := db.InsertRobotsSnapshot(ctx, auto, sn); err != nil {
				t.Fatal(err)
			}
			return sn.ID
		}
		add("https://a.example:443", now.Add(-2*time.Hour), "old")
		newest := add("https://a.example:443", now.Add(-time.Hour), "User-agent: *\nDisallow: /a")
		add("https://a.example:443", now.Add(-3*time.Hour), "older, written later")
		tied := add("https://b.example:443", now, "first")
		tied2 := add("https://b.example:443", now, "second, same time")
		if tied2 < tied {
			t.Fatal("ids not increasing")
		}
		got, err := s.LatestRobotsSnapshots(ctx, []string{"https://a.example:443", "https://b.example:443", "https://none.example:443"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%d snapshots, want 2 (none for an origin never fetched): %v", len(got), got)
		}
		if sn := got["https://a.example:443"]; sn == nil || sn.ID != newest || string(sn.Body) != "User-agent: *\nDisallow: /a" ||
			!sn.FetchedAt.Equal(now.Add(-time.Hour)) || sn.Status != 200 || sn.Outcome != db.RobotsParsed {
			t.Errorf("a.example: %+v, want snapshot %d", sn, newest)
		}
		if sn := got["https://b.example:443"]; sn == nil || sn.ID != tied2 {
			t.Errorf("b.example: %+v, want the later of two fetched at once (%d)", sn, tied2)
		}
		for origin, sn := range got {
			one, err := s.LatestRobotsSnapshot(ctx, origin)
			if err != nil || one.ID != sn.ID || sn.Origin != origin {
				t.Errorf("%s: %d (origin %q), LatestRobotsSnapshot says %+v, %v", origin, sn.ID, sn.Origin, one, err)
			}
		}
	})
}
