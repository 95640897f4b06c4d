package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/redact"
)

type initOptions struct {
	printOptions
	DSN string // --db: the database to create or upgrade
}

func newInitCmd(a *app, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{}
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
			opts.DSN = a.dsn
			return runCommand(cmd, a, opts, runF, runInit)
		},
	}
}

type initJSON struct {
	Database string `json:"database"`
	Engine   string `json:"engine"`
	Created  bool   `json:"created"`
	Version  int    `json:"schema_version"`
}

// runInit creates the database at opts.DSN, or upgrades it: the one run
// function that may create a database.
func runInit(ctx context.Context, opts *initOptions, out io.Writer) error {
	created := false
	s, err := db.OpenExisting(ctx, opts.DSN)
	if err != nil {
		if !errorsIsNoDatabase(err) {
			return err
		}
		if s, err = db.Open(ctx, opts.DSN); err != nil {
			return err
		}
		created = true
	}
	defer s.Close()
	v, err := s.Version(ctx)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	where := redact.String(opts.DSN)
	if opts.JSON {
		return printJSON(out, initJSON{Database: where, Engine: string(s.Dialect), Created: created, Version: v})
	}
	verb := "database ready at"
	if created {
		verb = "created database at"
	}
	fmt.Fprintf(out, "%s %s (%s, schema version %d)\n", verb, where, s.Dialect, v)
	return nil
}

func errorsIsNoDatabase(err error) bool { return errors.Is(err, db.ErrNoDatabase) }
