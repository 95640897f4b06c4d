package db

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrDiskFull is wrapped by the errors of writes refused because the disk
// holding the database is full (SQLite's SQLITE_FULL, PostgreSQL's
// disk_full, SQLSTATE 53100, or ENOSPC from the file system). Nothing of a
// refused write was recorded; what was recorded before stays, and the
// writes succeed again once space is freed.
var ErrDiskFull = errors.New("db: the disk holding the database is full; nothing more is recorded until space is freed")

// sqliteFull is SQLite's message for SQLITE_FULL, the same through every
// driver.
const sqliteFull = "database or disk is full"

// pgDiskFull is PostgreSQL's SQLSTATE for disk_full.
const pgDiskFull = "53100"

// MarkDiskFull returns err wrapped with ErrDiskFull when it says the disk
// is full, and err unchanged otherwise (nil included).
func MarkDiskFull(err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) {
		return err
	}
	var pe *pgconn.PgError
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), sqliteFull) || errors.As(err, &pe) && pe.Code == pgDiskFull {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}
