// Package lite is lohibot's SQLite fast path, contained behind the storage
// layer (package db): a connection of one goroutine's own to an SQLite
// database file, on the database/sql/driver interfaces of the storage
// layer's own driver (modernc.org/sqlite) without database/sql above them.
// Each statement is prepared once and kept; nothing takes a lock, converts
// through reflection or starts a goroutine per statement. Being the same
// driver and SQLite library as the storage layer's pool, it shares the
// pool's file locks, WAL and busy waits, in this process and in others.
//
// Besides the crawler's writers, the audit reads through it: OpenReader
// opens a read-only connection, and Conn.Query returns Rows whose values
// are read as the driver reads them, with no scan step (rows.go).
//
// Only db uses it.
package lite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"net/url"
	"time"

	"modernc.org/sqlite"

	"github.com/lohisoft/lohibot/internal/sqlitetime"
)

// Conn is a connection to an SQLite database file, for use by one
// goroutine at a time. Its statements are prepared on first use and kept
// until Close.
type Conn struct {
	c     driver.Conn
	stmts map[string]driver.Stmt
	args  []driver.NamedValue // the arguments of the statement running, reused
	vals  []driver.Value      // QueryRow's row, reused between rows of its statement
}

// Pragmas are the settings of every Conn, applied by Open before its own.
// Each is a per-connection setting (the database file is already in WAL
// mode).
var pragmas = []string{
	"PRAGMA synchronous = FULL",
	"PRAGMA foreign_keys = ON",
	// Statement journals and temporary b-trees in memory, not in files.
	"PRAGMA temp_store = MEMORY",
	// 8 MiB of page cache (the default is 2): the parts of the indexes a
	// crawl writes stay in memory. Not much more: at the end of every
	// transaction that split a b-tree page, SQLite scans the whole cache's
	// hash table.
	"PRAGMA cache_size = -8192",
}

// Open opens the SQLite file at path (which must exist) for reading and
// writing, with the same busy timeout as the driver's connections, the
// package's settings (synchronous=FULL, foreign keys, temp_store=MEMORY,
// an 8 MiB page cache) and then extra, each a PRAGMA statement. It does
// I/O.
func Open(path string, extra ...string) (*Conn, error) {
	return open(path, append(pragmas[:len(pragmas):len(pragmas)], extra...))
}

// readerPragmas are the settings of a connection opened by OpenReader.
var readerPragmas = []string{
	"PRAGMA query_only = 1",
	"PRAGMA temp_store = MEMORY",
}

// OpenReader opens the SQLite file at path (which must exist) for reading
// only (query_only), with the driver's busy timeout, temporary b-trees in
// memory and then extra, each a PRAGMA statement (a page cache size, an
// mmap_size). It is for long reads through Query; it does I/O.
func OpenReader(path string, extra ...string) (*Conn, error) {
	return open(path, append(readerPragmas[:len(readerPragmas):len(readerPragmas)], extra...))
}

// DSN is the driver's name for the SQLite file at path, opened for reading
// and writing but never created (mode=rw), with Settings.
func DSN(path string) string {
	q := url.Values{}
	q.Set("mode", "rw")
	Settings(q)
	return "file:" + path + "?" + q.Encode()
}

// Settings adds to q, the query of a driver's name for an SQLite file, the
// settings every connection to a lohibot database has: the busy timeout
// and the time layout (sqlitetime.Format): times as text, and text read as
// a time only in a column declared DATE, DATETIME or TIMESTAMP. The
// storage layer's pool (db) adds its own to them.
func Settings(q url.Values) {
	q.Add("_pragma", "busy_timeout(30000)")
	q.Set("_time_format", "sqlite")
	q.Set("_texttotime", "0")
	q.Set("_inttotime", "0")
}

