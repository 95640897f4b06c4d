package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/robotstxt"
)

// These tests call the run functions directly with options made by hand
// and buffers for output: no cobra, no process. Those on the database get a
// fresh one of each engine.

// exitCodeOf is the exit code run would give err.
func exitCodeOf(err error) int { return exitCode(err) }

func TestRunExclusions(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		p := policy.New(dbtest.OpenDSN(t, dsn), nil)
		var out, errOut bytes.Buffer
		pr := printOptions{ErrOut: &errOut}

		add := &excludeAddOptions{printOptions: pr, policyOptions: policyOptions{p}, Inputs: []string{"https://www.Example.co.uk/x"}, By: "anna", Reason: "asked"}
		if err := runExcludeAdd(ctx, add, &out); err != nil || out.String() != "excluded example.co.uk\n" {
			t.Fatalf("runExcludeAdd = %v, out %q", err, out.String())
		}
		out.Reset()
		if err := runExcludeAdd(ctx, add, &out); err != nil || !strings.HasPrefix(out.String(), "example.co.uk was already excluded since ") ||
			!strings.HasSuffix(out.String(), " UTC; request recorded\n") {
			t.Errorf("runExcludeAdd again = %v, out %q", err, out.String())
		}

		out.Reset()
		check := &excludeCheckOptions{printOptions: pr, policyOptions: policyOptions{p}, Input: "shop.example.co.uk"}
		if err := runExcludeCheck(ctx, check, &out); exitCodeOf(err) != 1 || !strings.HasPrefix(out.String(), "example.co.uk is excluded since ") ||
			!strings.HasSuffix(out.String(), " by anna (verified): asked\n") {
			t.Errorf("runExcludeCheck = %v (exit %d), out %q", err, exitCodeOf(err), out.String())
		}

		out.Reset()
		list := &excludeListOptions{printOptions: printOptions{JSON: true, ErrOut: &errOut}, policyOptions: policyOptions{p}}
		if err := runExcludeList(ctx, list, &out); err != nil {
			t.Fatal(err)
		}
		var ex exclusionJSON
		if err := json.Unmarshal(out.Bytes(), &ex); err != nil || ex.Site != "example.co.uk" || !ex.Verified || ex.By != "anna" || ex.Source != "cli" {
			t.Errorf("runExcludeList --json = %q (%v)", out.String(), err)
		}
		out.Reset()
		list = &excludeListOptions{printOptions: pr, policyOptions: policyOptions{p}, Unverified: true}
		if err := runExcludeList(ctx, list, &out); err != nil || out.Len() != 0 || errOut.String() != "no unverified exclusion\n" {
			t.Errorf("runExcludeList --unverified = %v, out %q, errOut %q", err, out.String(), errOut.String())
		}

		out.Reset()
		remove := &excludeRemoveOptions{printOptions: pr, policyOptions: policyOptions{p}, Input: "example.co.uk", By: "anna"}
		if err := runExcludeRemove(ctx, remove, &out); err != nil || out.String() != "re-included example.co.uk\n" {
			t.Errorf("runExcludeRemove = %v, out %q", err, out.String())
		}
		if err := runExcludeRemove(ctx, remove, &out); !errors.Is(err, policy.ErrNotExcluded) || exitCodeOf(err) != 1 {
			t.Errorf("runExcludeRemove of a site not excluded = %v, want ErrNotExcluded (exit 1)", err)
		}
		out.Reset()
		if err := runExcludeCheck(ctx, check, &out); err != nil || out.String() != "example.co.uk is not excluded\n" {
			t.Errorf("runExcludeCheck after re-inclusion = %v, out %q", err, out.String())
		}
	})
}

