package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/policy"
)

func newSitesCmd(a *app) *cobra.Command {
	cmd := groupCmd("sites", "Manage the crawl list: the sites the crawler visits")
	cmd.Long = `The crawl list holds the sites the crawler visits, each with the URL its crawl
starts from. Adding a URL sets the start URL; a bare domain starts at
https://DOMAIN/. An excluded site stays listed but is never crawled.`
	cmd.AddCommand(newSitesAddCmd(a), newSitesRemoveCmd(a), newSitesListCmd(a))
	return cmd
}

type siteJSON struct {
	Site     string    `json:"site"`
	StartURL string    `json:"start_url"`
	AddedAt  time.Time `json:"added_at"`
	AddedBy  string    `json:"added_by"`
	Excluded bool      `json:"excluded"`
}

func newSitesAddCmd(a *app) *cobra.Command {
	var by string
	cmd := &cobra.Command{
		Use:   "add DOMAIN|URL...",
		Short: "Add sites to the crawl list",
		Example: `  lohibot sites add example.com
  lohibot sites add https://shop.example.co.uk/start --json`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if _, err := policy.SitesOf(args); err != nil {
				return err
			}
			by, err := byFlag(cmd, by, a.getenv)
			if err != nil {
				return err
			}
			for _, arg := range args {
				if hasUserinfo(arg) {
					site, _ := policy.SiteOf(arg)
					fmt.Fprintf(a.errOut, "lohibot: warning: %s: credentials removed from the start URL: the bot never logs in\n", site)
				}
			}
			p, store, err := a.openPolicy(ctx)
			if err != nil {
				return err
			}
			defer store.Close()
			sites, err := p.AddSites(ctx, args, policy.Change{Actor: by, Source: "cli"})
			if err != nil {
				return err
			}
			for _, s := range sites {
				if a.json {
					// An excluded site stays listed; say so, as sites list does.
					_, ex, err := p.Check(ctx, s.Name)
					if err != nil {
						return err
					}
					if err := a.printJSON(struct {
						siteJSON
						Replaced string `json:"replaced_start_url,omitempty"`
					}{siteJSON{Site: s.Name, StartURL: s.StartURL, AddedAt: s.AddedAt.UTC(), AddedBy: s.AddedBy, Excluded: ex != nil}, s.Replaced}); err != nil {
						return err
					}
					continue
				}
				switch {
				case s.Replaced != "":
					fmt.Fprintf(a.out, "%s was listed already: its start URL is now %s, replacing %s\n", showSite(s.Name), s.StartURL, s.Replaced)
				case s.Listed:
					fmt.Fprintf(a.out, "%s was listed already, starting at %s\n", showSite(s.Name), s.StartURL)
				default:
					fmt.Fprintf(a.out, "listed %s, starting at %s\n", showSite(s.Name), s.StartURL)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who adds them (default: the current user)")
	return cmd
}

func newSitesRemoveCmd(a *app) *cobra.Command {
	var by string
	cmd := &cobra.Command{
		Use:   "remove DOMAIN|URL...",
		Short: "Remove sites from the crawl list (without excluding them)",
		Long: `Remove sites from the crawl list. This is not an exclusion: to promise a
webmaster that the bot stays away, use 'lohibot exclude add'. Removing a site
that is not listed is refused (exit 1) and removes nothing.`,
		Example: "  lohibot sites remove example.com",
		Args:    minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			names, err := policy.SitesOf(args)
			if err != nil {
				return err
			}
			by, err := byFlag(cmd, by, a.getenv)
			if err != nil {
				return err
			}
			// A site named twice (example.com www.example.com) is removed once.
			var inputs []string
			for i, name := range names {
				if !slices.Contains(names[:i], name) {
					inputs = append(inputs, args[i])
				}
			}
			p, store, err := a.openPolicy(ctx)
			if err != nil {
				return err
			}
			defer store.Close()
			sites, err := p.RemoveSites(ctx, inputs, policy.Change{Actor: by, Source: "cli"})
			if err != nil {
				return err
			}
			for _, s := range sites {
				if a.json {
					if err := a.printJSON(map[string]any{"site": s, "removed": true}); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(a.out, "removed %s from the crawl list\n", showSite(s))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who removes them (default: the current user)")
	return cmd
}

func newSitesListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the crawl list",
		Example: "  lohibot sites list --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			// Only reads: no sealer, which on a large unsealed log would
			// seal it every few seconds and at exit.
			store, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer store.Close()
			p := policy.New(store, nil)
			// A page of the list at a time: the output streams.
			return p.EachSite(ctx, func(s policy.ListedSite) error {
				if a.json {
					return a.printJSON(siteJSON{Site: s.Name, StartURL: s.StartURL, AddedAt: s.AddedAt.UTC(), AddedBy: s.AddedBy, Excluded: s.Excluded})
				}
				status := ""
				if s.Excluded {
					status = "\t(excluded)"
				}
				_, err := fmt.Fprintf(a.out, "%s\t%s%s\n", showSite(s.Name), s.StartURL, status)
				return err
			})
		},
	}
}