func open(path string, pragmas []string) (*Conn, error) {
	connector, err := sqlite.NewConnector(DSN(path))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	dc, err := connector.Connect(context.Background())
	if err != nil {
		return nil, err
	}
	c := &Conn{c: dc, stmts: map[string]driver.Stmt{}}
	for _, p := range pragmas {
		if _, err := c.Exec(p); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return c, nil
}

// Close closes the statements and the connection (rolling back a
// transaction in progress).
func (c *Conn) Close() {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// Rollback ends the transaction in progress, if there is one.
func (c *Conn) Rollback() {
	// Outside a transaction SQLite refuses it: nothing to undo.
	_, _ = c.Exec("ROLLBACK")
}

// prepare returns q's statement, compiling it on first use.
func (c *Conn) prepare(q string) (driver.Stmt, error) {
	if st, ok := c.stmts[q]; ok {
		return st, nil
	}
	st, err := c.c.(driver.ConnPrepareContext).PrepareContext(context.Background(), q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = st
	return st, nil
}

// bind converts args to the driver's values in c.args: nil, int64,
// float64, bool, string or []byte, a time as text in sqlitetime.Format.
func (c *Conn) bind(args []any) ([]driver.NamedValue, error) {
	return bindTo(c.args[:0], args)
}

func bindTo(out []driver.NamedValue, args []any) ([]driver.NamedValue, error) {
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("sqlite: argument %d: %w", i+1, err)
		}
		if t, ok := v.(time.Time); ok {
			v = t.Format(sqlitetime.Format)
		}
		out = append(out, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return out, nil
}

// done forgets the arguments bound, so that the buffer holds no caller's
// value.
func (c *Conn) done(nv []driver.NamedValue) {
	clear(nv)
	c.args = nv[:0]
}

// Exec runs q (with ? placeholders) with args to its end and returns the
// number of rows changed. Arguments may be nil, integers, floats, bool,
// string, []byte, time.Time (stored as the driver stores it) or a
// driver.Valuer of those; each placeholder needs one. It does I/O.
func (c *Conn) Exec(q string, args ...any) (int64, error) {
	st, err := c.prepare(q)
	if err != nil {
		return 0, err
	}
	nv, err := c.bind(args)
	if err != nil {
		return 0, err
	}
	defer c.done(nv)
	res, err := st.(driver.StmtExecContext).ExecContext(context.Background(), nv)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// TotalChanges returns how many rows the connection's INSERT, UPDATE and
// DELETE statements have changed since it was opened (rolled back ones
// included): a caller compares two readings to learn whether what ran in
// between wrote anything.
func (c *Conn) TotalChanges() int64 {
	var n int64
	if err := c.QueryRow("SELECT total_changes()").Scan(&n); err != nil {
		return -1 // never equal to a reading: assume a change
	}
	return n
}

// Row is the first row of a query, read in full.
type Row struct {
	vals []any
	err  error
}

// QueryRow runs q with args (as Exec takes them) and keeps its first row;
// the statement is run to its end (a RETURNING statement has made all its
// changes then). With no row, Scan returns sql.ErrNoRows. It does I/O.
func (c *Conn) QueryRow(q string, args ...any) *Row {
	st, err := c.prepare(q)
	if err != nil {
		return &Row{err: err}
	}
	nv, err := c.bind(args)
	if err != nil {
		return &Row{err: err}
	}
	defer c.done(nv)
	rows, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), nv)
	if err != nil {
		return &Row{err: err}
	}
	n := len(rows.Columns())
	if cap(c.vals) < n {
		c.vals = make([]driver.Value, n)
	}
	vals := c.vals[:n]
	r := &Row{err: sql.ErrNoRows}
	for {
		err := rows.Next(vals)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			return &Row{err: err}
		}
		if r.vals == nil {
			r.vals, r.err = make([]any, n), nil
			for i, v := range vals {
				r.vals[i] = v
			}
		}
	}
	clear(vals)
	if err := rows.Close(); err != nil {
		return &Row{err: err}
	}
	return r
}

// Scan copies the row's columns into dest: *int64, *int, *string,
// *[]byte, *time.Time or *bool.
func (r *Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if len(dest) != len(r.vals) {
		return fmt.Errorf("sqlite: %d columns scanned into %d values", len(r.vals), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[i]); err != nil {
			return fmt.Errorf("sqlite: column %d: %w", i, err)
		}
	}
	return nil
}

func assign(dest, v any) error {
	switch d := dest.(type) {
	case *int64:
		if x, ok := v.(int64); ok {
			*d = x
			return nil
		}
	case *int:
		if x, ok := v.(int64); ok {
			*d = int(x)
			return nil
		}
	case *bool:
		if x, ok := v.(int64); ok {
			*d = x != 0
			return nil
		}
	case *string:
		switch x := v.(type) {
		case string:
			*d = x
			return nil
		case []byte:
			*d = string(x)
			return nil
		case time.Time:
			*d = x.Format(sqlitetime.Format)
			return nil
		}
	case *[]byte:
		switch x := v.(type) {
		case []byte:
			*d = x
			return nil
		case string:
			*d = []byte(x)
			return nil
		case nil:
			*d = nil
			return nil
		}
	case *time.Time:
		switch x := v.(type) {
		case time.Time:
			*d = x
			return nil
		case string:
			t, err := parseTime(x)
			if err != nil {
				return err
			}
			*d = t
			return nil
		}
	}
	return fmt.Errorf("cannot scan %T into %T", v, dest)
}

// parseTime reads a time as the driver writes it.
func parseTime(s string) (time.Time, error) {
	if t, ok := sqlitetime.Parse(s); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("unreadable time %q", s)
}
