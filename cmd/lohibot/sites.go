package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/policy"
)

func newSitesCmd(a *app) *cobra.Command {
	cmd := groupCmd("sites", "Manage the crawl list: the sites the crawler visits")
	cmd.Long = `The crawl list holds the sites the crawler visits, each with the URL its crawl
starts from. Adding a URL sets the start URL; a bare domain starts at
https://DOMAIN/. An excluded site stays listed but is never crawled.`
	cmd.AddCommand(newSitesAddCmd(a, nil), newSitesRemoveCmd(a, nil), newSitesListCmd(a, nil), newSitesCandidatesCmd(a, nil))
	return cmd
}

type siteJSON struct {
	Site     string    `json:"site"`
	StartURL string    `json:"start_url"`
	AddedAt  time.Time `json:"added_at"`
	AddedBy  string    `json:"added_by"`
	Excluded bool      `json:"excluded"`
}

type sitesAddOptions struct {
	printOptions
	policyOptions

	Inputs []string
	By     string
	// From is the --from list: a file, or "-" for In.
	From string
	In   io.Reader
}

func newSitesAddCmd(a *app, runF func(*sitesAddOptions) error) *cobra.Command {
	opts := &sitesAddOptions{}
	cmd := &cobra.Command{
		Use:   "add DOMAIN|URL... | add --from FILE|-",
		Short: "Add sites to the crawl list",
		Long: `Add sites to the crawl list: the arguments, or with --from every line of FILE
('-' for standard input). A line is a domain or URL, or "rank,domain" as in the
Tranco list's CSV; blank lines and # comments are ignored. --from streams: a
list of any length is added a few thousand lines at a time. It prints how many
sites were added, already on the list, skipped because excluded, and invalid,
naming each invalid line on standard error. Exit 0 when no line was invalid,
1 when some were, 2 when the list cannot be read.`,
		Example: `  lohibot sites add example.com
  lohibot sites add https://shop.example.co.uk/start --json
  lohibot sites add --from top-1m.csv
  grep -v '^#' sites.txt | lohibot sites add --from -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.From != "" {
				if len(args) > 0 {
					return usageError(cmd, fmt.Errorf("give sites as arguments or --from, not both"))
				}
				return nil
			}
			return minArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.From != "" {
				by, err := byFlag(cmd, opts.By, a.getenv)
				if err != nil {
					return err
				}
				opts.By, opts.In = by, a.in
				if opts.From != "-" {
					if _, err := os.Stat(opts.From); err != nil {
						return &exitError{code: exitBadInput, err: fmt.Errorf("--from: %w", err)}
					}
				}
				return runOnPolicy(cmd, a, opts, runF, runSitesAddFrom)
			}
			opts.Inputs = args
			if _, err := policy.SitesOf(args); err != nil {
				return err
			}
			by, err := byFlag(cmd, opts.By, a.getenv)
			if err != nil {
				return err
			}
			opts.By = by
			for _, arg := range args {
				if hasUserinfo(arg) {
					site, _ := policy.SiteOf(arg)
					fmt.Fprintf(a.errOut, "lohibot: warning: %s: credentials removed from the start URL: the bot never logs in\n", site)
				}
			}
			return runOnPolicy(cmd, a, opts, runF, runSitesAdd)
		},
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "who adds them (default: the current user)")
	cmd.Flags().StringVar(&opts.From, "from", "", "add the sites listed in this file, one a line ('-': standard input)")
	return cmd
}

func runSitesAdd(ctx context.Context, opts *sitesAddOptions, out io.Writer) error {
	p := opts.Policy
	sites, err := p.AddSites(ctx, opts.Inputs, policy.Change{Actor: opts.By, Source: "cli"})
	if err != nil {
		return err
	}
	for _, s := range sites {
		if opts.JSON {
			// An excluded site stays listed; say so, as sites list does.
			_, ex, err := p.Check(ctx, s.Name)
			if err != nil {
				return err
			}
			if err := printJSON(out, struct {
				siteJSON
				Replaced string `json:"replaced_start_url,omitempty"`
			}{siteJSON{Site: s.Name, StartURL: s.StartURL, AddedAt: s.AddedAt.UTC(), AddedBy: s.AddedBy, Excluded: ex != nil}, s.Replaced}); err != nil {
				return err
			}
			continue
		}
		switch {
		case s.Replaced != "":
			fmt.Fprintf(out, "%s was listed already: its start URL is now %s, replacing %s\n", human.Site(s.Name), s.StartURL, s.Replaced)
		case s.Listed:
			fmt.Fprintf(out, "%s was listed already, starting at %s\n", human.Site(s.Name), s.StartURL)
		default:
			fmt.Fprintf(out, "listed %s, starting at %s\n", human.Site(s.Name), s.StartURL)
		}
	}
	return nil
}

type sitesRemoveOptions struct {
	printOptions
	policyOptions

	Inputs []string // one argument per site: a site named twice is removed once
	By     string
}

func newSitesRemoveCmd(a *app, runF func(*sitesRemoveOptions) error) *cobra.Command {
	opts := &sitesRemoveOptions{}
	cmd := &cobra.Command{
		Use:   "remove DOMAIN|URL...",
		Short: "Remove sites from the crawl list (without excluding them)",
		Long: `Remove sites from the crawl list. This is not an exclusion: to promise a
webmaster that the bot stays away, use 'lohibot exclude add'. Removing a site
that is not listed is refused (exit 1) and removes nothing.`,
		Example: "  lohibot sites remove example.com",
		Args:    minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := policy.SitesOf(args)
			if err != nil {
				return err
			}
			by, err := byFlag(cmd, opts.By, a.getenv)
			if err != nil {
				return err
			}
			opts.By = by
			// A site named twice (example.com www.example.com) is removed once.
			opts.Inputs = nil
			for i, name := range names {
				if !slices.Contains(names[:i], name) {
					opts.Inputs = append(opts.Inputs, args[i])
				}
			}
			return runOnPolicy(cmd, a, opts, runF, runSitesRemove)
		},
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "who removes them (default: the current user)")
	return cmd
}

func runSitesRemove(ctx context.Context, opts *sitesRemoveOptions, out io.Writer) error {
	sites, err := opts.Policy.RemoveSites(ctx, opts.Inputs, policy.Change{Actor: opts.By, Source: "cli"})
	if err != nil {
		return err
	}
	for _, s := range sites {
		if opts.JSON {
			if err := printJSON(out, map[string]any{"site": s, "removed": true}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(out, "removed %s from the crawl list\n", human.Site(s))
	}
	return nil
}

type sitesListOptions struct {
	printOptions
	policyOptions
}

func newSitesListCmd(a *app, runF func(*sitesListOptions) error) *cobra.Command {
	opts := &sitesListOptions{}
	return &cobra.Command{
		Use:     "list",
		Short:   "List the crawl list",
		Example: "  lohibot sites list --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.setPrint(a.printOptions())
			if runF != nil {
				return runF(opts)
			}
			// Only reads: no sealer (withPolicy starts one), which on a
			// large unsealed log would seal it every few seconds and at
			// exit.
			return a.withStore(cmd.Context(), func(s *db.Store) error {
				opts.Policy = policy.New(s, nil)
				return runSitesList(cmd.Context(), opts, a.out)
			})
		},
	}
}

func runSitesList(ctx context.Context, opts *sitesListOptions, out io.Writer) error {
	// A page of the list at a time: the output streams.
	return opts.Policy.EachSite(ctx, func(s policy.ListedSite) error {
		if opts.JSON {
			return printJSON(out, siteJSON{Site: s.Name, StartURL: s.StartURL, AddedAt: s.AddedAt.UTC(), AddedBy: s.AddedBy, Excluded: s.Excluded})
		}
		status := ""
		if s.Excluded {
			status = "\t(excluded)"
		}
		_, err := fmt.Fprintf(out, "%s\t%s%s\n", human.Site(s.Name), s.StartURL, status)
		return err
	})
}
