package demo_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/demo"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

// quick are the options of a demo that runs in seconds.
func quick(out *bytes.Buffer) *demo.Options {
	return &demo.Options{
		Out:        out,
		Delay:      100 * time.Millisecond,
		CrawlDelay: time.Second,
		RetryAfter: time.Second,
		Logger:     slog.New(slog.DiscardHandler),
	}
}

// TestDemo runs the whole demo quickly and checks that the story it tells
// is true: in the web server's record, the database and the audit.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	o := quick(&out)
	o.Keep = true
	o.Dir = t.TempDir()
	sum, err := demo.Run(context.Background(), o)
	t.Logf("narration:\n%s", out.String())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}

	t.Run("mail", func(t *testing.T) {
		var got []string
		for _, r := range sum.Mail {
			got = append(got, string(r.Intent)+":"+string(r.Outcome)+":"+strings.Join(r.Excluded, ","))
		}
		want := []string{
			"exclude:excluded:trattoria-example.it",
			"exclude:excluded:cykel-example.dk",
			"other:queued:",
			"auto:ignored:",
			"exclude:excluded:library-example.org",
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("mail results = %q, want %q", got, want)
		}
	})

	t.Run("sites", func(t *testing.T) {
		status := map[string]string{}
		for _, s := range sum.Sites {
			status[s.Site] = s.Status
		}
		for site, want := range map[string]string{
			"trattoria-example.it": crawler.SiteExcluded,
			"cykel-example.dk":     crawler.SiteExcluded,
			"kavezo-example.hu":    crawler.SiteCrawled,
			"robots-example.com":   crawler.SiteCrawled,
		} {
			if status[site] != want {
				t.Errorf("site %s status = %q, want %q", site, status[site], want)
			}
		}
	})

	t.Run("server record", func(t *testing.T) {
		rec := sum.Record
		if rec == nil {
			t.Fatal("no record of the web server")
		}
		if rec.BadUserAgent != 0 || rec.WithCookie != 0 {
			t.Errorf("requests without the user agent, with cookies or credentials = %d, %d, want 0, 0", rec.BadUserAgent, rec.WithCookie)
		}
		if rec.MaxOverlap != 1 {
			t.Errorf("most requests in flight on one host = %d, want 1", rec.MaxOverlap)
		}
		for host, g := range rec.MinGap {
			if g < 100*time.Millisecond {
				t.Errorf("shortest gap on %s = %v, want at least the 100ms delay", host, g)
			}
		}
		for site, n := range rec.PageRequests {
			if n > crawler.Budget {
				t.Errorf("page requests on %s = %d, want at most %d", site, n, crawler.Budget)
			}
		}
		if len(rec.Disallowed) != 0 || rec.AfterLogin != 0 || rec.LoginFetched {
			t.Errorf("disallowed %q, after the 401 %d, login followed %v; want none", rec.Disallowed, rec.AfterLogin, rec.LoginFetched)
		}
		if rec.RetryGap < time.Second {
			t.Errorf("gap after 429 with Retry-After: 1 = %v, want at least 1s", rec.RetryGap)
		}
		for _, site := range []string{"trattoria-example.it", "cykel-example.dk"} {
			if n := len(rec.ByHost[site]); n != 0 {
				t.Errorf("requests to %s, excluded before the crawl = %d, want 0", site, n)
			}
		}
	})

	t.Run("mid-crawl exclusion", func(t *testing.T) {
		ev := sum.MidCrawl
		if ev == nil {
			t.Fatal("the email that arrives mid-crawl was not applied")
		}
		before, after := 0, 0
		for _, h := range sum.Record.ByHost["library-example.org"] {
			if h.Start.After(ev.Result.Committed) {
				after++
			} else {
				before++
			}
		}
		if after != 0 || before == 0 {
			t.Errorf("requests to library-example.org before, after its exclusion = %d, %d; want some, 0", before, after)
		}
		if took := ev.Result.Committed.Sub(sum.DeliveredMidCrawl); took > 5*time.Second {
			t.Errorf("time to exclusion = %v, want well under 5s", took)
		}
	})

	t.Run("audit", func(t *testing.T) {
		if sum.Audit == nil {
			t.Fatal("no audit")
		}
		for _, v := range sum.Violations {
			t.Errorf("audit violation %s %s/%s: %s", v.Site, v.Rule, v.Check, v.Evidence)
		}
		if !sum.Audit.OK() {
			t.Errorf("audit = %+v, want every rule to hold", sum.Audit)
		}
		// The records were appended to the log before the audit: it
		// checked them against it.
		if s := sum.Audit.Log; s == nil || s.Size == 0 {
			t.Errorf("audit log = %+v, want the demo's records in it", s)
		}
	})

	t.Run("verify", func(t *testing.T) {
		if len(sum.Verify) != 2 || !sum.Verify[0].Genuine || sum.Verify[1].Genuine {
			t.Errorf("verify = %+v, want one genuine then one impostor", sum.Verify)
		}
	})

	t.Run("kept database agrees", func(t *testing.T) {
		store := dbtest.OpenDSN(t, sum.DSN)
		ex, err := policy.New(store, nil).Exclusions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var sites []string
		for _, e := range ex {
			sites = append(sites, e.Site+"/"+e.Source)
		}
		want := "cykel-example.dk/" + mailbot.SourceMail + " library-example.org/" + mailbot.SourceMail + " trattoria-example.it/" + mailbot.SourceMail
		if strings.Join(sites, " ") != want {
			t.Errorf("exclusions = %q, want %q", sites, want)
		}
		var reqs int64
		dbtest.Gorm(store).Model(&db.Request{}).Count(&reqs)
		if int(reqs) != sum.Record.Requests {
			t.Errorf("requests in the log = %d, the server saw %d", reqs, sum.Record.Requests)
		}
		if !strings.Contains(out.String(), "--db "+sum.DSN) {
			t.Errorf("the narration does not name the kept database %s", sum.DSN)
		}
	})
}

func TestDemoRemovesItsFolder(t *testing.T) {
	var out bytes.Buffer
	o := quick(&out)
	o.Delay = 20 * time.Millisecond
	sum, err := demo.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if _, err := os.Stat(sum.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat(%s) = %v, want the folder removed", sum.Dir, err)
	}
	if sum.Kept {
		t.Errorf("Kept = true, want false")
	}
}

func TestDemoRefusesADatabaseWithData(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "real.db")
	store, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.New(store, nil).AddSites(context.Background(), []string{"example.com"}, policy.Change{Actor: "anna"}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	var out bytes.Buffer
	o := quick(&out)
	o.DSN = dsn
	o.Dir = t.TempDir()
	if _, err := demo.Run(context.Background(), o); !errors.Is(err, demo.ErrNotEmpty) {
		t.Errorf("Run(--db with data) = %v, want ErrNotEmpty", err)
	}
}
