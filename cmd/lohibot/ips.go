package main

import (
	"encoding/json"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/crawler/identity"
)

func newIPsCmd(a *app) *cobra.Command {
	return &cobra.Command{
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

The output is JSON either way: indented, ready to publish as a file, or with
--json on one line.`,
		Example: `  lohibot ips > lohisoftbot.json
  lohibot ips --json | jq -r '.prefixes[].ipv4Prefix'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			crawlers := identity.DefaultCrawlers()
			if err := identity.CheckCrawlers(crawlers); err != nil {
				return err
			}
			list := identity.NewIPList(crawlers, time.Now())
			if a.json {
				return a.printJSON(list)
			}
			b, err := json.MarshalIndent(list, "", "  ")
			if err != nil {
				return err
			}
			_, err = a.out.Write(append(b, '\n'))
			return err
		},
	}
}
