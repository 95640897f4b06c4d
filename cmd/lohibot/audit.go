package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/policy/audit"
)

type auditOptions struct {
	Rules []string
	Sites []string
	Since time.Time
}

func newAuditCmd(a *app) *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "audit [robots|budget|politeness|exclusions|storage|signatures] [SITE...] [--since T]",
		Short: "Check from the records that every promise was kept (exit 1 on a violation)",
		Long: `Re-derive every promise of the bot page from the stored records, never from
the crawler's own verdicts, and list each violation with its site, rule, the
requests involved and the evidence:

  robots      every page request was allowed by a robots.txt snapshot of its
              origin fetched at most 24 h before it (body hash checked, rules
              parsed again); none before the origin's first robots.txt fetch;
              none while a disallow-all (5xx, unreachable, 401/403) was in force
  budget      at most 20 page requests per site and cycle, redirect hops,
              retries and unanswered requests included
  politeness  no two requests to one host at once (an unanswered one stays
              open); the delay in force (--delay or Crawl-delay) between them;
              Retry-After honoured after 429/503; nothing more on a host in a
              cycle after 401/403/407 or a challenge page
  exclusions  no request to a site after its exclusion was committed, until
              a re-inclusion
  storage     the index has only the promised columns, and keeps nothing of
              pages marked noindex
  signatures  while a crawler signed (Web Bot Auth), every request it sent
              carried a signature by a key published at the time (serve's
              directory), sent within the signature's validity

With no rule, all of them; with no site, every site in the log. --since
limits the audit to requests sent from T on (an RFC 3339 time, a date, or a
duration such as 24h or 7d meaning that long ago).

Exit 0 when every rule holds, 1 with the violations listed, 2 on bad input.
With --json, each violation is one line: {"site","rule","check","requests",
"evidence"}, where each request is {"id","url","purpose","sent_at",
"completed_at","status","outcome"}.`,
		Example: `  lohibot audit
  lohibot audit politeness example.com --since 7d
  lohibot audit robots --json | jq -r .evidence`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := parseAuditArgs(args, since, time.Now())
			if err != nil {
				return err
			}
			return runAudit(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "audit only requests sent from this time on (RFC 3339, YYYY-MM-DD, or a duration ago: 24h, 7d)")
	return cmd
}

// parseAuditArgs sorts the arguments into rules and sites and reads --since.
func parseAuditArgs(args []string, since string, now time.Time) (*auditOptions, error) {
	opts := &auditOptions{}
	for _, arg := range args {
		if audit.IsRule(strings.ToLower(arg)) {
			opts.Rules = append(opts.Rules, strings.ToLower(arg))
			continue
		}
		site, err := policy.SiteOf(arg)
		if err != nil {
			return nil, usageErrorf("audit: %q is neither a rule (%s) nor a site: %v", arg, strings.Join(audit.Rules(), ", "), err)
		}
		opts.Sites = append(opts.Sites, site)
	}
	if since != "" {
		t, err := parseSince(since, now)
		if err != nil {
			return nil, usageErrorf("audit: --since %q: %v", since, err)
		}
		opts.Since = t
	}
	return opts, nil
}

// parseSince reads a point in time: RFC 3339, a date or a date and time (UTC),
// or a duration ago (Go syntax, plus d for days).
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))).UTC(), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("want an RFC 3339 time, a date (2006-01-02) or a duration ago (24h, 7d)")
}

func runAudit(ctx context.Context, a *app, opts *auditOptions) error {
	store, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	sum, err := audit.Run(ctx, store, &audit.Options{Rules: opts.Rules, Sites: opts.Sites, Since: opts.Since},
		func(v audit.Violation) error {
			if a.json {
				return a.printJSON(v)
			}
			printViolation(a.out, &v)
			return nil
		})
	if err != nil {
		return err
	}
	if !a.json {
		printAuditSummary(a.out, sum)
	}
	if !sum.OK() {
		return refused
	}
	return nil
}

func printViolation(w io.Writer, v *audit.Violation) {
	site := v.Site
	if site == "" {
		site = "(every site)"
	}
	fmt.Fprintf(w, "VIOLATION %s %s/%s: %s\n", site, v.Rule, v.Check, v.Evidence)
	for _, r := range v.Requests {
		done := "never completed"
		if r.CompletedAt != nil {
			done = "completed " + r.CompletedAt.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		status := "-"
		if r.Status != nil {
			status = strconv.Itoa(*r.Status)
		}
		fmt.Fprintf(w, "    request %d  %s  sent %s  %s  status %s %s  %s\n", r.ID, r.Purpose,
			r.SentAt.UTC().Format("2006-01-02T15:04:05.000Z"), done, status, r.Outcome, r.URL)
	}
}

func printAuditSummary(w io.Writer, sum *audit.Summary) {
	what := map[string]string{
		audit.RuleRobots: "page requests", audit.RuleBudget: "cycles", audit.RulePoliteness: "requests",
		audit.RuleExclusions: "requests", audit.RuleStorage: "index tables and noindex pages",
	}
	for _, r := range sum.Rules {
		verdict := "ok"
		if !r.OK() {
			verdict = fmt.Sprintf("FAILED: %d violation(s)", r.Violations)
		}
		fmt.Fprintf(w, "%-11s %s (%d %s checked)\n", r.Rule, verdict, r.Checked, what[r.Rule])
	}
}
