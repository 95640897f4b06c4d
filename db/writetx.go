package db

import (
	"context"
	"database/sql"
	"errors"

	"github.com/lohisoft/lohibot/db/lite"
)

// WriteTx is a write transaction of the crawler's write path, which the
// write-path queries (leases.go, and the write functions of requests.go,
// cycles.go, robots.go and index.go) take as their first argument after
// ctx: on SQLite the writer's own FastConn inside its group transaction
// (statements prepared once), on PostgreSQL a PoolTx. Queries are written
// with ? placeholders; a PoolTx rebinds them for PostgreSQL. The
// write-path queries return the engine's errors unwrapped: the crawler
// says what failed.
type WriteTx interface {
	// Exec runs q with args and returns the number of rows changed.
	Exec(ctx context.Context, q string, args ...any) (int64, error)
	// QueryRow runs q with args and returns its first row (Scan returns
	// an error wrapping sql.ErrNoRows when there is none).
	QueryRow(ctx context.Context, q string, args ...any) Row
	// Dialect is the engine the transaction runs on.
	Dialect() Dialect
}

// Row is the one row of WriteTx.QueryRow.
type Row interface{ Scan(dest ...any) error }

// noRows reports whether err says a query returned no row.
func noRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// FastOptions are the settings of a FastConn beyond the fast path's own
// (synchronous=FULL, foreign keys, temp_store=MEMORY, an 8 MiB page cache).
type FastOptions struct {
	// SyncLater commits with synchronous=NORMAL: a commit writes the WAL
	// without waiting for the disk, and the caller makes it durable
	// itself (the crawler's syncer fsyncs the WAL file).
	SyncLater bool
	// ManualCheckpoints turns automatic checkpoints off
	// (wal_autocheckpoint = 0): the caller runs Checkpoint.
	ManualCheckpoints bool
}

// FastConn is a connection of one goroutine's own to an SQLite database
// file, through the fast path (package lite): statements are prepared once
// and kept. It is a WriteTx (inside the transaction Begin starts) and is
// not safe for concurrent use. The crawler's SQLite writer and its
// checkpointer each have one.
type FastConn struct{ c *lite.Conn }

