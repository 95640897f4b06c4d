package db

import "testing"

// TestRebind checks that ? placeholders become $1..$n on PostgreSQL only.
func TestRebind(t *testing.T) {
	q := `UPDATE t SET a = ?, b = ? WHERE id IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	if got := rebind(SQLite, q); got != q {
		t.Errorf("SQLite: %q, want it unchanged", got)
	}
	want := `UPDATE t SET a = $1, b = $2 WHERE id IN ($3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
	if got := rebind(Postgres, q); got != want {
		t.Errorf("PostgreSQL: %q, want %q", got, want)
	}
}
