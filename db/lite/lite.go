// Package lite is lohibot's SQLite fast path, contained behind the storage
// layer (package db): a connection of one goroutine's own to an SQLite
// database file that drives modernc.org/sqlite/lib through modernc.org/libc
// directly. The database/sql driver compiles every statement again on
// every use; here each statement is prepared once and kept, arguments are
// bound from one reusable buffer, and nothing starts a goroutine per
// statement. It talks to the same SQLite library as the driver
// (github.com/glebarez/go-sqlite, which wraps modernc.org/sqlite), so file
// locks, WAL and busy waits are shared with every other connection, in
// this process and in others.
//
// Besides the crawler's writers, the audit reads through it: OpenReader
// opens a read-only connection, and Conn.Query returns Rows whose values
// are read in place (rows.go).
//
// It only works while our go.mod pins the modernc.org/sqlite and
// modernc.org/libc versions the driver requires (TestPinnedVersions checks
// that). Only db uses it.
package lite

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/lohisoft/lohibot/internal/sqlitetime"
)

// Conn is a connection to an SQLite database file, for use by one
// goroutine at a time. Its statements are prepared on first use and kept
// until Close.
type Conn struct {
	tls   *libc.TLS
	db    uintptr
	stmts map[string]uintptr
	buf   uintptr // C memory for the text and blob arguments of one statement
	bufN  int
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

func open(path string, pragmas []string) (*Conn, error) {
	c := &Conn{tls: libc.NewTLS(), stmts: map[string]uintptr{}}
	cpath, err := libc.CString(path)
	if err != nil {
		c.tls.Close()
		return nil, err
	}
	defer libc.Xfree(c.tls, cpath)
	pdb := c.tls.Alloc(ptrSize)
	defer c.tls.Free(ptrSize)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, cpath, pdb, sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	c.db = loadPtr(pdb)
	if rc != sqlite3.SQLITE_OK {
		err := c.errorf(rc)
		c.Close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, 30000)
	for _, p := range pragmas {
		if _, err := c.Exec(p); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return c, nil
}

// Close finalizes the statements and closes the connection.
func (c *Conn) Close() {
	for _, st := range c.stmts {
		sqlite3.Xsqlite3_finalize(c.tls, st)
	}
	c.stmts = nil
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	if c.buf != 0 {
		libc.Xfree(c.tls, c.buf)
		c.buf = 0
	}
	c.tls.Close()
}

// Rollback ends the transaction in progress, if SQLite has not already.
func (c *Conn) Rollback() {
	if sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) == 0 {
		c.Exec("ROLLBACK")
	}
}

// errorf turns a result code into an error with SQLite's message.
func (c *Conn) errorf(rc int32) error {
	msg := ""
	if c.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
	}
	if msg == "" {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	}
	return fmt.Errorf("sqlite: %s (%d)", msg, rc)
}

// prepare returns q's statement, compiling it on first use.
func (c *Conn) prepare(q string) (uintptr, error) {
	if st, ok := c.stmts[q]; ok {
		return st, nil
	}
	cq, err := libc.CString(q)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, cq)
	pst := c.tls.Alloc(ptrSize)
	defer c.tls.Free(ptrSize)
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, cq, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, pst, 0)
	if rc != sqlite3.SQLITE_OK {
		return 0, c.errorf(rc)
	}
	st := loadPtr(pst)
	if st == 0 {
		return 0, fmt.Errorf("sqlite: empty statement %q", q)
	}
	c.stmts[q] = st
	return st, nil
}

// bind binds args to st's parameters 1..n. Text and blobs are copied into
// the connection's buffer, which stays untouched until the statement is
// reset and its bindings cleared.
func (c *Conn) bind(st uintptr, args []any) error {
	return c.bindIn(st, args, &c.buf, &c.bufN)
}

