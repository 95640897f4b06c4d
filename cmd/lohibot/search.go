package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/crawler/index"
)

func newSearchCmd(a *app) *cobra.Command {
	var limit, offset int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the index by title, description, headings and link texts",
		Long: `Search the index: pages whose title, meta description, h1-h3 headings or
inbound link texts contain every word of QUERY (case-insensitively), best
first. Prints each page's URL, title and description. Pages of excluded sites
are not shown.

--limit N shows at most N results, --offset N skips the first N: when more
results follow, the text output ends by saying so and with the --offset that
shows them (on standard error, so the results stay clean to pipe).`,
		Example: `  lohibot search "opening hours"
  lohibot search bakery rome --json --limit 5
  lohibot search bakery --limit 5 --offset 5`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var bad []string
			if limit < 1 {
				bad = append(bad, "--limit must be at least 1")
			}
			if offset < 0 {
				bad = append(bad, "--offset must not be negative")
			}
			query := strings.Join(args, " ")
			if strings.TrimSpace(query) == "" {
				bad = append(bad, "the query is empty")
			}
			if len(bad) > 0 {
				return usageErrorf("search: %s\nSee '%s --help'.", strings.Join(bad, "; "), cmd.CommandPath())
			}
			store, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer store.Close()
			// One result more than asked tells whether more follow.
			results, err := index.Search(ctx, store, query, offset+limit+1)
			if err != nil {
				return err
			}
			results = results[min(offset, len(results)):]
			more := len(results) > limit
			if more {
				results = results[:limit]
			}
			for _, r := range results {
				if a.json {
					if err := a.printJSON(r); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintln(a.out, r.URL)
				if r.Title != "" {
					fmt.Fprintf(a.out, "  %s\n", r.Title)
				}
				if r.Description != "" {
					fmt.Fprintf(a.out, "  %s\n", r.Description)
				}
			}
			switch {
			case a.json:
			case len(results) == 0 && offset > 0:
				fmt.Fprintf(a.errOut, "no pages found after the first %d\n", offset)
			case len(results) == 0:
				fmt.Fprintln(a.errOut, "no pages found")
			case more:
				fmt.Fprintf(a.errOut, "results %d-%d shown; more follow: add --offset %d\n", offset+1, offset+len(results), offset+len(results))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many results")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip this many results first")
	return cmd
}