func TestRunSites(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		p := policy.New(dbtest.OpenDSN(t, dsn), nil)
		var out bytes.Buffer
		add := &sitesAddOptions{policyOptions: policyOptions{p}, Inputs: []string{"example.com", "https://shop.example.org/start"}, By: "anna"}
		if err := runSitesAdd(ctx, add, &out); err != nil {
			t.Fatal(err)
		}
		want := "listed example.com, starting at https://example.com/\nlisted example.org, starting at https://shop.example.org/start\n"
		if out.String() != want {
			t.Errorf("runSitesAdd printed %q, want %q", out.String(), want)
		}
		out.Reset()
		if err := runSitesList(ctx, &sitesListOptions{printOptions: printOptions{JSON: true}, policyOptions: policyOptions{p}}, &out); err != nil {
			t.Fatal(err)
		}
		var sites []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var s siteJSON
			if err := json.Unmarshal([]byte(l), &s); err != nil {
				t.Fatalf("runSitesList --json line %q: %v", l, err)
			}
			sites = append(sites, s.Site+" "+s.AddedBy)
		}
		eq(t, "listed sites", sites, []string{"example.com anna", "example.org anna"})
		out.Reset()
		remove := &sitesRemoveOptions{policyOptions: policyOptions{p}, Inputs: []string{"example.com"}, By: "anna"}
		if err := runSitesRemove(ctx, remove, &out); err != nil || out.String() != "removed example.com from the crawl list\n" {
			t.Errorf("runSitesRemove = %v, out %q", err, out.String())
		}
	})
}

func TestRunStoreCommandsOnEmptyDatabase(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		var out, errOut bytes.Buffer
		pr := printOptions{ErrOut: &errOut}

		search := &searchOptions{printOptions: pr, storeOptions: storeOptions{store}, Query: "bakery", Limit: 20}
		if err := runSearch(ctx, search, &out); err != nil || out.Len() != 0 || errOut.String() != "no pages found\n" {
			t.Errorf("runSearch = %v, out %q, errOut %q", err, out.String(), errOut.String())
		}
		errOut.Reset()
		search.Offset = 5
		if err := runSearch(ctx, search, &out); err != nil || errOut.String() != "no pages found after the first 5\n" {
			t.Errorf("runSearch --offset 5 = %v, errOut %q", err, errOut.String())
		}

		audit := &auditOptions{printOptions: printOptions{JSON: true}, storeOptions: storeOptions{store}, Rules: []string{"budget"}}
		if err := runAudit(ctx, audit, &out); err != nil {
			t.Fatalf("runAudit: %v", err)
		}
		var sum auditSummaryJSON
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil || !sum.Summary || !sum.OK || len(sum.Rules) != 1 || sum.Rules[0].Rule != "budget" {
			t.Errorf("runAudit --json = %q (%v)", out.String(), err)
		}

		out.Reset()
		errOut.Reset()
		rep := &reportOptions{printOptions: pr, storeOptions: storeOptions{store}, Site: "example.com", Format: "text", Lang: "en"}
		if err := runReport(ctx, rep, &out); exitCodeOf(err) != 1 || !strings.HasPrefix(out.String(), "lohibot has no record of example.com") {
			t.Errorf("runReport of an unknown site = %v, out %q", err, out.String())
		}
		out.Reset()
		rep.Output = filepath.Join(t.TempDir(), "r.txt")
		if err := runReport(ctx, rep, &out); exitCodeOf(err) != 1 || out.Len() != 0 || !strings.HasPrefix(errOut.String(), "lohibot has no record of example.com") {
			t.Errorf("runReport -o of an unknown site = %v, out %q, errOut %q", err, out.String(), errOut.String())
		}

		errOut.Reset()
		review := &mailReviewListOptions{printOptions: pr, policyOptions: policyOptions{policy.New(store, nil)}}
		if err := runMailReviewList(ctx, review, &out); err != nil || out.Len() != 0 || errOut.String() != "no message waits for review\n" {
			t.Errorf("runMailReviewList = %v, out %q, errOut %q", err, out.String(), errOut.String())
		}
	})
}

func TestRunInit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	var out bytes.Buffer
	opts := &initOptions{DSN: path}
	want := fmt.Sprintf("created database at %s (sqlite, schema version %d)\n", path, db.SchemaVersion)
	if err := runInit(ctx, opts, &out); err != nil || out.String() != want {
		t.Errorf("runInit = %v, out %q, want %q", err, out.String(), want)
	}
	out.Reset()
	opts.JSON = true
	if err := runInit(ctx, opts, &out); err != nil {
		t.Fatal(err)
	}
	var j initJSON
	if err := json.Unmarshal(out.Bytes(), &j); err != nil || j.Created || j.Database != path || j.Version != db.SchemaVersion {
		t.Errorf("runInit again --json = %q (%v)", out.String(), err)
	}
}

