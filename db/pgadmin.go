package db

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, for the admin connection

	"github.com/lohisoft/lohibot/internal/redact"
)

// pgName is what CreatePostgresDatabase and DropPostgresDatabase accept as
// a database name: lower-case letters, digits and underscores, so that the
// name can stand in the statement unquoted.
var pgName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CreatePostgresDatabase creates the empty database name on the PostgreSQL
// server that adminDSN reaches (as a user allowed to create databases).
// It is for tests and maintenance scripts; lohibot itself expects its
// database to exist (lohibot init --db creates the schema in it). It does
// I/O.
func CreatePostgresDatabase(ctx context.Context, adminDSN, name string) error {
	return pgAdmin(ctx, adminDSN, name, "CREATE DATABASE ")
}

// DropPostgresDatabase drops the database name, if it exists, on the
// PostgreSQL server that adminDSN reaches, ending its sessions. It does
// I/O.
func DropPostgresDatabase(ctx context.Context, adminDSN, name string) error {
	return pgAdmin(ctx, adminDSN, name, "DROP DATABASE IF EXISTS ", " WITH (FORCE)")
}

func pgAdmin(ctx context.Context, adminDSN, name, stmt string, tail ...string) error {
	if !pgName.MatchString(name) {
		return fmt.Errorf("db: bad database name %q", name)
	}
	admin, err := sql.Open("pgx", adminDSN)
	if err != nil {
		return fmt.Errorf("db: %s", redact.Error(err))
	}
	defer admin.Close()
	q := stmt + name
	for _, t := range tail {
		q += t
	}
	if _, err := admin.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("db: %s%s: %s", stmt, name, redact.Error(err))
	}
	return nil
}
