package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestCyclePageURLs reads back the page URLs a resumed cycle does not ask
// for again: those answered (whatever the answer). A request withdrawn
// (never sent), interrupted (its answer never read) or abandoned (its
// crawler stopped before recording the answer, so the links on the page
// were never recorded either) is asked for again, as are robots.txt
// requests and other cycles' pages, which it never counted.
func TestCyclePageURLs(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		g := dbtest.Gorm(s)
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		cycles := []db.CrawlCycle{
			{Site: "a.example", Node: "t", StartedAt: at, Status: db.CycleStopped, Budget: 20},
			{Site: "b.example", Node: "t", StartedAt: at, Status: db.CycleRunning, Budget: 20},
		}
		if err := g.Create(&cycles).Error; err != nil {
			t.Fatal(err)
		}
		for i, c := range []struct {
			cycle   int64
			path    string
			purpose string
			outcome string // "" with no completion: still open
		}{
			{cycles[0].ID, "/ok", db.PurposePage, "ok"},
			{cycles[0].ID, "/failed", db.PurposePage, "failed"},
			{cycles[0].ID, "/open", db.PurposePage, ""},
			{cycles[0].ID, "/withdrawn", db.PurposePage, db.OutcomeWithdrawn},
			{cycles[0].ID, "/interrupted", db.PurposePage, db.OutcomeInterrupted},
			{cycles[0].ID, "/abandoned", db.PurposePage, db.OutcomeAbandoned},
			{cycles[0].ID, "/robots.txt", db.PurposeRobots, "ok"},
			{cycles[1].ID, "/other", db.PurposePage, "ok"},
		} {
			sent := at.Add(time.Duration(i) * time.Second)
			r := db.Request{CycleID: &c.cycle, Site: "a.example", Host: "a.example", Origin: "https://a.example",
				URL: "https://a.example" + c.path, Method: "GET", Purpose: c.purpose, Node: "t",
				PolicyCheck: "allowed (policy v0)", SentAt: sent, Outcome: c.outcome}
			if c.outcome != "" {
				done := sent.Add(100 * time.Millisecond)
				r.CompletedAt = &done
			}
			if err := g.Create(&r).Error; err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.CyclePageURLs(ctx, cycles[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		want := []string{"https://a.example/failed", "https://a.example/ok", "https://a.example/open"}
		if !slices.Equal(got, want) {
			t.Errorf("CyclePageURLs = %q, want %q", got, want)
		}
	})
}
