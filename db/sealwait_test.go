package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/dbtest"
)

// TestSealWaitsForOpenWriters checks, on PostgreSQL, how a seal treats a
// writer still open with a smaller id than rows already committed: the
// seal waits for it, without making other writers wait (a row inserted
// meanwhile commits at once), gives up with ErrSealBusy when it stays
// open, and seals every row once it has committed, with a clean check.
func TestSealWaitsForOpenWriters(t *testing.T) {
	ctx := context.Background()
	s := dbtest.OpenDSN(t, dbtest.DSN(t, "postgres"))
	insert := `INSERT INTO robots_snapshots (origin, fetched_at, outcome) VALUES ($1, now(), 'parsed')`
	open, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback()
	if _, err := open.ExecContext(ctx, insert, "https://open.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SQL.ExecContext(ctx, insert, "https://later.example"); err != nil {
		t.Fatal(err)
	}
	sealed := make(chan error, 1)
	go func() {
		_, err := s.Seal(ctx)
		sealed <- err
	}()
	time.Sleep(100 * time.Millisecond) // the seal is waiting for the open writer
	start := time.Now()
	if _, err := s.SQL.ExecContext(ctx, insert, "https://meanwhile.example"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("a writer waited %v for the sealer", d)
	}
	if err := <-sealed; !errors.Is(err, db.ErrSealBusy) {
		t.Fatalf("Seal with a writer open past the wait = %v, want ErrSealBusy", err)
	}
	go func() {
		_, err := s.Seal(ctx)
		sealed <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := open.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-sealed; err != nil {
		t.Fatalf("Seal once the writer committed: %v", err)
	}
	var problems []db.SealProblem
	rep, err := s.VerifySeals(ctx, func(p db.SealProblem) error { problems = append(problems, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("integrity problems after sealing around an open writer: %+v", problems)
	}
	var n int
	if err := s.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM seal_rows WHERE tbl = 'robots_snapshots'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("%d snapshots sealed, want all 3 (report %+v)", n, rep)
	}
}
