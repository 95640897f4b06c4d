package db_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
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
	open, err := dbtest.SQL(s).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback()
	if _, err := open.ExecContext(ctx, insert, "https://open.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.SQL(s).ExecContext(ctx, insert, "https://later.example"); err != nil {
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
		_, err := dbtest.SQL(s).ExecContext(ctx, insert, "https://meanwhile.example")
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
			if err := dbtest.SQL(watch).QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks
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
	if err := dbtest.SQL(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM seal_rows WHERE tbl = 'robots_snapshots'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("%d snapshots sealed, want all 3 (report %+v)", n, rep)
	}
}

// TestSealerLeavesBusyChainToOther checks, on PostgreSQL, the background
// sealer of a process whose turn finds another process's Seal at work (a
// fleet's crawlers each run one): it neither waits for the sealers' lock
// nor takes a connection to wait on it, and once the lock is free it seals
// on its own, without another kick; the last seal (StopSealer) does wait,
// so that a crawler's rows are sealed when it ends.
func TestSealerLeavesBusyChainToOther(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.DSN(t, "postgres")
	s := dbtest.OpenDSN(t, dsn)
	other := dbtest.OpenDSN(t, dsn) // the other process
	insertFinalRequests(t, s, 5)
	hold := func() *sql.Conn {
		t.Helper()
		c, err := dbtest.SQL(other).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "SELECT pg_advisory_lock($1)", db.SealersLock); err != nil {
			t.Fatal(err)
		}
		return c
	}
	release := func(c *sql.Conn) {
		t.Helper()
		if _, err := c.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", db.SealersLock); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	waiting := func() int {
		t.Helper()
		var n int
		if err := dbtest.SQL(other).QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks
			WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, db.SealersLock).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	c := hold()
	s.StartSealer(time.Hour, nil) // no tick during the test: kicks only
	s.SealSoon()
	// The turn and a retry or two (every 250 ms) find the lock taken.
	for end := time.Now().Add(700 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if n := waiting(); n > 0 {
			t.Fatalf("%d sealers waiting for the sealers' lock another process holds, want none (the turn leaves the rows to it)", n)
		}
	}
	if got := blockRows(t, s); len(got) != 0 {
		t.Fatalf("blocks %v sealed while another process held the sealers' lock", got)
	}
	release(c)
	testutil.Eventually(t, 5*time.Second, "the five rows sealed by the retry, without a new kick", func() bool { return sealedRows(t, s) == 5 })

	// The last seal waits for the lock, then seals what is left.
	insertFinalRequests(t, s, 3)
	c = hold()
	stopped := make(chan struct{})
	go func() {
		s.StopSealer()
		close(stopped)
	}()
	testutil.Eventually(t, 5*time.Second, "the last seal waiting for the sealers' lock", func() bool { return waiting() == 1 })
	select {
	case <-stopped:
		t.Fatal("StopSealer returned while another process held the sealers' lock")
	default:
	}
	release(c)
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("StopSealer had not returned 10 s after the lock was released")
	}
	if got := blockRows(t, s); len(got) != 2 || got[1] != 3 {
		t.Fatalf("blocks %v after the last seal, want two, the second over the 3 rows written last", got)
	}
}
