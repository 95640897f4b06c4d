// Package db is lohibot's storage layer: the gorm models of every table,
// Open, which connects to the embedded SQLite file or to PostgreSQL and
// brings the schema up to date, and the queries, as methods of Store taking
// a ctx, one file per entity (exclusions.go, events.go, sites.go,
// mail_messages.go, requests.go, cycles.go, robots.go, index.go, ...).
//
// One database holds everything: the crawl list,
// exclusions and their append-only event log, mail messages, robots.txt
// snapshots, the request log, crawl cycles with their budget ledger, host
// leases, and the index (pages and anchors).
//
// Store.InTx runs a function in a transaction and hands it a *Tx, whose
// methods are the same queries run inside the transaction; a Tx holds no
// handle to the Store. Single-row lookups return an error wrapping
// ErrNotFound, which callers test with errors.Is.
//
// The crawler sees the database through two interfaces: a Writer, which
// commits its writes in groups, and a Lister, which yields the crawl list
// for a crawl of all of it. Each engine implements them (packages
// db/sqlite and db/postgres); package db/engine picks the store's. A
// Writer runs the crawler's work in write transactions (WriteTx,
// writetx.go): on SQLite a FastConn, a connection of the writer's own
// through the fast path of package db/lite (statements prepared once); on
// PostgreSQL a PoolTx. The write-path queries are functions taking the
// WriteTx, grouped per entity with the rest (leases.go, requests.go,
// cycles.go, robots.go, index.go, events.go).
//
// No SQL lives outside db: TestNoSQLOutsideDB (nosql_test.go) fails when a
// file elsewhere gains an SQL string, a database driver or gorm. Store's
// handles do not leave the package; tests that poke rows reach them through
// internal/testenv/dbtest. The audit reads through audit.go (the request
// log as one stream) and the entity files.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	sqlite "github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/lohisoft/lohibot/db/lite"
	"github.com/lohisoft/lohibot/internal/redact"
)

// DefaultDSN is the database used when neither --db nor LOHIBOT_DB names one:
// an SQLite file in the working directory.
const DefaultDSN = "lohibot.db"

// ErrNotFound is returned when a looked-up row does not exist. It hides
// gorm's own error from callers.
var ErrNotFound = errors.New("db: not found")

// ErrTooNew is returned by Open when the database was written by a newer
// lohibot, whose schema this binary does not know. Nothing is changed.
var ErrTooNew = errors.New("db: database schema is newer than this lohibot")

// ErrBadDSN is returned (wrapped) by Open when the DSN cannot name a
// database: an unknown scheme, an empty SQLite path, or an SQLite file in a
// folder that does not exist. Nothing is created.
var ErrBadDSN = errors.New("db: bad database name")

// ErrNoDatabase is returned (wrapped in a *NoDatabaseError) by OpenExisting
// when the DSN names no lohibot database: an SQLite file that does not exist
// (or is empty), or a PostgreSQL database without lohibot's schema. Nothing
// is created.
var ErrNoDatabase = errors.New("db: no lohibot database")

// NoDatabaseError says which DSN names no lohibot database. Its message
// tells how to create one.
type NoDatabaseError struct {
	DSN string // as given, with any password masked
}

func (e *NoDatabaseError) Error() string {
	return fmt.Sprintf("no lohibot database at %s (create it with lohibot init --db %s)", e.DSN, e.DSN)
}

// Is makes errors.Is(err, ErrNoDatabase) true.
func (e *NoDatabaseError) Is(target error) bool { return target == ErrNoDatabase }

// Dialect names the engine behind a Store.
type Dialect string

// The engines lohibot speaks.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store is an open lohibot database. It is safe for concurrent use by
// multiple goroutines; several processes may share one database (SQLite in
// WAL mode with a busy timeout, or PostgreSQL).
type Store struct {
	// Dialect is the engine in use.
	Dialect Dialect

	// gdb is the gorm handle, for the models and the migrations; pool is
	// its connection pool, for the queries that skip gorm. Neither leaves
	// the package: tests reach them through internal/testenv/dbtest.
	gdb  *gorm.DB
	pool *sql.DB
	idle int // the idle connections pool keeps

	sealer  sealer                     // the background sequencer (db/sequencer.go)
	sealVia atomic.Pointer[sealWriter] // who writes the log's appends (SealVia)
	outage  outage                     // the database unreachable, for Retry (retry.go)

	queries // the entity queries, on the pool
}

