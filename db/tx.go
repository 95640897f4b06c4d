package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// queries holds the handle the entity queries run on: the pool for a Store,
// the transaction for a Tx. Store and Tx embed it, so both have the same
// query methods (db/exclusions.go, db/events.go, db/sites.go, db/mail.go).
type queries struct {
	g       *gorm.DB
	dialect Dialect
}

// with returns the handle bound to ctx.
func (q queries) with(ctx context.Context) *gorm.DB { return q.g.WithContext(ctx) }

// queryRow runs query (with ? placeholders) on the handle through
// database/sql, without gorm: for the statements of hot paths.
func (q queries) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return q.g.Statement.ConnPool.QueryRowContext(ctx, q.rebind(query), args...)
}

// rebind turns the ? placeholders of query into PostgreSQL's $n on
// PostgreSQL. query must hold no ? inside a string literal.
func (q queries) rebind(query string) string { return rebind(q.dialect, query) }

// Tx is a database transaction, made by Store.InTx or Tx.InTx. Its methods
// are the same queries as the Store's, run inside the transaction; it holds
// no handle to the Store it came from, so nothing done through it escapes
// the transaction. A Tx is valid only during the function it is passed to
// and is not safe for concurrent use.
type Tx struct {
	queries
	depth int // savepoints open around it
}

// Dialect returns the engine the transaction runs on.
func (tx *Tx) Dialect() Dialect { return tx.dialect }

// InTx runs fn in a transaction: fn's error (or a panic) rolls back all it
// did, nil commits. On SQLite the transaction starts IMMEDIATE, taking the
// write lock at once. It does I/O and may block on another writer's lock.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	return s.gdb.WithContext(ctx).Transaction(func(g *gorm.DB) error {
		return fn(&Tx{queries: queries{g: g, dialect: s.Dialect}})
	})
}

// InTx runs fn in a nested transaction (a savepoint) of tx: fn's error
// (or a panic) rolls back what fn did and nothing else. The savepoint is
// released either way, so a transaction may run thousands of them (Import
// applies each message of a group in one) without their cost adding up.
func (tx *Tx) InTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	name := "lohibot_sp" + strconv.Itoa(tx.depth+1)
	g := tx.with(ctx)
	if err := g.Exec("SAVEPOINT " + name).Error; err != nil {
		return fmt.Errorf("db: savepoint: %w", err)
	}
	done := false
	defer func() {
		if done {
			return
		}
		// fn panicked or failed: undo what it did.
		if rerr := g.Exec("ROLLBACK TO SAVEPOINT " + name).Error; rerr != nil {
			if err != nil {
				err = errors.Join(err, fmt.Errorf("db: rollback to savepoint: %w", rerr))
			}
			return
		}
		g.Exec("RELEASE SAVEPOINT " + name)
	}()
	if err = fn(&Tx{queries: tx.queries, depth: tx.depth + 1}); err != nil {
		return err
	}
	if err = g.Exec("RELEASE SAVEPOINT " + name).Error; err != nil {
		return fmt.Errorf("db: release savepoint: %w", err)
	}
	done = true
	return nil
}

// notFound turns gorm's and database/sql's not-found errors into
// ErrNotFound, naming what was looked for, and wraps any other error as
// "db: what: err".
func notFound(err error, what string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, sqlErrNoRows) {
		return fmt.Errorf("%w: %s", ErrNotFound, what)
	}
	return fmt.Errorf("db: %s: %w", what, err)
}

// rebind turns the ? placeholders of q into PostgreSQL's $n for dialect
// Postgres. q must hold no ? inside a string literal.
func rebind(d Dialect, q string) string {
	if d != Postgres || strings.IndexByte(q, '?') < 0 {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + len(q)/8)
	n := 0
	for {
		i := strings.IndexByte(q, '?')
		if i < 0 {
			b.WriteString(q)
			return b.String()
		}
		n++
		b.WriteString(q[:i])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		q = q[i+1:]
	}
}
