package db

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"

	"github.com/lohisoft/lohibot/db/lite"
)

// The reads of VerifySeals (sealcheck.go): the sealed rows of a table joined
// to their content, and the table's unsealed rows. On an SQLite file the
// long reads go through a read-only connection of the fast path
// (package lite), which reads each value in place: through database/sql
// the driver converts, copies and locks for every column of every row,
// which made the integrity rule the longest part of an audit.

// readerPragmas are the settings of the audit's read-only connections
// (openReader) beyond lite.OpenReader's own: none. Measured on the audit of
// 1M requests: a 16 MiB page cache instead of SQLite's 2 MiB
// saved nothing (the reads are scans) and cost 80 MB more peak memory;
// mmap_size = 1 GiB saved a tenth of the CPU (no read syscalls) but mapped
// the file into every reader, 850 MB peak RSS, against a bound of 300 MB.
var readerPragmas []string

// openReader opens a read-only fast-path connection to the store's SQLite
// file, for one long read by one goroutine; it returns nil and no error
// when the store is not an SQLite file (PostgreSQL), whose reads go
// through the pool. The caller closes it. It does I/O.
func (s *Store) openReader(ctx context.Context) (*lite.Conn, error) {
	if s.Dialect == Postgres {
		return nil, nil
	}
	path, err := s.SQLiteFile(ctx)
	if err != nil {
		return nil, nil // not a file: the pool reads it
	}
	c, err := lite.OpenReader(path, readerPragmas...)
	if err != nil {
		return nil, fmt.Errorf("db: open a reader: %w", err)
	}
	return c, nil
}

// ctxEvery is how many rows a fast-path read steps between looks at its
// ctx (it cannot be interrupted otherwise).
const ctxEvery = 4096

// sealedRow is one row of seal_rows as verifyTable checks it.
type sealedRow struct {
	id, bid int64
	sealed  []byte // the hash it was sealed with; valid until the next row
	present bool   // the table still has the row
	ord     any    // the table's order column (nil without one)
	// hash returns the row's content hash now, in a buffer the next call
	// overwrites.
	hash func() ([]byte, error)
}

// sealedRows calls fn with each row of seal_rows of table t, in row_id
// order, joined to the table's row (orderSel is the order column, or
// NULL). The row fn gets is reused. It stops at the first error fn returns
// and returns it as it is.
func (s *Store) sealedRows(ctx context.Context, t sealTable, orderSel string, fn func(*sealedRow) error) error {
	q := "SELECT s.row_id, s.block_id, s.hash, t.id, " + orderSel + ", " + s.verifySelect(t, "t.") + " FROM seal_rows s LEFT JOIN " + t.name +
		" t ON t.id = s.row_id WHERE s.tbl = ? ORDER BY s.row_id"
	rd, err := s.openReader(ctx)
	if err != nil {
		return err
	}
	if rd != nil {
		defer rd.Close()
		return s.sealedRowsFast(ctx, rd, q, t, orderSel != "NULL", fn)
	}
	rows, err := s.pool.QueryContext(ctx, s.rebind(q), t.name)
	if err != nil {
		return fmt.Errorf("db: verify %s: %w", t.name, err)
	}
	defer rows.Close()
	var (
		id, bid int64
		sealed  sql.RawBytes
	)
	vals := make([]any, len(t.cols)+5)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	ptrs[0], ptrs[1], ptrs[2] = &id, &bid, &sealed
	rh := newRowHasher()
	r := &sealedRow{}
	r.hash = func() ([]byte, error) { return s.verifyHash(ctx, rh, t, r.id, vals[5:]) }
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("db: verify %s: %w", t.name, err)
		}
		r.id, r.bid, r.sealed, r.present, r.ord = id, bid, sealed, vals[3] != nil, vals[4]
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: verify %s: %w", t.name, err)
	}
	return nil
}

// sealedRowsFast is sealedRows on the fast-path connection rd.
func (s *Store) sealedRowsFast(ctx context.Context, rd *lite.Conn, q string, t sealTable, hasOrder bool, fn func(*sealedRow) error) error {
	rows, err := rd.Query(q, t.name)
	if err != nil {
		return fmt.Errorf("db: verify %s: %w", t.name, err)
	}
	defer rows.Close()
	rh := newRowHasher()
	r := &sealedRow{}
	r.hash = func() ([]byte, error) {
		if h, ok := rh.sqliteColumns(t.name, rows, 5, len(t.cols)); ok {
			return h, nil
		}
		return s.sqliteRowHash(ctx, rh, t, r.id)
	}
	for n := 1; rows.Next(); n++ {
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r.id, r.bid, r.sealed, r.present = rows.Int64(0), rows.Int64(1), rows.Bytes(2), rows.Type(3) != lite.Null
		r.ord = nil
		if hasOrder {
			switch rows.Type(4) {
			case lite.Integer:
				r.ord = rows.Int64(4)
			case lite.Float:
				r.ord = rows.Float64(4)
			case lite.Text, lite.Blob:
				r.ord = rows.String(4)
			}
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: verify %s: %w", t.name, err)
	}
	return nil
}

// sqliteColumns is sqliteValues for the n columns of rows' current row
// from column from on, read in place.
func (rh *rowHasher) sqliteColumns(table string, rows *lite.Rows, from, n int) (hash []byte, ok bool) {
	b := append(append(append(rh.buf[:0], "lohibot row v1 sqlite\x00"...), table...), 0)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		c := from + i
		switch rows.Type(c) {
		case lite.Null:
			b = append(b, "NULL"...)
		case lite.Integer:
			b = strconv.AppendInt(b, rows.Int64(c), 10)
		case lite.Text:
			b = appendQuotedText(b, rows.Bytes(c))
		case lite.Blob:
			b = appendQuotedBlob(b, rows.BlobBytes(c))
		default: // a REAL: only SQLite writes its literal exactly
			rh.buf = b
			return nil, false
		}
	}
	rh.buf = b
	rh.h.Reset()
	rh.h.Write(b)
	return rh.hexSum(), true
}

