package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/mailbot/reply"
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
	cmd.AddCommand(newMailParseCmd(a, nil), newMailImportCmd(a, nil), newMailWatchCmd(a, nil), newMailShowCmd(a, nil), newMailReviewCmd(a))
	return cmd
}

// mailParseJSON is the --json form of mail parse (docs/commands.md).
type mailParseJSON struct {
	File      string   `json:"file"`
	MessageID string   `json:"message_id"`
	From      string   `json:"from"`
	Intent    string   `json:"intent"`
	Domains   []string `json:"domains"`
	Reasons   []string `json:"reasons"` // what decided (mailbot.Message.Reasons)
	Action    string   `json:"action"`  // what mail import would do: apply, review or ignore
}

type mailParseOptions struct {
	printOptions
	Files []string
}

func newMailParseCmd(a *app, runF func(*mailParseOptions) error) *cobra.Command {
	opts := &mailParseOptions{}
	return &cobra.Command{
		Use:   "parse FILE.eml...",
		Short: "Classify messages without applying them (dry run)",
		Long: `Parse and classify each file as one RFC 5322 message and print its intent
and the sites it names, and what mail import would do with it: apply (without a
human), review (queued for staff) or ignore (machine mail). Nothing is written
anywhere. An unreadable file is
reported and makes the exit status 2; the other files are still parsed.`,
		Example: `  lohibot mail parse testdata/mail/010-en-obfuscated-bracket-dot.eml
  lohibot mail parse --json *.eml`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return runCommand(cmd, a, opts, runF, runMailParse)
		},
	}
}

// runMailParse prints the classification of each file; an unreadable one
// is reported and makes the exit status 2.
func runMailParse(_ context.Context, opts *mailParseOptions, out io.Writer) error {
	var bad error
	var tab table
	for _, f := range opts.Files {
		raw, err := mailbot.ReadFile(f)
		if err == nil && len(raw) > mailbot.MaxSize {
			err = fmt.Errorf("%s: larger than the %d MiB limit of a message", f, mailbot.MaxSize>>20)
		}
		if err != nil {
			fmt.Fprintf(opts.errOut(), "lohibot: %v\n", err)
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
		if opts.JSON {
			if err := printJSON(out, mailParseJSON{File: f, MessageID: m.MessageID, From: m.From,
				Intent: string(m.Intent), Domains: domains, Reasons: reasons, Action: string(m.Action)}); err != nil {
				return err
			}
			continue
		}
		row := []string{f, string(m.Intent), string(m.Action), orDash(strings.Join(domains, " ")), orDash(m.From)}
		if m.Review != "" {
			row = append(row, "review: "+m.Review)
		}
		if len(reasons) > 0 {
			row = append(row, strings.Join(reasons, "; "))
		}
		tab.add(row...)
	}
	if err := tab.write(out); err != nil {
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
	printOptions
	policyOptions
	Sender *reply.SMTP // from the --smtp flags; nil: no replies

	Paths      []string
	AuthservID string
	SMTP       smtpFlags
	Trust      trustFlags
	Insecure   bool
}

func newMailImportCmd(a *app, runF func(*mailImportOptions) error) *cobra.Command {
	opts := &mailImportOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE.eml|MBOX|MAILDIR|FOLDER...",
		Short: "Apply messages from files, mboxes and Maildirs",
		Long: `Apply every message of the given files: single messages (.eml), mboxes
(recognised by their first "From " line; >From quoting is undone) and Maildirs
(folders with cur/ and new/) and any other folder, whose files are read as
messages or mboxes (.eml files saved from a mail client), with its
sub-folders, in name order; a Maildir inside is read as a Maildir. Hidden
files and folders (".name") are skipped, and so are files that are neither
named as mail (.eml, .mbox, ..., or no extension) nor start with a header
line (a README.md beside the messages); links to folders are not followed. Exclusions are applied at once, the rest is stored and queued for
review as the watcher would.
Messages already stored are skipped. Prints one line per message (what was
done: sites excluded, queued for review and why, ignored as automatic,
duplicate), then a summary; exit 1 when some messages failed.

With --smtp, every exclusion is acknowledged to its sender and every message
queued for staff gets a short "received" reply (RFC 3834 rules: never to
automatic mail, lists, bounces or no-reply addresses; one per sender and
site per 24 hours). Only a sender our server authenticated (--authserv-id:
DKIM or SPF pass aligned with From) is answered, at most --reply-limit
times a day (3), and --reply-daily-limit replies in all (500): no
backscatter to forged addresses; a withheld reply is recorded for staff.
Replies that cannot be sent stay queued and are retried by the next import
or by mail watch. Without --smtp nothing is sent.

An exclusion from a sender not verified for the site applies at once but
keeps the site's pages (hidden) for --unverified-hold (30 days) unless staff
confirm or undo it; one such sender excludes at most --unverified-limit (10)
sites a day, more go to staff.`,
		Example: `  lohibot mail import ~/mail/exclusions.mbox
  lohibot mail import ~/Maildir/.Exclusions message.eml --json
  LOHIBOT_SMTP_PASSWORD=... lohibot mail import saved/ --smtp smtp://message%40lohisoft.com@smtp.lohisoft.com:587`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if err := checkAuthservID(opts.AuthservID); err != nil {
				return err
			}
			if err := opts.Trust.check(); err != nil {
				return err
			}
			for _, p := range opts.Paths {
				if _, err := mailbot.DetectSource(p); err != nil {
					return &exitError{code: exitBadInput, err: err}
				}
			}
			sender, err := opts.SMTP.sender(a.getenv, opts.Insecure)
			if err != nil {
				return err
			}
			opts.Sender = sender
			return runOnPolicy(cmd, a, opts, runF, runMailImport)
		},
	}
	cmd.Flags().StringVar(&opts.AuthservID, "authserv-id", "", authservIDUsage)
	opts.SMTP.register(cmd)
	opts.Trust.register(cmd)
	cmd.Flags().BoolVar(&opts.Insecure, "insecure", false, "send to the SMTP server without TLS (loopback servers only)")
	return cmd
}

