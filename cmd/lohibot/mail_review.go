package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/mailbot"
)

func newMailReviewExcludeCmd(a *app, runF func(*mailReviewOptions) error) *cobra.Command {
	opts := &mailReviewOptions{Action: mailbot.ActionExclude}
	cmd := &cobra.Command{
		Use:   "exclude ID [--site DOMAIN...] [--by WHO]",
		Short: "Exclude the sites of a message, whatever was decided before",
		Long: `Exclude the sites a stored message names (or those given with --site) on
behalf of the staff member --by (default: the current user), with the message
as evidence. Use it for a message read as something else (a real exclusion
request classified as "other", an exclusion of one site that named another).
A message waiting for review is marked approved.`,
		Example: `  lohibot mail review exclude 14 --by anna
  lohibot mail review exclude 14 --site example.com --site example.org`,
		Args: exactArgs(1),
		RunE: reviewRunE(a, opts, "", runF, runMailReviewCorrect),
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who decides (default: the current user)")
	cmd.Flags().StringSliceVar(&opts.Sites, "site", nil, "the sites to exclude, instead of those the message names (repeatable)")
	return cmd
}

func newMailReviewReincludeCmd(a *app, runF func(*mailReviewOptions) error) *cobra.Command {
	opts := &mailReviewOptions{Action: mailbot.ActionReinclude}
	cmd := &cobra.Command{
		Use:   "reinclude ID --by WHO [--site DOMAIN...]",
		Short: "Re-include the sites of a message (undo an exclusion applied by mistake)",
		Long: `Re-include, on behalf of the staff member --by (required), the sites that
an exclusion from this message applied and the sites it names (or those given
with --site), with the message as evidence. Use it when an exclusion was
applied by mistake (a re-inclusion request read as an exclusion) or to grant
a re-inclusion request. Sites that are not excluded are reported and left
alone. A message waiting for review is marked approved.`,
		Example: `  lohibot mail review reinclude 9 --by anna
  lohibot mail review reinclude 9 --by anna --site example.com`,
		Args: exactArgs(1),
		RunE: reviewRunE(a, opts, "re-including needs --by WHO (the staff member who decides)", runF, runMailReviewCorrect),
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "the staff member who re-includes (required)")
	cmd.Flags().StringSliceVar(&opts.Sites, "site", nil, "the sites to re-include, instead of those of the message (repeatable)")
	return cmd
}

// runMailReviewCorrect excludes or re-includes (opts.Action) the sites of
// a message, whatever was decided before.
func runMailReviewCorrect(ctx context.Context, opts *mailReviewOptions, out io.Writer) error {
	proc := mailbot.New(opts.Policy, nil)
	var (
		ap  *mailbot.Approval
		err error
	)
	if opts.Action == mailbot.ActionReinclude {
		ap, err = proc.Reinclude(ctx, opts.ID, opts.By, opts.Sites)
	} else {
		ap, err = proc.Exclude(ctx, opts.ID, opts.By, opts.Sites)
	}
	if err != nil {
		return reviewError(err)
	}
	if opts.JSON {
		return printJSON(out, ap)
	}
	printApproval(out, ap)
	return nil
}

// printApproval says what a staff decision did, in one line.
func printApproval(out io.Writer, ap *mailbot.Approval) {
	switch ap.Action {
	case mailbot.ActionReinclude:
		done := without(ap.Sites, ap.NotExcluded)
		fmt.Fprintf(out, "message %d: re-included %s by %s", ap.ID, orDash(strings.Join(done, " ")), ap.By)
		if len(ap.NotExcluded) > 0 {
			fmt.Fprintf(out, " (not excluded, nothing to undo: %s)", strings.Join(ap.NotExcluded, " "))
		}
	default:
		fmt.Fprintf(out, "message %d: excluded %s by %s", ap.ID, strings.Join(ap.Sites, " "), ap.By)
		if len(ap.Already) > 0 {
			fmt.Fprintf(out, " (already excluded: %s)", strings.Join(ap.Already, " "))
		}
	}
	fmt.Fprintln(out)
}

func without(list, drop []string) []string {
	var out []string
	for _, s := range list {
		keep := true
		for _, d := range drop {
			if s == d {
				keep = false
			}
		}
		if keep {
			out = append(out, s)
		}
	}
	return out
}
