package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/policy"
)

// exclusionJSON is the --json form of an exclusion.
type exclusionJSON struct {
	Site       string    `json:"site"`
	Excluded   bool      `json:"excluded"`
	ExcludedAt time.Time `json:"excluded_at"`
	By         string    `json:"by"`
	Reason     string    `json:"reason"`
	Evidence   string    `json:"evidence"`
	Source     string    `json:"source"`
	// Verified: made by staff, or by an email whose sender the receiving
	// server authenticated for the site (docs/mail-evidence.md).
	Verified bool `json:"verified"`
	// PurgeAfter is when the site's index entries, kept (hidden from
	// search) since an unverified exclusion, are purged if nobody objects;
	// absent when nothing is kept.
	PurgeAfter *time.Time `json:"purge_after,omitempty"`
}

func toExclusionJSON(ex *db.Exclusion) exclusionJSON {
	j := exclusionJSON{Site: ex.Site, Excluded: true, ExcludedAt: ex.ExcludedAt.UTC(), By: ex.Actor,
		Reason: ex.Reason, Evidence: ex.Evidence, Source: ex.Source, Verified: ex.Verified}
	if ex.PurgeAfter != nil {
		t := ex.PurgeAfter.UTC()
		j.PurgeAfter = &t
	}
	return j
}

// groupCmd is a command that only holds subcommands: with no arguments it
// prints its help, with unknown ones it is a usage error.
func groupCmd(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  unknownCommand,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
}

func newExcludeCmd(a *app) *cobra.Command {
	cmd := groupCmd("exclude", "Take sites off the crawl list, re-include them, list and check exclusions")
	cmd.Long = `Exclusions take sites off the crawl list at once: every crawler asks before
every request. Each change is appended to the policy event log with who, when,
why and the evidence; nothing in that log is ever changed or deleted.

Sites are registrable domains: https://WWW.Shop.Example.co.uk/x names
example.co.uk, bücher.de names xn--bcher-kva.de.`
	cmd.AddCommand(newExcludeAddCmd(a, nil), newExcludeRemoveCmd(a, nil), newExcludeListCmd(a, nil), newExcludeCheckCmd(a, nil))
	return cmd
}

type excludeAddOptions struct {
	printOptions
	policyOptions

	Inputs []string
	Reason string
	By     string
}

