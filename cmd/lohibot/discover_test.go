package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/policy"
)

// TestSitesAddFrom: sites add --from takes domains, URLs and "rank,domain"
// lines, ignores blank lines and comments, counts what it did, names each
// invalid line with its number on stderr, and exits 0, 1 (some invalid)
// or 2 (unreadable); standard input with "-".
func TestSitesAddFrom(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		if r := runCLI(t, env, "exclude", "add", "bad-shop.example", "--by", "staff"); r.code != 0 {
			t.Fatalf("exclude add: exit %d\n%s", r.code, r.stderr)
		}
		list := "\ufeff# the crawl list\n\nexample.com\r\n1,Example.ORG\n2,WWW.Bad-Shop.Example.\n" +
			"https://shop.example.co.uk/start\nexample.com # again\nco.uk\n3,\nnot a domain\nbücher.de\n"
		file := filepath.Join(t.TempDir(), "list.txt")
		if err := os.WriteFile(file, []byte(list), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, env, "sites", "add", "--from", file, "--json")
		var got sitesFromCounts
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("sites add --from --json: %v\n%s", err, r.stdout)
		}
		if want := (sitesFromCounts{Added: 4, Listed: 1, Excluded: 1, Invalid: 3}); got != want || r.code != 1 {
			t.Errorf("sites add --from: exit %d, %+v; want exit 1, %+v\n%s", r.code, got, want, r.stderr)
		}
		for _, line := range []string{"line 8: co.uk", "line 9:", "line 10: not a domain"} {
			if !strings.Contains(r.stderr, "lohibot: "+line) {
				t.Errorf("stderr does not name %q:\n%s", line, r.stderr)
			}
		}
		r = runCLI(t, env, "sites", "list", "--json")
		for _, want := range []string{`"site":"example.com"`, `"site":"example.org"`, `"start_url":"https://shop.example.co.uk/start"`, `"site":"xn--bcher-kva.de"`} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("sites list lacks %s:\n%s", want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "bad-shop") {
			t.Errorf("an excluded site was added:\n%s", r.stdout)
		}
		// Standard input, all valid: exit 0, everything already listed.
		r = runCLIIn(t, env, "example.com\nexample.org\n", "sites", "add", "--from", "-")
		if r.code != 0 || !strings.Contains(r.stdout, "0 added, 2 already on the list, 0 skipped because excluded, 0 invalid") {
			t.Errorf("sites add --from -: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := runCLI(t, env, "sites", "add", "--from", filepath.Join(t.TempDir(), "missing.txt")); r.code != 2 {
			t.Errorf("sites add --from a missing file: exit %d, want 2\n%s", r.code, r.stderr)
		}
		if r := runCLI(t, env, "sites", "add", "--from", file, "example.net"); r.code != 2 {
			t.Errorf("sites add --from with arguments: exit %d, want 2\n%s", r.code, r.stderr)
		}
	})
}

