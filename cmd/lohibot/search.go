package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/crawler/index"
)

type searchOptions struct {
	printOptions
	storeOptions

	Query  string // the arguments, joined by spaces
	Limit  int    // --limit: at most this many results
	Offset int    // --offset: skip this many first
}

func newSearchCmd(a *app, runF func(*searchOptions) error) *cobra.Command {
	opts := &searchOptions{}
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
			var bad []string
			if opts.Limit < 1 {
				bad = append(bad, "--limit must be at least 1")
			}
			if opts.Offset < 0 {
				bad = append(bad, "--offset must not be negative")
			}
			opts.Query = strings.Join(args, " ")
			if strings.TrimSpace(opts.Query) == "" {
				bad = append(bad, "the query is empty")
			}
			if len(bad) > 0 {
				return usageErrorf("search: %s\nSee '%s --help'.", strings.Join(bad, "; "), cmd.CommandPath())
			}
			return runOnStore(cmd, a, opts, runF, runSearch)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "at most this many results")
	cmd.Flags().IntVar(&opts.Offset, "offset", 0, "skip this many results first")
	return cmd
}

func runSearch(ctx context.Context, opts *searchOptions, out io.Writer) error {
	limit, offset := opts.Limit, opts.Offset
	// One result more than asked tells whether more follow.
	results, err := index.Search(ctx, opts.Store, opts.Query, offset+limit+1)
	if err != nil {
		return err
	}
	results = results[min(offset, len(results)):]
	more := len(results) > limit
	if more {
		results = results[:limit]
	}
	for _, r := range results {
		if opts.JSON {
			if err := printJSON(out, r); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(out, r.URL)
		if r.Title != "" {
			fmt.Fprintf(out, "  %s\n", r.Title)
		}
		if r.Description != "" {
			fmt.Fprintf(out, "  %s\n", r.Description)
		}
	}
	errOut := opts.errOut()
	switch {
	case opts.JSON:
	case len(results) == 0 && offset > 0:
		fmt.Fprintf(errOut, "no pages found after the first %d\n", offset)
	case len(results) == 0:
		fmt.Fprintln(errOut, "no pages found")
	case more:
		fmt.Fprintf(errOut, "results %d-%d shown; more follow: add --offset %d\n", offset+1, offset+len(results), offset+len(results))
	}
	return nil
}