func TestRunIPs(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	opts := &ipsOptions{Now: func() time.Time { return at }}
	var out bytes.Buffer
	if err := runIPs(context.Background(), opts, &out); err != nil {
		t.Fatal(err)
	}
	want := `{
  "creationTime": "2026-05-01T10:00:00Z",
  "prefixes": [
    {
      "ipv4Prefix": "79.139.58.98/32"
    },
    {
      "ipv4Prefix": "79.139.58.121/32"
    }
  ]
}
`
	if out.String() != want {
		t.Errorf("runIPs printed\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	opts.JSON = true
	if err := runIPs(context.Background(), opts, &out); err != nil {
		t.Fatal(err)
	}
	if want := `{"creationTime":"2026-05-01T10:00:00Z","prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"}]}` + "\n"; out.String() != want {
		t.Errorf("runIPs --json printed %q, want %q", out.String(), want)
	}
}

func TestRunRobotsTest(t *testing.T) {
	body := "User-agent: *\nDisallow: /private/\n"
	opts := &robotsTestOptions{In: strings.NewReader(body), RobotsFile: "-", Agent: robotstxt.ProductToken, URLs: []string{"/private/x", "https://example.com/"}}
	var out bytes.Buffer
	if err := runRobotsTest(context.Background(), opts, &out); exitCodeOf(err) != 1 {
		t.Errorf("runRobotsTest = %v, want exit 1 (a URL is disallowed)", err)
	}
	want := "disallowed  /private/x            Disallow: /private/ (line 2; group: *, line 1)\n" +
		"allowed     https://example.com/  no rule matched (group: *, line 1)\n"
	if out.String() != want {
		t.Errorf("runRobotsTest printed\n%q\nwant\n%q", out.String(), want)
	}

	out.Reset()
	opts = &robotsTestOptions{printOptions: printOptions{JSON: true}, In: strings.NewReader(body), RobotsFile: "-", Agent: robotstxt.ProductToken, URLs: []string{"/"}}
	if err := runRobotsTest(context.Background(), opts, &out); err != nil {
		t.Errorf("runRobotsTest of an allowed URL = %v", err)
	}
	if want := `{"url":"/","allowed":true,"rule":"no rule matched","line":0,"group":"*"}` + "\n"; out.String() != want {
		t.Errorf("runRobotsTest --json printed %q, want %q", out.String(), want)
	}
}

func TestPrintRobotsFetch(t *testing.T) {
	r := &crawler.RobotsResult{Origin: "https://example.com", SnapshotID: 7, FetchedAt: time.Date(2026, 12, 1, 10, 21, 50, 0, time.UTC),
		Status: 200, Outcome: "parsed", Bytes: 42, Sha256: "ab12", CrawlDelay: 5 * time.Second,
		Decision: robotstxt.Decision{Allowed: false, Rule: "Disallow: /shop/", Line: 3}}
	var out bytes.Buffer
	printRobotsFetch(&out, "https://example.com/shop/cart", r)
	want := `origin:      https://example.com
fetched:     2026-12-01 10:21:50 UTC (snapshot 7)
status:      200
outcome:     parsed
body:        42 bytes, sha256 ab12
crawl-delay: 5s
https://example.com/shop/cart: disallowed by "Disallow: /shop/" (line 3)
`
	if out.String() != want {
		t.Errorf("printRobotsFetch printed\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	r = &crawler.RobotsResult{Origin: "https://example.org", SnapshotID: 8, FetchedAt: r.FetchedAt, Outcome: "unreachable",
		FinalURL: "https://www.example.org/robots.txt", Sha256: "e3b0", Error: "connection refused",
		Decision: robotstxt.Decision{Allowed: false, Rule: "robots.txt unreachable"}}
	printRobotsFetch(&out, "https://example.org/", r)
	want = `origin:      https://example.org
fetched:     2026-12-01 10:21:50 UTC (snapshot 8)
status:      no answer
outcome:     unreachable
final URL:   https://www.example.org/robots.txt
body:        0 bytes, sha256 e3b0
error:       connection refused
https://example.org/: disallowed (robots.txt unreachable)
`
	if out.String() != want {
		t.Errorf("printRobotsFetch printed\n%s\nwant\n%s", out.String(), want)
	}
	j := newRobotsFetchJSON("https://example.org/", r)
	if j.Status != 0 || j.Outcome != "unreachable" || j.Allowed || j.Rule != "robots.txt unreachable" || j.SnapshotID != 8 {
		t.Errorf("newRobotsFetchJSON = %+v", j)
	}
}

func TestProgressBar(t *testing.T) {
	res := crawler.SiteResult{Site: "example.com", Status: crawler.SiteCrawled, Requests: 5, Pages: 4}
	line := siteLine(res)

	var plain bytes.Buffer
	bar := &progressBar{out: &plain, total: 2}
	bar.start(context.Background(), func() crawler.Stats { t.Error("stats read without a terminal"); return crawler.Stats{} })
	bar.site(res)
	bar.stop()
	if plain.String() != line+"\n" {
		t.Errorf("without a terminal: %q, want the site line alone", plain.String())
	}

	var asJSON bytes.Buffer
	bar = &progressBar{out: &asJSON, json: true, total: 2}
	bar.site(res)
	var got crawler.SiteResult
	if err := json.Unmarshal(asJSON.Bytes(), &got); err != nil || got != res {
		t.Errorf("--json: %q (%v)", asJSON.String(), err)
	}

	var term testutil.Buffer
	bar = &progressBar{out: &term, draw: true, total: 2}
	stats := crawler.Stats{SitesDone: 1, Pages: 4}
	bar.start(context.Background(), func() crawler.Stats { return stats })
	progress := "\r\033[K" + progressLine(stats, 2)
	testutil.Eventually(t, 5*time.Second, "the progress line", func() bool { return strings.Contains(term.String(), progress) })
	bar.site(res)
	bar.stop()
	s := term.String()
	if !strings.Contains(s, "\r\033[K"+line+"\n") || !strings.HasSuffix(s, "\r\033[K") || !strings.HasPrefix(s, progress) {
		t.Errorf("on a terminal: %q; want progress lines, the site line over one, and the line cleared at the end", s)
	}
	if want := "[############............] 1/2 sites · 4 pages · 0 refused by robots.txt · 0 errors"; progressLine(stats, 2) != want {
		t.Errorf("progressLine = %q, want %q", progressLine(stats, 2), want)
	}
}

func TestRunMailParse(t *testing.T) {
	var out, errOut bytes.Buffer
	missing := filepath.Join(t.TempDir(), "none.eml")
	opts := &mailParseOptions{printOptions: printOptions{JSON: true, ErrOut: &errOut}, Files: []string{mailTestdata("exclude-one.eml"), missing}}
	err := runMailParse(context.Background(), opts, &out)
	if exitCodeOf(err) != 2 || !strings.HasPrefix(errOut.String(), "lohibot: ") || !strings.Contains(errOut.String(), "none.eml") {
		t.Errorf("runMailParse with a missing file = %v (exit %d), errOut %q; want exit 2 and the file named", err, exitCodeOf(err), errOut.String())
	}
	var m mailParseJSON
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.Intent != "exclude" || len(m.Domains) == 0 || m.Reasons == nil {
		t.Errorf("runMailParse --json = %q (%v)", out.String(), err)
	}
}

func TestRunKeys(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "k.pem")
	var gen, show bytes.Buffer
	if err := runKeysGenerate(ctx, &keysGenerateOptions{printOptions: printOptions{JSON: true}, Out: file}, &gen); err != nil {
		t.Fatal(err)
	}
	if err := runKeysShow(ctx, &keysShowOptions{printOptions: printOptions{JSON: true}, File: file}, &show); err != nil {
		t.Fatal(err)
	}
	if gen.String() != show.String() {
		t.Errorf("keys show printed %q, keys generate %q", show.String(), gen.String())
	}
	if err := runKeysGenerate(ctx, &keysGenerateOptions{Out: file}, &gen); exitCodeOf(err) != 1 || !strings.Contains(err.Error(), "not overwriting") {
		t.Errorf("runKeysGenerate over a file = %v, want exit 1", err)
	}
}
