package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/mailbot"
)

// imapPasswordEnv holds the IMAP password when --password-file is not given.
const imapPasswordEnv = "LOHIBOT_IMAP_PASSWORD"

func newMailCmd(a *app) *cobra.Command {
	cmd := groupCmd("mail", "The exclusion mailbox: parse, import, watch and review emails")
	cmd.Long = `Webmasters ask by email (message@lohisoft.com) to have their sites excluded.
lohibot classifies each message (exclude, reinclude, other, auto) and names the
sites it asks about. An exclusion is applied at once, with the Message-ID,
sender, date and authentication results as evidence; everything else that
needs a human waits in the review queue. Every message is stored once, raw
bytes included; processing a message again changes nothing.`
	cmd.AddCommand(newMailParseCmd(a), newMailImportCmd(a), newMailWatchCmd(a), newMailReviewCmd(a))
	return cmd
}

// mailParseJSON is the --json form of mail parse (DESIGN.md).
type mailParseJSON struct {
	File      string   `json:"file"`
	MessageID string   `json:"message_id"`
	From      string   `json:"from"`
	Intent    string   `json:"intent"`
	Domains   []string `json:"domains"`
	Reasons   []string `json:"reasons"` // what decided (mailbot.Message.Reasons)
}

func newMailParseCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "parse FILE.eml...",
		Short: "Classify messages without applying them (dry run)",
		Long: `Parse and classify each file as one RFC 5322 message and print its intent
and the sites it names. Nothing is written anywhere. An unreadable file is
reported and makes the exit status 2; the other files are still parsed.`,
		Example: `  lohibot mail parse testdata/mail/010-en-obfuscated-bracket-dot.eml
  lohibot mail parse --json *.eml`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMailParse(a, args)
		},
	}
}