// PostgresConns bounds the connections a process's pool holds on
// PostgreSQL. Each is a server process, costly to start and to warm up, so
// a pool holds few and keeps them: a crawler's writer takes one, its lease
// statements (its batched starts among them) at most PostgresConns-1 at
// once, and its reads and its log sequencer what is free. Nothing holds a
// connection while it waits for another but the sequencer's append (its
// lock, then a transaction), and a process appends once at a time, so the
// pool never waits on itself for good. docs/sizing.md gives the figures
// behind the number.
const PostgresConns = 3

// Open connects to the database named by dsn, creating it when it does not
// exist, and migrates it to the current schema version: what `lohibot init`
// (and the demo, and tests) do. Every other command uses OpenExisting. A
// plain path or sqlite://PATH opens (creating if needed) an
// SQLite file in WAL mode with foreign keys on and a busy timeout;
// postgres:// or postgresql:// opens PostgreSQL. An empty dsn means
// DefaultDSN. Open does I/O and may block while another process holds a
// write lock.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, true)
}

// OpenExisting is Open for a database that must exist already: when dsn
// names none (a missing or empty SQLite file, a PostgreSQL database without
// lohibot's schema) it returns a *NoDatabaseError and creates nothing. An
// existing database of an older schema is upgraded.
func OpenExisting(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, false)
}

func open(ctx context.Context, dsn string, create bool) (*Store, error) {
	if dsn == "" {
		dsn = DefaultDSN
	}
	var (
		dialector gorm.Dialector
		dialect   Dialect
		pgName    string // the PostgreSQL database the DSN names
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			// pgx quotes the DSN in its error: say only what is wrong.
			return nil, fmt.Errorf("%w: PostgreSQL DSN %s does not parse: %s", ErrBadDSN, redact.String(dsn), redact.Error(err))
		}
		dialector = postgres.Open(dsn)
		dialect = Postgres
		pgName = cfg.Database
	default:
		path := strings.TrimPrefix(dsn, "sqlite://")
		if path == "" {
			return nil, fmt.Errorf("%w: empty SQLite path in %q", ErrBadDSN, dsn)
		}
		if strings.Contains(path, "://") {
			return nil, fmt.Errorf("%w: unsupported database %q: use a file path, sqlite://PATH or postgres://", ErrBadDSN, dsn)
		}
		if dir := filepath.Dir(path); dir != "" {
			if _, err := os.Stat(dir); err != nil {
				return nil, fmt.Errorf("%w: folder of %s: %w", ErrBadDSN, path, err)
			}
		}
		if err := checkSQLiteFile(path); err != nil {
			return nil, err
		}
		if !create && !sqliteFileExists(path) {
			return nil, &NoDatabaseError{DSN: dsn}
		}
		if err := sqliteWAL(ctx, path); err != nil {
			var foreign *foreignSQLite
			switch {
			case errors.As(err, &foreign) && !create:
				return nil, &NoDatabaseError{DSN: redact.String(dsn)}
			case errors.As(err, &foreign):
				return nil, foreignDatabase(dsn, foreign.table)
			}
			return nil, err
		}
		dialector = sqlite.Open(sqliteDSN(path))
		dialect = SQLite
	}
	gdb, err := gorm.Open(dialector, &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		if missingPostgresDB(err) {
			return nil, noPostgresDB(pgName, dsn)
		}
		return nil, fmt.Errorf("db: open: %s", redact.Error(err))
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		return nil, fmt.Errorf("db: open: %w", err)
	}
	idle := 8 // SQLite: a few connections are plenty; each applies the pragmas of the DSN
	if dialect == Postgres {
		// See PostgresConns. Every connection is kept: with half kept, a
		// crawler's bursts opened and closed about 200 per crawl of
		// 21,000 requests.
		idle = PostgresConns
	}
	sqlDB.SetMaxOpenConns(idle)
	sqlDB.SetMaxIdleConns(idle)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		if missingPostgresDB(err) {
			return nil, noPostgresDB(pgName, dsn)
		}
		return nil, fmt.Errorf("db: connect: %s", redact.Error(err))
	}
	s := &Store{gdb: gdb, Dialect: dialect, pool: sqlDB, idle: idle, queries: queries{g: gdb, dialect: dialect}}
	before, err := s.Version(ctx) // 0 for a new database
	if err == nil && before == len(migrations) {
		// Up to date, as nearly always: one read says so. The checks
		// below take two more round trips (the schema, and migrate's own
		// read of its version), on a connection just made.
		return s, nil
	}
	ok, err := s.hasSchema(ctx)
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("db: connect: %s", redact.Error(err))
	}
	if !ok && !create {
		sqlDB.Close()
		return nil, &NoDatabaseError{DSN: redact.String(dsn)}
	}
	if !ok {
		// Creating: only in an empty database. Tables of another program
		// mean --db names the wrong database; lohibot's would be mixed
		// into it.
		other, err := s.someTable(ctx)
		if err == nil && other != "" {
			// A concurrent init may have just created the schema (all of
			// it in one transaction): then the tables are lohibot's.
			if ok, err = s.hasSchema(ctx); ok {
				other = ""
			}
		}
		if err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("db: connect: %s", redact.Error(err))
		}
		if other != "" {
			sqlDB.Close()
			return nil, foreignDatabase(dsn, other)
		}
	}
	if err := s.migrate(ctx); err != nil {
		sqlDB.Close()
		return nil, err
	}
	if before > 0 && before < logMigration {
		// An upgraded database: its log starts from the rows already there.
		if err := s.upgradeLog(ctx); err != nil {
			sqlDB.Close()
			return nil, err
		}
	}
	return s, nil
}

