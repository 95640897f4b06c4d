package lite

import (
	"fmt"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The storage classes of a column value (https://www.sqlite.org/datatype3.html),
// as Rows.Type returns them.
const (
	Integer = sqlite3.SQLITE_INTEGER
	Float   = sqlite3.SQLITE_FLOAT
	Text    = sqlite3.SQLITE_TEXT
	Blob    = sqlite3.SQLITE_BLOB
	Null    = sqlite3.SQLITE_NULL
)

// Rows is the result of a query, read row by row with Next; its column
// values are read in place, without the conversions, locks and copies of
// database/sql. It belongs to the goroutine that owns its Conn; several
// Rows of one Conn may be open at once. Close must be called.
type Rows struct {
	c    *Conn
	st   uintptr
	buf  uintptr // C memory for the text and blob arguments
	bufN int
	err  error
	done bool
}

// Query prepares q (with ? placeholders), binds args (as Exec takes them)
// and returns its rows. The statement is its own (not shared with Exec
// and QueryRow, nor with another Rows) and is finalized by Close. It does
// I/O.
func (c *Conn) Query(q string, args ...any) (*Rows, error) {
	cq, err := libc.CString(q)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(c.tls, cq)
	pst := c.tls.Alloc(ptrSize)
	defer c.tls.Free(ptrSize)
	if rc := sqlite3.Xsqlite3_prepare_v2(c.tls, c.db, cq, -1, pst, 0); rc != sqlite3.SQLITE_OK {
		return nil, c.errorf(rc)
	}
	r := &Rows{c: c, st: loadPtr(pst)}
	if r.st == 0 {
		return nil, fmt.Errorf("sqlite: empty statement %q", q)
	}
	if err := c.bindIn(r.st, args, &r.buf, &r.bufN); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Next steps to the next row and reports whether there is one; after it
// returns false, Err says whether the query failed. The values of the row
// before it are no longer valid.
func (r *Rows) Next() bool {
	if r.done {
		return false
	}
	switch rc := sqlite3.Xsqlite3_step(r.c.tls, r.st); rc {
	case sqlite3.SQLITE_ROW:
		return true
	case sqlite3.SQLITE_DONE:
	default:
		r.err = r.c.errorf(rc)
	}
	r.done = true
	return false
}

// Err returns the error that ended Next, if any.
func (r *Rows) Err() error { return r.err }

// Close finalizes the statement and frees its arguments; it may be called
// more than once.
func (r *Rows) Close() {
	if r.st != 0 {
		sqlite3.Xsqlite3_finalize(r.c.tls, r.st)
		r.st = 0
	}
	if r.buf != 0 {
		libc.Xfree(r.c.tls, r.buf)
		r.buf = 0
	}
	r.done = true
}

// Columns returns how many columns a row has.
func (r *Rows) Columns() int { return int(sqlite3.Xsqlite3_column_count(r.c.tls, r.st)) }

// Type returns the storage class of column i of the current row: Integer,
// Float, Text, Blob or Null.
func (r *Rows) Type(i int) int {
	return int(sqlite3.Xsqlite3_column_type(r.c.tls, r.st, int32(i)))
}

// Int64 returns column i of the current row as an integer (SQLite's
// conversion: 0 for NULL).
func (r *Rows) Int64(i int) int64 {
	return sqlite3.Xsqlite3_column_int64(r.c.tls, r.st, int32(i))
}

// Float64 returns column i of the current row as a float.
func (r *Rows) Float64(i int) float64 {
	return sqlite3.Xsqlite3_column_double(r.c.tls, r.st, int32(i))
}

// Bytes returns column i of the current row as text (SQLite's conversion:
// nil for NULL, an integer in decimal), in SQLite's memory: the slice is
// valid only until the next call of Next or Close, or of another column
// accessor on the same column, and must not be written.
func (r *Rows) Bytes(i int) []byte {
	p := sqlite3.Xsqlite3_column_text(r.c.tls, r.st, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(r.c.tls, r.st, int32(i)))
	if p == 0 || n == 0 {
		return nil
	}
	return libc.GoBytes(p, n)
}

// BlobBytes returns column i of the current row as a blob, in SQLite's
// memory, valid as Bytes' result is.
func (r *Rows) BlobBytes(i int) []byte {
	p := sqlite3.Xsqlite3_column_blob(r.c.tls, r.st, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(r.c.tls, r.st, int32(i)))
	if p == 0 || n == 0 {
		return nil
	}
	return libc.GoBytes(p, n)
}

// String returns column i of the current row as text (see Bytes), copied.
func (r *Rows) String(i int) string { return string(r.Bytes(i)) }
