// Package dbtest gives tests fresh lohibot databases: an SQLite file in a
// temporary folder, and, when LOHIBOT_TEST_POSTGRES holds a DSN, a new
// PostgreSQL database on that server, dropped after the test.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/lohisoft/lohibot/db"
)

// PostgresEnv is the environment variable that holds the DSN of a
// PostgreSQL server for tests; tests on PostgreSQL are skipped without it.
const PostgresEnv = "LOHIBOT_TEST_POSTGRES"

// Engines lists the engines to test: "sqlite" always, "postgres" when
// LOHIBOT_TEST_POSTGRES is set.
func Engines() []string {
	if os.Getenv(PostgresEnv) != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// ForEach runs f as a subtest once per engine, each with a fresh database
// DSN.
func ForEach(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(e, func(t *testing.T) { f(t, DSN(t, e)) })
	}
}

// DSN returns the DSN of a fresh lohibot database of the given engine
// ("sqlite" or "postgres"), created with the current schema as `lohibot
// init` would (commands never create one) and removed when the test ends.
// It skips the test when engine is "postgres" and LOHIBOT_TEST_POSTGRES is
// not set.
func DSN(t testing.TB, engine string) string {
	t.Helper()
	dsn := EmptyDSN(t, engine)
	Init(t, dsn)
	return dsn
}

// Init creates (or upgrades) the lohibot database at dsn, as `lohibot init`
// does.
func Init(t testing.TB, dsn string) {
	t.Helper()
	s, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("dbtest: create %s: %v", dsn, err)
	}
	s.Close()
}

// EmptyDSN returns the DSN of a database that holds nothing: a path where
// no SQLite file exists yet, or an empty PostgreSQL database. Removed when
// the test ends.
func EmptyDSN(t testing.TB, engine string) string {
	t.Helper()
	switch engine {
	case "sqlite":
		return filepath.Join(t.TempDir(), "lohibot.db")
	case "postgres":
		base := os.Getenv(PostgresEnv)
		if base == "" {
			t.Skip(PostgresEnv + " not set")
		}
		return newPostgresDB(t, base)
	}
	t.Fatalf("dbtest: unknown engine %q", engine)
	return ""
}

// Open opens a fresh database of the given engine and closes it when the
// test ends.
func Open(t testing.TB, engine string) *db.Store {
	t.Helper()
	return OpenDSN(t, DSN(t, engine))
}

// OpenDSN opens the database at dsn (one that DSN or Init made) and closes
// it when the test ends; it fails the test when the database cannot be
// opened.
func OpenDSN(t testing.TB, dsn string) *db.Store {
	t.Helper()
	s, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("db.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newPostgresDB(t testing.TB, base string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "lohibot_test_" + hex.EncodeToString(b[:])
	if err := db.CreatePostgresDatabase(context.Background(), base, name); err != nil {
		t.Fatalf("dbtest: create database: %v", err)
	}
	t.Cleanup(func() {
		db.DropPostgresDatabase(context.Background(), base, name)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("dbtest: bad %s: %v", PostgresEnv, err)
	}
	u.Path = "/" + name
	return u.String()
}

// MissingPostgres returns the DSN of a database, named
// lohibot_missing_..., that the test PostgreSQL server does not have (a
// typo in --db). It skips the test when LOHIBOT_TEST_POSTGRES is not set.
func MissingPostgres(t testing.TB) *url.URL {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " not set")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("dbtest: bad %s: %v", PostgresEnv, err)
	}
	var b [6]byte
	rand.Read(b[:])
	u.Path = "/lohibot_missing_" + hex.EncodeToString(b[:])
	return u
}