func runMailParse(a *app, files []string) error {
	var bad error
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	for _, f := range files {
		raw, err := mailbot.ReadFile(f)
		if err == nil && len(raw) > mailbot.MaxSize {
			err = fmt.Errorf("%s: larger than the %d MiB limit of a message", f, mailbot.MaxSize>>20)
		}
		if err != nil {
			fmt.Fprintf(a.errOut, "lohibot: %v\n", err)
			bad = &exitError{code: exitBadInput, silent: true}
			continue
		}
		m := mailbot.Parse(raw)
		domains := m.Domains
		if domains == nil {
			domains = []string{}
		}
		reasons := m.Reasons
		if reasons == nil {
			reasons = []string{}
		}
		if a.json {
			if err := a.printJSON(mailParseJSON{File: f, MessageID: m.MessageID, From: m.From,
				Intent: string(m.Intent), Domains: domains, Reasons: reasons}); err != nil {
				return err
			}
			continue
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s", f, m.Intent, orDash(strings.Join(domains, " ")), orDash(m.From))
		if m.Review != "" {
			line += "\treview: " + m.Review
		}
		if len(reasons) > 0 {
			line += "\t" + strings.Join(reasons, "; ")
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bad
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type mailImportOptions struct {
	Paths      []string
	AuthservID string
}

func newMailImportCmd(a *app) *cobra.Command {
	opts := &mailImportOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE.eml|MBOX|MAILDIR...",
		Short: "Apply messages from files, mboxes and Maildirs",
		Long: `Apply every message of the given files: single messages (.eml), mboxes
(recognised by their first "From " line; >From quoting is undone) and Maildirs
(folders with cur/ and new/). Exclusions are applied at once, the rest is
stored and queued for review as the watcher would. Messages already stored
are skipped. Prints a summary; exit 1 when some messages failed.`,
		Example: `  lohibot mail import ~/mail/exclusions.mbox
  lohibot mail import ~/Maildir/.Exclusions message.eml --json`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return runMailImport(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.AuthservID, "authserv-id", "", authservIDUsage)
	return cmd
}

// authservIDUsage documents --authserv-id of mail import and mail watch.
const authservIDUsage = "authserv-id of our receiving mail server: only its Authentication-Results headers, on top, are trusted (none when empty: every message is unauthenticated)"

func runMailImport(ctx context.Context, a *app, opts *mailImportOptions) error {
	for _, p := range opts.Paths {
		if _, err := mailbot.DetectSource(p); err != nil {
			return &exitError{code: exitBadInput, err: err}
		}
	}
	pol, store, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	logger := a.newLogger(slog.LevelWarn)
	proc := mailbot.New(pol, &mailbot.Options{Logger: logger, AuthservID: opts.AuthservID})
	var mu sync.Mutex // guards errOut
	sum, err := proc.Import(ctx, opts.Paths, &mailbot.ImportOptions{
		OnResult: func(source string, res *mailbot.Result, err error) {
			if err == nil && res.Outcome != mailbot.OutcomeFailed {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fmt.Fprintf(a.errOut, "lohibot: %s: %v\n", source, err)
			} else {
				fmt.Fprintf(a.errOut, "lohibot: %s: %s\n", source, res.ReviewReason)
			}
		},
	})
	if sum != nil {
		if perr := printMailSummary(a, "imported", sum); perr != nil {
			return perr
		}
	}
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return refused
	}
	return nil
}

func printMailSummary(a *app, verb string, sum *mailbot.ImportSummary) error {
	if a.json {
		return a.printJSON(sum)
	}
	fmt.Fprintf(a.out, "%s %d messages: %d excluded, %d queued for review, %d ignored, %d failed, %d already seen\n",
		verb, sum.Messages, sum.Excluded, sum.Queued, sum.Ignored, sum.Failed, sum.Duplicates)
	return nil
}

type mailWatchOptions struct {
	IMAP            string
	PasswordFile    string
	Insecure        bool
	Once            bool
	ProcessedFolder string
	ReviewFolder    string
	AuthservID      string
}

func newMailWatchCmd(a *app) *cobra.Command {
	opts := &mailWatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch --imap imaps://USER@HOST[:PORT]/MAILBOX",
		Short: "Watch the exclusion mailbox over IMAP and apply what arrives",
		Long: `Watch an IMAP mailbox and apply every message at once: exclusions are
committed to the database, then the message is moved to the processed folder,
or to the review folder when it waits for staff (both created when missing).
imaps:// is implicit TLS (port 993), imap:// uses STARTTLS (port 143). The
watcher waits with IDLE, polls when the server has no IDLE, and reconnects
with backoff after failures. --once processes what is there and exits.

The password comes from --password-file or the LOHIBOT_IMAP_PASSWORD
environment variable, never from the command line. --insecure allows a
plaintext connection or an unverified certificate, for tests against a
server on loopback only.`,
		Example: `  LOHIBOT_IMAP_PASSWORD=... lohibot mail watch --imap imaps://message%40lohisoft.com@imap.lohisoft.com/INBOX
  lohibot mail watch --imap imaps://bot@127.0.0.1:10993/INBOX --password-file pw --insecure --once`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMailWatch(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.IMAP, "imap", "", "the mailbox: imaps://USER@HOST[:PORT]/MAILBOX or imap://... (STARTTLS)")
	cmd.Flags().StringVar(&opts.PasswordFile, "password-file", "", "file holding the IMAP password (default: $"+imapPasswordEnv+")")
	cmd.Flags().BoolVar(&opts.Insecure, "insecure", false, "allow plaintext or an unverified certificate (loopback servers only)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "process the messages there are, then exit")
	cmd.Flags().StringVar(&opts.ProcessedFolder, "processed-folder", mailbot.DefaultProcessedFolder, "folder for applied messages")
	cmd.Flags().StringVar(&opts.ReviewFolder, "review-folder", mailbot.DefaultReviewFolder, "folder for messages waiting for staff")
	cmd.Flags().StringVar(&opts.AuthservID, "authserv-id", "", authservIDUsage)
	return cmd
}

func runMailWatch(ctx context.Context, a *app, opts *mailWatchOptions) error {
	if opts.IMAP == "" {
		return usageErrorf("mail watch needs --imap imaps://USER@HOST[:PORT]/MAILBOX")
	}
	ep, err := mailbot.ParseIMAPURL(opts.IMAP)
	if err != nil {
		return &exitError{code: exitBadInput, err: err}
	}
	if opts.Insecure && !ep.IsLoopback() {
		return usageErrorf("--insecure is only allowed for a server on loopback, not %s", ep.Host)
	}
	if opts.ProcessedFolder == "" || opts.ReviewFolder == "" {
		return usageErrorf("folder names must not be empty")
	}
	password, err := readIMAPPassword(a, opts.PasswordFile)
	if err != nil {
		return err
	}
	if opts.Insecure {
		fmt.Fprintf(a.errOut, "lohibot: warning: --insecure: the connection to %s may be unencrypted or its certificate unverified; use it only for local tests\n", ep.Host)
	}
	pol, store, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	logger := a.newLogger(slog.LevelInfo)
	proc := mailbot.New(pol, &mailbot.Options{Logger: logger, AuthservID: opts.AuthservID})
	var (
		mu  sync.Mutex // guards sum
		sum mailbot.ImportSummary
	)
	w := mailbot.NewWatcher(proc, &mailbot.WatchOptions{
		Endpoint:        *ep,
		Password:        password,
		Insecure:        opts.Insecure,
		ProcessedFolder: opts.ProcessedFolder,
		ReviewFolder:    opts.ReviewFolder,
		Once:            opts.Once,
		Logger:          logger,
		OnMessage: func(ev mailbot.WatchEvent) {
			mu.Lock()
			defer mu.Unlock()
			sum.Messages++
			switch {
			case ev.Result.Duplicate:
				sum.Duplicates++
			case ev.Result.Outcome == mailbot.OutcomeExcluded:
				sum.Excluded++
				logger.Info("exclusion applied", "sites", strings.Join(ev.Result.Excluded, " "),
					"time_to_exclusion", ev.TimeToExclusion().Round(time.Millisecond).String())
			case ev.Result.Outcome == mailbot.OutcomeQueued:
				sum.Queued++
			case ev.Result.Outcome == mailbot.OutcomeIgnored:
				sum.Ignored++
			default:
				sum.Failed++
			}
		},
	})
	runErr := w.Run(ctx)
	mu.Lock()
	final := sum
	mu.Unlock()
	if err := printMailSummary(a, "processed", &final); err != nil {
		return err
	}
	return runErr
}

// readIMAPPassword reads the password from file, or from the environment.
func readIMAPPassword(a *app, file string) (string, error) {
	var pw string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", &exitError{code: exitBadInput, err: fmt.Errorf("password file: %w", err)}
		}
		pw = strings.TrimRight(string(b), "\r\n")
	} else {
		pw = a.getenv(imapPasswordEnv)
	}
	if pw == "" {
		return "", usageErrorf("no IMAP password: give --password-file FILE or set %s", imapPasswordEnv)
	}
	return pw, nil
}

type mailReviewOptions struct {
	ID    int64
	By    string
	Sites []string
}

func newMailReviewCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review [list|approve ID|dismiss ID]",
		Short: "List, approve or dismiss the messages waiting for staff",
		Long: `Messages that need a human wait here: re-inclusion requests (never applied
automatically), exclusion requests that name no site, failed or malformed
messages, and everything else a person should read. "review" alone lists them.`,
		Example: `  lohibot mail review
  lohibot mail review approve 12 --by anna
  lohibot mail review approve 15 --by anna --site example.com
  lohibot mail review dismiss 13 --by anna`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMailReviewList(cmd.Context(), a)
		},
	}
	cmd.AddCommand(newMailReviewListCmd(a), newMailReviewApproveCmd(a), newMailReviewDismissCmd(a))
	return cmd
}

func newMailReviewListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the messages waiting for staff",
		Example: "  lohibot mail review list\n  lohibot mail review list --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMailReviewList(cmd.Context(), a)
		},
	}
}

func runMailReviewList(ctx context.Context, a *app) error {
	pol, store, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	items, err := mailbot.New(pol, nil).Pending(ctx)
	if err != nil {
		return err
	}
	if a.json {
		for i := range items {
			if err := a.printJSON(&items[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(items) == 0 {
		fmt.Fprintln(a.errOut, "no message waits for review")
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDATE\tFROM\tINTENT\tDOMAINS\tSUBJECT\tREASON")
	for _, it := range items {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", it.ID, humanTime(it.Date), orDash(it.From),
			it.Intent, orDash(strings.Join(it.Domains, " ")), orDash(oneLine(it.Subject, 60)), it.Reason)
	}
	return tw.Flush()
}

// oneLine shortens s to n runes on one line, for tables.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

func parseReviewID(cmd *cobra.Command, arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErrorf("bad message id %q: want the number shown by 'lohibot mail review list'\nSee '%s --help'.", arg, cmd.CommandPath())
	}
	return id, nil
}

func newMailReviewApproveCmd(a *app) *cobra.Command {
	opts := &mailReviewOptions{}
	cmd := &cobra.Command{
		Use:   "approve ID --by WHO [--site DOMAIN...]",
		Short: "Apply a queued message (needs --by)",
		Long: `Apply a queued message as the staff member named by --by. A re-inclusion
request re-includes its sites; an exclusion request excludes them. --site
replaces the sites named in the message, and is needed when it names none
(an exclusion request without a domain, or another message that staff decide
is an exclusion request).`,
		Example: `  lohibot mail review approve 12 --by anna
  lohibot mail review approve 15 --by anna --site example.com --site example.org`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseReviewID(cmd, args[0])
			if err != nil {
				return err
			}
			opts.ID = id
			if opts.By == "" {
				return usageErrorf("approving needs --by WHO\nSee '%s --help'.", cmd.CommandPath())
			}
			return runMailReviewApprove(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who approves (required)")
	cmd.Flags().StringSliceVar(&opts.Sites, "site", nil, "the sites to act on, instead of those the message names (repeatable)")
	return cmd
}

func runMailReviewApprove(ctx context.Context, a *app, opts *mailReviewOptions) error {
	pol, store, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	ap, err := mailbot.New(pol, nil).Approve(ctx, opts.ID, opts.By, opts.Sites)
	if err != nil {
		return reviewError(err)
	}
	if a.json {
		if ap.NotExcluded == nil {
			ap.NotExcluded = []string{}
		}
		return a.printJSON(ap)
	}
	switch ap.Action {
	case "reinclude":
		fmt.Fprintln(a.out, reincludeLine(ap))
	default:
		fmt.Fprintf(a.out, "approved message %d: excluded %s\n", ap.ID, strings.Join(ap.Sites, " "))
	}
	return nil
}

func newMailReviewDismissCmd(a *app) *cobra.Command {
	opts := &mailReviewOptions{}
	cmd := &cobra.Command{
		Use:     "dismiss ID --by WHO",
		Short:   "Close a queued message without action (needs --by)",
		Example: `  lohibot mail review dismiss 13 --by anna`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseReviewID(cmd, args[0])
			if err != nil {
				return err
			}
			opts.ID = id
			if opts.By == "" {
				return usageErrorf("dismissing needs --by WHO\nSee '%s --help'.", cmd.CommandPath())
			}
			return runMailReviewDismiss(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who dismisses (required)")
	return cmd
}

func runMailReviewDismiss(ctx context.Context, a *app, opts *mailReviewOptions) error {
	pol, store, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := mailbot.New(pol, nil).Dismiss(ctx, opts.ID, opts.By); err != nil {
		return reviewError(err)
	}
	if a.json {
		return a.printJSON(map[string]any{"id": opts.ID, "review_status": mailbot.ReviewDismissed, "by": opts.By})
	}
	fmt.Fprintf(a.out, "dismissed message %d\n", opts.ID)
	return nil
}

// reviewError maps review failures to the exit codes: an unknown id or a
// missing --site is bad input (2), a message already reviewed is refused (1).
func reviewError(err error) error {
	switch {
	case errors.Is(err, mailbot.ErrNoMessage):
		return &exitError{code: exitBadInput, err: err}
	case errors.Is(err, mailbot.ErrNeedSites):
		return &exitError{code: exitBadInput, err: fmt.Errorf("%w (use --site DOMAIN)", err)}
	case errors.Is(err, mailbot.ErrNotPending):
		return &exitError{code: exitRefused, err: err}
	}
	return err
}

// reincludeLine says what approving a re-inclusion did, naming each site
// once: the ones re-included, and apart the ones that were not excluded.
func reincludeLine(ap *mailbot.Approval) string {
	var done []string
	for _, s := range ap.Sites {
		if !slices.Contains(ap.NotExcluded, s) {
			done = append(done, showSite(s))
		}
	}
	var idle []string
	for _, s := range ap.NotExcluded {
		idle = append(idle, showSite(s))
	}
	line := fmt.Sprintf("approved message %d: ", ap.ID)
	switch {
	case len(idle) == 0:
		return line + "re-included " + strings.Join(done, ", ")
	case len(done) == 0:
		return line + "nothing to re-include: " + strings.Join(idle, ", ") + " " + plural(len(idle), "was", "were") + " not excluded"
	default:
		return line + "re-included " + strings.Join(done, ", ") + "; " + strings.Join(idle, ", ") + " " +
			plural(len(idle), "was", "were") + " not excluded"
	}
}
