package db_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lohisoft/lohibot/db"
)

func TestMarkDiskFull(t *testing.T) {
	cases := []struct {
		name string
		err  error
		full bool
	}{
		{"nil", nil, false},
		{"sqlite full", errors.New("sqlite: database or disk is full (13)"), true},
		{"wal sync", fmt.Errorf("sqlite: request log not written to disk: %w", &fs.PathError{Op: "sync", Path: "x-wal", Err: syscall.ENOSPC}), true},
		{"busy", errors.New("sqlite: database is locked (5)"), false},
		{"postgres disk_full", fmt.Errorf("db: reserve: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"}), true},
		{"postgres out of memory", &pgconn.PgError{Code: "53200", Message: "out of memory"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := db.MarkDiskFull(c.err)
			if full := errors.Is(got, db.ErrDiskFull); full != c.full {
				t.Errorf("MarkDiskFull(%v) is ErrDiskFull = %v, want %v", c.err, full, c.full)
			}
			if c.err != nil && !errors.Is(got, c.err) {
				t.Errorf("MarkDiskFull(%v) = %v: the cause is lost", c.err, got)
			}
			if again := db.MarkDiskFull(got); again != got {
				t.Errorf("MarkDiskFull twice = %v, want %v", again, got)
			}
		})
	}
}
