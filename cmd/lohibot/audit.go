package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/translog"
)

type auditOptions struct {
	printOptions
	storeOptions

	Rules      []string  // the rules to check (none: all)
	Sites      []string  // the sites to check (none: every site in the log)
	Since      time.Time // --since: requests sent from then on (zero: all)
	Checkpoint []byte    // --checkpoint: the signed checkpoint the records must reproduce
}

func newAuditCmd(a *app, runF func(*auditOptions) error) *cobra.Command {
	opts := &auditOptions{}
	var since, checkpoint string
	cmd := &cobra.Command{
		Use:   "audit [robots|budget|politeness|exclusions|storage|signatures|integrity] [SITE...] [--since T] [--checkpoint FILE]",
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
  integrity   the evidence records (policy events, requests, robots.txt
              snapshots, mail messages) are as the transparency log
              committed to them: every leaf is recomputed from its row and
              the Merkle tree from the leaves; no row changed, deleted,
              inserted or reordered (whole log, whatever sites are named;
              see docs/audit-integrity.md)

--checkpoint FILE checks only integrity, and also that the records reproduce
the signed checkpoint in FILE ('lohibot log checkpoint'): its root at its
size, under a signature by the log's key. Exit 0 when they do, 1 when not.

With no rule, all of them; with no site, every site in the log. --since
limits the audit to requests sent from T on (an RFC 3339 time, a date, or a
duration such as 24h or 7d meaning that long ago).

Exit 0 when every rule holds, 1 with the violations listed, 2 on bad input.
With --json, each violation is one line: {"site","rule","check","requests",
"evidence"}, where each request is {"id","url","purpose","sent_at",
"completed_at","status","outcome"}; integrity violations add "table",
"row_id" and "leaf". The last line is always one summary object:
{"summary":true,"ok","rules":[{"rule","ok","checked","violations"}],
"sites","requests","violations"}, with "log" ({"size","root","unlogged",
"checkpoint"}) when the integrity rule ran.`,
		Example: `  lohibot audit
  lohibot audit politeness example.com --since 7d
  lohibot audit robots --json | jq -r .evidence
  lohibot audit integrity --checkpoint checkpoint.txt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseAuditArgs(opts, args, since, time.Now()); err != nil {
				return err
			}
			if cmd.Flags().Changed("checkpoint") {
				if strings.TrimSpace(checkpoint) == "" {
					return usageErrorf("audit: --checkpoint needs a file")
				}
				if len(opts.Sites) > 0 || !opts.Since.IsZero() || slices.ContainsFunc(opts.Rules, func(r string) bool { return r != audit.RuleIntegrity }) {
					return usageErrorf("audit: --checkpoint checks the integrity rule only: lohibot audit integrity --checkpoint FILE")
				}
				b, err := translog.ReadCheckpointFile(checkpoint)
				if err != nil {
					return &exitError{code: exitBadInput, err: err}
				}
				if _, err := translog.ParseCheckpoint(checkpointBody(b)); err != nil {
					return &exitError{code: exitBadInput, err: fmt.Errorf("audit: %s: %w", checkpoint, err)}
				}
				opts.Checkpoint = b
			}
			return runOnStore(cmd, a, opts, runF, runAudit)
		},
	}
	cmd.Flags().StringVar(&checkpoint, "checkpoint", "", "check that the records reproduce this signed checkpoint of the transparency log")
	cmd.Flags().StringVar(&since, "since", "", "audit only requests sent from this time on (RFC 3339, YYYY-MM-DD, or a duration ago: 24h, 7d)")
	return cmd
}

// checkpointBody returns the text of a signed note: what comes before the
// blank line that starts its signatures.
func checkpointBody(msg []byte) string {
	s := string(msg)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		return s[:i+1]
	}
	return s
}

// parseAuditArgs sorts the arguments into opts' rules and sites and reads
// --since.
func parseAuditArgs(opts *auditOptions, args []string, since string, now time.Time) error {
	opts.Rules, opts.Sites, opts.Since = nil, nil, time.Time{}
	var bad []string // every bad argument, reported at once
	for _, arg := range args {
		if audit.IsRule(strings.ToLower(arg)) {
			opts.Rules = append(opts.Rules, strings.ToLower(arg))
			continue
		}
		site, err := policy.SiteOf(arg)
		if err != nil {
			var se *policy.SiteError
			why := err.Error()
			if errors.As(err, &se) {
				why = se.Reason
			}
			bad = append(bad, fmt.Sprintf("%q is neither a rule (%s) nor a site: %s", policy.MaskPassword(arg), strings.Join(audit.Rules(), ", "), why))
			continue
		}
		opts.Sites = append(opts.Sites, site)
	}
	if since != "" {
		t, err := parseSince(since, now)
		if err != nil {
			bad = append(bad, fmt.Sprintf("--since %q: %v", since, err))
		}
		opts.Since = t
	}
	if len(bad) > 0 {
		return usageErrorf("audit: %s", strings.Join(bad, "\naudit: "))
	}
	return nil
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
			d := n * 24 * float64(time.Hour)
			if d >= math.MaxInt64 || math.IsNaN(d) {
				return time.Time{}, fmt.Errorf("%s is more than %d days", s, math.MaxInt64/int64(24*time.Hour))
			}
			return now.Add(-time.Duration(d)).UTC(), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("want an RFC 3339 time, a date (2006-01-02) or a duration ago (24h, 7d)")
}

