package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/internal/termsafe"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/robotstxt"
)

// newRobotsCmd is the robots group: test (this file) and fetch
// (robots_fetch.go).
func newRobotsCmd(a *app) *cobra.Command {
	cmd := groupCmd("robots", "Check URLs against a robots.txt; fetch what the bot sees on a live site")
	cmd.Long = `LohiSoftBot obeys robots.txt exactly as RFC 9309 says: the group naming the
product token LohiSoftBot (case-insensitively; "*" only when none does), the
longest matching rule, allow on a tie, "*" and "$" patterns, percent-encoding
normalised on both sides, /robots.txt always allowed. See docs/robots.md.`
	cmd.AddCommand(
		newRobotsTestCmd(a, nil),
		newRobotsFetchCmd(a, nil), // robots_fetch.go, owned by the crawler
	)
	return cmd
}

// robotsTestJSON is one line of robots test --json.
type robotsTestJSON struct {
	URL     string `json:"url"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`
	Line    int    `json:"line"`
	// Group is the user-agent line's value that selected the group applied
	// ("LohiSoftBot", "*"), "" when none applies.
	Group string `json:"group"`
}

type robotsTestOptions struct {
	printOptions
	In io.Reader // standard input, read when RobotsFile is "-"

	RobotsFile string // path, or "-" for standard input
	Agent      string
	URLs       []string
}

func newRobotsTestCmd(a *app, runF func(*robotsTestOptions) error) *cobra.Command {
	opts := &robotsTestOptions{}
	cmd := &cobra.Command{
		Use:   "test --robots FILE [--agent TOKEN] URL...",
		Short: "Say whether URLs are allowed by a robots.txt file, and by which rule",
		Long: `Parse a robots.txt file as the crawler does and say, for each URL, whether
the product token may fetch it, with the deciding rule and its line, or why
no rule decided ("no rule matched", "robots.txt always allowed"), and which
group applied: "(group: LohiSoftBot, line 93)" when a group names the token,
which then replaces the "*" group entirely; "(group: *, line 1)" when none
does; "(no group applies)" when the file has neither. Only the first 500 KiB
of the file count (RFC 9309 2.5). URLs may be absolute
(https://example.com/a?b) or paths (/a?b). Nothing is fetched and the
database is not used.

Exit 0 when every URL is allowed, 1 when any is disallowed, 2 on bad input.`,
		Example: `  lohibot robots test --robots robots.txt https://example.com/private/x https://example.com/
  curl -s https://example.com/robots.txt | lohibot robots test --robots - /cart --json
  lohibot robots test --robots robots.txt --agent Googlebot /search?q=x`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.URLs = args
			if err := opts.check(); err != nil {
				return err
			}
			opts.In = a.in
			return runCommand(cmd, a, opts, runF, runRobotsTest)
		},
	}
	cmd.Flags().StringVar(&opts.RobotsFile, "robots", "", "the robots.txt file (- for standard input)")
	cmd.Flags().StringVar(&opts.Agent, "agent", robotstxt.ProductToken, "the product token whose group applies")
	return cmd
}

// check checks --robots, --agent and the URLs.
func (opts *robotsTestOptions) check() error {
	if opts.RobotsFile == "" {
		return usageErrorf("robots test: --robots FILE is required\nSee 'lohibot robots test --help'.")
	}
	if !robotstxt.ValidProductToken(opts.Agent) {
		return usageErrorf("robots test: --agent %q is not a product token (letters, '_' and '-' only, e.g. %s)", opts.Agent, robotstxt.ProductToken)
	}
	for _, u := range opts.URLs {
		if err := checkTestableURL(u); err != nil {
			return usageErrorf("robots test: %w", err)
		}
	}
	return nil
}

// runRobotsTest prints the decision on each URL and returns refused (exit
// 1) when one is disallowed.
func runRobotsTest(_ context.Context, opts *robotsTestOptions, out io.Writer) error {
	body, err := readRobotsFile(opts.In, opts.RobotsFile)
	if err != nil {
		return usageErrorf("robots test: %w", err)
	}
	if len(body) > robotstxt.MaxSize {
		fmt.Fprintf(opts.errOut(), "lohibot: %s is larger than %d bytes; only the first %d are read (RFC 9309 2.5)\n", opts.RobotsFile, robotstxt.MaxSize, robotstxt.MaxSize)
	}
	r := robotstxt.Parse(body)

	var tab table
	disallowed := false
	for _, u := range opts.URLs {
		d := r.Decide(opts.Agent, u)
		disallowed = disallowed || !d.Allowed
		if opts.JSON {
			if err := printJSON(out, robotsTestJSON{URL: policy.MaskPassword(u), Allowed: d.Allowed, Rule: d.Rule, Line: d.Line, Group: d.Group}); err != nil {
				return err
			}
			continue
		}
		verdict := "allowed"
		if !d.Allowed {
			verdict = "disallowed"
		}
		tab.add(verdict, termsafe.String(policy.MaskPassword(u)), explainDecision(d))
	}
	if err := tab.write(out); err != nil {
		return err
	}
	if disallowed {
		return refused
	}
	return nil
}

// explainDecision says why d was decided: the rule and its line, or why no
// rule decided, and the group that applied ("Disallow: /cart (line 6;
// group: LohiSoftBot, line 5)", "no rule matched (group: *, line 1)").
func explainDecision(d robotstxt.Decision) string {
	why := termsafe.String(d.Rule)
	var group string
	switch {
	case d.GroupLine > 0:
		group = fmt.Sprintf("group: %s, line %d", termsafe.String(d.Group), d.GroupLine)
	case d.Rule == robotstxt.ReasonNoRule:
		group = "no group applies"
	}
	switch {
	case d.Line > 0 && group != "":
		return fmt.Sprintf("%s (line %d; %s)", why, d.Line, group)
	case d.Line > 0:
		return fmt.Sprintf("%s (line %d)", why, d.Line)
	case group != "":
		return fmt.Sprintf("%s (%s)", why, group)
	}
	return why
}

// readRobotsFile reads name ("-": standard input), one byte more than
// robotstxt.MaxSize at most: enough for Parse to see where the limit cuts.
func readRobotsFile(in io.Reader, name string) ([]byte, error) {
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	return io.ReadAll(io.LimitReader(in, robotstxt.MaxSize+1))
}

// testableURL reports whether robots test can decide u: an absolute http or
// https URL with a host (and a usable port, if any), or a path starting
// with "/".
func testableURL(u string) bool { return checkTestableURL(u) == nil }

// checkTestableURL is testableURL saying what is wrong: a bad port by name
// (http://example.com:99999/, example.com:99999), anything else as not a
// URL.
func checkTestableURL(u string) error {
	if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
		return nil
	}
	p, err := url.Parse(u)
	if err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" {
		if port := p.Port(); port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("%q: bad port %q", u, port)
			}
		}
		return nil
	}
	// A host with a bad port (example.com:99999, https://example.com:abc/)
	// is named as such, as the site commands do.
	var se *policy.SiteError
	if _, err := policy.SiteOf(u); errors.As(err, &se) && strings.HasPrefix(se.Reason, "bad port") {
		return fmt.Errorf("%q: %s", u, se.Reason)
	}
	return fmt.Errorf("%q is not an http(s) URL or a path starting with /", u)
}
