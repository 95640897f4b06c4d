package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
)

type sitesCandidatesOptions struct {
	printOptions
	storeOptions

	Status string // "" for every status
}

// candidateJSON is one line of sites candidates --json.
type candidateJSON struct {
	Site       string     `json:"site"`
	LinkedFrom int64      `json:"linked_from"`
	Status     string     `json:"status"`
	FirstSeen  time.Time  `json:"first_seen"`
	LastSeen   time.Time  `json:"last_seen"`
	StartURL   string     `json:"start_url"`
	AddedAt    *time.Time `json:"added_at,omitempty"`
}

func newSitesCandidatesCmd(a *app, runF func(*sitesCandidatesOptions) error) *cobra.Command {
	opts := &sitesCandidatesOptions{}
	cmd := &cobra.Command{
		Use:   "candidates [--status waiting|added|excluded]",
		Short: "List the sites found through links (crawl --discover)",
		Long: `List the candidates: the sites that pages crawled with --discover link to,
each with the number of distinct sites linking to it, when it was first and
last seen, and its status: waiting (not on the crawl list), added (on the crawl
list) or excluded (never added, never requested).`,
		Example: `  lohibot sites candidates --status waiting
  lohibot sites candidates --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.Status {
			case "", db.CandidateWaiting, db.CandidateAdded, db.CandidateExcluded:
			default:
				return usageError(cmd, fmt.Errorf("--status %q: must be waiting, added or excluded", opts.Status))
			}
			return runOnStore(cmd, a, opts, runF, runSitesCandidates)
		},
	}
	cmd.Flags().StringVar(&opts.Status, "status", "", "only the candidates with this status: waiting, added or excluded")
	return cmd
}

func runSitesCandidates(ctx context.Context, opts *sitesCandidatesOptions, out io.Writer) error {
	const page = 1000
	after := ""
	for {
		cands, err := opts.Store.CandidatesAfter(ctx, opts.Status, after, page)
		if err != nil {
			return err
		}
		for _, c := range cands {
			if opts.JSON {
				j := candidateJSON{Site: c.Site, LinkedFrom: c.LinkedFrom, Status: c.Status, FirstSeen: c.FirstSeen.UTC(),
					LastSeen: c.LastSeen.UTC(), StartURL: c.StartURL}
				if c.AddedAt != nil {
					t := c.AddedAt.UTC()
					j.AddedAt = &t
				}
				if err := printJSON(out, j); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(out, "%s\t%s\tlinked from %d %s\tfirst seen %s\tlast seen %s\n", human.Site(c.Site), c.Status,
				c.LinkedFrom, plural(c.LinkedFrom, "site", "sites"), human.Time(c.FirstSeen), human.Time(c.LastSeen))
		}
		if len(cands) < page {
			return nil
		}
		after = cands[len(cands)-1].Site
	}
}
