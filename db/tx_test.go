package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
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
			if _, err := s.Site(ctx, "a.example"); !errors.Is(err, db.ErrNotFound) {
				t.Fatalf("Site(missing) error = %v, want db.ErrNotFound", err)
			}
			if _, err := s.Exclusion(ctx, "a.example"); !errors.Is(err, db.ErrNotFound) {
				t.Fatalf("Exclusion(missing) error = %v, want db.ErrNotFound", err)
			}
			err := s.InTx(ctx, func(tx *db.Tx) error {
				if err := addSite(ctx, tx, "a.example"); err != nil {
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
				if err := addSite(ctx, tx, "b.example"); err != nil {
					return err
				}
				if err := tx.InTx(ctx, func(tx *db.Tx) error {
					if err := addSite(ctx, tx, "c.example"); err != nil {
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

// TestInTxManySavepoints checks what mail import relies on: one
// transaction running a savepoint per message, where a failed savepoint
// (an error, a constraint violation or a panic) undoes only its own part,
// a savepoint inside a savepoint rolls back alone, and the others commit.
func TestInTxManySavepoints(t *testing.T) {
	errBoom := errors.New("boom")
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s := dbtest.Open(t, engine)
			const n = 300
			var failed int
			err := s.InTx(ctx, func(tx *db.Tx) error {
				for i := range n {
					name := fmt.Sprintf("s%d.example", i)
					err := tx.InTx(ctx, func(tx *db.Tx) error {
						if err := addSite(ctx, tx, name); err != nil {
							return err
						}
						switch i % 4 {
						case 1:
							return errBoom
						case 2:
							return addSite(ctx, tx, name) // duplicate key: the database refuses
						case 3:
							// A nested failure rolls back alone.
							if err := tx.InTx(ctx, func(tx *db.Tx) error {
								if err := addSite(ctx, tx, "nested-"+name); err != nil {
									return err
								}
								return errBoom
							}); !errors.Is(err, errBoom) {
								return fmt.Errorf("nested: %v", err)
							}
						}
						return nil
					})
					if err != nil {
						failed++
					}
				}
				func() {
					defer func() { recover() }()
					_ = tx.InTx(ctx, func(tx *db.Tx) error {
						_ = addSite(ctx, tx, "panic.example")
						panic("boom")
					})
				}()
				return nil
			})
			if err != nil {
				t.Fatalf("InTx: %v", err)
			}
			if failed != n/2 {
				t.Errorf("%d savepoints failed, want %d", failed, n/2)
			}
			sites, err := s.Sites(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range sites {
				got = append(got, x.Name)
			}
			want := 0
			for i := range n {
				if i%4 == 0 || i%4 == 3 {
					want++
				}
			}
			if len(got) != want {
				t.Fatalf("%d sites stored, want %d: %v", len(got), want, got)
			}
			for _, name := range got {
				var i int
				if _, err := fmt.Sscanf(name, "s%d.example", &i); err != nil || i%4 == 1 || i%4 == 2 {
					t.Errorf("site %s stored, want only s(4k) and s(4k+3)", name)
				}
			}
		})
	}
}

// addSite adds name to the crawl list in tx.
func addSite(ctx context.Context, tx *db.Tx, name string) error {
	return tx.CreateSite(ctx, &db.Site{Name: name, StartURL: "https://" + name + "/", AddedAt: db.Now(), AddedBy: "test"})
}
