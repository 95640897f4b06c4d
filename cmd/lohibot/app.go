package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/internal/redact"
	"github.com/lohisoft/lohibot/internal/termsafe"
	"github.com/lohisoft/lohibot/policy"
)

// Exit codes of the command-line contract (docs/commands.md).
const (
	exitOK       = 0
	exitRefused  = 1 // a check found a violation, or a request was refused
	exitBadInput = 2 // bad usage or bad input
)

// app holds what every command shares: the streams, the global flags and
// the environment. Commands never touch os.Stdout or os.Exit.
type app struct {
	in io.Reader
	// out is where commands print. In text mode it escapes control
	// characters (termsafe): email and web text never reaches the terminal
	// raw. JSON escapes them itself, so with --json out is rawOut.
	out    io.Writer
	rawOut io.Writer // stdout as given, for JSON
	// errOut is stderr, escaping control characters, always.
	errOut io.Writer
	getenv func(string) string

	dsn      string // --db, LOHIBOT_DB
	resolver string // --resolver HOST:PORT
	json     bool   // --json
}

// exitError carries an exit code. When silent, the command has already said
// what went wrong and main prints nothing more.
type exitError struct {
	code   int
	err    error
	silent bool
	// hint is printed on the lines after the error, such as "See 'lohibot
	// x --help'."; "" for none.
	hint string
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// usageError is bad usage of cmd: exit 2, with a pointer to its help.
func usageError(cmd *cobra.Command, err error) error {
	return &exitError{code: exitBadInput, err: err, hint: fmt.Sprintf("See '%s --help'.", cmd.CommandPath())}
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is bad usage: exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitBadInput, err: fmt.Errorf(format, args...)}
}

// refused is a silent exit 1: the command printed its answer (a violation,
// an excluded site, a disallowed URL).
var refused = &exitError{code: exitRefused, silent: true}

// exitCode maps an error to the contract's exit codes.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, policy.ErrBadSite), errors.Is(err, policy.ErrNoActor), errors.Is(err, db.ErrTooNew),
		errors.Is(err, db.ErrBadDSN), errors.Is(err, db.ErrNoDatabase), errors.As(err, new(*boundedread.TooLargeError)):
		return exitBadInput
	case errors.Is(err, policy.ErrNotExcluded), errors.Is(err, policy.ErrNotListed):
		return exitRefused
	default:
		return exitRefused
	}
}

// run runs lohibot with args and returns the exit code; main is run on the
// process's streams and environment.
func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer, getenv func(string) string) int {
	return runRoot(ctx, newRootCmd, args, in, out, errOut, getenv)
}

// runRoot is run with the command tree newRoot makes (tests give one
// holding only the command under test).
func runRoot(ctx context.Context, newRoot func(*app) *cobra.Command, args []string, in io.Reader, out, errOut io.Writer, getenv func(string) string) int {
	safeOut, safeErr := termsafe.NewWriter(out), termsafe.NewWriter(errOut)
	defer safeOut.Flush()
	defer safeErr.Flush()
	a := &app{in: in, out: safeOut, rawOut: out, errOut: safeErr, getenv: getenv}
	root := newRoot(a)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(safeOut)
	root.SetErr(safeErr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		var ee *exitError
		if !(errors.As(err, &ee) && ee.silent) {
			// Errors may quote a DSN, an IMAP URL or a driver's message:
			// never with a password in it.
			fmt.Fprintln(safeErr, "lohibot:", redact.String(userMessage(err)))
			if ee != nil && ee.hint != "" {
				fmt.Fprintln(safeErr, ee.hint)
			}
		}
		return exitCode(err)
	}
	return exitOK
}

// unknownCommand refuses arguments that name no command, with cobra's
// suggestions, as a usage error.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return usageError(cmd, errors.New(msg))
}

// newRootCmd is the lohibot command with every subcommand.
func newRootCmd(a *app) *cobra.Command {
	root := newBareRootCmd(a)
	root.AddCommand(
		newInitCmd(a, nil),
		newExcludeCmd(a),
		newSitesCmd(a),
		newMailCmd(a),
		newCrawlCmd(a, nil),
		newSearchCmd(a, nil),
		newRobotsCmd(a),
		newVerifyCmd(a, nil),
		newVerifyLogCmd(a, nil),
		newIPsCmd(a, nil),
		newDemoCmd(a, nil),
		newServeCmd(a, nil),
		newAuditCmd(a, nil),
		newReportCmd(a, nil),
		newKeysCmd(a),
		newLogCmd(a),
		newVerifySignatureCmd(a, nil),
		// More commands are registered here, one line each.
	)
	return root
}