// appendQuotedText appends SQLite's quote() of a TEXT value x (as the fast
// path reads it, or as the driver returns it): up to its first NUL, in
// single quotes, each quote doubled.
func appendQuotedText[T string | []byte](b []byte, x T) []byte {
	if i := indexByte(x, 0); i >= 0 {
		x = x[:i]
	}
	b = append(b, '\'')
	for {
		i := indexByte(x, '\'')
		if i < 0 {
			break
		}
		b = append(b, x[:i+1]...)
		b = append(b, '\'')
		x = x[i+1:]
	}
	b = append(b, x...)
	return append(b, '\'')
}

// indexByte is strings.IndexByte or bytes.IndexByte, for either.
func indexByte[T string | []byte](x T, c byte) int {
	for i := 0; i < len(x); i++ {
		if x[i] == c {
			return i
		}
	}
	return -1
}

// appendQuotedBlob appends SQLite's quote() of a BLOB: X'…' in upper-case
// hex.
func appendQuotedBlob(b, x []byte) []byte {
	const digits = "0123456789ABCDEF"
	b = append(b, 'X', '\'')
	for _, c := range x {
		b = append(b, digits[c>>4], digits[c&0x0f])
	}
	return append(b, '\'')
}

// span is a range of ids, both ends included.
type span struct{ lo, hi int64 }

// spanMerge is how many sealed ids apart two spans of unsealed ids may be
// and still be read with one query (which then skips the sealed ids in
// between by looking each up in seal_rows).
const spanMerge = 64

// spans gathers the spans of ids that sealed rows, given in ascending
// order, leave out: where the unsealed rows of a table can be. Its zero
// value is ready.
type spans struct {
	out  []span
	last int64 // the last sealed id
	seen bool  // last is set
}

// add adds a span, merging it into the previous one when they are close.
func (sp *spans) add(lo, hi int64) {
	if n := len(sp.out); n > 0 && uint64(lo)-uint64(sp.out[n-1].hi) <= spanMerge {
		sp.out[n-1].hi = hi
		return
	}
	sp.out = append(sp.out, span{lo, hi})
}

// sealed records the next sealed id, which is larger than the last.
func (sp *spans) sealed(id int64) {
	lo := int64(math.MinInt64)
	if sp.seen {
		if id <= sp.last {
			return
		}
		lo = sp.last + 1
	}
	sp.last, sp.seen = id, true
	if id > lo {
		sp.add(lo, id-1)
	}
}

// done returns the spans, the one after the last sealed id included.
func (sp *spans) done() []span {
	switch {
	case !sp.seen:
		sp.add(math.MinInt64, math.MaxInt64)
	case sp.last < math.MaxInt64:
		sp.add(sp.last+1, math.MaxInt64)
	}
	return sp.out
}

// unsealedRows runs q, verifyTable's query of the unsealed rows of t, over
// the ids of one span, and calls fn with each row's id, stamp and order
// column. It stops at the first error fn returns and returns it as it is.
func (s *Store) unsealedRows(ctx context.Context, q string, t sealTable, sp span, fn func(id int64, stamp, ord any) error) error {
	rows, err := s.pool.QueryContext(ctx, q, sp.lo, sp.hi, t.name)
	if err != nil {
		return fmt.Errorf("db: verify %s: %w", t.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id         int64
			stamp, ord any
		)
		if err := rows.Scan(&id, &stamp, &ord); err != nil {
			return fmt.Errorf("db: verify %s: %w", t.name, err)
		}
		if err := fn(id, stamp, ord); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: verify %s: %w", t.name, err)
	}
	return nil
}

// sealRows calls fn with every row of seal_rows in block, table and id
// order: its block, table, row id and hash (the slices are valid until fn
// returns). It stops at the first error fn returns and returns it as it
// is.
func (s *Store) sealRows(ctx context.Context, fn func(bid int64, tbl []byte, id int64, h []byte) error) error {
	const q = `SELECT block_id, tbl, row_id, hash FROM seal_rows ORDER BY block_id, tbl, row_id`
	rd, err := s.openReader(ctx)
	if err != nil {
		return err
	}
	if rd != nil {
		defer rd.Close()
		rows, err := rd.Query(q)
		if err != nil {
			return fmt.Errorf("db: verify seals: %w", err)
		}
		defer rows.Close()
		for n := 1; rows.Next(); n++ {
			if n%ctxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := fn(rows.Int64(0), rows.Bytes(1), rows.Int64(2), rows.Bytes(3)); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("db: verify seals: %w", err)
		}
		return nil
	}
	rows, err := s.pool.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("db: verify seals: %w", err)
	}
	defer rows.Close()
	var (
		bid, id int64
		tbl, h  sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&bid, &tbl, &id, &h); err != nil {
			return fmt.Errorf("db: verify seals: %w", err)
		}
		if err := fn(bid, tbl, id, h); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: verify seals: %w", err)
	}
	return nil
}
