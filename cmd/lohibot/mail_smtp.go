package main

import (
	"fmt"
	"log/slog"
	"net/mail"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/mailbot/reply"
)

// smtpPasswordEnv holds the SMTP password when --smtp-password-file is not
// given.
const smtpPasswordEnv = "LOHIBOT_SMTP_PASSWORD"

// smtpFlags are the flags that turn acknowledgements on (mail import, mail
// watch).
type smtpFlags struct {
	URL          string
	PasswordFile string
	From         string
	// ReplyLimit and DailyLimit bound the replies per address and in all
	// in 24 hours (reply.Options).
	ReplyLimit int
	DailyLimit int
}

func (f *smtpFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.URL, "smtp", "", "send replies through this server: smtp://USER@HOST:PORT (STARTTLS) or smtps://USER@HOST:PORT (default: send nothing)")
	cmd.Flags().StringVar(&f.PasswordFile, "smtp-password-file", "", "file holding the SMTP password (default: $"+smtpPasswordEnv+")")
	cmd.Flags().StringVar(&f.From, "from", reply.DefaultFrom, "the address replies come from")
	cmd.Flags().IntVar(&f.ReplyLimit, "reply-limit", reply.DefaultMaxPerRecipient, "the most replies one address gets in 24 hours")
	cmd.Flags().IntVar(&f.DailyLimit, "reply-daily-limit", reply.DefaultMaxPerDay, "the most replies sent in all in 24 hours")
}

// sender checks the flags and returns the SMTP sender, or nil when --smtp
// is not given. insecure is --insecure, allowed on loopback only.
func (f *smtpFlags) sender(getenv func(string) string, insecure bool) (*reply.SMTP, error) {
	if f.ReplyLimit < 1 || f.DailyLimit < 1 {
		return nil, usageErrorf("--reply-limit and --reply-daily-limit must be at least 1")
	}
	if f.URL == "" {
		if f.PasswordFile != "" {
			return nil, usageErrorf("--smtp-password-file needs --smtp URL")
		}
		return nil, nil
	}
	m, err := reply.ParseSMTPURL(f.URL)
	if err != nil {
		return nil, &exitError{code: exitBadInput, err: err}
	}
	if insecure && !m.IsLoopback() {
		return nil, usageErrorf("--insecure is only allowed for a server on loopback, not %s", m.Host)
	}
	m.Insecure = insecure
	if a, err := mail.ParseAddress(f.From); err != nil || a.Address != strings.TrimSpace(f.From) {
		return nil, usageErrorf("--from %q is not a bare email address", f.From)
	}
	if m.User != "" {
		pw, err := readSecret(getenv, f.PasswordFile, smtpPasswordEnv, "SMTP password", "--smtp-password-file")
		if err != nil {
			return nil, err
		}
		m.Password = pw
	}
	return m, nil
}

// replier returns the Replier of --smtp, or nil when it is not given. own
// lists more of our addresses (the watched mailbox) that are never answered.
func (f *smtpFlags) replier(store *db.Store, m *reply.SMTP, logger *slog.Logger, own ...string) *reply.Replier {
	if m == nil {
		return nil
	}
	return reply.New(store, &reply.Options{From: strings.ToLower(f.From), Own: own, Sender: m, Logger: logger,
		MaxPerRecipient: f.ReplyLimit, MaxPerDay: f.DailyLimit})
}

// readSecret reads a secret from file, or else from the environment
// variable env; what names the secret and flag the file flag in errors.
func readSecret(getenv func(string) string, file, env, what, flag string) (string, error) {
	var s string
	if file != "" {
		b, err := boundedread.ReadFile(file, boundedread.SecretLimit)
		if err != nil {
			return "", &exitError{code: exitBadInput, err: fmt.Errorf("%s file: %w", what, err)}
		}
		s = strings.TrimRight(strings.SplitN(string(b), "\n", 2)[0], "\r")
	} else {
		s = getenv(env)
	}
	if s == "" {
		return "", usageErrorf("no %s: give %s FILE or set %s", what, flag, env)
	}
	return s, nil
}