// checkAuthservID refuses an --authserv-id that no Authentication-Results
// header can carry (mailbot.ValidAuthservID): it would silently trust
// nothing. Empty means none.
func checkAuthservID(id string) error {
	if id != "" && !mailbot.ValidAuthservID(id) {
		return usageErrorf("--authserv-id %q is not an authserv-id: want the name our receiving mail server writes at the start of its Authentication-Results headers, such as mx1.lohisoft.com", id)
	}
	return nil
}

// authservIDUsage documents --authserv-id of mail import and mail watch.
const authservIDUsage = "authserv-id of our receiving mail server: only its Authentication-Results headers, on top, are trusted (none when empty: every message is unauthenticated)"

// runMailImport applies the messages of opts.Paths, printing a line per
// message and a summary; it returns refused (exit 1) when some failed.
func runMailImport(ctx context.Context, opts *mailImportOptions, out io.Writer) error {
	pol := opts.Trust.policy(opts.Policy)
	logger := opts.newLogger(slog.LevelWarn)
	purgeDue(ctx, pol, logger)
	replies := opts.SMTP.replier(pol.Store(), opts.Sender, logger)
	proc := mailbot.New(pol, &mailbot.Options{Logger: logger, AuthservID: opts.AuthservID, Replies: replies,
		UnverifiedLimit: opts.Trust.UnverifiedLimit})
	var mu sync.Mutex // guards out and errOut
	sum, err := proc.Import(ctx, opts.Paths, &mailbot.ImportOptions{
		OnResult: func(source string, res *mailbot.Result, err error) {
			mu.Lock()
			defer mu.Unlock()
			line := importLineOf(source, res, err)
			if opts.JSON {
				_ = printJSON(out, line)
				return
			}
			fmt.Fprintln(out, line.text())
		},
	})
	if replies != nil && sum != nil {
		// The exclusions are committed; now the replies, each tried once.
		sum.RepliesSent, sum.RepliesQueued, _ = replies.Flush(ctx)
	}
	if sum != nil {
		if perr := printMailSummary(out, opts.JSON, "imported", sum); perr != nil {
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

// importLine is what mail import did with one message (one --json line).
type importLine struct {
	Source    string   `json:"source"`
	ID        int64    `json:"id,omitempty"`
	MessageID string   `json:"message_id,omitempty"`
	From      string   `json:"from,omitempty"`
	Intent    string   `json:"intent,omitempty"`
	Outcome   string   `json:"outcome"` // excluded, queued, ignored, failed, duplicate
	Excluded  []string `json:"excluded"`
	Reason    string   `json:"reason,omitempty"` // why queued, ignored or failed
	Duplicate bool     `json:"duplicate"`
	Automatic bool     `json:"automatic"`
	Error     string   `json:"error,omitempty"`
	// ReplyID is the reply queued to the sender; ReplySkipped why none
	// was (both empty without --smtp).
	ReplyID      int64  `json:"reply_id,omitempty"`
	ReplySkipped string `json:"reply_skipped,omitempty"`
}

func importLineOf(source string, res *mailbot.Result, err error) importLine {
	l := importLine{Source: source, Excluded: []string{}}
	if err != nil {
		l.Outcome = string(mailbot.OutcomeFailed)
		l.Error = err.Error()
		l.Reason = "not stored: " + err.Error()
		return l
	}
	l.ID, l.MessageID, l.From, l.Intent = res.ID, res.MessageID, res.From, string(res.Intent)
	l.Outcome = string(res.Outcome)
	l.Automatic = res.Intent == mailbot.IntentAuto
	l.ReplyID, l.ReplySkipped = res.ReplyID, res.ReplySkipped
	switch {
	case res.Duplicate:
		l.Duplicate = true
		l.Outcome = "duplicate"
		l.Reason = fmt.Sprintf("already stored as message %d (%s)", res.ID, res.Outcome)
	case res.Outcome == mailbot.OutcomeExcluded:
		l.Excluded = res.Excluded
		l.Reason = res.ReviewReason
	case res.Outcome == mailbot.OutcomeIgnored && l.Automatic:
		l.Reason = "automatic mail"
		for _, r := range res.Reasons {
			if strings.HasPrefix(r, "auto: ") {
				l.Reason = "automatic mail (" + strings.TrimPrefix(r, "auto: ") + ")"
				break
			}
		}
	default:
		l.Reason = res.ReviewReason
	}
	return l
}

// text is the line's human form: source, message id, what was done.
func (l importLine) text() string {
	id := "-"
	if l.ID != 0 {
		id = fmt.Sprint(l.ID)
	}
	var what string
	switch l.Outcome {
	case string(mailbot.OutcomeExcluded):
		what = "excluded " + strings.Join(l.Excluded, " ")
		if l.Reason != "" {
			what += "; also queued for review: " + l.Reason
		}
	case string(mailbot.OutcomeQueued):
		what = "queued for review: " + l.Reason
	case string(mailbot.OutcomeIgnored):
		what = "ignored: " + orDash(l.Reason)
	case "duplicate":
		what = "duplicate: " + l.Reason
	default:
		what = "failed: " + l.Reason
	}
	switch {
	case l.ReplyID != 0:
		what += fmt.Sprintf("; reply %d queued", l.ReplyID)
	case l.ReplySkipped != "":
		what += "; no reply: " + l.ReplySkipped
	}
	return fmt.Sprintf("%s\tmessage %s\t%s", l.Source, id, what)
}

// printMailSummary writes what an import or a watch did: text, or a JSON
// line.
func printMailSummary(out io.Writer, asJSON bool, verb string, sum *mailbot.ImportSummary) error {
	if asJSON {
		return printJSON(out, sum)
	}
	fmt.Fprintf(out, "%s %d %s: %d excluded, %d queued for review, %d ignored, %d failed, %d already seen",
		verb, sum.Messages, plural(sum.Messages, "message", "messages"), sum.Excluded, sum.Queued, sum.Ignored, sum.Failed, sum.Duplicates)
	if sum.RepliesSent > 0 || sum.RepliesQueued > 0 {
		fmt.Fprintf(out, "; %d %s sent, %d waiting to be retried", sum.RepliesSent, plural(sum.RepliesSent, "reply", "replies"), sum.RepliesQueued)
	}
	fmt.Fprintln(out)
	return nil
}

type mailWatchOptions struct {
	printOptions
	policyOptions
	// Endpoint, Password, Token and Sender are made from the flags and the
	// environment by the command.
	Endpoint *mailbot.Endpoint
	Password string
	Token    func() (string, error) // the OAuth token; nil: log in with Password
	Sender   *reply.SMTP            // nil: no replies

	SMTP            smtpFlags
	Trust           trustFlags
	IMAP            string
	PasswordFile    string
	OAuthTokenFile  string
	Insecure        bool
	Once            bool
	ProcessedFolder string
	ReviewFolder    string
	AuthservID      string
}

func newMailWatchCmd(a *app, runF func(*mailWatchOptions) error) *cobra.Command {
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
At the end it prints a summary of what it processed, once the mailbox was
read; when it never was (server unreachable, login refused), only the error.

The password comes from --password-file or the LOHIBOT_IMAP_PASSWORD
environment variable, never from the command line. Mailboxes that take no
password (Google Workspace, Microsoft 365) use an OAuth 2.0 access token:
--oauth-token-file (read again on every connect, so a refresher can replace
it) or LOHIBOT_IMAP_OAUTH_TOKEN; the watcher authenticates with OAUTHBEARER or
XOAUTH2, whichever the server offers.

With --smtp, exclusions are acknowledged and queued messages answered by
email (see 'lohibot mail import --help'); replies are sent beside the
watcher and never hold up an exclusion. --insecure allows a
plaintext connection or an unverified certificate, for tests against a
server on loopback only.`,
		Example: `  LOHIBOT_IMAP_PASSWORD=... lohibot mail watch --imap imaps://message%40lohisoft.com@imap.lohisoft.com/INBOX
  lohibot mail watch --imap imaps://bot@127.0.0.1:10993/INBOX --password-file pw --insecure --once`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkAuthservID(opts.AuthservID); err != nil {
				return err
			}
			if err := opts.Trust.check(); err != nil {
				return err
			}
			if err := opts.check(a.getenv); err != nil {
				return err
			}
			if opts.Insecure {
				fmt.Fprintf(a.errOut, "lohibot: warning: --insecure: the connection to %s may be unencrypted or its certificate unverified; use it only for local tests\n", opts.Endpoint.Host)
			}
			return runOnPolicy(cmd, a, opts, runF, runMailWatch)
		},
	}
	cmd.Flags().StringVar(&opts.IMAP, "imap", "", "the mailbox: imaps://USER@HOST[:PORT]/MAILBOX or imap://... (STARTTLS)")
	cmd.Flags().StringVar(&opts.PasswordFile, "password-file", "", "file holding the IMAP password (default: $"+imapPasswordEnv+")")
	cmd.Flags().StringVar(&opts.OAuthTokenFile, "oauth-token-file", "", "file holding an OAuth 2.0 access token, read again on each connect (default: $"+imapTokenEnv+")")
	cmd.Flags().BoolVar(&opts.Insecure, "insecure", false, "allow plaintext or an unverified certificate (loopback servers only)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "process the messages there are, then exit")
	cmd.Flags().StringVar(&opts.ProcessedFolder, "processed-folder", mailbot.DefaultProcessedFolder, "folder for applied messages")
	cmd.Flags().StringVar(&opts.ReviewFolder, "review-folder", mailbot.DefaultReviewFolder, "folder for messages waiting for staff")
	cmd.Flags().StringVar(&opts.AuthservID, "authserv-id", "", authservIDUsage)
	opts.SMTP.register(cmd)
	opts.Trust.register(cmd)
	return cmd
}

// check checks the flags and reads the credentials: the IMAP endpoint, its
// password or token, and the SMTP sender.
func (opts *mailWatchOptions) check(getenv func(string) string) error {
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
	password, token, err := imapCredentials(getenv, opts)
	if err != nil {
		return err
	}
	sender, err := opts.SMTP.sender(getenv, opts.Insecure)
	if err != nil {
		return err
	}
	opts.Endpoint, opts.Password, opts.Token, opts.Sender = ep, password, token, sender
	return nil
}

// runMailWatch watches the mailbox until ctx ends (with --once, until the
// messages there are processed), then prints a summary, unless the
// mailbox was never read: then the error alone.
func runMailWatch(ctx context.Context, opts *mailWatchOptions, out io.Writer) error {
	pol, ep := opts.Trust.policy(opts.Policy), opts.Endpoint
	logger := opts.newLogger(slog.LevelInfo)
	purgeDue(ctx, pol, logger)
	replies := opts.SMTP.replier(pol.Store(), opts.Sender, logger, ep.Username)
	proc := mailbot.New(pol, &mailbot.Options{Logger: logger, AuthservID: opts.AuthservID, Replies: replies,
		UnverifiedLimit: opts.Trust.UnverifiedLimit})
	if !opts.Once {
		pctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { purgeEvery(pctx, pol, logger) })
		defer wg.Wait()
		defer stop()
	}
	if replies != nil && !opts.Once {
		// Replies go out beside the watcher, so a slow or failing mail
		// server never holds up an exclusion.
		rctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = replies.Run(rctx) })
		defer wg.Wait()
		defer stop()
	}
	var (
		mu   sync.Mutex // guards sum and read
		sum  mailbot.ImportSummary
		read bool // the mailbox was selected at least once
	)
	w := mailbot.NewWatcher(proc, &mailbot.WatchOptions{
		Endpoint:        *ep,
		Password:        opts.Password,
		Token:           opts.Token,
		Insecure:        opts.Insecure,
		ProcessedFolder: opts.ProcessedFolder,
		ReviewFolder:    opts.ReviewFolder,
		Once:            opts.Once,
		Logger:          logger,
		OnState: func(st mailbot.WatchState) {
			if st.Connected {
				mu.Lock()
				read = true
				mu.Unlock()
			}
		},
		OnMessage: func(ev mailbot.WatchEvent) {
			mu.Lock()
			defer mu.Unlock()
			sum.Count(ev.Result, nil)
			if !ev.Result.Duplicate && ev.Result.Outcome == mailbot.OutcomeExcluded {
				logger.Info("exclusion applied", "sites", strings.Join(ev.Result.Excluded, " "),
					"time_to_exclusion", ev.TimeToExclusion().Round(time.Millisecond).String())
			}
		},
	})
	runErr := w.Run(ctx)
	mu.Lock()
	final, wasRead := sum, read
	mu.Unlock()
	if replies != nil && opts.Once {
		final.RepliesSent, final.RepliesQueued, _ = replies.Flush(ctx)
	}
	// A summary only of a mailbox that was read: "processed 0 messages"
	// before "connection refused" would say the mailbox was empty.
	if !wasRead && final.Messages == 0 && final.RepliesSent == 0 && final.RepliesQueued == 0 {
		return runErr
	}
	if err := printMailSummary(out, opts.JSON, "processed", &final); err != nil {
		return err
	}
	return runErr
}