func newExcludeAddCmd(a *app, runF func(*excludeAddOptions) error) *cobra.Command {
	opts := &excludeAddOptions{}
	cmd := &cobra.Command{
		Use:   "add DOMAIN|URL...",
		Short: "Exclude sites from crawling, at once",
		Long: `Exclude the sites named by the arguments. All arguments are checked first:
if one is not a site (an IP address, a bare public suffix such as co.uk, a
non-http URL), nothing is excluded. Excluding an excluded site again changes
nothing but records the request as evidence.`,
		Example: `  lohibot exclude add https://www.Example.co.uk/x --by anna --reason "email of 3 May"
  lohibot exclude add example.com bücher.de --json`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			by, err := byFlag(cmd, opts.By, a.getenv)
			if err != nil {
				return err
			}
			opts.By = by
			if _, err := policy.SitesOf(opts.Inputs); err != nil {
				return err
			}
			return runOnPolicy(cmd, a, opts, runF, runExcludeAdd)
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why the sites are excluded")
	cmd.Flags().StringVar(&opts.By, "by", "", "who asked (default: the current user)")
	return cmd
}

func runExcludeAdd(ctx context.Context, opts *excludeAddOptions, out io.Writer) error {
	results, err := opts.Policy.Exclude(ctx, opts.Inputs, policy.Change{Actor: opts.By, Reason: opts.Reason, Source: "cli"})
	if err != nil {
		return err
	}
	for _, r := range results {
		if opts.JSON {
			j := toExclusionJSON(r.Exclusion)
			if err := printJSON(out, struct {
				exclusionJSON
				Input   string `json:"input"`
				Already bool   `json:"already_excluded"`
			}{j, policy.WithoutUserinfo(r.Input), r.Already}); err != nil {
				return err
			}
			continue
		}
		if r.Already {
			fmt.Fprintf(out, "%s was already excluded since %s; request recorded\n", human.Site(r.Site), human.Time(r.Exclusion.ExcludedAt))
		} else {
			fmt.Fprintf(out, "excluded %s\n", human.Site(r.Site))
		}
	}
	return nil
}

type excludeRemoveOptions struct {
	printOptions
	policyOptions

	Input  string
	Reason string
	By     string
}

func newExcludeRemoveCmd(a *app, runF func(*excludeRemoveOptions) error) *cobra.Command {
	opts := &excludeRemoveOptions{}
	cmd := &cobra.Command{
		Use:     "remove DOMAIN",
		Aliases: []string{"reinclude"},
		Short:   "Re-include an excluded site (needs --by)",
		Long: `Put an excluded site back on the crawl list. Re-inclusion is never automatic:
a staff member must name themselves with --by. Re-including a site that is not
excluded is refused (exit 1).`,
		Example: `  lohibot exclude remove example.co.uk --by anna --reason "webmaster asked to be crawled again"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Input = args[0]
			if strings.TrimSpace(opts.By) == "" {
				return usageErrorf("re-inclusion needs --by WHO\nSee '%s --help'.", cmd.CommandPath())
			}
			if _, err := policy.SiteOf(opts.Input); err != nil {
				return err
			}
			return runOnPolicy(cmd, a, opts, runF, runExcludeRemove)
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why the site is re-included")
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who re-includes it (required)")
	return cmd
}

func runExcludeRemove(ctx context.Context, opts *excludeRemoveOptions, out io.Writer) error {
	site, err := opts.Policy.Reinclude(ctx, opts.Input, policy.Change{Actor: opts.By, Reason: opts.Reason, Source: "cli"})
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(out, map[string]any{"site": site, "excluded": false, "by": opts.By, "reason": opts.Reason})
	}
	fmt.Fprintf(out, "re-included %s\n", human.Site(site))
	return nil
}

// verifiedText is how the text output says whether an exclusion is
// verified.
func verifiedText(ex *db.Exclusion) string {
	if ex.Verified {
		return "verified"
	}
	return "unverified"
}

type excludeListOptions struct {
	printOptions
	policyOptions

	Unverified bool // --unverified: only the exclusions not verified
}

func newExcludeListCmd(a *app, runF func(*excludeListOptions) error) *cobra.Command {
	opts := &excludeListOptions{}
	cmd := &cobra.Command{
		Use:   "list [--unverified]",
		Short: "List the excluded sites with their evidence",
		Long: `List the excluded sites with who asked, when, why and the evidence, and
whether the exclusion is verified: made by staff, or by an email whose
sender the receiving server authenticated for the site. An unverified
exclusion applies all the same (no crawling, no search results) but keeps
the site's pages until it is confirmed (by staff: 'exclude add' or 'mail
review exclude'), or its hold ends (30 days by default), so a mistake can be
undone with 'exclude remove', pages and all; --unverified lists only those,
for staff to check.`,
		Example: "  lohibot exclude list\n  lohibot exclude list --unverified --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOnPolicy(cmd, a, opts, runF, runExcludeList)
		},
	}
	cmd.Flags().BoolVar(&opts.Unverified, "unverified", false, "list only the exclusions not verified (email without trusted, aligned authentication)")
	return cmd
}

func runExcludeList(ctx context.Context, opts *excludeListOptions, out io.Writer) error {
	list, err := opts.Policy.Exclusions(ctx)
	if err != nil {
		return err
	}
	shown := 0
	for i := range list {
		ex := &list[i]
		if opts.Unverified && ex.Verified {
			continue
		}
		shown++
		if opts.JSON {
			if err := printJSON(out, toExclusionJSON(ex)); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(out, "%s\t%s\texcluded %s by %s", human.Site(ex.Site), verifiedText(ex), human.Time(ex.ExcludedAt), ex.Actor)
		if ex.Evidence != "" && ex.Evidence != ex.Actor {
			fmt.Fprintf(out, " (evidence %s)", ex.Evidence)
		}
		if ex.Reason != "" {
			fmt.Fprintf(out, ": %s", ex.Reason)
		}
		if ex.PurgeAfter != nil {
			fmt.Fprintf(out, " [pages kept, hidden, until %s]", human.Time(*ex.PurgeAfter))
		}
		fmt.Fprintln(out)
	}
	if !opts.JSON && shown == 0 {
		if opts.Unverified {
			fmt.Fprintln(opts.errOut(), "no unverified exclusion")
		} else {
			fmt.Fprintln(opts.errOut(), "no site is excluded")
		}
	}
	return nil
}

type excludeCheckOptions struct {
	printOptions
	policyOptions

	Input string
}

func newExcludeCheckCmd(a *app, runF func(*excludeCheckOptions) error) *cobra.Command {
	opts := &excludeCheckOptions{}
	return &cobra.Command{
		Use:   "check DOMAIN|URL",
		Short: "Tell whether a site is excluded (exit 1 if it is)",
		Example: `  lohibot exclude check example.co.uk && echo "may be crawled"
  lohibot exclude check https://shop.example.co.uk/page --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Input = args[0]
			if _, err := policy.SiteOf(opts.Input); err != nil {
				return err
			}
			return runOnPolicy(cmd, a, opts, runF, runExcludeCheck)
		},
	}
}

// runExcludeCheck prints whether the site is excluded, and returns refused
// (exit 1) when it is.
func runExcludeCheck(ctx context.Context, opts *excludeCheckOptions, out io.Writer) error {
	site, ex, err := opts.Policy.Check(ctx, opts.Input)
	if err != nil {
		return err
	}
	if ex == nil {
		if opts.JSON {
			return printJSON(out, map[string]any{"site": site, "excluded": false})
		}
		fmt.Fprintf(out, "%s is not excluded\n", human.Site(site))
		return nil
	}
	if opts.JSON {
		if err := printJSON(out, toExclusionJSON(ex)); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "%s is excluded since %s by %s (%s)", human.Site(site), human.Time(ex.ExcludedAt), ex.Actor, verifiedText(ex))
		if ex.Reason != "" {
			fmt.Fprintf(out, ": %s", ex.Reason)
		}
		if ex.PurgeAfter != nil {
			fmt.Fprintf(out, " [pages kept, hidden, until %s]", human.Time(*ex.PurgeAfter))
		}
		fmt.Fprintln(out)
	}
	return refused
}