// missingPostgresDB reports whether err is PostgreSQL saying that the
// database the DSN names does not exist (SQLSTATE 3D000,
// invalid_catalog_name): a typo in --db, not an unreachable server.
func missingPostgresDB(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "3D000"
}

// noPostgresDB is the error for a DSN naming a PostgreSQL database that does
// not exist. It wraps ErrNoDatabase; lohibot init cannot create it (the
// server's owner does), so it says how.
func noPostgresDB(name, dsn string) error {
	d := redact.String(dsn)
	return fmt.Errorf("%w at %s: PostgreSQL has no database %q (create it with createdb %s, then lohibot init --db %s)",
		ErrNoDatabase, d, name, name, d)
}

// sqliteFileExists reports whether path is an SQLite file with content (an
// in-memory or URI name counts as existing: SQLite decides).
func sqliteFileExists(path string) bool {
	if strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}

// someTable returns the name of a table of the database ("" when it has
// none): the first in name order, of the schemas a lohibot database would
// use.
func (s *Store) someTable(ctx context.Context) (string, error) {
	var q string
	if s.Dialect == Postgres {
		q = "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = ANY (current_schemas(false)) ORDER BY tablename LIMIT 1"
	} else {
		q = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 1"
	}
	var name string
	err := s.pool.QueryRowContext(ctx, q).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return name, err
}

// hasSchema reports whether the database holds lohibot's schema_version
// table. A database without it is not a lohibot database, whatever else it
// holds.
func (s *Store) hasSchema(ctx context.Context) (bool, error) {
	var n int
	var q string
	if s.Dialect == Postgres {
		q = "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'schema_version' AND schemaname = ANY (current_schemas(false))"
	} else {
		q = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
	}
	if err := s.pool.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// sqliteHeader starts every non-empty SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// checkSQLiteFile refuses, with ErrBadDSN, a path that names a folder or a
// non-empty file that is not an SQLite database. A missing or empty file is
// fine: Open creates the database.
func checkSQLiteFile(path string) error {
	if strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil // missing (created by Open) or unreadable (SQLite says why)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	if st.IsDir() {
		return fmt.Errorf("%w: %s is a folder, not an SQLite file", ErrBadDSN, path)
	}
	head := make([]byte, len(sqliteHeader))
	n, _ := io.ReadFull(f, head)
	if n > 0 && string(head[:n]) != sqliteHeader {
		return fmt.Errorf("%w: %s is not an SQLite database", ErrBadDSN, path)
	}
	return nil
}

// sqliteWALWait bounds how long sqliteWAL retries, like the busy timeout of
// sqliteDSN.
const sqliteWALWait = 30 * time.Second

