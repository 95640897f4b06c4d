package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/localweb/sampleweb"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/dovecottest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

// exclusionMail is an exclusion request for site, as a webmaster writes it.
func exclusionMail(site, id string) []byte {
	return []byte(strings.ReplaceAll(fmt.Sprintf(`From: Webmaster <webmaster@%[1]s>
To: message@lohisoft.com
Subject: Please exclude my site
Date: %[2]s
Message-ID: <%[3]s@%[1]s>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Hello,

please stop crawling %[1]s and remove it from your crawl list.

Thanks
`, site, time.Now().UTC().Format(time.RFC1123Z), id), "\n", "\r\n"))
}

// TestEmailExclusionStopsCrawl runs the daemon against a real Dovecot and
// the sample web: an exclusion emailed while the daemon crawls the site
// stops that crawl within one request, the message is filed, and the
// metrics and the health check say so.
func TestEmailExclusionStopsCrawl(t *testing.T) {
	dove := dovecottest.Start(t)
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		web, err := sampleweb.Start(&sampleweb.Options{Pages: 3, BigPages: 60})
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		big := web.Site(sampleweb.KindBig)
		msg := exclusionMail(big.Name, fmt.Sprintf("exclude-%d", time.Now().UnixNano()))
		if m := mailbot.Parse(msg); m.Intent != mailbot.IntentExclude || len(m.Domains) != 1 || m.Domains[0] != big.Name {
			t.Fatalf("Parse(test mail) = %s %v, want exclude [%s]", m.Intent, m.Domains, big.Name)
		}

		cfg := testConfig(dsn)
		cfg.Crawler.Enabled = true
		cfg.Crawler.AllowPrivate = true
		cfg.Resolver = web.DNSAddr
		cfg.Crawler.Delay = serve.Duration(200 * time.Millisecond)
		cfg.Crawler.ScanInterval = serve.Duration(100 * time.Millisecond)
		cfg.Crawler.MaxSitesParallel = 2
		cfg.Mail.IMAP = dove.URL(true)
		cfg.Mail.Password = dovecottest.Password
		cfg.Mail.Insecure = true
		srv, _ := newServer(t, cfg)
		pol := policy.New(srv.Store(), nil)
		if _, err := pol.AddSites(context.Background(), []string{big.StartURL, web.Site("trattoria-example.it").StartURL},
			policy.Change{Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		base := start(t, srv)

		testutil.Eventually(t, 20*time.Second, "the watcher to connect", func() bool {
			return srv.Check(context.Background()).Watcher.Status == serve.StatusOK
		})
		testutil.Eventually(t, 30*time.Second, "3 pages of "+big.Name, func() bool { return sampleweb.PageHits(web.HitsFor(big.Name)) >= 3 })
		filed := max(dove.Count("Processed"), 0)
		dove.Deliver(msg, "")
		delivered := time.Now()
		var excludedAt time.Time
		testutil.Eventually(t, 30*time.Second, "the emailed exclusion", func() bool {
			_, ex, err := pol.Check(context.Background(), big.Name)
			if err == nil && ex != nil {
				excludedAt = time.Now()
				return true
			}
			return false
		})
		testutil.Eventually(t, 30*time.Second, "the crawl of "+big.Name+" to end", func() bool {
			cs := cycles(t, srv.Store())[big.Name]
			return len(cs) > 0 && cs[len(cs)-1].Status != db.CycleRunning
		})
		cs := cycles(t, srv.Store())[big.Name]
		if len(cs) != 1 || cs[0].Reason != "excluded while crawling" {
			t.Errorf("cycles of %s = %+v, want one ended by the exclusion", big.Name, cs)
		}
		late := 0
		for _, h := range web.HitsFor(big.Name) {
			if h.Start.After(excludedAt) {
				late++
			}
		}
		if late > 1 {
			t.Errorf("%d requests to %s started after the exclusion was seen, want at most 1", late, big.Name)
		}
		if n := sampleweb.PageHits(web.HitsFor(big.Name)); n >= 20 {
			t.Errorf("%d pages of %s fetched: the emailed exclusion did not stop the crawl", n, big.Name)
		}
		t.Logf("exclusion committed %v after delivery; %d pages of %s fetched", excludedAt.Sub(delivered).Round(time.Millisecond),
			sampleweb.PageHits(web.HitsFor(big.Name)), big.Name)

		testutil.Eventually(t, 10*time.Second, "the message to be filed", func() bool { return dove.Count("Processed") > filed })
		// The site's result is counted once the crawler hands it back,
		// just after its cycle's end is committed: wait for that.
		wants := []string{
			`lohibot_mail_processed_total{intent="exclude",outcome="excluded"} 1`,
			`lohibot_exclusions_applied_total{source="mail"} 1`,
			"lohibot_mail_time_to_exclusion_seconds_count 1",
			"lohibot_mail_watcher_connected 1",
			`lohibot_crawler_sites_total{status="excluded"} 1`,
		}
		testutil.Eventually(t, 10*time.Second, "/metrics to show "+strings.Join(wants, ", "), func() bool {
			_, body := fetchURL(t, base+"/metrics")
			for _, want := range wants {
				if !strings.Contains(body, want+"\n") {
					return false
				}
			}
			return true
		})
		code, hb := fetchURL(t, base+"/healthz")
		var h serve.Health
		json.Unmarshal([]byte(hb), &h)
		if code != 200 || h.Watcher.Status != serve.StatusOK {
			t.Errorf("GET /healthz = %d %s, want 200 with the watcher ok", code, hb)
		}
		auditOK(t, srv.Store())
	})
}