// TestCrawlDiscover crawls a local web with --discover: two seed sites
// link to other sites under every spelling of three excluded ones, to two
// sites that both then link to a third (two hops from the seeds), and to
// one site only one seed links to. The web's own record (HTTP and DNS) is
// the truth: every site linked from two sites is crawled, the excluded
// ones are never looked up nor requested (robots.txt included), the one
// linked once is not; sites candidates counts the linking sites; search
// finds a discovered page by the text of a link to it; audit passes.
func TestCrawlDiscover(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		web, err := testweb.Start(&testweb.Options{Plain: 1, PagesPerSite: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		u := func(host string) string { return web.URL(host, "/") }
		port := ":" + strings.TrimPrefix(web.URL("", ""), "http://:")
		excludedLinks := []testweb.Link{
			{Href: "http://WWW.Excluded-One.TEST" + port + "/", Text: "one"},
			{Href: "http://excluded-one.test." + port + "/x", Text: "one with a dot"},
			{Href: "http://shop.excluded-two.test" + port + "/", Text: "two"},
			{Href: "HTTP://EXCLUDED-TWO.TEST" + port + "/y", Text: "two shouting"},
			{Href: "http://bücher.test" + port + "/", Text: "books"},
			{Href: "http://xn--bcher-kva.test" + port + "/z", Text: "books by A-label"},
		}
		web.AddPage("seed-a.test", "/", "Seed A",
			append([]testweb.Link{{Href: u("new-x.test"), Text: "Xylophone workshop"}, {Href: u("new-y.test"), Text: "yodel school"},
				{Href: u("lonely.test"), Text: "lonely"}}, excludedLinks...)...)
		web.AddPage("seed-b.test", "/", "Seed B",
			append([]testweb.Link{{Href: u("new-x.test"), Text: "xylophones"}, {Href: u("new-y.test"), Text: "yodels"}}, excludedLinks...)...)
		web.AddPage("new-x.test", "/", "New X", testweb.Link{Href: u("hop2.test"), Text: "second hop"})
		web.AddPage("new-y.test", "/", "New Y", testweb.Link{Href: u("hop2.test") + "?from=y", Text: "second hop again"})
		web.AddPage("hop2.test", "/", "Hop two")
		for _, h := range []string{"lonely.test", "excluded-one.test", "www.excluded-one.test", "excluded-two.test",
			"shop.excluded-two.test", "xn--bcher-kva.test"} {
			web.AddPage(h, "/", "must never be fetched")
		}
		env := []string{"LOHIBOT_DB=" + dsn}
		for _, args := range [][]string{
			{"exclude", "add", "excluded-one.test", "--by", "staff"},
			{"exclude", "add", "https://www.Excluded-Two.test/", "--by", "staff"},
			{"exclude", "add", "bücher.test", "--by", "staff"},
			{"sites", "add", u("seed-a.test"), u("seed-b.test")},
		} {
			if r := runCLI(t, env, args...); r.code != 0 {
				t.Fatalf("lohibot %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
			}
		}
		r := runCLI(t, env, "--resolver", web.DNSAddr, "crawl", "--all", "--allow-private", "--delay", "20ms", "--discover")
		if r.code != 0 {
			t.Fatalf("crawl --all --discover: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		requested := map[string]bool{}
		for _, h := range web.Hits() {
			site, err := policy.SiteOf(h.Host)
			if err != nil {
				t.Fatalf("hit on %q: %v", h.Host, err)
			}
			requested[site] = true
			if strings.HasPrefix(site, "excluded-") || site == "xn--bcher-kva.test" {
				t.Errorf("excluded site requested: %s %s", h.Host, h.Path)
			}
		}
		for _, s := range []string{"seed-a.test", "seed-b.test", "new-x.test", "new-y.test", "hop2.test"} {
			if !requested[s] {
				t.Errorf("%s was never requested; want it crawled\n%s", s, r.stdout)
			}
		}
		if requested["lonely.test"] {
			t.Errorf("lonely.test (linked from one site) was requested")
		}
		for name := range web.DNS.Asked() {
			if site, _ := policy.SiteOf(name); strings.HasPrefix(site, "excluded-") || site == "xn--bcher-kva.test" {
				t.Errorf("the crawler looked up %s, a host of an excluded site", name)
			}
		}

		r = runCLI(t, env, "sites", "list")
		if strings.Contains(r.stdout, "excluded-") || strings.Contains(r.stdout, "xn--bcher-kva.test") || strings.Contains(r.stdout, "lonely") {
			t.Errorf("the crawl list holds an excluded site, or one linked from one site only:\n%s", r.stdout)
		}

		r = runCLI(t, env, "sites", "candidates", "--json")
		if r.code != 0 {
			t.Fatalf("sites candidates: exit %d\n%s", r.code, r.stderr)
		}
		got := map[string]candidateJSON{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var c candidateJSON
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				t.Fatalf("sites candidates --json: %v: %s", err, line)
			}
			got[c.Site] = c
		}
		for site, want := range map[string]struct {
			linked int64
			status string
		}{
			"new-x.test": {2, "added"}, "new-y.test": {2, "added"}, "hop2.test": {2, "added"}, "lonely.test": {1, "waiting"},
			"excluded-one.test": {2, "excluded"}, "excluded-two.test": {2, "excluded"}, "xn--bcher-kva.test": {2, "excluded"},
		} {
			if c := got[site]; c.LinkedFrom != want.linked || c.Status != want.status {
				t.Errorf("candidate %s: linked_from %d, status %q; want %d, %q", site, c.LinkedFrom, c.Status, want.linked, want.status)
			}
		}
		if len(got) != 7 {
			t.Errorf("%d candidates, want 7: %v", len(got), got)
		}
		if r := runCLI(t, env, "sites", "candidates", "--status", "waiting"); r.code != 0 || !strings.HasPrefix(r.stdout, "lonely.test\twaiting") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("sites candidates --status waiting: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}

		r = runCLI(t, env, "search", "xylophone", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, u("new-x.test")) {
			t.Errorf("search xylophone (a link text to new-x.test): exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = runCLI(t, env, "report", "new-x.test")
		if r.code != 0 || !strings.Contains(r.stdout, "Xylophone workshop") {
			t.Errorf("report new-x.test lacks its inbound link text: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		store := dbtest.OpenDSN(t, dsn)
		for site, want := range map[string]bool{"new-x.test": true, "hop2.test": true, "excluded-one.test": false, "excluded-two.test": false, "xn--bcher-kva.test": false} {
			as, err := store.AnchorsTo(context.Background(), site)
			if err != nil {
				t.Fatal(err)
			}
			if (len(as) > 0) != want {
				t.Errorf("%d link texts stored for %s's pages; want some: %v", len(as), site, want)
			}
		}
		if r := runCLI(t, env, "audit"); r.code != 0 {
			t.Errorf("audit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}
