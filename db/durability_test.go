package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestSQLiteSynchronousFull checks that every connection of the pool writes
// with synchronous=FULL (2), so a commit survives a power failure once it
// returned.
func TestSQLiteSynchronousFull(t *testing.T) {
	ctx := context.Background()
	s, err := db.Open(ctx, filepath.Join(t.TempDir(), "l.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Hold several connections at once so more than one is checked.
	conns := make([]interface{ Close() error }, 0, 4)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 4; i++ {
		c, err := dbtest.SQL(s).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var sync int
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if sync != 2 {
			t.Errorf("connection %d: PRAGMA synchronous = %d, want 2 (FULL)", i, sync)
		}
	}
}