// runAudit prints each violation, then the summary; it returns refused
// (exit 1) when a rule failed.
func runAudit(ctx context.Context, opts *auditOptions, out io.Writer) error {
	sum, err := audit.Run(ctx, opts.Store, &audit.Options{Rules: opts.Rules, Sites: opts.Sites, Since: opts.Since, Checkpoint: opts.Checkpoint},
		func(v audit.Violation) error {
			if opts.JSON {
				return printJSON(out, v)
			}
			printViolation(out, &v)
			return nil
		})
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := printJSON(out, newAuditSummaryJSON(sum)); err != nil {
			return err
		}
	} else {
		printAuditSummary(out, sum)
	}
	if !sum.OK() {
		return refused
	}
	return nil
}

func printViolation(w io.Writer, v *audit.Violation) {
	site := v.Site
	switch {
	case v.Table != "":
		site = fmt.Sprintf("%s row %d", v.Table, v.RowID)
	case v.Rule == audit.RuleIntegrity && v.Leaf != nil:
		site = fmt.Sprintf("log leaf %d", *v.Leaf)
	case v.Rule == audit.RuleIntegrity:
		site = "transparency log"
	case site == "":
		site = "(every site)"
	}
	fmt.Fprintf(w, "VIOLATION %s %s/%s: %s\n", site, v.Rule, v.Check, v.Evidence)
	for _, r := range v.Requests {
		done := "never completed"
		if r.CompletedAt != nil {
			done = "completed " + human.TimeMS(*r.CompletedAt)
		}
		status := "-"
		if r.Status != nil {
			status = strconv.Itoa(*r.Status)
		}
		fmt.Fprintf(w, "    request %d  %s  sent %s  %s  status %s %s  %s\n", r.ID, r.Purpose,
			human.TimeMS(r.SentAt), done, status, r.Outcome, r.URL)
	}
}

// auditSummaryJSON is the last line of audit --json, printed whether or not
// a rule failed, so a script always learns what was checked.
type auditSummaryJSON struct {
	Summary    bool            `json:"summary"`
	OK         bool            `json:"ok"`
	Rules      []auditRuleJSON `json:"rules"`
	Sites      int64           `json:"sites"`
	Requests   int64           `json:"requests"`
	Violations int64           `json:"violations"`
	// Log is the transparency log the integrity rule checked, when it ran.
	Log *audit.LogSummary `json:"log,omitempty"`
}

type auditRuleJSON struct {
	Rule       string `json:"rule"`
	OK         bool   `json:"ok"`
	Checked    int64  `json:"checked"`
	Violations int64  `json:"violations"`
}

func newAuditSummaryJSON(sum *audit.Summary) auditSummaryJSON {
	out := auditSummaryJSON{Summary: true, OK: sum.OK(), Rules: []auditRuleJSON{}, Sites: sum.Sites,
		Requests: sum.Requests, Violations: sum.Violations(), Log: sum.Log}
	for _, r := range sum.Rules {
		out.Rules = append(out.Rules, auditRuleJSON{Rule: r.Rule, OK: r.OK(), Checked: r.Checked, Violations: r.Violations})
	}
	return out
}

func printAuditSummary(w io.Writer, sum *audit.Summary) {
	what := map[string]string{
		audit.RuleRobots: "page requests", audit.RuleBudget: "cycles", audit.RulePoliteness: "requests",
		audit.RuleExclusions: "requests", audit.RuleStorage: "index tables and noindex pages",
		audit.RuleSignatures: "requests", audit.RuleIntegrity: "logged and unlogged rows",
	}
	for _, r := range sum.Rules {
		verdict := "ok"
		if !r.OK() {
			verdict = fmt.Sprintf("FAILED: %d violation(s)", r.Violations)
		}
		fmt.Fprintf(w, "%-11s %s (%d %s checked)\n", r.Rule, verdict, r.Checked, what[r.Rule])
	}
	if s := sum.Log; s != nil {
		fmt.Fprintf(w, "transparency log: %d %s, root %s; %d %s not in it yet\n", s.Size, plural(s.Size, "leaf", "leaves"), s.Root,
			s.Unlogged, plural(s.Unlogged, "row", "rows"))
		if s.Checkpoint != nil {
			fmt.Fprintf(w, "checked against the signed checkpoint of size %d\n", *s.Checkpoint)
		}
	}
	fmt.Fprintf(w, "%d %s, %d %s read; %d %s\n", sum.Sites, plural(sum.Sites, "site", "sites"),
		sum.Requests, plural(sum.Requests, "request", "requests"), sum.Violations(), plural(sum.Violations(), "violation", "violations"))
}

// plural picks the singular or plural form for n.
func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
