package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestVerifySealsBesideSealer checks the integrity check while a sealer
// appends blocks beside it (serve's sealer during an audit): seal rows of a
// block added after the check read the chain are not a problem, while seal
// rows naming a block that never existed still are.
func TestVerifySealsBesideSealer(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		insert := insertSnapshotSQL(s)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				for j := range 20 {
					if _, err := dbtest.SQL(s).ExecContext(ctx, insert, fmt.Sprintf("https://s%d-%d.example", i, j), db.Now()); err != nil {
						t.Error(err)
						return
					}
				}
				if _, err := s.Seal(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
		for range 40 {
			_, err := s.VerifySeals(ctx, func(p db.SealProblem) error {
				t.Errorf("problem with a sealer beside the check: %s", p.Evidence)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		// A seal row naming a block that never existed is still found.
		if _, err := dbtest.SQL(s).ExecContext(ctx, `INSERT INTO seal_rows (tbl, row_id, block_id, hash) VALUES ('robots_snapshots', 1000000, 999999, 'x')`); err != nil {
			t.Fatal(err)
		}
		var found bool
		if _, err := s.VerifySeals(ctx, func(p db.SealProblem) error {
			found = found || strings.Contains(p.Evidence, "block 999999, which is not in the chain")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !found {
			t.Error("a seal row naming block 999999, which never existed, went unreported")
		}
	})
}

// TestSealersRace checks two sealers sealing at once while rows are
// written (two processes of a fleet, or serve beside a crawl): Seal reads
// the rows before its write transaction, so one of two plans made at once
// finds the chain moved and plans again. Every row ends sealed once and
// the chain verifies clean.
func TestSealersRace(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		insert := insertSnapshotSQL(s)
		const rounds, perRound = 30, 10
		var wg sync.WaitGroup
		for sealer := range 2 {
			wg.Go(func() {
				for i := range rounds {
					for j := range perRound {
						if _, err := dbtest.SQL(s).ExecContext(ctx, insert, fmt.Sprintf("https://r%d-%d-%d.example", sealer, i, j), db.Now()); err != nil {
							t.Error(err)
							return
						}
					}
					if _, err := s.Seal(ctx); err != nil && !errors.Is(err, db.ErrSealBusy) {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if _, err := s.Seal(ctx); err != nil {
			t.Fatal(err)
		}
		var rows, sealed, distinct int64
		if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM robots_snapshots`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT row_id) FROM seal_rows WHERE tbl = 'robots_snapshots'`).Scan(&sealed, &distinct); err != nil {
			t.Fatal(err)
		}
		if rows != 2*rounds*perRound || sealed != rows || distinct != rows {
			t.Errorf("%d rows, %d seal rows for %d distinct rows; want %d of each", rows, sealed, distinct, 2*rounds*perRound)
		}
		if _, err := s.VerifySeals(ctx, func(p db.SealProblem) error {
			t.Errorf("problem after two sealers: %s", p.Evidence)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// insertSnapshotSQL is an INSERT of a robots.txt snapshot (origin,
// fetched_at) in s's placeholders, for the tests that write rows beside a
// sealer.
func insertSnapshotSQL(s *db.Store) string {
	if s.Dialect == db.Postgres {
		return `INSERT INTO robots_snapshots (origin, fetched_at, outcome) VALUES ($1, $2, 'parsed')`
	}
	return `INSERT INTO robots_snapshots (origin, fetched_at, outcome) VALUES (?, ?, 'parsed')`
}

// TestSealWaitsForOtherSealer checks that on PostgreSQL a Seal waits while
// another holds the sealers' lock (a fleet's other crawler sealing), so
// that it does not read and hash rows the other is sealing, and seals what
// is left once the other is done.
func TestSealWaitsForOtherSealer(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t, "postgres")
	insert := insertSnapshotSQL(s)
	for i := range 5 {
		if _, err := dbtest.SQL(s).ExecContext(ctx, insert, fmt.Sprintf("https://w%d.example", i), db.Now()); err != nil {
			t.Fatal(err)
		}
	}
	other, err := dbtest.SQL(s).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "SELECT pg_advisory_lock(7726314)"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Seal(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Seal returned (%v) while another sealer held the lock", err)
	case <-time.After(300 * time.Millisecond):
	}
	var blocks int
	if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM seal_blocks`).Scan(&blocks); err != nil {
		t.Fatal(err)
	}
	if blocks != 0 {
		t.Errorf("%d blocks written while another sealer held the lock", blocks)
	}
	if _, err := other.ExecContext(ctx, "SELECT pg_advisory_unlock(7726314)"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var sealed int
	if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM seal_rows WHERE tbl = 'robots_snapshots'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if sealed != 5 {
		t.Errorf("%d rows sealed once the other sealer was done, want 5", sealed)
	}
}