// SQLiteFile returns the path of the store's SQLite database file, or an
// error when the store is not an SQLite file. It does I/O.
func (s *Store) SQLiteFile(ctx context.Context) (string, error) {
	rows, err := s.pool.QueryContext(ctx, `PRAGMA database_list`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	path := ""
	for rows.Next() {
		var (
			seq        int64
			name, file string
		)
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", err
		}
		if name == "main" {
			path = file
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if path == "" {
		return "", errors.New("the SQLite database is not a file")
	}
	return path, nil
}

// OpenFastConn opens a FastConn to the SQLite database file at path (see
// Store.SQLiteFile) with the settings o. It does I/O.
func OpenFastConn(path string, o FastOptions) (*FastConn, error) {
	var extra []string
	if o.SyncLater {
		extra = append(extra, "PRAGMA synchronous = NORMAL")
	}
	c, err := lite.Open(path, extra...)
	if err != nil {
		return nil, err
	}
	if o.ManualCheckpoints {
		if _, err := c.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
			c.Close()
			return nil, err
		}
	}
	return &FastConn{c: c}, nil
}

// Exec runs q with args (ctx is not consulted: a statement of the fast
// path runs to its end) and returns the number of rows changed.
func (f *FastConn) Exec(_ context.Context, q string, args ...any) (int64, error) {
	return f.c.Exec(q, args...)
}

// QueryRow runs q with args and returns its first row.
func (f *FastConn) QueryRow(_ context.Context, q string, args ...any) Row {
	return f.c.QueryRow(q, args...)
}

// Dialect returns SQLite.
func (f *FastConn) Dialect() Dialect { return SQLite }

// Close closes the connection, rolling back any transaction in progress.
func (f *FastConn) Close() { f.c.Close() }

// Begin starts a transaction holding the write lock (BEGIN IMMEDIATE).
func (f *FastConn) Begin() error {
	_, err := f.c.Exec("BEGIN IMMEDIATE")
	return err
}

// Commit commits the transaction.
func (f *FastConn) Commit() error {
	_, err := f.c.Exec("COMMIT")
	return err
}

// Rollback ends the transaction in progress, if SQLite has not already.
func (f *FastConn) Rollback() { f.c.Rollback() }

// TotalChanges returns how many rows the connection has changed since it
// was opened (see lite.Conn.TotalChanges).
func (f *FastConn) TotalChanges() int64 { return f.c.TotalChanges() }

// Savepoint opens the savepoint one caller's work runs in.
func (f *FastConn) Savepoint() error {
	_, err := f.c.Exec("SAVEPOINT op")
	return err
}

// RollbackToSavepoint undoes what was done since Savepoint; the savepoint
// stays open.
func (f *FastConn) RollbackToSavepoint() error {
	_, err := f.c.Exec("ROLLBACK TO op")
	return err
}

// ReleaseSavepoint closes the savepoint, keeping what was done in it.
func (f *FastConn) ReleaseSavepoint() error {
	_, err := f.c.Exec("RELEASE op")
	return err
}

// Checkpoint runs a passive checkpoint of the WAL (it never waits for a
// writer or reader) and returns how many frames the WAL holds. It does
// I/O.
func (f *FastConn) Checkpoint() (frames int64, err error) {
	var busy, copied int64
	err = f.c.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
	return frames, err
}

// PoolTx is a write transaction on the store's connection pool: the
// crawler's PostgreSQL writers' (and lease transactions'). It is a WriteTx.
type PoolTx struct {
	tx      *sql.Tx
	dialect Dialect
}

// BeginWrite starts a PoolTx. It does I/O.
func (s *Store) BeginWrite(ctx context.Context) (*PoolTx, error) {
	tx, err := s.pool.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &PoolTx{tx: tx, dialect: s.Dialect}, nil
}

// Exec runs q with args and returns the number of rows changed.
func (t *PoolTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, rebind(t.dialect, q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryRow runs q with args and returns its first row.
func (t *PoolTx) QueryRow(ctx context.Context, q string, args ...any) Row {
	return t.tx.QueryRowContext(ctx, rebind(t.dialect, q), args...)
}

// Dialect returns the store's engine.
func (t *PoolTx) Dialect() Dialect { return t.dialect }

// Commit commits the transaction.
func (t *PoolTx) Commit() error { return t.tx.Commit() }

// Rollback rolls the transaction back.
func (t *PoolTx) Rollback() error { return t.tx.Rollback() }

// Savepoint opens the savepoint one caller's work runs in.
func (t *PoolTx) Savepoint(ctx context.Context) error {
	_, err := t.tx.ExecContext(ctx, `SAVEPOINT op`)
	return err
}

// RollbackToSavepoint undoes what was done since Savepoint.
func (t *PoolTx) RollbackToSavepoint(ctx context.Context) error {
	_, err := t.tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT op`)
	return err
}

// AutoTx is a WriteTx without a transaction: each statement runs on the
// store's connection pool in a transaction of its own, committed when it
// returns (one round trip on PostgreSQL, instead of three with BEGIN and
// COMMIT). For work that is one statement, such as giving a lease back.
type AutoTx struct {
	db      *sql.DB
	dialect Dialect
}

// AutoCommit returns the store's AutoTx.
func (s *Store) AutoCommit() *AutoTx { return &AutoTx{db: s.pool, dialect: s.Dialect} }

// Exec runs q with args, committed, and returns the number of rows changed.
func (t *AutoTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.db.ExecContext(ctx, rebind(t.dialect, q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryRow runs q with args, committed, and returns its first row.
func (t *AutoTx) QueryRow(ctx context.Context, q string, args ...any) Row {
	return t.db.QueryRowContext(ctx, rebind(t.dialect, q), args...)
}

// Dialect returns the store's engine.
func (t *AutoTx) Dialect() Dialect { return t.dialect }
