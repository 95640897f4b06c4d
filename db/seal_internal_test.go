package db

import (
	"context"
	"math"
	"path/filepath"
	"slices"
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

// TestVerifyHashSQLite checks that the content hash verifyTable computes
// from a row's raw SQLite values is the hash of the text sealSelect reads
// (the quote() of each column, which Seal hashed), for values of every
// kind: NULLs, quotes, separators, non-ASCII and NUL in text, any byte and
// none in blobs, negative and large integers, times, and REAL values stored
// by hand, which SQLite writes.
func TestVerifyHashSQLite(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "seal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.UTC)
	i := func(n int) *int { return &n }
	i64 := func(n int64) *int64 { return &n }
	odd := "it's \"odd\"\n\x1f,'',NULL,X'00' é ✓ \x00 after NUL"
	rows := []any{
		&PolicyEvent{ID: 1, Version: 1, HappenedAt: now, Kind: EventExclude, Site: "a.example", Actor: odd, Detail: `{"k":"v,'w'"}`, PurgedPages: -3},
		&PolicyEvent{ID: 2, Version: 2, HappenedAt: now, Kind: EventExclude, Site: "'", Actor: "''"},
		&Request{ID: 1, CycleID: i64(-9_000_000_000_000), BudgetSlot: i(7), Site: "b.example", Host: "b.example", Origin: odd,
			URL: "https://b.example/?q='x',y", Method: "GET", Purpose: PurposePage, SentAt: now, CompletedAt: &now, Status: i(200),
			RetryAfter: odd, Outcome: "ok", SigKeyID: "k", SigCreated: &now},
		&Request{ID: 2, Site: "b.example", Host: "b.example", Origin: "o", URL: "u", Purpose: PurposeRobots, SentAt: now},
		&RobotsSnapshot{ID: 1, Origin: "https://b.example:443", FetchedAt: now, Status: 200, Body: []byte{0, 1, 2, '\'', 0xff, 0xfe, ',', 0x1f},
			Sha256: "x", Outcome: RobotsParsed, RequestID: i64(1)},
		&RobotsSnapshot{ID: 2, Origin: "o", FetchedAt: now, Body: nil},
		&RobotsSnapshot{ID: 3, Origin: "o", FetchedAt: now, Body: []byte{}},
		&MailMessage{ID: 1, MessageID: "m1@example", ReceivedAt: now, FromAddr: odd, Subject: odd, Raw: []byte("From: x\r\n\r\n\x00body"), Size: 1 << 40},
	}
	for _, r := range rows {
		if err := s.gdb.WithContext(ctx).Create(r).Error; err != nil {
			t.Fatalf("create %T: %v", r, err)
		}
	}
	// Values of other storage classes, as a hand edit could leave them.
	for _, q := range []string{
		"UPDATE requests SET bytes = 2.5, status = 1e300, duration_ms = -0.0, retry_after = X'0027' WHERE id = 2",
		"UPDATE robots_snapshots SET status = '200', body = 'text body' WHERE id = 2",
		"UPDATE mail_messages SET size = 0.1 WHERE id = 1",
	} {
		if err := s.gdb.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rh := newRowHasher()
	for _, tb := range sealTables {
		want := map[int64]string{}
		rs, err := s.pool.QueryContext(ctx, "SELECT id, "+s.sealSelect(tb, "")+" FROM "+tb.name)
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var (
				id   int64
				text string
			)
			if err := rs.Scan(&id, &text); err != nil {
				t.Fatal(err)
			}
			want[id] = string(rh.sqliteRow(tb.name, text))
		}
		rs.Close()
		rs, err = s.pool.QueryContext(ctx, "SELECT id, "+s.verifySelect(tb, "")+" FROM "+tb.name)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(tb.cols)+1)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		n := 0
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			id := vals[0].(int64)
			h, err := s.verifyHash(ctx, rh, tb, id, vals[1:])
			if err != nil {
				t.Fatal(err)
			}
			if string(h) != want[id] {
				t.Errorf("%s row %d: verifyHash = %s, want the hash of its sealSelect text, %s", tb.name, id, h, want[id])
			}
			n++
		}
		rs.Close()
		if n == 0 || n != len(want) {
			t.Errorf("%s: %d rows compared, want %d (and some)", tb.name, n, len(want))
		}
		// The fast path: the values read in place (sealedRowsFast).
		rd, err := s.openReader(ctx)
		if err != nil || rd == nil {
			t.Fatalf("openReader = %v, %v", rd, err)
		}
		fr, err := rd.Query("SELECT id, " + s.verifySelect(tb, "") + " FROM " + tb.name)
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for fr.Next() {
			id := fr.Int64(0)
			h, ok := rh.sqliteColumns(tb.name, fr, 1, len(tb.cols))
			if !ok {
				if h, err = s.sqliteRowHash(ctx, rh, tb, id); err != nil {
					t.Fatal(err)
				}
			}
			if string(h) != want[id] {
				t.Errorf("%s row %d: fast hash (in place: %v) = %s, want the hash of its sealSelect text, %s", tb.name, id, ok, h, want[id])
			}
			n++
		}
		if err := fr.Err(); err != nil {
			t.Fatal(err)
		}
		fr.Close()
		rd.Close()
		if n != len(want) {
			t.Errorf("%s: %d rows compared on the fast path, want %d", tb.name, n, len(want))
		}
	}
}

// TestSpans checks the spans of ids that sealed ids leave out: every id
// not sealed lies in one, and spans fewer than spanMerge sealed ids apart
// are merged into one.
func TestSpans(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	tests := []struct {
		name   string
		sealed []int64
		want   []span
	}{
		{"none sealed", nil, []span{{lo, hi}}},
		{"one, close to both ends", []int64{5}, []span{{lo, hi}}},
		{"runs far apart", cat(seq(1, 100), seq(200, 300)), []span{{lo, 0}, {101, 199}, {301, hi}}},
		{"gaps close together merge", cat(seq(1, 100), seq(102, 103), seq(105, 200)), []span{{lo, 0}, {101, 104}, {201, hi}}},
		{"far from zero", seq(1000, 1100), []span{{lo, 999}, {1101, hi}}},
		{"extremes", []int64{lo, hi}, []span{{lo + 1, hi - 1}}},
		{"repeated and smaller ids ignored", cat(seq(1, 100), []int64{50, 100}, seq(180, 300)), []span{{lo, 0}, {101, 179}, {301, hi}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sp spans
			for _, id := range tt.sealed {
				sp.sealed(id)
			}
			got := sp.done()
			if !slices.Equal(got, tt.want) {
				t.Errorf("spans = %v, want %v", got, tt.want)
			}
			for id := int64(-5); id <= 1200; id++ {
				if slices.Contains(tt.sealed, id) {
					continue
				}
				if !slices.ContainsFunc(got, func(s span) bool { return s.lo <= id && id <= s.hi }) {
					t.Errorf("id %d, not sealed, is in no span of %v", id, got)
				}
			}
		})
	}
}

func seq(a, b int64) []int64 {
	var out []int64
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

func cat(parts ...[]int64) []int64 { return slices.Concat(parts...) }