// imapTokenEnv holds the IMAP OAuth token when --oauth-token-file is not
// given.
const imapTokenEnv = "LOHIBOT_IMAP_OAUTH_TOKEN"

// imapCredentials returns the IMAP password, or the OAuth token source:
// --oauth-token-file (read again on every connect, so an external refresher
// can rotate it), else --password-file, else $LOHIBOT_IMAP_OAUTH_TOKEN,
// else $LOHIBOT_IMAP_PASSWORD.
func imapCredentials(getenv func(string) string, opts *mailWatchOptions) (string, func() (string, error), error) {
	if opts.OAuthTokenFile != "" && opts.PasswordFile != "" {
		return "", nil, usageErrorf("give --password-file or --oauth-token-file, not both")
	}
	if f := opts.OAuthTokenFile; f != "" {
		read := func() (string, error) {
			b, err := boundedread.ReadFile(f, boundedread.SecretLimit)
			if err != nil {
				return "", err
			}
			tok := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
			if tok == "" {
				return "", fmt.Errorf("%s is empty", f)
			}
			return tok, nil
		}
		if _, err := read(); err != nil {
			return "", nil, &exitError{code: exitBadInput, err: fmt.Errorf("oauth token file: %w", err)}
		}
		return "", read, nil
	}
	if opts.PasswordFile == "" {
		if tok := strings.TrimSpace(getenv(imapTokenEnv)); tok != "" {
			return "", func() (string, error) { return tok, nil }, nil
		}
	}
	pw, err := readIMAPPassword(getenv, opts.PasswordFile)
	return pw, nil, err
}

