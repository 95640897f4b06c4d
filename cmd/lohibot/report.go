package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/audit/report"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/policy"
)

type reportOptions struct {
	printOptions
	storeOptions

	Site   string // the argument: a site or URL
	Format string // --format (--json: json)
	Output string // -o: write to this file ("": out)
	Lang   string // --lang
}

func newReportCmd(a *app, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report SITE [--format text|json|html] [-o FILE] [--lang en|it|da|hu]",
		Short: "Write what the bot did on a site and whether it kept its promises",
		Long: `Write the compliance report of one site, from the records alone: its status
(on the crawl list, crawled, excluded since when, by whom and on what
evidence), every crawl cycle with every request (time, URL, status, the
robots.txt rule that allowed it, bytes), the robots.txt files the bot saw
(body and SHA-256), what the index keeps of the site, the emails received
about it, and the verdict of every audit rule.

--format html writes one self-contained file (no scripts, no external fonts
or styles) with an inline SVG timeline of the requests per host; it prints
well. --lang picks the language of the report's own words (en, it, da, hu);
what was crawled or emailed is shown as it was, escaped. --json is the same
as --format json (one JSON object); with another --format it is bad input.

Exit 0 when the report is written, 1 when lohibot has no record of the site
at all (not listed, never crawled, never excluded, no email names it: most
likely a typo; no report is written), 2 on bad input. The report is written
even when a promise was broken: its audit section says so. A verdict is
given only on what was checked, with the counts; a site never crawled gets
none.`,
		Example: `  lohibot report example.com
  lohibot report https://www.example.com/ --format html -o example.html --lang it
  lohibot report example.com --format json | jq '.audit[] | {rule, ok}'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Site = args[0]
			if a.json {
				if cmd.Flags().Changed("format") && !strings.EqualFold(opts.Format, report.FormatJSON) {
					return usageErrorf("report: --json prints JSON; it cannot go with --format %s\nSee '%s --help'.", opts.Format, cmd.CommandPath())
				}
				opts.Format = report.FormatJSON
			}
			if err := opts.check(); err != nil {
				return err
			}
			return runOnStore(cmd, a, opts, runF, runReport)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", report.FormatText, "text, json or html")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to FILE instead of standard output")
	cmd.Flags().StringVar(&opts.Lang, "lang", "en", "language of the report's words: "+strings.Join(report.Languages(), ", "))
	return cmd
}

// check checks the site, --format, --lang and -o, and puts the site, format
// and language in their canonical forms.
func (opts *reportOptions) check() error {
	site, err := policy.SiteOf(opts.Site)
	if err != nil {
		return err
	}
	opts.Site = site
	format := strings.ToLower(opts.Format)
	if !slices.Contains(report.Formats(), format) {
		return usageErrorf("report: --format %q: want one of %s", opts.Format, strings.Join(report.Formats(), ", "))
	}
	opts.Format = format
	lang := strings.ToLower(opts.Lang)
	if !slices.Contains(report.Languages(), lang) {
		return usageErrorf("report: --lang %q: want one of %s", opts.Lang, strings.Join(report.Languages(), ", "))
	}
	opts.Lang = lang
	if opts.Output != "" {
		if st, err := os.Stat(opts.Output); err == nil && st.IsDir() {
			return usageErrorf("report: -o %s is a folder: name a file", opts.Output)
		}
		if dir := filepath.Dir(opts.Output); dir != "" {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usageErrorf("report: -o %s: no such folder %s", opts.Output, dir)
			}
		}
	}
	return nil
}

// runReport writes the report of opts.Site (checked by check) to out or
// to opts.Output; it returns refused (exit 1) when there is no record of
// the site.
func runReport(ctx context.Context, opts *reportOptions, out io.Writer) error {
	site, format, lang := opts.Site, opts.Format, opts.Lang
	rep, err := report.Build(ctx, opts.Store, site, nil)
	if err != nil {
		return err
	}
	if rep.NoRecord() {
		// A typo must not read as a clean bill: say plainly that there is
		// nothing to report on, and write no report.
		msg := fmt.Sprintf("lohibot has no record of %s: not listed, never crawled, no email names it", human.Site(site))
		if format == report.FormatText && opts.Output == "" {
			fmt.Fprintln(out, msg)
		} else {
			fmt.Fprintln(opts.errOut(), msg)
		}
		return refused
	}
	var buf bytes.Buffer
	if err := report.Write(&buf, rep, format, lang); err != nil {
		return err
	}
	if opts.Output == "" {
		_, err := out.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(opts.Output, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if !opts.JSON {
		fmt.Fprintf(opts.errOut(), "wrote the %s report of %s to %s\n", format, human.Site(site), opts.Output)
	}
	return nil
}
