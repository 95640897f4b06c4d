package lite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/lite"
)

// newFile returns the path of a new lohibot database (SQLite, WAL mode),
// made by the storage layer as lohibot init does.
func newFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "l.db")
	s, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func open(t *testing.T, path string, extra ...string) *lite.Conn {
	t.Helper()
	c, err := lite.Open(path, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func pragma(t *testing.T, c *lite.Conn, name string) int64 {
	t.Helper()
	var v int64
	if err := c.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

// TestOpenPragmas checks the settings of a connection: the package's own
// (a commit waits for the disk: synchronous=FULL), then the caller's.
func TestOpenPragmas(t *testing.T) {
	path := newFile(t)
	c := open(t, path)
	for name, want := range map[string]int64{"synchronous": 2, "foreign_keys": 1, "temp_store": 2, "cache_size": -8192} {
		if got := pragma(t, c, name); got != want {
			t.Errorf("PRAGMA %s = %d, want %d", name, got, want)
		}
	}
	n := open(t, path, "PRAGMA synchronous = NORMAL", "PRAGMA wal_autocheckpoint = 0")
	if got := pragma(t, n, "synchronous"); got != 1 {
		t.Errorf("with the caller's pragma: synchronous = %d, want 1 (NORMAL)", got)
	}
	if got := pragma(t, n, "wal_autocheckpoint"); got != 0 {
		t.Errorf("with the caller's pragma: wal_autocheckpoint = %d, want 0", got)
	}
	if _, err := lite.Open(path, "PRAGMA no such thing"); err == nil {
		t.Error("Open with a malformed pragma: nil error")
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	if c, err := lite.Open(missing); err == nil {
		c.Close()
		t.Error("Open of a missing file: nil error, want one (Open never creates a database)")
	}
}

// TestExecQueryRow checks that each argument type is stored as the driver
// stores it and read back, that Exec counts changed rows, that a
// RETURNING statement runs to its end, and the errors of a bad call.
func TestExecQueryRow(t *testing.T) {
	c := open(t, newFile(t))
	if _, err := c.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, f REAL, s TEXT, b BLOB, tm TEXT, flag INTEGER, p INTEGER)`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 14, 5, 6, 123456000, time.UTC)
	big := strings.Repeat("x", 200<<10) // more than the argument buffer's first size
	seven := int64(7)
	var none *int64
	for i, args := range [][]any{
		{int64(1), 2.5, "a", []byte{0, 1, 2}, at, true, &seven},
		{int(2), float32(0.5), big, []byte(nil), at, false, none},
	} {
		n, err := c.Exec(`INSERT INTO t (i, f, s, b, tm, flag, p) VALUES (?, ?, ?, ?, ?, ?, ?)`, args...)
		if err != nil || n != 1 {
			t.Fatalf("insert %d: %d rows, %v", i, n, err)
		}
	}
	var (
		i       int64
		f       float64
		s       string
		b       []byte
		tm      time.Time
		flag    bool
		p       int
		rawTime string
	)
	if err := c.QueryRow(`SELECT i, s, b, tm, flag, p, tm FROM t WHERE id = 1`).Scan(&i, &s, &b, &tm, &flag, &p, &rawTime); err != nil {
		t.Fatal(err)
	}
	if i != 1 || s != "a" || string(b) != "\x00\x01\x02" || !tm.Equal(at) || !flag || p != 7 {
		t.Errorf("row 1 = %d %q %q %v %v %d", i, s, b, tm, flag, p)
	}
	if rawTime != "2026-12-01 14:05:06.123456+00:00" {
		t.Errorf("time stored as %q, want the driver's layout", rawTime)
	}
	if err := c.QueryRow(`SELECT f, s, b, flag FROM t WHERE id = 2`).Scan(&f, &s, &b, &flag); err == nil {
		t.Error("scanning a REAL into *float64: nil error, want the unsupported-destination error")
	}
	var nullB []byte
	if err := c.QueryRow(`SELECT s, b, flag, p IS NULL FROM t WHERE id = 2`).Scan(&s, &nullB, &flag, &p); err != nil {
		t.Fatal(err)
	}
	if s != big || nullB != nil || flag || p != 1 {
		t.Errorf("row 2: %d bytes of text, blob %v, flag %v, nil pointer stored NULL: %v", len(s), nullB, flag, p == 1)
	}
	n, err := c.Exec(`UPDATE t SET i = i + 10`)
	if err != nil || n != 2 {
		t.Errorf("update: %d rows, %v; want 2", n, err)
	}
	if err := c.QueryRow(`UPDATE t SET i = i + 1 RETURNING id`).Scan(&i); err != nil {
		t.Fatal(err)
	}
	var sum int64
	if err := c.QueryRow(`SELECT SUM(i) FROM t`).Scan(&sum); err != nil || sum != 11+12+2 {
		t.Errorf("after UPDATE ... RETURNING read one row: sum %d (%v), want %d (every row updated)", sum, err, 11+12+2)
	}
	if err := c.QueryRow(`SELECT i FROM t WHERE id = 99`).Scan(&i); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v, want sql.ErrNoRows", err)
	}
	if _, err := c.Exec(`SELECT i FROM t WHERE id = ?`); err == nil {
		t.Error("missing argument: nil error")
	}
	if _, err := c.Exec(`SELECT i FROM t WHERE id = ?`, struct{}{}); err == nil {
		t.Error("unsupported argument type: nil error")
	}
	if err := c.QueryRow(`SELECT i, s FROM t WHERE id = 1`).Scan(&i); err == nil {
		t.Error("two columns into one value: nil error")
	}
	if _, err := c.Exec(`INSERT INTO nowhere VALUES (1)`); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Errorf("bad statement: %v, want SQLite's message", err)
	}
}

// TestRollback checks that Rollback undoes the transaction in progress and
// does nothing outside one.
func TestRollback(t *testing.T) {
	c := open(t, newFile(t))
	c.Rollback() // no transaction: nothing to do
	if _, err := c.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(`BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	c.Rollback()
	var n int64
	if err := c.QueryRow(`SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after Rollback: %d rows (%v), want 0", n, err)
	}
	if _, err := c.Exec(`BEGIN IMMEDIATE`); err != nil {
		t.Errorf("a new transaction after Rollback: %v", err)
	}
	c.Rollback()
}

// TestSharedWithDriver checks that what the fast path writes, the storage
// layer's driver reads (the same file, locks and time layout), and that
// the two wait for each other's write lock.
func TestSharedWithDriver(t *testing.T) {
	ctx := context.Background()
	path := newFile(t)
	c := open(t, path)
	added := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := c.Exec(`INSERT INTO sites (name, start_url, added_at, added_by) VALUES (?, ?, ?, 't')`,
		"a.example", "https://a.example/", added); err != nil {
		t.Fatal(err)
	}
	s, err := db.OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	site, err := s.Site(ctx, "a.example")
	if err != nil {
		t.Fatal(err)
	}
	if !site.AddedAt.Equal(added) {
		t.Errorf("driver read added_at %v, want %v", site.AddedAt, added)
	}
	// The fast connection holds the write lock; the driver's write waits
	// for it (busy timeout) and succeeds once it is released.
	if _, err := c.Exec(`BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(ctx, func(tx *db.Tx) error { return tx.LockPolicy(ctx) })
	}()
	select {
	case err := <-done:
		t.Fatalf("driver's write transaction ran while the fast path held the lock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	c.Rollback()
	if err := <-done; err != nil {
		t.Errorf("driver's write after the lock was released: %v", err)
	}
}
