package lite_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db/lite"
)

// TestReaderRows checks the read path: OpenReader refuses writes; Query
// binds its arguments (text ones too) and steps through the rows, each
// value read with its storage class; two Rows of one Conn may be
// open at once; and a failing statement reports its error.
func TestReaderRows(t *testing.T) {
	path := newFile(t)
	w := open(t, path)
	for _, q := range []string{
		"CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB)",
		"INSERT INTO t VALUES (1, -42, 2.5, 'it''s é', X'00FF')",
		"INSERT INTO t VALUES (2, NULL, NULL, '', X'')",
		"INSERT INTO t VALUES (3, 9007199254740993, 0.125, 'x', NULL)",
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r, err := lite.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Exec("INSERT INTO t (id) VALUES (9)"); err == nil {
		t.Error("a reader wrote a row, want an error (query_only)")
	}

	rows, err := r.Query("SELECT id, i, r, s, b FROM t WHERE s <> ? ORDER BY id", "nothing")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type got struct {
		types       [5]int
		i           int64
		f           float64
		s, b, iText string
	}
	var all []got
	for rows.Next() {
		if rows.Columns() != 5 {
			t.Fatalf("Columns() = %d, want 5", rows.Columns())
		}
		var g got
		for c := range 5 {
			g.types[c] = rows.Type(c)
		}
		g.i, g.f, g.s, g.b, g.iText = rows.Int64(1), rows.Float64(2), rows.String(3), string(rows.BlobBytes(4)), string(rows.Bytes(1))
		all = append(all, g)
		// A second statement on the same connection, open at once.
		inner, err := r.Query("SELECT count(*) FROM t WHERE id <= ?", rows.Int64(0))
		if err != nil {
			t.Fatal(err)
		}
		if !inner.Next() || inner.Int64(0) != rows.Int64(0) {
			t.Errorf("inner query at row %d: count %d", rows.Int64(0), inner.Int64(0))
		}
		inner.Close()
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []got{
		{[5]int{lite.Integer, lite.Integer, lite.Float, lite.Text, lite.Blob}, -42, 2.5, "it's é", "\x00\xff", "-42"},
		{[5]int{lite.Integer, lite.Null, lite.Null, lite.Text, lite.Blob}, 0, 0, "", "", ""},
		{[5]int{lite.Integer, lite.Integer, lite.Float, lite.Text, lite.Null}, 9007199254740993, 0.125, "x", "", "9007199254740993"},
	}
	if len(all) != len(want) {
		t.Fatalf("%d rows, want %d", len(all), len(want))
	}
	for i := range want {
		if all[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i+1, all[i], want[i])
		}
	}
	if rows.Next() {
		t.Error("Next after the end = true")
	}
	rows.Close() // twice is fine

	if _, err := r.Query("SELECT nope FROM t"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Query of a bad column: %v, want SQLite's error", err)
	}
	// A statement failing while stepped: Query (which steps to the first
	// row) or Next reports it.
	if bad, err := r.Query("SELECT abs(-9223372036854775808)"); err == nil {
		if bad.Next() || bad.Err() == nil {
			t.Errorf("a statement failing while stepped: Next true or no Err (%v)", bad.Err())
		}
		bad.Close()
	} else if !strings.Contains(err.Error(), "overflow") {
		t.Errorf("a statement failing while stepped: %v, want SQLite's integer overflow", err)
	}
	// Failing at a later row: Next stops and Err says why.
	bad, err := r.Query("SELECT CASE WHEN id = 3 THEN abs(-9223372036854775808) ELSE id END FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for bad.Next() {
		n++
	}
	if n != 2 || bad.Err() == nil {
		t.Errorf("a statement failing at its third row: %d rows, Err %v; want 2 and an error", n, bad.Err())
	}
	bad.Close()
}

// TestRowsTimes checks how Rows hands over a time: text in a column
// declared DATETIME arrives as a time (Time, String in the driver's
// layout), text in a TEXT column as text, and a DATETIME column's text
// that reads as no time as text.
func TestRowsTimes(t *testing.T) {
	path := newFile(t)
	w := open(t, path)
	at := time.Date(2026, 12, 1, 14, 5, 6, 123456000, time.UTC)
	for _, q := range []string{
		"CREATE TABLE tt (id INTEGER PRIMARY KEY, d DATETIME, s TEXT)",
		"INSERT INTO tt VALUES (2, 'not a time', '2026-12-01 14:05:06+00:00')",
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := w.Exec("INSERT INTO tt VALUES (1, ?, ?)", at, at); err != nil {
		t.Fatal(err)
	}
	r, err := lite.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := r.Query("SELECT d, s FROM tt ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("no first row: %v", rows.Err())
	}
	if got, ok := rows.Time(0); !ok || !got.Equal(at) {
		t.Errorf("DATETIME column: Time = %v, %v; want %v", got, ok, at)
	}
	if rows.Type(0) != lite.Text || rows.String(0) != "2026-12-01 14:05:06.123456+00:00" {
		t.Errorf("DATETIME column: type %d, String %q; want text in the driver's layout", rows.Type(0), rows.String(0))
	}
	if _, ok := rows.Time(1); ok || rows.String(1) != "2026-12-01 14:05:06.123456+00:00" {
		t.Errorf("TEXT column: a time (%v) or String %q; want the stored text", ok, rows.String(1))
	}
	if !rows.Next() {
		t.Fatalf("no second row: %v", rows.Err())
	}
	if _, ok := rows.Time(0); ok || rows.String(0) != "not a time" {
		t.Errorf("DATETIME column holding other text: a time (%v) or String %q", ok, rows.String(0))
	}
	if rows.Int64(1) != 2026 {
		t.Errorf("Int64 of a text = %d, want its leading integer 2026", rows.Int64(1))
	}
}
