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
// meanwhile never waits for a lock on the table), gives up with
// ErrSealBusy when it stays open, and seals every row once it has
// committed, with a clean check.
func TestSealWaitsForOpenWriters(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.DSN(t, "postgres")
	s := dbtest.OpenDSN(t, dsn)
	// Reads pg_locks on connections of its own, not the pool's three.
	watch := dbtest.OpenDSN(t, dsn)
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
	// A writer that starts meanwhile must not queue behind the seal: a
	// lock it waited for would show in pg_locks as not granted, for as
	// long as the seal waits (a SHARE lock taken by the seal did that).
	// Its time is not what is checked: on a loaded machine an INSERT
	// can take as long as a wait.
	wrote := make(chan error, 1)
	go func() {
		_, err := s.SQL.ExecContext(ctx, insert, "https://meanwhile.example")
		wrote <- err
	}()
	giveUp := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case err := <-wrote:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		case <-giveUp:
			t.Fatal("the writer started while the seal waited had not finished after 30 s")
		case <-time.After(2 * time.Millisecond):
			var n int
			if err := watch.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks
				WHERE locktype = 'relation' AND relation = 'robots_snapshots'::regclass AND NOT granted`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				t.Fatalf("%d lock requests on robots_snapshots waiting while the seal waited for the open writer", n)
			}
		}
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
