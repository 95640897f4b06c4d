package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/internal/termsafe"
	"github.com/lohisoft/lohibot/mailbot"
)

type mailShowOptions struct {
	printOptions
	policyOptions
	RawOut io.Writer // where --raw writes the stored bytes: standard output, unescaped
	// RawTerminal is true when RawOut is a terminal: --raw then escapes
	// control characters (line ends aside), as every text output does, so
	// a hostile message cannot rewrite the screen. Redirected to a file,
	// the bytes are exact.
	RawTerminal bool

	ID  int64
	Raw bool // --raw: the stored bytes exactly
}

func newMailShowCmd(a *app, runF func(*mailShowOptions) error) *cobra.Command {
	opts := &mailShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ID [--raw]",
		Short: "Show a stored message as staff need it",
		Long: `Show stored message ID (the number in 'mail review list' and 'mail import'):
the header fields that matter, the authentication results, the sender's new
text, the quoted part (marked, never read as the request), the attachments,
how it was classified and why, and what was done: sites excluded or
re-included, review decisions, replies sent. --raw prints the stored bytes
exactly as received (on a terminal, with control characters escaped). Exit 1
when no message has that ID.`,
		Example: `  lohibot mail show 12
  lohibot mail show 12 --raw > message.eml
  lohibot mail show 12 --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseReviewID(cmd, args[0])
			if err != nil {
				return err
			}
			opts.ID = id
			opts.RawOut = a.rawOut
			opts.RawTerminal = isTerminal(a.rawOut)
			return runOnPolicy(cmd, a, opts, runF, runMailShow)
		},
	}
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "print the stored bytes exactly")
	return cmd
}

// runMailShow prints a stored message for staff (or with Raw, its bytes to
// RawOut); it returns exit 1 when no message has the ID.
func runMailShow(ctx context.Context, opts *mailShowOptions, out io.Writer) error {
	s, err := mailbot.New(opts.Policy, nil).Show(ctx, opts.ID)
	if errors.Is(err, mailbot.ErrNoMessage) {
		return &exitError{code: exitRefused, err: fmt.Errorf("no stored message has id %d (see 'lohibot mail review list')", opts.ID)}
	}
	if err != nil {
		return err
	}
	if opts.Raw {
		if opts.RawTerminal {
			w := termsafe.NewWriter(opts.RawOut)
			if _, err := w.Write(bytes.ReplaceAll(s.Raw, []byte("\r\n"), []byte("\n"))); err != nil {
				return err
			}
			return w.Flush()
		}
		_, err := opts.RawOut.Write(s.Raw) // exactly as stored: no escaping
		return err
	}
	if opts.JSON {
		return printJSON(out, s)
	}
	printShown(out, s)
	return nil
}

// printShown writes a message for a staff member: headers, classification,
// what was done, then the text.
func printShown(w io.Writer, s *mailbot.Shown) {
	m := s.Message
	field := func(name, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-12s %s\n", name+":", v)
		}
	}
	fmt.Fprintf(w, "Message %d\n", s.ID)
	field("From", orDash(m.From))
	field("To", m.To)
	field("Cc", m.Cc)
	field("Reply-To", m.ReplyTo)
	field("Date", orDash(m.Date))
	field("Subject", orDash(m.Subject))
	field("Message-ID", "<"+s.MessageID+">")
	field("Received", human.Time(s.ReceivedAt)+" from "+orDash(s.Source))
	field("Size", fmt.Sprintf("%d bytes, sha256 %s", s.Size, s.Sha256))
	fmt.Fprintf(w, "%-12s %s\n", "Auth:", authLine(s.Auth))
	for _, ar := range m.AuthRes {
		fmt.Fprintf(w, "  Authentication-Results: %s\n", ar)
	}

	fmt.Fprintln(w)
	lang := s.Lang
	if lang == "" {
		lang = "unknown"
	}
	fmt.Fprintf(w, "Classified:  %s (language %s), sites: %s\n", s.Intent, lang, orDash(strings.Join(s.Domains, " ")))
	for _, r := range s.Reasons {
		fmt.Fprintf(w, "  because %s\n", r)
	}
	outcome := string(s.Outcome)
	if s.ReviewReason != "" {
		outcome += ": " + s.ReviewReason
	}
	fmt.Fprintf(w, "Outcome:     %s\n", outcome)
	if s.ReviewStatus != "" {
		st := s.ReviewStatus
		if s.ReviewedBy != "" {
			st += " by " + s.ReviewedBy
		}
		if s.ReviewedAt != nil {
			st += " at " + human.Time(*s.ReviewedAt)
		}
		fmt.Fprintf(w, "Review:      %s\n", st)
	}
	fmt.Fprintln(w, "Done:")
	if len(s.Events) == 0 && len(s.Replies) == 0 {
		fmt.Fprintln(w, "  nothing")
	}
	for _, e := range s.Events {
		site := e.Site
		if site == "" {
			site = "-"
		}
		fmt.Fprintf(w, "  %s  %s %s by %s (%s)\n", human.Time(e.HappenedAt), e.Kind, site, e.Actor, e.Source)
	}
	for _, r := range s.Replies {
		when := r.CreatedAt
		if r.SentAt != nil {
			when = *r.SentAt
		}
		if r.Status == db.ReplySkipped {
			// Withheld on purpose: the reason, no message.
			fmt.Fprintf(w, "  %s  reply (%s) to %s: skipped, not sent: %s\n", human.Time(when), r.Kind, orDash(r.To), r.LastError)
			continue
		}
		line := fmt.Sprintf("  %s  reply (%s, %s) to %s <%s>: %s", human.Time(when), r.Kind, orDash(r.Lang), r.To, r.MessageID, r.Status)
		if r.LastError != "" {
			line += fmt.Sprintf(" after %d attempts, last error: %s", r.Attempts, r.LastError)
		}
		fmt.Fprintln(w, line)
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "New text (what the sender wrote, as read):")
	writeIndented(w, m.NewText, "  ")
	if m.Quoted != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Quoted and signature (not read as the request):")
		writeIndented(w, m.Quoted, "  | ")
	}
	if len(m.Attachments) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Attachments:")
		for _, at := range m.Attachments {
			fmt.Fprintf(w, "  %s (%s, %d bytes)\n", orDash(at.Name), at.Type, at.Size)
		}
	}
}

func authLine(au mailbot.Auth) string {
	var parts []string
	for _, kv := range [][2]string{{"dkim", au.DKIM}, {"spf", au.SPF}, {"dmarc", au.DMARC}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if au.Domain != "" {
		parts = append(parts, "authenticated domain "+au.Domain)
	}
	if len(parts) == 0 {
		return "no trusted authentication result"
	}
	return strings.Join(parts, ", ")
}

func writeIndented(w io.Writer, text, prefix string) {
	if strings.TrimSpace(text) == "" {
		fmt.Fprintln(w, prefix+"(empty)")
		return
	}
	for _, l := range strings.Split(text, "\n") {
		fmt.Fprintln(w, strings.TrimRight(prefix+l, " "))
	}
}
