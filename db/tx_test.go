package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/dbtest"
)

// TestInTx checks that a Tx's writes commit with nil, roll back with an
// error, that a nested InTx rolls back only its own part, and that
// single-row lookups say ErrNotFound.
func TestInTx(t *testing.T) {
	errBoom := errors.New("boom")
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s := dbtest.Open(t, engine)
			add := func(tx *db.Tx, name string) error {
				return tx.CreateSite(ctx, &db.Site{Name: name, StartURL: "https://" + name + "/", AddedAt: db.Now(), AddedBy: "test"})
			}
			if _, err := s.Site(ctx, "a.example"); !errors.Is(err, db.ErrNotFound) {
				t.Fatalf("Site(missing) error = %v, want db.ErrNotFound", err)
			}
			if _, err := s.Exclusion(ctx, "a.example"); !errors.Is(err, db.ErrNotFound) {
				t.Fatalf("Exclusion(missing) error = %v, want db.ErrNotFound", err)
			}
			err := s.InTx(ctx, func(tx *db.Tx) error {
				if err := add(tx, "a.example"); err != nil {
					return err
				}
				return errBoom
			})
			if !errors.Is(err, errBoom) {
				t.Fatalf("InTx error = %v, want %v", err, errBoom)
			}
			if _, err := s.Site(ctx, "a.example"); !errors.Is(err, db.ErrNotFound) {
				t.Fatalf("after rollback, Site error = %v, want db.ErrNotFound", err)
			}
			err = s.InTx(ctx, func(tx *db.Tx) error {
				if err := add(tx, "b.example"); err != nil {
					return err
				}
				if err := tx.InTx(ctx, func(tx *db.Tx) error {
					if err := add(tx, "c.example"); err != nil {
						return err
					}
					return errBoom
				}); !errors.Is(err, errBoom) {
					t.Errorf("nested InTx error = %v, want %v", err, errBoom)
				}
				if _, err := tx.Site(ctx, "b.example"); err != nil {
					t.Errorf("inside the transaction, Site(b) error = %v", err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("InTx error = %v", err)
			}
			if _, err := s.Site(ctx, "b.example"); err != nil {
				t.Errorf("after commit, Site(b) error = %v, want nil", err)
			}
			if _, err := s.Site(ctx, "c.example"); !errors.Is(err, db.ErrNotFound) {
				t.Errorf("after the savepoint's rollback, Site(c) error = %v, want db.ErrNotFound", err)
			}
		})
	}
}
