package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/policy"
)

// robotsFetchJSON is one line of robots fetch --json.
type robotsFetchJSON struct {
	URL        string    `json:"url"`
	Origin     string    `json:"origin"`
	SnapshotID int64     `json:"snapshot_id"`
	FetchedAt  time.Time `json:"fetched_at"`
	Status     int       `json:"status"`
	Outcome    string    `json:"outcome"`
	FinalURL   string    `json:"final_url"`
	Bytes      int       `json:"bytes"`
	Sha256     string    `json:"sha256"`
	CrawlDelay float64   `json:"crawl_delay_seconds"`
	Error      string    `json:"error"`
	Allowed    bool      `json:"allowed"`
	Rule       string    `json:"rule"`
	Line       int       `json:"line"`
}

type robotsFetchOptions struct {
	printOptions
	policyOptions
	// Crawler are the crawler's options, made from the flags and the
	// global --resolver.
	Crawler *crawler.Options

	URL          string
	AllowPrivate bool
	SourceIP     string
	UserAgent    string
	Delay        time.Duration
}

func newRobotsFetchCmd(a *app, runF func(*robotsFetchOptions) error) *cobra.Command {
	opts := &robotsFetchOptions{}
	cmd := &cobra.Command{
		Use:   "fetch URL",
		Short: "Fetch a live robots.txt the way the crawler does, and store the snapshot",
		Long: `Fetch the robots.txt of URL's origin now, exactly as the crawler would: the
policy gate first (an excluded site gets no request), the host's lease and
gap, the bot's user agent, IPv4 only, redirects followed up to 5 hops within
the site, every request in the log. The snapshot is stored, and the outcome
printed with what it means for URL: 2xx parsed; 401/403 disallow all; other
4xx allow all; 429, 5xx and network errors disallow all (tried again later).

Exit 0 when URL is allowed, 1 when it is disallowed or the site is excluded,
2 on bad input.`,
		Example: `  lohibot robots fetch https://example.com/shop/cart
  lohibot robots fetch https://example.com --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.URL = args[0]
			if hasUserinfo(opts.URL) {
				// Not echoed: the argument holds a password.
				return usageErrorf("robots fetch: a URL with credentials (user:password@) is refused: the bot never logs in")
			}
			if _, err := policy.SiteOf(opts.URL); err != nil {
				return err
			}
			if u, err := url.Parse(opts.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				like := "https://" + strings.TrimPrefix(opts.URL, "//")
				if !strings.Contains(strings.TrimPrefix(like, "https://"), "/") {
					like += "/"
				}
				return usageErrorf("robots fetch: %q is not an http(s) URL (such as %s)", opts.URL, like)
			}
			if opts.Delay <= 0 {
				return usageErrorf("--delay must be positive")
			}
			copts, err := a.crawlerOptions(opts.AllowPrivate, opts.SourceIP, opts.UserAgent, "")
			if err != nil {
				return err
			}
			copts.Delay = opts.Delay
			copts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			opts.Crawler = copts
			return runOnPolicy(cmd, a, opts, runF, runRobotsFetch)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.AllowPrivate, "allow-private", false, "allow loopback, private and link-local addresses (tests, the demo)")
	f.StringVar(&opts.SourceIP, "source-ip", "", "send the request from this local IPv4 address")
	f.StringVar(&opts.UserAgent, "user-agent", crawler.UserAgent, "user agent: \""+crawler.UserAgent+"\" or \""+crawler.UserAgentEmail+"\"")
	f.DurationVar(&opts.Delay, "delay", crawler.DefaultDelay, "minimum gap after the host's previous request")
	return cmd
}

// runRobotsFetch fetches and stores the robots.txt of opts.URL's origin
// and prints what it means for the URL; it returns refused (exit 1) when
// the URL is disallowed or the site excluded.
func runRobotsFetch(ctx context.Context, opts *robotsFetchOptions, out io.Writer) error {
	c, err := crawler.New(ctx, opts.Policy.Store(), opts.Policy, opts.Crawler)
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := c.FetchRobots(ctx, opts.URL)
	if errors.Is(err, crawler.ErrExcluded) {
		fmt.Fprintf(opts.errOut(), "lohibot: %v: no request sent\n", err)
		return refused
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		err = printJSON(out, newRobotsFetchJSON(opts.URL, r))
	} else {
		printRobotsFetch(out, opts.URL, r)
	}
	if err != nil {
		return err
	}
	if !r.Decision.Allowed {
		return refused
	}
	return nil
}

func newRobotsFetchJSON(url string, r *crawler.RobotsResult) robotsFetchJSON {
	return robotsFetchJSON{URL: url, Origin: r.Origin, SnapshotID: r.SnapshotID, FetchedAt: r.FetchedAt,
		Status: r.Status, Outcome: r.Outcome, FinalURL: r.FinalURL, Bytes: r.Bytes, Sha256: r.Sha256,
		CrawlDelay: r.CrawlDelay.Seconds(), Error: r.Error, Allowed: r.Decision.Allowed, Rule: r.Decision.Rule,
		Line: r.Decision.Line}
}

// printRobotsFetch writes a robots.txt fetch for people: the snapshot, then
// the verdict on url.
func printRobotsFetch(w io.Writer, url string, r *crawler.RobotsResult) {
	fmt.Fprintf(w, "origin:      %s\n", r.Origin)
	fmt.Fprintf(w, "fetched:     %s (snapshot %d)\n", human.Time(r.FetchedAt), r.SnapshotID)
	if r.Status != 0 {
		fmt.Fprintf(w, "status:      %d\n", r.Status)
	} else {
		fmt.Fprintf(w, "status:      no answer\n")
	}
	fmt.Fprintf(w, "outcome:     %s\n", r.Outcome)
	if r.FinalURL != "" {
		fmt.Fprintf(w, "final URL:   %s\n", r.FinalURL)
	}
	fmt.Fprintf(w, "body:        %d bytes, sha256 %s\n", r.Bytes, r.Sha256)
	if r.CrawlDelay > 0 {
		fmt.Fprintf(w, "crawl-delay: %s\n", r.CrawlDelay)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "error:       %s\n", r.Error)
	}
	verdict := "allowed"
	if !r.Decision.Allowed {
		verdict = "disallowed"
	}
	if r.Decision.Line > 0 {
		fmt.Fprintf(w, "%s: %s by %q (line %d)\n", url, verdict, r.Decision.Rule, r.Decision.Line)
	} else {
		fmt.Fprintf(w, "%s: %s (%s)\n", url, verdict, r.Decision.Rule)
	}
}