// bindIn is bind with the text and blobs copied into the C buffer *buf of
// *bufN bytes, which it grows as needed.
func (c *Conn) bindIn(st uintptr, args []any, buf *uintptr, bufN *int) error {
	if n := int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, st)); n != len(args) {
		return fmt.Errorf("sqlite: %d arguments for %d parameters", len(args), n)
	}
	vals := make([]driver.Value, len(args))
	size := 0
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return fmt.Errorf("sqlite: argument %d: %w", i+1, err)
		}
		if t, ok := v.(time.Time); ok {
			v = t.Format(sqlitetime.Format)
		}
		switch x := v.(type) {
		case string:
			size += len(x) + 1
		case []byte:
			size += len(x) + 1
		}
		vals[i] = v
	}
	if size > *bufN {
		if *buf != 0 {
			libc.Xfree(c.tls, *buf)
		}
		n := max(size, 64<<10)
		if *buf = libc.Xmalloc(c.tls, types.Size_t(n)); *buf == 0 {
			*bufN = 0
			return errors.New("sqlite: out of memory")
		}
		*bufN = n
	}
	off := 0
	for i, v := range vals {
		idx := int32(i + 1)
		var rc int32
		switch x := v.(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(c.tls, st, idx)
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, st, idx, x)
		case float64:
			rc = sqlite3.Xsqlite3_bind_double(c.tls, st, idx, x)
		case bool:
			var b int64
			if x {
				b = 1
			}
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, st, idx, b)
		case string:
			p := *buf + uintptr(off)
			copy(libc.GoBytes(p, len(x)+1), x)
			off += len(x) + 1
			rc = sqlite3.Xsqlite3_bind_text(c.tls, st, idx, p, int32(len(x)), 0)
		case []byte:
			if x == nil {
				rc = sqlite3.Xsqlite3_bind_null(c.tls, st, idx)
				break
			}
			p := *buf + uintptr(off)
			copy(libc.GoBytes(p, len(x)+1), x)
			off += len(x) + 1
			rc = sqlite3.Xsqlite3_bind_blob(c.tls, st, idx, p, int32(len(x)), 0)
		default:
			return fmt.Errorf("sqlite: argument %d: unsupported type %T", i+1, v)
		}
		if rc != sqlite3.SQLITE_OK {
			return c.errorf(rc)
		}
	}
	return nil
}

// done resets st and clears its bindings, so it holds no pointer into the
// buffer.
func (c *Conn) done(st uintptr) {
	sqlite3.Xsqlite3_reset(c.tls, st)
	sqlite3.Xsqlite3_clear_bindings(c.tls, st)
}

// Exec runs q (with ? placeholders) with args to its end and returns the
// number of rows changed. Arguments may be nil, integers, floats, bool,
// string, []byte, time.Time (stored as the driver stores it) or a
// driver.Valuer of those. It does I/O.
func (c *Conn) Exec(q string, args ...any) (int64, error) {
	st, err := c.prepare(q)
	if err != nil {
		return 0, err
	}
	defer c.done(st)
	if err := c.bind(st, args); err != nil {
		return 0, err
	}
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, st); rc {
		case sqlite3.SQLITE_ROW:
			continue
		case sqlite3.SQLITE_DONE:
			return int64(sqlite3.Xsqlite3_changes(c.tls, c.db)), nil
		default:
			return 0, c.errorf(rc)
		}
	}
}

// TotalChanges returns how many rows the connection's INSERT, UPDATE and
// DELETE statements have changed since it was opened (rolled back ones
// included): a caller compares two readings to learn whether what ran in
// between wrote anything.
func (c *Conn) TotalChanges() int64 {
	return int64(sqlite3.Xsqlite3_total_changes(c.tls, c.db))
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
	defer c.done(st)
	if err := c.bind(st, args); err != nil {
		return &Row{err: err}
	}
	r := &Row{err: sql.ErrNoRows}
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, st); rc {
		case sqlite3.SQLITE_ROW:
			if r.vals == nil {
				r.vals, r.err = c.row(st), nil
			}
		case sqlite3.SQLITE_DONE:
			return r
		default:
			return &Row{err: c.errorf(rc)}
		}
	}
}

// row reads the current row's columns as int64, float64, string, []byte
// or nil.
func (c *Conn) row(st uintptr) []any {
	n := int(sqlite3.Xsqlite3_column_count(c.tls, st))
	vals := make([]any, n)
	for i := range n {
		col := int32(i)
		switch sqlite3.Xsqlite3_column_type(c.tls, st, col) {
		case sqlite3.SQLITE_INTEGER:
			vals[i] = int64(sqlite3.Xsqlite3_column_int64(c.tls, st, col))
		case sqlite3.SQLITE_FLOAT:
			vals[i] = sqlite3.Xsqlite3_column_double(c.tls, st, col)
		case sqlite3.SQLITE_TEXT:
			p := sqlite3.Xsqlite3_column_text(c.tls, st, col)
			vals[i] = string(libc.GoBytes(p, int(sqlite3.Xsqlite3_column_bytes(c.tls, st, col))))
		case sqlite3.SQLITE_BLOB:
			p := sqlite3.Xsqlite3_column_blob(c.tls, st, col)
			vals[i] = append([]byte(nil), libc.GoBytes(p, int(sqlite3.Xsqlite3_column_bytes(c.tls, st, col)))...)
		default:
			vals[i] = nil
		}
	}
	return vals
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
		if x, ok := v.(string); ok {
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

const ptrSize = int(unsafe.Sizeof(uintptr(0)))

// loadPtr reads the pointer stored in C memory at p.
func loadPtr(p uintptr) uintptr {
	b := libc.GoBytes(p, ptrSize)
	return *(*uintptr)(unsafe.Pointer(&b[0]))
}