// readIMAPPassword reads the password from file, or from the environment.
func readIMAPPassword(getenv func(string) string, file string) (string, error) {
	var pw string
	if file != "" {
		b, err := boundedread.ReadFile(file, boundedread.SecretLimit)
		if err != nil {
			return "", &exitError{code: exitBadInput, err: fmt.Errorf("password file: %w", err)}
		}
		pw = strings.TrimRight(string(b), "\r\n")
	} else {
		pw = getenv(imapPasswordEnv)
	}
	if pw == "" {
		return "", usageErrorf("no IMAP password: give --password-file FILE or set %s (or use --oauth-token-file / %s)", imapPasswordEnv, imapTokenEnv)
	}
	return pw, nil
}

type mailReviewOptions struct {
	printOptions
	policyOptions

	// Action is what exclude and reinclude do (mailbot.ActionExclude,
	// mailbot.ActionReinclude); approve and dismiss ignore it.
	Action string
	ID     int64    // the message
	By     string   // --by: the staff member who decides
	Sites  []string // --site: the sites to act on instead of the message's
	// ByGiven says --by was given (not the current user by default).
	ByGiven bool
}

func newMailReviewCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review [list|approve ID|dismiss ID|exclude ID|reinclude ID]",
		Short: "List the messages waiting for staff, and decide or correct them",
		Long: `Messages that need a human wait here: re-inclusion requests (never applied
automatically), exclusion requests that name no site, failed or malformed
messages, and everything else a person should read. "review" alone lists them.

Any decision can be corrected later, whatever the message's status: "exclude"
excludes the sites of a message (or --site), "reinclude" undoes an exclusion
applied from a message by mistake (or re-includes what it names). Every
decision is recorded in the policy log with the staff member (--by, default
the current user; required for reinclude) and the message as evidence.`,
		Example: `  lohibot mail review
  lohibot mail review approve 12 --by anna
  lohibot mail review approve 15 --by anna --site example.com
  lohibot mail review dismiss 13 --by anna
  lohibot mail review exclude 14 --site example.com --by anna
  lohibot mail review reinclude 9 --by anna`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOnPolicy(cmd, a, &mailReviewListOptions{}, nil, runMailReviewList)
		},
	}
	cmd.AddCommand(newMailReviewListCmd(a, nil), newMailReviewApproveCmd(a, nil), newMailReviewDismissCmd(a, nil),
		newMailReviewExcludeCmd(a, nil), newMailReviewReincludeCmd(a, nil))
	return cmd
}

