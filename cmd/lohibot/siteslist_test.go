package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestSitesListOnlyReads: sites list reads the crawl list and writes
// nothing, not even a leaf of the transparency log for the rows it finds
// not in it yet (at a million sites and twenty million such rows, the
// append at exit alone took longer than the listing).
func TestSitesListOnlyReads(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		env := []string{"LOHIBOT_DB=" + dsn}
		if r := runCLI(t, env, "sites", "add", "a-shop.example", "b-shop.example"); r.code != 0 {
			t.Fatalf("sites add: exit %d\n%s", r.code, r.stderr)
		}
		head, err := s.LogSize(ctx)
		if err != nil {
			t.Fatalf("LogSize after sites add: %v", err)
		}
		// A completed request, not in the log yet.
		now := db.Now().Add(-time.Minute)
		status := 200
		if err := dbtest.Gorm(s).Create(&db.Request{Site: "a-shop.example", Host: "a-shop.example", Origin: "https://a-shop.example:443",
			URL: "https://a-shop.example/", Method: "GET", Purpose: db.PurposePage, SentAt: now, CompletedAt: &now, Status: &status, Outcome: "ok"}).Error; err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, env, "sites", "list")
		if r.code != 0 || !strings.Contains(r.stdout, "a-shop.example") || !strings.Contains(r.stdout, "b-shop.example") {
			t.Fatalf("sites list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		after, err := s.LogSize(ctx)
		if err != nil || after != head {
			t.Errorf("log size after sites list = %d, %v; want %d still (sites list writes nothing)", after, err, head)
		}
	})
}
