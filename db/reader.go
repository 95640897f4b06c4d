package db

import (
	"context"
	"fmt"

	"github.com/lohisoft/lohibot/db/lite"
)

// readerPragmas are the settings of the long reads' read-only connections
// (openReader) beyond lite.OpenReader's own: none. Measured on the audit of
// 1M requests: a 16 MiB page cache instead of SQLite's 2 MiB
// saved nothing (the reads are scans) and cost 80 MB more peak memory;
// mmap_size = 1 GiB saved a tenth of the CPU (no read syscalls) but mapped
// the file into every reader, 850 MB peak RSS, against a bound of 300 MB.
var readerPragmas []string

// openReader opens a read-only fast-path connection to the store's SQLite
// file, for one long read by one goroutine: through database/sql the
// driver converts, copies and locks for every column of every row. It
// returns nil and no error when the store is not an SQLite file
// (PostgreSQL), whose reads go through the pool. The caller closes it. It
// does I/O.
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
