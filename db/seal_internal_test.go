package db

import (
	"testing"
	"time"
)

// TestSealHashFormat pins the seal's hashes to values computed by the first
// implementation (fmt and a fresh hash per row), so that the allocation-free
// hashing keeps the format and blocks written before keep verifying: a row's
// canonical hash (PostgreSQL), a row's SQLite content hash, and a block
// root.
func TestSealHashFormat(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.FixedZone("x", 3600))
	rh := newRowHasher()
	cols := []string{"id", "n", "i32", "i", "f", "g", "b", "c", "t", "s", "x", "o"}
	vals := []any{int64(42), nil, int32(-7), 9, 3.0, 2.5, true, false, at, "it's \x00 é", []byte{0, 255, 1}, struct{ A int }{3}}
	const wantRow = "51c23c6bbc5453273959fd4892a64e0b652810c712becae466477a3fa6fb348c"
	for range 2 { // the second time on reused buffers
		if got := string(rh.rowHash("requests", cols, vals)); got != wantRow {
			t.Errorf("rowHash = %s, want %s", got, wantRow)
		}
	}
	if got := rowHash("requests", cols, vals); got != wantRow {
		t.Errorf("rowHash = %s, want %s", got, wantRow)
	}
	const wantSQLite = "9bc266347210d0266c1a83bf0dd31176de1c2b09fb5600ed2e7f83b1b0616eda"
	for _, content := range []any{"1,NULL,'it''s',X'00FF'", []byte("1,NULL,'it''s',X'00FF'")} {
		if got := string(rh.sqliteRow("requests", content)); got != wantSQLite {
			t.Errorf("sqliteRow(%T) = %s, want %s", content, got, wantSQLite)
		}
	}
	const wantRoot = "1635cd4c7e6eb4029bfabaf046b4effac20a7fad846c6023e3433c6d6ddfd796"
	r := newRoot()
	r.add("robots_snapshots", 5, "ef") // then reset: a second block
	r.reset()
	r.add("requests", 1, "ab")
	r.addBytes([]byte("robots_snapshots"), 99999999999, []byte("cd"))
	if got := r.sum(); got != wantRoot || r.n != 2 {
		t.Errorf("root = %s over %d rows, want %s over 2", got, r.n, wantRoot)
	}
}