// sqliteWAL puts the SQLite file at path in WAL mode (creating it when it is
// missing), waiting while another connection holds a lock that prevents it.
// It does I/O and may block up to sqliteWALWait.
//
// The journal_mode(WAL) pragma of sqliteDSN cannot be left to do this on a
// file still in rollback mode (a new one): it reads the header and then
// needs the write lock to rewrite it, and SQLite never calls the busy
// handler for such an upgrade of a read to a write (waiting could
// deadlock); it fails at once with SQLITE_BUSY when a concurrent first open
// holds the lock. Here the pragma runs alone in autocommit, so a retry after
// SQLITE_BUSY starts afresh. Once the header says WAL, the pragma of every
// connection only reads.
func sqliteWAL(ctx context.Context, path string) error {
	if strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") || sqliteInWAL(path) {
		return nil
	}
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return fmt.Errorf("db: open: %w", err)
	}
	defer conn.Close()
	// Another program's database is refused as it is: turned to WAL, its
	// file would change (its header, and a -wal file beside it).
	if other, err := sqliteForeignTable(ctx, conn); err != nil {
		return fmt.Errorf("db: open: %w", err)
	} else if other != "" {
		return &foreignSQLite{table: other}
	}
	deadline := time.Now().Add(sqliteWALWait)
	pause := 5 * time.Millisecond
	for {
		var mode string
		err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil {
			if mode != "wal" {
				return fmt.Errorf("db: open: %s stays in journal mode %q, want wal", path, mode)
			}
			return nil
		}
		if !sqliteBusy(err) || time.Now().After(deadline) {
			return fmt.Errorf("db: open: WAL mode for %s: %w", path, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("db: open: WAL mode for %s: %w", path, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// foreignDatabase is init's refusal of the database dsn names, which holds
// another program's table and not lohibot's.
func foreignDatabase(dsn, table string) error {
	return fmt.Errorf("%w: %s is not a lohibot database and not empty (it has a table %q): name a new file or an empty database",
		ErrBadDSN, redact.String(dsn), table)
}

// foreignSQLite is sqliteWAL's refusal of a database that holds another
// program's tables and not lohibot's.
type foreignSQLite struct{ table string }

func (e *foreignSQLite) Error() string {
	return fmt.Sprintf("not a lohibot database (it has a table %q)", e.table)
}

// sqliteForeignTable returns a table of the database conn is open on when
// it has no schema_version table (lohibot's), or "" when it has one or no
// table at all. It does I/O.
func sqliteForeignTable(ctx context.Context, conn *sql.DB) (string, error) {
	var ours int
	var other sql.NullString
	err := conn.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'),
		(SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 1)`).Scan(&ours, &other)
	if err != nil || ours > 0 {
		return "", err
	}
	return other.String, nil
}

// sqliteInWAL reports whether the SQLite file at path is in WAL mode: bytes
// 18 and 19 of its header (the file format write and read versions) are 2.
func sqliteInWAL(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 20)
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return string(head[:len(sqliteHeader)]) == sqliteHeader && head[18] == 2 && head[19] == 2
}

// sqliteBusy reports whether err is SQLite's SQLITE_BUSY (any extended
// code of it), as the driver's *sqlite.Error reports it.
func sqliteBusy(err error) bool {
	var ce interface{ Code() int }
	return errors.As(err, &ce) && ce.Code()&0xff == sqliteBusyCode
}

// sqliteBusyCode is SQLITE_BUSY.
const sqliteBusyCode = 5

// sqliteDSN adds lohibot's connection settings to an SQLite path: WAL so
// readers never block the writer, a busy timeout so writers queue instead of
// failing with "database is locked", immediate transactions so two writers
// never deadlock on a lock upgrade, foreign keys on, and synchronous=FULL
// so that a commit that returned survives a power failure (with NORMAL, the
// last commits in the WAL could be lost after the request they log was
// sent; see docs/architecture.md, "Storage and durability").
func sqliteDSN(path string) string {
	q := url.Values{}
	// The busy timeout, and times as text in sqlitetime.Format, read back
	// as times only in a column declared as one: the layout every lohibot
	// database holds, and the one the fast path (db/lite) reads and writes.
	lite.Settings(q)
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Close stops the background sealer, if one was started, after it sealed a
// last time, ends the wait for an unreachable database (Retry), and closes
// the connection pool.
func (s *Store) Close() error {
	s.StopSealer()
	s.stopProbes()
	return s.pool.Close()
}

// Now returns the current time as lohibot stores it: UTC, microsecond
// precision (PostgreSQL keeps microseconds; SQLite keeps what it is given).
func Now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// IsNotFound reports whether err means a row was not found.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, sql.ErrNoRows)
}

// sqlErrNoRows is database/sql's not-found error.
var sqlErrNoRows = sql.ErrNoRows
