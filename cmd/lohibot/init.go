package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/redact"
)

func newInitCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the database, or upgrade it to this lohibot's schema",
		Long: `Create the lohibot database named by --db (or LOHIBOT_DB, default
lohibot.db), or bring an existing one up to this lohibot's schema, and say
where it is. init is the only command that creates a database: every other
command given a name of no database exits 2 and creates nothing, so a typo
in --db cannot silently start an empty policy. Running init again is safe.
For PostgreSQL the database itself must exist (CREATE DATABASE); init
creates lohibot's tables in it.`,
		Example: `  lohibot init
  lohibot init --db /var/lib/lohibot/lohibot.db
  LOHIBOT_DB=postgres://lohibot@db.internal/lohibot lohibot init`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd.Context(), a)
		},
	}
}

type initJSON struct {
	Database string `json:"database"`
	Engine   string `json:"engine"`
	Created  bool   `json:"created"`
	Version  int    `json:"schema_version"`
}

func runInit(ctx context.Context, a *app) error {
	created := false
	s, err := db.OpenExisting(ctx, a.dsn)
	if err != nil {
		if !errorsIsNoDatabase(err) {
			return err
		}
		if s, err = db.Open(ctx, a.dsn); err != nil {
			return err
		}
		created = true
	}
	defer s.Close()
	v, err := s.Version(ctx)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	where := redact.String(a.dsn)
	if a.json {
		return a.printJSON(initJSON{Database: where, Engine: string(s.Dialect), Created: created, Version: v})
	}
	verb := "database ready at"
	if created {
		verb = "created database at"
	}
	fmt.Fprintf(a.out, "%s %s (%s, schema version %d)\n", verb, where, s.Dialect, v)
	return nil
}

func errorsIsNoDatabase(err error) bool { return errors.Is(err, db.ErrNoDatabase) }
