package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/dbtest"
)

func TestOpenBothEngines(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v, err := s.Version(ctx); err != nil || v != db.SchemaVersion {
			t.Fatalf("Version() = %d, %v; want %d", v, err, db.SchemaVersion)
		}
		// Round-trip a row with times, blobs and nullable columns.
		now := db.Now()
		snap := db.RobotsSnapshot{Origin: "https://example.com:443", FetchedAt: now, Status: 200,
			Body: []byte("User-agent: *\nDisallow: /x\n"), Sha256: "abc", Outcome: db.RobotsParsed}
		if err := s.DB.WithContext(ctx).Create(&snap).Error; err != nil {
			t.Fatal(err)
		}
		var got db.RobotsSnapshot
		if err := s.DB.WithContext(ctx).First(&got, snap.ID).Error; err != nil {
			t.Fatal(err)
		}
		if !got.FetchedAt.Equal(now) || string(got.Body) != string(snap.Body) || got.RequestID != nil {
			t.Errorf("round trip = %+v, want %+v", got, snap)
		}
		// Reopening an up-to-date database changes nothing.
		s2, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		s2.Close()
	})
}

func TestOneRunningCyclePerSite(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c1 := db.CrawlCycle{Site: "example.com", StartedAt: time.Now(), Status: db.CycleRunning, Budget: 20}
		if err := s.DB.Create(&c1).Error; err != nil {
			t.Fatal(err)
		}
		c2 := db.CrawlCycle{Site: "example.com", StartedAt: time.Now(), Status: db.CycleRunning, Budget: 20}
		if err := s.DB.Create(&c2).Error; err == nil {
			t.Error("a second running cycle for one site was accepted")
		}
		slot := 1
		r1 := db.Request{CycleID: &c1.ID, BudgetSlot: &slot, Site: "example.com", Host: "example.com",
			Origin: "https://example.com:443", URL: "https://example.com/", Purpose: db.PurposePage, SentAt: time.Now()}
		if err := s.DB.Create(&r1).Error; err != nil {
			t.Fatal(err)
		}
		r2 := r1
		r2.ID = 0
		if err := s.DB.Create(&r2).Error; err == nil {
			t.Error("two requests with one budget slot were accepted")
		}
	})
}

func TestOpenBadDSN(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"mysql://x", "sqlite://", "/no/such/folder/x.db"} {
		if s, err := db.Open(ctx, dsn); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want error", dsn)
		} else if errors.Is(err, db.ErrTooNew) {
			t.Errorf("Open(%q) = %v", dsn, err)
		}
	}
}
