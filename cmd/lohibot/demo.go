package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/app/demo"
)

// demoOptions are the demo command's flags.
type demoOptions struct {
	printOptions
	DSN      string // --db when given: the demo's database ("": a new one in a temporary folder)
	Terminal bool   // out is a terminal: progress lines are redrawn
	Command  string // this program's name in the commands the demo suggests

	keep  bool
	delay time.Duration
	dir   string
}

func newDemoCmd(a *app, runF func(*demoOptions) error) *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Everything, end to end, on this machine",
		Long: `Run the whole story of lohibot on this machine, with nothing but this
program: a small web of sample sites on loopback (robots.txt rules, a
Crawl-delay, a 429 with Retry-After, a login wall, a site of 40 pages) with
its own DNS server, an IMAP server holding sample emails in several
languages, and a fresh SQLite database in a temporary folder.

The mailbox watcher excludes the sites the emails ask for; the crawler crawls
the rest politely while a second email arrives and stops one site mid-crawl;
the audit checks every promise from the records; a report is written for one
site as HTML; verify tells a genuine crawler address from an impostor. It
takes about a minute (--delay sets the gap between requests to a host).

Nothing leaves the machine. Without --keep the temporary folder is removed at
the end; with --keep the database, the report and the log stay, and the last
lines say which commands to try on them. --db uses that database instead (it
must be new or empty: the demo never mixes its samples into real records);
LOHIBOT_DB is ignored here for the same reason.`,
		Example: `  lohibot demo
  lohibot demo --keep
  lohibot demo --delay 500ms          # a quicker, less realistic run
  lohibot demo --db /tmp/try.db --keep`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DSN = ""
			if cmd.Flags().Changed("db") {
				o.DSN = a.dsn
			}
			if o.delay <= 0 {
				return usageErrorf("--delay must be positive")
			}
			o.Terminal, o.Command = isTerminal(a.out), selfCommand()
			return runCommand(cmd, a, o, runF, runDemo)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.keep, "keep", false, "keep the database, the report and the log, and say which commands to try on them")
	f.DurationVar(&o.delay, "delay", demo.DefaultDelay, "gap between two requests to one host")
	f.StringVar(&o.dir, "dir", "", "folder for the database, report and log, kept at the end (default: a new temporary folder)")
	return cmd
}

// runDemo runs the demo, telling its story on out.
func runDemo(ctx context.Context, o *demoOptions, out io.Writer) error {
	if o.dir != "" {
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return usageErrorf("--dir: %v", err)
		}
	}
	_, err := demo.Run(ctx, &demo.Options{
		Out:      out,
		DSN:      o.DSN,
		Dir:      o.dir,
		Keep:     o.keep || o.dir != "",
		Delay:    o.delay,
		Progress: func(s crawler.Stats, sites int) string { return progressLine(s, int64(sites)) },
		Terminal: o.Terminal,
		Command:  o.Command,
	})
	switch {
	case errors.Is(err, demo.ErrNotEmpty):
		return usageErrorf("%v", err)
	case err != nil && ctx.Err() != nil:
		return &exitError{code: exitRefused, err: errors.New("demo interrupted")}
	}
	return err
}

// selfCommand names this program in the commands the demo suggests:
// "go run ./cmd/lohibot" under go run, else the name it was started by.
func selfCommand() string {
	if exe, err := os.Executable(); err == nil && strings.Contains(exe, "go-build") {
		return "go run ./cmd/lohibot"
	}
	if len(os.Args) > 0 && strings.Contains(os.Args[0], "/") {
		return os.Args[0]
	}
	return "lohibot"
}
