package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestStoreAnchors checks the link texts' write of the crawler's sink:
// every row of a batch longer than one statement is stored, a second
// write of the same source, target and text replaces its time and
// request, and a link text to an excluded site is never stored.
func TestStoreAnchors(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		now := db.Now()
		if err := s.InTx(ctx, func(tx *db.Tx) error {
			return tx.CreateExclusion(ctx, &db.Exclusion{Site: "gone.example", ExcludedAt: now, Actor: "staff"})
		}); err != nil {
			t.Fatal(err)
		}
		req1, req2 := int64(1), int64(2)
		var batch []db.Anchor
		for i := range 250 { // two statements of 100 and 50 of one row on SQLite
			batch = append(batch, db.Anchor{FromURL: fmt.Sprintf("https://b.example/%d", i%25), ToURL: fmt.Sprintf("https://a.example/%d", i/25),
				ToSite: "a.example", AnchorText: "about a", SeenAt: now, RequestID: &req1})
		}
		batch = append(batch, db.Anchor{FromURL: "https://b.example/", ToURL: "https://www.gone.example/", ToSite: "gone.example",
			AnchorText: "gone", SeenAt: now, RequestID: &req1})
		if err := inWrite(t, s, func(tx db.WriteTx) error { return db.StoreAnchors(ctx, tx, batch) }); err != nil {
			t.Fatal(err)
		}
		later := now.Add(time.Hour)
		again := []db.Anchor{batch[0], batch[0]}
		again[1].SeenAt, again[1].RequestID = later, &req2
		if err := inWrite(t, s, func(tx db.WriteTx) error { return db.StoreAnchors(ctx, tx, again) }); err != nil {
			t.Fatal(err)
		}
		got, err := s.AnchorsTo(ctx, "a.example")
		if err != nil || len(got) != 250 {
			t.Fatalf("%d link texts to a.example, %v; want 250", len(got), err)
		}
		for _, a := range got {
			first := a.FromURL == batch[0].FromURL && a.ToURL == batch[0].ToURL
			if want := map[bool]int64{false: req1, true: req2}[first]; a.RequestID == nil || *a.RequestID != want {
				t.Errorf("%s -> %s: request %v, want %d", a.FromURL, a.ToURL, a.RequestID, want)
			}
			if first && !a.SeenAt.Equal(later) {
				t.Errorf("%s -> %s: seen %v, want the later write's %v", a.FromURL, a.ToURL, a.SeenAt, later)
			}
		}
		if gone, err := s.AnchorsTo(ctx, "gone.example"); err != nil || len(gone) != 0 {
			t.Errorf("%d link texts to the excluded gone.example, %v; want none", len(gone), err)
		}
	})
}
