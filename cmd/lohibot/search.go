package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/crawler/index"
)

func newSearchCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the index by title, description, headings and link texts",
		Long: `Search the index: pages whose title, meta description, h1-h3 headings or
inbound link texts contain every word of QUERY (case-insensitively), best
first. Prints each page's URL, title and description. Pages of excluded sites
are not shown.`,
		Example: `  lohibot search "opening hours"
  lohibot search bakery rome --json --limit 5`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if limit < 1 {
				return usageErrorf("--limit must be at least 1")
			}
			query := strings.Join(args, " ")
			if strings.TrimSpace(query) == "" {
				return usageErrorf("empty query")
			}
			store, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer store.Close()
			results, err := index.Search(ctx, store, query, limit)
			if err != nil {
				return err
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
			if len(results) == 0 && !a.json {
				fmt.Fprintln(a.errOut, "no pages found")
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many results")
	return cmd
}
