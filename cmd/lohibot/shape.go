package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/redact"
	"github.com/lohisoft/lohibot/policy"
)

// This file holds the one shape of every command (docs/architecture.md, "A command"):
// the options every command's options embed, and the helpers that end a
// command's RunE by calling its run function, or its test hook.

// withStore is the prologue of every command on the database: open it
// (--db; nothing is created), call f, close it.
func (a *app) withStore(ctx context.Context, f func(*db.Store) error) error {
	s, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return f(s)
}

// withPolicy is withStore for the commands that read or change the policy:
// f gets the policy over the open database (its Store is the database).
func (a *app) withPolicy(ctx context.Context, f func(*policy.Policy) error) error {
	p, s, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return f(p)
}

// printOptions are what every command's options hold for printing besides
// the output writer its run function takes: the --json switch and where
// remarks go.
type printOptions struct {
	JSON bool // --json: data as JSON, one object per line
	// ErrOut receives warnings and remarks, never data (standard error,
	// control characters escaped); nil discards them.
	ErrOut io.Writer
}

// printOptions returns the global --json and standard error, for a
// command's options.
func (a *app) printOptions() printOptions { return printOptions{JSON: a.json, ErrOut: a.errOut} }

func (o *printOptions) setPrint(p printOptions) { *o = p }

// policyOptions is embedded in the options of the commands on the policy:
// the command opens it, a test sets it.
type policyOptions struct {
	Policy *policy.Policy
}

func (o *policyOptions) setPolicy(p *policy.Policy) { o.Policy = p }

// storeOptions is embedded in the options of the commands that read the
// database without the policy: the command opens it, a test sets it.
type storeOptions struct {
	Store *db.Store
}

func (o *storeOptions) setStore(s *db.Store) { o.Store = s }

// printer is what every command's options embed (printOptions).
type printer interface{ setPrint(printOptions) }

// runCommand ends the RunE of a command that needs no database, once its
// flags and arguments are in opts: the test hook runF when there is one,
// else run, printing to standard output.
func runCommand[O printer](cmd *cobra.Command, a *app, opts O, runF func(O) error, run func(context.Context, O, io.Writer) error) error {
	opts.setPrint(a.printOptions())
	if runF != nil {
		return runF(opts)
	}
	return run(cmd.Context(), opts, a.out)
}

// runOnPolicy is runCommand for a command on the policy: run gets the
// policy over the open database (--db), closed when run returns. The
// database is opened only after every flag and argument is checked, and
// never for runF.
func runOnPolicy[O interface {
	printer
	setPolicy(*policy.Policy)
}](cmd *cobra.Command, a *app, opts O, runF func(O) error, run func(context.Context, O, io.Writer) error) error {
	opts.setPrint(a.printOptions())
	if runF != nil {
		return runF(opts)
	}
	return a.withPolicy(cmd.Context(), func(p *policy.Policy) error {
		opts.setPolicy(p)
		return run(cmd.Context(), opts, a.out)
	})
}

// runOnStore is runOnPolicy for a command that reads the database only.
func runOnStore[O interface {
	printer
	setStore(*db.Store)
}](cmd *cobra.Command, a *app, opts O, runF func(O) error, run func(context.Context, O, io.Writer) error) error {
	opts.setPrint(a.printOptions())
	if runF != nil {
		return runF(opts)
	}
	return a.withStore(cmd.Context(), func(s *db.Store) error {
		opts.setStore(s)
		return run(cmd.Context(), opts, a.out)
	})
}

// errOut is where remarks go: ErrOut, or nowhere when it is nil.
func (o printOptions) errOut() io.Writer {
	if o.ErrOut == nil {
		return io.Discard
	}
	return o.ErrOut
}

// newLogger returns a text logger on ErrOut at level whose lines never
// carry a secret.
func (o printOptions) newLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(o.errOut(), &slog.HandlerOptions{Level: level, ReplaceAttr: redact.ReplaceAttr}))
}
