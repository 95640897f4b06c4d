package lite

import (
	"context"
	"database/sql/driver"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/internal/sqlitetime"
)

// The storage classes of a column value (https://www.sqlite.org/datatype3.html),
// as Rows.Type returns them (SQLite's own codes).
const (
	Integer = 1
	Float   = 2
	Text    = 3
	Blob    = 4
	Null    = 5
)

// Rows is the result of a query, read row by row with Next; its column
// values are those the driver reads (int64, float64, string, []byte, nil,
// and time.Time for text in a column declared as a time), without
// database/sql's locks, conversions and copies. It belongs to the goroutine
// that owns its Conn; several Rows of one Conn may be open at once. Close
// must be called.
type Rows struct {
	rows driver.Rows
	vals []driver.Value
	err  error
	done bool
}

// Query prepares q (with ? placeholders), binds args (as Exec takes them)
// and returns its rows. The statement is its own (not shared with Exec
// and QueryRow, nor with another Rows) and is finalized by Close. It does
// I/O.
func (c *Conn) Query(q string, args ...any) (*Rows, error) {
	nv, err := bindTo(nil, args)
	if err != nil {
		return nil, err
	}
	rows, err := c.c.(driver.QueryerContext).QueryContext(context.Background(), q, nv)
	if err != nil {
		return nil, err
	}
	return &Rows{rows: rows, vals: make([]driver.Value, len(rows.Columns()))}, nil
}

// Next steps to the next row and reports whether there is one; after it
// returns false, Err says whether the query failed.
func (r *Rows) Next() bool {
	if r.done {
		return false
	}
	switch err := r.rows.Next(r.vals); err {
	case nil:
		return true
	case io.EOF:
	default:
		r.err = err
	}
	clear(r.vals)
	r.done = true
	return false
}

// Err returns the error that ended Next, if any.
func (r *Rows) Err() error { return r.err }

// Close finalizes the statement; it may be called more than once.
func (r *Rows) Close() {
	if r.rows != nil {
		r.rows.Close()
		r.rows = nil
	}
	r.done = true
}

// Columns returns how many columns a row has.
func (r *Rows) Columns() int { return len(r.vals) }

// Type returns the storage class of column i of the current row: Integer,
// Float, Text, Blob or Null.
func (r *Rows) Type(i int) int {
	switch r.vals[i].(type) {
	case nil:
		return Null
	case int64:
		return Integer
	case float64:
		return Float
	case []byte:
		return Blob
	}
	return Text
}

// Int64 returns column i of the current row as an integer (as SQLite
// converts: 0 for NULL, the leading integer of a text).
func (r *Rows) Int64(i int) int64 {
	switch v := r.vals[i].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case string:
		return leadingInt(v)
	case []byte:
		return leadingInt(string(v))
	}
	return 0
}

// leadingInt is SQLite's conversion of a text to an integer: its longest
// prefix that reads as one, after leading spaces; 0 if none.
func leadingInt(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64)
	return n
}

// Float64 returns column i of the current row as a float.
func (r *Rows) Float64(i int) float64 {
	switch v := r.vals[i].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	case string:
		f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f
	}
	return 0
}

// String returns column i of the current row as text (SQLite's conversion:
// "" for NULL, an integer in decimal, a float with a decimal point, a time
// as the driver writes it).
func (r *Rows) String(i int) string {
	switch v := r.vals[i].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return floatText(v)
	case time.Time:
		return v.Format(sqlitetime.Format)
	}
	return ""
}

// floatText is v as SQLite renders a REAL as text: with a decimal point or
// an exponent, so that it never reads back as an integer.
func floatText(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

// Bytes returns column i of the current row as text, as String does (nil
// for NULL and for an empty text).
func (r *Rows) Bytes(i int) []byte {
	if b, ok := r.vals[i].([]byte); ok {
		if len(b) == 0 {
			return nil
		}
		return b
	}
	s := r.String(i)
	if s == "" {
		return nil
	}
	return []byte(s)
}

// BlobBytes returns column i of the current row as a blob (nil for NULL
// and for an empty blob), valid until the next call of Next or Close; it
// must not be written.
func (r *Rows) BlobBytes(i int) []byte {
	switch v := r.vals[i].(type) {
	case []byte:
		if len(v) == 0 {
			return nil
		}
		return v
	case nil:
		return nil
	}
	return r.Bytes(i)
}

// Time returns column i of the current row when the driver read it as a
// time (text in a column declared DATE, DATETIME or TIMESTAMP that reads
// as one); ok is false otherwise, and the column is read as text.
func (r *Rows) Time(i int) (t time.Time, ok bool) {
	t, ok = r.vals[i].(time.Time)
	return t, ok
}
