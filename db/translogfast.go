package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lohisoft/lohibot/db/lite"
)

// scanLogRowsFast is scanLogRows on SQLite's fast-path reader rd, with
// where's placeholders one per arg: each value is read in place and given
// the Go type the driver gives it (int64, float64, string for text, []byte
// for a blob, nil), a timestamp column's text as a time.Time when it reads
// as one, so a row's leaf is the same on both paths.
func scanLogRowsFast(ctx context.Context, rd *lite.Conn, t *logTable, where string, args []any, limit int64, fn func(*logRow) error) error {
	rows, err := rd.Query(t.scanQuery(where, limit, true), args...)
	if err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	defer rows.Close()
	for n := 1; rows.Next(); n++ {
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r := &logRow{table: t, id: rows.Int64(0), ready: rows.Int64(1) == 1, vals: make([]any, len(t.cols))}
		if st, ok := rows.Time(2); ok {
			r.stamp = st.UTC()
		} else if st, ok := parseFixed(rows.String(2)); ok {
			r.stamp = st
		}
		for i, c := range t.cols {
			j := i + 3
			switch rows.Type(j) {
			case lite.Null:
			case lite.Integer:
				r.vals[i] = rows.Int64(j)
			case lite.Float:
				r.vals[i] = rows.Float64(j)
			case lite.Blob:
				r.vals[i] = append([]byte{}, rows.BlobBytes(j)...)
			default:
				if t, ok := rows.Time(j); ok {
					r.vals[i] = t
					continue
				}
				s := rows.String(j)
				if c.kind == kTime {
					var tt textTime
					if tt.parse(s) == nil {
						r.vals[i] = tt.t
						continue
					}
				}
				r.vals[i] = s
			}
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	return nil
}

// scanQuery is the query of scanLogRows: id, whether final, when, then
// the columns, of the rows matching where, in id order, at most limit (0:
// all). With textTimes, the time columns are read through unary +, which
// keeps a value but not its declared type: SQLite's driver then hands over
// their text, which the fast path parses itself (parseFixed).
func (t *logTable) scanQuery(where string, limit int64, textTimes bool) string {
	ready, stamp := t.ready, t.stamp
	if ready == "" {
		ready, stamp = "1 = 1", "sealed_at"
	}
	list := t.selectList("")
	if textTimes {
		stamp = "+" + stamp
		var b strings.Builder
		for i, c := range t.cols {
			if i > 0 {
				b.WriteString(", ")
			}
			if c.kind == kTime {
				b.WriteString("+")
			}
			b.WriteString(c.name)
		}
		list = b.String()
	}
	q := "SELECT id, CASE WHEN " + ready + " THEN 1 ELSE 0 END, " + stamp + ", " + list +
		" FROM " + t.name + " WHERE " + where + " ORDER BY id"
	if limit > 0 {
		q += " LIMIT " + strconv.FormatInt(limit, 10)
	}
	return q
}
