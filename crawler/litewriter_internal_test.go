package crawler

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lohisoft/lohibot/db"
)

// TestLiteWriterSynchronousFull checks that the crawler's own SQLite
// connection commits the request log with synchronous=FULL (2): a request
// is logged durably before it is sent (issue 13).
func TestLiteWriterSynchronousFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.db")
	s, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lc, err := openLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.close()
	var sync int64
	if err := lc.queryRow("PRAGMA synchronous").Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if sync != 2 {
		t.Errorf("PRAGMA synchronous = %d, want 2 (FULL)", sync)
	}
}
