package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/dbtest"
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
					if _, err := s.SQL.ExecContext(ctx, insert, fmt.Sprintf("https://s%d-%d.example", i, j), db.Now()); err != nil {
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
		if _, err := s.SQL.ExecContext(ctx, `INSERT INTO seal_rows (tbl, row_id, block_id, hash) VALUES ('robots_snapshots', 1000000, 999999, 'x')`); err != nil {
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
						if _, err := s.SQL.ExecContext(ctx, insert, fmt.Sprintf("https://r%d-%d-%d.example", sealer, i, j), db.Now()); err != nil {
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
		if err := s.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM robots_snapshots`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if err := s.SQL.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT row_id) FROM seal_rows WHERE tbl = 'robots_snapshots'`).Scan(&sealed, &distinct); err != nil {
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
