package db_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestTransient checks which errors Store.Retry waits out: the server
// gone or restarting, a connection lost; not a refusal, a constraint, a
// full disk or a cancelled context.
func TestTransient(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown 57P01", &pgconn.PgError{Code: "57P01"}, true},
		{"crash shutdown 57P02", &pgconn.PgError{Code: "57P02"}, true},
		{"cannot connect now 57P03", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure 08006", fmt.Errorf("db: x: %w", &pgconn.PgError{Code: "08006"}), true},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"connection reset", syscall.ECONNRESET, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"conn closed", errors.New("conn closed"), true},
		{"unique violation 23505", &pgconn.PgError{Code: "23505"}, false},
		{"serialization 40001", &pgconn.PgError{Code: "40001"}, false},
		{"disk full 53100", &pgconn.PgError{Code: "53100"}, false},
		{"sqlite full", errors.New("database or disk is full (13)"), false},
		{"cancelled", context.Canceled, false},
		{"not found", db.ErrNotFound, false},
		{"nil", nil, false},
	} {
		if got := db.Transient(c.err); got != c.want {
			t.Errorf("Transient(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRetry checks Store.Retry: work that fails while the database is
// unreachable runs again once it answers; work that fails otherwise is
// not run again; and work that keeps failing gives up after the budget
// with an *UnavailableError, as does the next caller at its first
// failure, until the database answers again.
func TestRetry(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t, "sqlite")
	s.SetRetryBudget(500 * time.Millisecond)
	refused := fmt.Errorf("connect: %w", syscall.ECONNREFUSED)

	runs := 0
	err := s.Retry(ctx, func() error {
		if runs++; runs < 3 {
			return refused
		}
		return nil
	})
	if err != nil || runs != 3 {
		t.Errorf("Retry of work failing twice: %v after %d runs, want nil after 3", err, runs)
	}

	runs = 0
	constraint := &pgconn.PgError{Code: "23505"}
	if err := s.Retry(ctx, func() error { runs++; return constraint }); !errors.Is(err, constraint) || runs != 1 {
		t.Errorf("Retry of a constraint violation: %v after %d runs, want it after 1", err, runs)
	}

	began := time.Now()
	err = s.Retry(ctx, func() error { return refused })
	var ue *db.UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, db.ErrUnavailable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Retry of work that keeps failing: %v, want an *UnavailableError wrapping the last error", err)
	}
	if took := time.Since(began); took < 500*time.Millisecond || took > 5*time.Second {
		t.Errorf("Retry gave up after %s, want the budget (500ms)", took)
	}
	if s.GaveUp() == nil {
		t.Errorf("GaveUp() = nil after giving up")
	}
	if s.Retries() == 0 {
		t.Errorf("Retries() = 0 after retries")
	}
	if err := s.Retry(ctx, func() error { return nil }); err != nil || s.GaveUp() != nil {
		t.Errorf("Retry once the database answers: %v, GaveUp() = %v; want nil, nil", err, s.GaveUp())
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	runs = 0
	if err := s.Retry(cctx, func() error { runs++; return refused }); err == nil || runs != 1 {
		t.Errorf("Retry with its context ended: %v after %d runs, want the error after 1", err, runs)
	}
}
