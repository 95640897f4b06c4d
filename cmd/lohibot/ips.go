package main

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/app/serve"
)

type ipsOptions struct {
	printOptions
	Config string           // --config, else $LOHIBOT_CONFIG: take the fleet from this file ("": the built-in crawlers)
	Now    func() time.Time // the list's creationTime; nil: time.Now
}

func newIPsCmd(a *app, runF func(*ipsOptions) error) *cobra.Command {
	opts := &ipsOptions{}
	cmd := &cobra.Command{
		Use:   "ips",
		Short: "Print the machine-readable list of LohiSoftBot's addresses",
		Long: `Print the addresses LohiSoftBot crawls from, in the shape the big crawlers
publish (Google's googlebot.json):

  {"creationTime": "2026-05-01T10:00:00Z",
   "prefixes": [{"ipv4Prefix": "79.139.58.98/32"}, {"ipv4Prefix": "79.139.58.121/32"}]}

The list comes from the same crawler configuration the crawler binds its
source address from, so the two cannot disagree: 79.139.58.98
(crawler1.bot.lohisoft.com) and 79.139.58.121 (crawler2.bot.lohisoft.com).
LohiSoftBot never uses IPv6. creationTime is the time of the run.

With --config (or $LOHIBOT_CONFIG), the list is the crawler fleet of that
configuration file, the one 'lohibot serve' publishes at /bot/ips.json.

The output is JSON either way: indented, ready to publish as a file, or with
--json on one line.`,
		Example: `  lohibot ips > lohisoftbot.json
  lohibot ips --json | jq -r '.prefixes[].ipv4Prefix'
  lohibot ips --config /etc/lohibot/lohibot.toml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Config == "" {
				opts.Config = a.getenv(serveConfigEnv)
			}
			return runCommand(cmd, a, opts, runF, runIPs)
		},
	}
	cmd.Flags().StringVar(&opts.Config, "config", "", "take the crawler fleet from this configuration file (default $"+serveConfigEnv+")")
	return cmd
}

// runIPs prints the crawlers' addresses as JSON: indented, or one line
// with --json.
func runIPs(_ context.Context, opts *ipsOptions, out io.Writer) error {
	crawlers := identity.DefaultCrawlers()
	if opts.Config != "" {
		cfg, err := serve.LoadFile(opts.Config)
		if err != nil {
			return serveError(err)
		}
		if crawlers, err = cfg.Fleet(); err != nil {
			return serveError(err)
		}
	}
	if err := identity.CheckCrawlers(crawlers); err != nil {
		return err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	list := identity.NewIPList(crawlers, now())
	if opts.JSON {
		return printJSON(out, list)
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