type mailReviewListOptions struct {
	printOptions
	policyOptions
}

func newMailReviewListCmd(a *app, runF func(*mailReviewListOptions) error) *cobra.Command {
	opts := &mailReviewListOptions{}
	return &cobra.Command{
		Use:     "list",
		Short:   "List the messages waiting for staff",
		Example: "  lohibot mail review list\n  lohibot mail review list --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOnPolicy(cmd, a, opts, runF, runMailReviewList)
		},
	}
}

// runMailReviewList prints the messages waiting for staff, each with the
// first lines of its new text.
func runMailReviewList(ctx context.Context, opts *mailReviewListOptions, out io.Writer) error {
	items, err := mailbot.New(opts.Policy, nil).Pending(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		for i := range items {
			if err := printJSON(out, &items[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(items) == 0 {
		fmt.Fprintln(opts.errOut(), "no message waits for review")
		return nil
	}
	var tab table
	tab.add("ID", "DATE", "FROM", "INTENT", "DOMAINS", "SUBJECT", "REASON")
	for _, it := range items {
		tab.add(strconv.FormatInt(it.ID, 10), human.Time(it.Date), orDash(it.From),
			string(it.Intent), orDash(strings.Join(it.Domains, " ")), orDash(oneLine(it.Subject, 60)), it.Reason)
	}
	// Each row is followed by the first lines of the message's new text.
	rows := tab.lines()
	fmt.Fprintln(out, rows[0])
	for i, it := range items {
		fmt.Fprintln(out, rows[i+1])
		if it.Text == "" {
			fmt.Fprintln(out, "    │ (no text)")
		}
		for _, l := range strings.Split(it.Text, "\n") {
			if l != "" {
				fmt.Fprintf(out, "    │ %s\n", oneLine(l, 100))
			}
		}
	}
	return nil
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

// reviewRunE is the RunE of the mail review subcommands that decide on
// one message: the ID argument, --by (the current user when not given; when
// needBy is not "", --by is required and needBy is the usage error without
// it), then run on the policy.
func reviewRunE(a *app, opts *mailReviewOptions, needBy string, runF func(*mailReviewOptions) error,
	run func(context.Context, *mailReviewOptions, io.Writer) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		id, err := parseReviewID(cmd, args[0])
		if err != nil {
			return err
		}
		opts.ID = id
		opts.ByGiven = cmd.Flags().Changed("by")
		if needBy != "" {
			if strings.TrimSpace(opts.By) == "" {
				return usageErrorf("%s\nSee '%s --help'.", needBy, cmd.CommandPath())
			}
		} else if opts.By, err = byFlag(cmd, opts.By, a.getenv); err != nil {
			return err
		}
		return runOnPolicy(cmd, a, opts, runF, run)
	}
}

func newMailReviewApproveCmd(a *app, runF func(*mailReviewOptions) error) *cobra.Command {
	opts := &mailReviewOptions{}
	cmd := &cobra.Command{
		Use:   "approve ID [--by WHO] [--site DOMAIN...]",
		Short: "Apply a queued message",
		Long: `Apply a queued message as the staff member named by --by (default: the
current user; required for a re-inclusion request, as for reinclude and
exclude remove). A re-inclusion request re-includes its sites; an exclusion
request excludes them. --site
replaces the sites named in the message, and is needed when it names none
(an exclusion request without a domain, or another message that staff decide
is an exclusion request).`,
		Example: `  lohibot mail review approve 12 --by anna
  lohibot mail review approve 15 --by anna --site example.com --site example.org`,
		Args: exactArgs(1),
		RunE: reviewRunE(a, opts, "", runF, runMailReviewApprove),
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who approves (default: the current user; required to approve a re-inclusion)")
	cmd.Flags().StringSliceVar(&opts.Sites, "site", nil, "the sites to act on, instead of those the message names (repeatable)")
	return cmd
}

func runMailReviewApprove(ctx context.Context, opts *mailReviewOptions, out io.Writer) error {
	// A re-inclusion is a staff member's decision, named: approving a
	// re-inclusion request needs --by, as reinclude and exclude remove do.
	if !opts.ByGiven || strings.TrimSpace(opts.By) == "" {
		m, err := opts.Policy.Store().MailMessageHead(ctx, opts.ID)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return err
		}
		if m != nil && m.Intent == string(mailbot.IntentReinclude) {
			return usageErrorf("message %d asks for a re-inclusion: re-including needs --by WHO (the staff member who decides)", opts.ID)
		}
	}
	ap, err := mailbot.New(opts.Policy, nil).Approve(ctx, opts.ID, opts.By, opts.Sites)
	if err != nil {
		return reviewError(err)
	}
	if opts.JSON {
		if ap.NotExcluded == nil {
			ap.NotExcluded = []string{}
		}
		return printJSON(out, ap)
	}
	switch ap.Action {
	case "reinclude":
		fmt.Fprintln(out, reincludeLine(ap))
	default:
		fmt.Fprintf(out, "approved message %d: excluded %s\n", ap.ID, strings.Join(ap.Sites, " "))
	}
	return nil
}

func newMailReviewDismissCmd(a *app, runF func(*mailReviewOptions) error) *cobra.Command {
	opts := &mailReviewOptions{}
	cmd := &cobra.Command{
		Use:     "dismiss ID [--by WHO]",
		Short:   "Close a queued message without action",
		Example: `  lohibot mail review dismiss 13 --by anna`,
		Args:    exactArgs(1),
		RunE:    reviewRunE(a, opts, "", runF, runMailReviewDismiss),
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who dismisses (default: the current user)")
	return cmd
}

func runMailReviewDismiss(ctx context.Context, opts *mailReviewOptions, out io.Writer) error {
	if err := mailbot.New(opts.Policy, nil).Dismiss(ctx, opts.ID, opts.By); err != nil {
		return reviewError(err)
	}
	if opts.JSON {
		return printJSON(out, map[string]any{"id": opts.ID, "review_status": mailbot.ReviewDismissed, "by": opts.By})
	}
	fmt.Fprintf(out, "dismissed message %d\n", opts.ID)
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
			done = append(done, human.Site(s))
		}
	}
	var idle []string
	for _, s := range ap.NotExcluded {
		idle = append(idle, human.Site(s))
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
