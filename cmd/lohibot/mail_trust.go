package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

// trustFlags bound what the email of a sender not shown to speak for a
// site may do (mail import, mail watch).
type trustFlags struct {
	UnverifiedLimit int
	UnverifiedHold  time.Duration
}

func (f *trustFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.UnverifiedLimit, "unverified-limit", mailbot.DefaultUnverifiedLimit,
		"the most sites one sender not verified for them may exclude in 24 hours; more go to staff")
	cmd.Flags().DurationVar(&f.UnverifiedHold, "unverified-hold", policy.DefaultUnverifiedHold,
		"how long an unverified exclusion keeps the site's pages (hidden from search) before they are purged")
}

// check refuses limits that would turn the protection off.
func (f *trustFlags) check() error {
	if f.UnverifiedLimit < 1 {
		return usageErrorf("--unverified-limit must be at least 1")
	}
	if f.UnverifiedHold <= 0 {
		return usageErrorf("--unverified-hold must be positive")
	}
	return nil
}

// policy returns p with the flags' hold.
func (f *trustFlags) policy(p *policy.Policy) *policy.Policy {
	return p.WithUnverifiedHold(f.UnverifiedHold)
}

// purgeDue purges the index entries of unverified exclusions whose hold
// has ended (policy.PurgeDue), logging what it did. A failure is logged
// and retried by the next command: it never stops the one running.
func purgeDue(ctx context.Context, p *policy.Policy, logger *slog.Logger) {
	done, err := p.PurgeDue(ctx)
	if len(done) > 0 {
		logger.Info("unverified exclusions unopposed: index purged", "sites", strings.Join(done, " "))
	}
	if err != nil && ctx.Err() == nil {
		logger.Warn("purge of unverified exclusions failed; the next run retries", "err", err)
	}
}

// purgeInterval is how often a long-running command (mail watch) runs
// purgeDue.
const purgeInterval = time.Hour

// purgeEvery runs purgeDue every purgeInterval until ctx ends.
func purgeEvery(ctx context.Context, p *policy.Policy, logger *slog.Logger) {
	t := time.NewTicker(purgeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			purgeDue(ctx, p, logger)
		}
	}
}