// newBareRootCmd is the lohibot command without subcommands: its help, the
// global flags (--db, --resolver, --json) and their checks.
func newBareRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "lohibot",
		Short: "The admin toolkit behind LohiSoftBot, the crawler that keeps its promises",
		Long: `lohibot keeps the promises of LohiSoftBot's public page and proves it: the
crawl list and exclusions, the exclusion mailbox, the polite crawler, audits,
reports and identity checks, all on one policy database.

The database is an SQLite file (default lohibot.db) or PostgreSQL
(postgres://...), chosen by --db or LOHIBOT_DB.

Exit codes: 0 ok, 1 a check found a violation or a request was refused,
2 bad usage or bad input.`,
		SilenceUsage:               true,
		SilenceErrors:              true,
		Args:                       unknownCommand,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if a.json {
				a.out = a.rawOut
			}
			if !cmd.Flags().Changed("db") {
				if env := a.getenv("LOHIBOT_DB"); env != "" {
					a.dsn = env
				}
			} else if strings.TrimSpace(a.dsn) == "" {
				return usageErrorf("--db must name a database: a file path, sqlite://PATH or postgres://...\nSee '%s --help'.", cmd.CommandPath())
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&a.dsn, "db", db.DefaultDSN, "database: an SQLite file path, sqlite://PATH or postgres://... (env LOHIBOT_DB)")
	root.PersistentFlags().StringVar(&a.resolver, "resolver", "", "DNS server HOST:PORT for every lookup instead of the system's")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print data as JSON (one object per line)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError(cmd, err)
	})
	return root
}

// openStore opens the existing policy database named by --db or
// LOHIBOT_DB; a name of no database is bad input (exit 2), and nothing is
// created: only init creates one.
func (a *app) openStore(ctx context.Context) (*db.Store, error) {
	s, err := db.OpenExisting(ctx, a.dsn)
	if err != nil {
		if errors.Is(err, db.ErrNoDatabase) {
			return nil, &exitError{code: exitBadInput, err: err}
		}
		return nil, err
	}
	return s, nil
}

// openPolicy opens the database and returns the policy over it; close the
// store when done.
func (a *app) openPolicy(ctx context.Context) (*policy.Policy, *db.Store, error) {
	s, err := a.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Whoever writes evidence seals it: every few seconds, and when the
	// store is closed (docs/audit-integrity.md).
	s.StartSealer(0, slog.New(slog.NewTextHandler(a.errOut, &slog.HandlerOptions{Level: slog.LevelWarn})))
	return policy.New(s, nil), s, nil
}

// printJSON writes v to w as one line of JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// exactArgs, minArgs wrap cobra's argument checks as usage errors (exit 2).
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return argCountError(cmd, args, countWord(n))
		}
		return nil
	}
}

func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return argCountError(cmd, args, "at least "+countWord(n))
		}
		return nil
	}
}

// countWord spells small counts for usage messages.
func countWord(n int) string {
	if n >= 0 && n < 4 {
		return []string{"no", "one", "two", "three"}[n]
	}
	return fmt.Sprint(n)
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(cmd, fmt.Errorf("unexpected arguments %q", args))
	}
	return nil
}

// byFlag returns the --by value of cmd: the current user when --by is not
// given, a usage error when it is given empty (every change names who made
// it).
func byFlag(cmd *cobra.Command, by string, getenv func(string) string) (string, error) {
	if !cmd.Flags().Changed("by") {
		return currentUser(getenv), nil
	}
	if strings.TrimSpace(by) == "" {
		return "", usageErrorf("--by must name who makes the change\nSee '%s --help'.", cmd.CommandPath())
	}
	return by, nil
}

// currentUser names the person at the terminal, the default --by.
func currentUser(getenv func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := getenv("USER"); u != "" {
		return u
	}
	return "staff"
}
