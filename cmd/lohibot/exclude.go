package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
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
}

func toExclusionJSON(ex *db.Exclusion) exclusionJSON {
	return exclusionJSON{Site: ex.Site, Excluded: true, ExcludedAt: ex.ExcludedAt.UTC(), By: ex.Actor,
		Reason: ex.Reason, Evidence: ex.Evidence, Source: ex.Source, Verified: ex.Verified}
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
	cmd.AddCommand(newExcludeAddCmd(a), newExcludeRemoveCmd(a), newExcludeListCmd(a), newExcludeCheckCmd(a))
	return cmd
}

type excludeAddOptions struct {
	Inputs []string
	Reason string
	By     string
}

func newExcludeAddCmd(a *app) *cobra.Command {
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
			return runExcludeAdd(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why the sites are excluded")
	cmd.Flags().StringVar(&opts.By, "by", "", "who asked (default: the current user)")
	return cmd
}

func runExcludeAdd(ctx context.Context, a *app, opts *excludeAddOptions) error {
	if _, err := policy.SitesOf(opts.Inputs); err != nil {
		return err
	}
	p, store, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	results, err := p.Exclude(ctx, opts.Inputs, policy.Change{Actor: opts.By, Reason: opts.Reason, Source: "cli"})
	if err != nil {
		return err
	}
	for _, r := range results {
		if a.json {
			j := toExclusionJSON(r.Exclusion)
			if err := a.printJSON(struct {
				exclusionJSON
				Input   string `json:"input"`
				Already bool   `json:"already_excluded"`
			}{j, r.Input, r.Already}); err != nil {
				return err
			}
			continue
		}
		if r.Already {
			fmt.Fprintf(a.out, "%s was already excluded since %s; request recorded\n", showSite(r.Site), humanTime(r.Exclusion.ExcludedAt))
		} else {
			fmt.Fprintf(a.out, "excluded %s\n", showSite(r.Site))
		}
	}
	return nil
}

type excludeRemoveOptions struct {
	Input  string
	Reason string
	By     string
}

func newExcludeRemoveCmd(a *app) *cobra.Command {
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
			return runExcludeRemove(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why the site is re-included")
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who re-includes it (required)")
	return cmd
}

func runExcludeRemove(ctx context.Context, a *app, opts *excludeRemoveOptions) error {
	if _, err := policy.SiteOf(opts.Input); err != nil {
		return err
	}
	p, store, err := a.openPolicy(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	site, err := p.Reinclude(ctx, opts.Input, policy.Change{Actor: opts.By, Reason: opts.Reason, Source: "cli"})
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(map[string]any{"site": site, "excluded": false, "by": opts.By, "reason": opts.Reason})
	}
	fmt.Fprintf(a.out, "re-included %s\n", showSite(site))
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

func newExcludeListCmd(a *app) *cobra.Command {
	var unverified bool
	cmd := &cobra.Command{
		Use:   "list [--unverified]",
		Short: "List the excluded sites with their evidence",
		Long: `List the excluded sites with who asked, when, why and the evidence, and
whether the exclusion is verified: made by staff, or by an email whose
sender the receiving server authenticated for the site. An unverified
exclusion applies all the same; --unverified lists only those, for staff
to check.`,
		Example: "  lohibot exclude list\n  lohibot exclude list --unverified --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, store, err := a.openPolicy(ctx)
			if err != nil {
				return err
			}
			defer store.Close()
			list, err := p.Exclusions(ctx)
			if err != nil {
				return err
			}
			shown := 0
			for i := range list {
				ex := &list[i]
				if unverified && ex.Verified {
					continue
				}
				shown++
				if a.json {
					if err := a.printJSON(toExclusionJSON(ex)); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(a.out, "%s\t%s\texcluded %s by %s", showSite(ex.Site), verifiedText(ex), humanTime(ex.ExcludedAt), ex.Actor)
				if ex.Evidence != "" && ex.Evidence != ex.Actor {
					fmt.Fprintf(a.out, " (evidence %s)", ex.Evidence)
				}
				if ex.Reason != "" {
					fmt.Fprintf(a.out, ": %s", ex.Reason)
				}
				fmt.Fprintln(a.out)
			}
			if !a.json && shown == 0 {
				if unverified {
					fmt.Fprintln(a.errOut, "no unverified exclusion")
				} else {
					fmt.Fprintln(a.errOut, "no site is excluded")
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&unverified, "unverified", false, "list only the exclusions not verified (email without trusted, aligned authentication)")
	return cmd
}

func newExcludeCheckCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "check DOMAIN|URL",
		Short: "Tell whether a site is excluded (exit 1 if it is)",
		Example: `  lohibot exclude check example.co.uk && echo "may be crawled"
  lohibot exclude check https://shop.example.co.uk/page --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if _, err := policy.SiteOf(args[0]); err != nil {
				return err
			}
			p, store, err := a.openPolicy(ctx)
			if err != nil {
				return err
			}
			defer store.Close()
			site, ex, err := p.Check(ctx, args[0])
			if err != nil {
				return err
			}
			if ex == nil {
				if a.json {
					return a.printJSON(map[string]any{"site": site, "excluded": false})
				}
				fmt.Fprintf(a.out, "%s is not excluded\n", showSite(site))
				return nil
			}
			if a.json {
				if err := a.printJSON(toExclusionJSON(ex)); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(a.out, "%s is excluded since %s by %s (%s)", showSite(site), humanTime(ex.ExcludedAt), ex.Actor, verifiedText(ex))
				if ex.Reason != "" {
					fmt.Fprintf(a.out, ": %s", ex.Reason)
				}
				fmt.Fprintln(a.out)
			}
			return refused
		},
	}
}
