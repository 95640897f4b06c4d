package main

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/mailbot"
)

// writePages indexes n pages of example.com whose titles all hold "bakery".
func writePages(t *testing.T, dsn string, n int) {
	t.Helper()
	store := dbtest.OpenDSN(t, dsn)
	for i := range n {
		p := &db.Page{URL: fmt.Sprintf("https://example.com/p%d", i), Site: "example.com", Title: fmt.Sprintf("Bakery %d", i),
			Status: 200, FetchedAt: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)}
		if err := dbtest.Gorm(store).Create(p).Error; err != nil {
			t.Fatal(err)
		}
	}
}

func TestSearchLimitOffset(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		writePages(t, dsn, 5)
		env := []string{"LOHIBOT_DB=" + dsn}
		tests := []struct {
			args []string
			urls int
			note string // on stderr
		}{
			{[]string{"search", "bakery", "--limit", "2"}, 2, "more follow: add --offset 2"},
			{[]string{"search", "bakery", "--limit", "2", "--offset", "2"}, 2, "more follow: add --offset 4"},
			{[]string{"search", "bakery", "--limit=2", "--offset=4"}, 1, ""},
			{[]string{"search", "bakery", "--offset", "5"}, 0, "no pages found after the first 5"},
			{[]string{"search", "bakery"}, 5, ""},
		}
		seen := map[string]bool{} // the three pages of results, together
		for i, tt := range tests {
			res := runCLI(t, env, tt.args...)
			if res.code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", tt.args, res.code, res.stdout, res.stderr)
			}
			urls := strings.Count(res.stdout, "https://example.com/p")
			if urls != tt.urls {
				t.Errorf("%v printed %d pages, want %d:\n%s", tt.args, urls, tt.urls, res.stdout)
			}
			if tt.note != "" && !strings.Contains(res.stderr, tt.note) {
				t.Errorf("%v said %q, want %q", tt.args, res.stderr, tt.note)
			}
			if tt.note == "" && strings.Contains(res.stderr, "more follow") {
				t.Errorf("%v said %q with nothing more to show", tt.args, res.stderr)
			}
			if i < 3 {
				for _, line := range strings.Split(res.stdout, "\n") {
					if strings.HasPrefix(line, "https://") {
						if seen[line] {
							t.Errorf("%v shows %s again", tt.args, line)
						}
						seen[line] = true
					}
				}
			}
		}
		res := runCLI(t, env, "search", "", "--limit", "0", "--offset", "-1")
		if res.code != 2 {
			t.Fatalf("bad search: exit %d, want 2", res.code)
		}
		for _, want := range []string{"--limit", "--offset", "query is empty"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("bad search said %q, want every bad argument, %q among them", res.stderr, want)
			}
		}
	})
}

// TestCrawlNothingFetched: a site where not one page was fetched gets its
// own status and a one-clause reason, the summary counts it, and a run in
// which no site got a page exits 1.
func TestCrawlNothingFetched(t *testing.T) {
	web, err := testweb.Start(&testweb.Options{Plain: 3, PagesPerSite: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	plain := web.Plain()
	down, login, good := plain[0], plain[1], plain[2]
	web.Handle(down.Host, "/robots.txt", func(rw http.ResponseWriter, r *http.Request) { http.Error(rw, "down", 500) })
	web.Handle(login.Host, "/", func(rw http.ResponseWriter, r *http.Request) { http.Error(rw, "login", http.StatusUnauthorized) })
	dsn := dbtest.DSN(t, "sqlite")
	base := []string{"--db", dsn, "--resolver", web.DNSAddr, "crawl", "--add", "--allow-private", "--delay", "10ms"}

	res := runCLI(t, nil, append(base, down.StartURL, login.StartURL)...)
	if res.code != 1 {
		t.Errorf("crawl of two sites with nothing fetched: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		down.Name + ": nothing fetched, no page: left " + down.Host + ": robots.txt unreachable, so nothing is allowed;",
		login.Name + ": nothing fetched, no page: left " + login.Host + ": login required, HTTP 401;",
		"2 sites (2 with nothing fetched): 0 pages",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("crawl printed:\n%s\nwant it to contain %q", res.stdout, want)
		}
	}
	if strings.Contains(res.stdout, "((") || strings.Contains(res.stdout, "))") || strings.Contains(res.stdout, "1 error") {
		t.Errorf("crawl printed nested brackets or counted a handled login as an error:\n%s", res.stdout)
	}

	res = runCLI(t, nil, append(base, "--json", good.StartURL)...)
	if res.code != 0 || !strings.Contains(res.stdout, `"status":"crawled"`) {
		t.Errorf("crawl of a good site: exit %d, want 0 and crawled\n%s%s", res.code, res.stdout, res.stderr)
	}
	// Again at once: skipped, and the reason names the flag that decides.
	res = runCLI(t, nil, append(base, good.StartURL)...)
	if res.code != 0 || !strings.Contains(res.stdout, "less than --recrawl-after 7d ago") {
		t.Errorf("crawl of a site just visited: exit %d, want 0 and a reason naming --recrawl-after\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestReincludeLine(t *testing.T) {
	tests := []struct {
		sites, notExcluded []string
		want               string
	}{
		{[]string{"a.com"}, nil, "approved message 7: re-included a.com"},
		{[]string{"a.com"}, []string{"a.com"}, "approved message 7: nothing to re-include: a.com was not excluded"},
		{[]string{"a.com", "xn--bcher-kva.de"}, []string{"a.com"}, "approved message 7: re-included bücher.de (xn--bcher-kva.de); a.com was not excluded"},
	}
	for _, tt := range tests {
		got := reincludeLine(&mailbot.Approval{ID: 7, Sites: tt.sites, NotExcluded: tt.notExcluded})
		if got != tt.want {
			t.Errorf("reincludeLine(%q, not excluded %q) = %q, want %q", tt.sites, tt.notExcluded, got, tt.want)
		}
	}
}

func TestShowSiteAndUserMessage(t *testing.T) {
	for in, want := range map[string]string{
		"xn--bcher-kva.de": "bücher.de (xn--bcher-kva.de)",
		"example.com":      "example.com",
		"xn--zz.com":       "xn--zz.com", // not valid punycode: shown as it is
	} {
		if got := human.Site(in); got != want {
			t.Errorf("human.Site(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`policy: "x" is not a site: not under a known top-level domain`: `"x" is not a site: not under a known top-level domain`,
		"mailbot: message 3: policy: site is not excluded: a.com":       "message 3: site is not excluded: a.com",
		"report: --format \"pdf\": want one of text, json, html":        "report: --format \"pdf\": want one of text, json, html",
		"a\npolicy: b": "a\nb",
	} {
		if got := userMessage(errors.New(in)); got != want {
			t.Errorf("userMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEveryBadArgumentAtOnce: a command names all its bad arguments in one
// answer, not only the first.
func TestEveryBadArgumentAtOnce(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"exclude", "add", "notadomain", "co.uk", "example.com", "1.2.3.4"},
			[]string{`"notadomain" is not a site: not under a known top-level domain`, `"co.uk"`, `"1.2.3.4"`}},
		{[]string{"sites", "add", "co.uk", "com"}, []string{`"co.uk"`, `"com" is not a site: com is a top-level domain`}},
		{[]string{"audit", "speed", "co.uk", "--since", "yesterday"}, []string{`"speed"`, `"co.uk"`, "--since"}},
		{[]string{"verify", "x", "79.139.58.98", "y"}, []string{`"x"`, `"y"`}},
		{[]string{"crawl", "co.uk", "notadomain", "--delay", "0s"}, []string{`"co.uk"`, `"notadomain"`, "--delay"}},
		{[]string{"report"}, []string{"report: missing SITE", "Usage: lohibot report SITE"}},
		{[]string{"exclude", "remove", "a.com", "b.com"}, []string{"exclude remove takes one DOMAIN, got 2: a.com b.com", "Usage: lohibot exclude remove"}},
	}
	for _, tt := range tests {
		res := runCLI(t, nil, append([]string{"--db", dsn}, tt.args...)...)
		if res.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", tt.args, res.code, res.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(res.stderr, w) {
				t.Errorf("%v said:\n%s\nwant it to contain %q", tt.args, res.stderr, w)
			}
		}
		for _, never := range []string{"policy:", "mailbot:", "accepts 1 arg(s)", "requires at least"} {
			if strings.Contains(res.stderr, never) {
				t.Errorf("%v said %q, with %q", tt.args, res.stderr, never)
			}
		}
	}
}

func TestSitesAddSaysWhatChanged(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"sites", "add", "https://example.com/a"}, "listed example.com, starting at https://example.com/a"},
		{[]string{"sites", "add", "https://example.com/b"}, "example.com was listed already: its start URL is now https://example.com/b, replacing https://example.com/a"},
		{[]string{"sites", "add", "example.com"}, "example.com was listed already, starting at https://example.com/b"},
		{[]string{"sites", "add", "bücher.de"}, "listed bücher.de (xn--bcher-kva.de), starting at https://xn--bcher-kva.de/"},
		{[]string{"--json", "sites", "add", "https://example.com/c"}, `"site":"example.com","start_url":"https://example.com/c"`},
		{[]string{"--json", "sites", "add", "https://example.com/d"}, `"replaced_start_url":"https://example.com/c"`},
	}
	for _, st := range steps {
		res := runCLI(t, env, st.args...)
		if res.code != 0 || !strings.Contains(res.stdout, st.want) {
			t.Errorf("%v: exit %d, printed %q; want it to contain %q", st.args, res.code, res.stdout, st.want)
		}
	}
}

func TestReportNoRecord(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	res := runCLI(t, env, "report", "never-seen.com")
	if res.code != 1 || !strings.Contains(res.stdout, "lohibot has no record of never-seen.com: not listed, never crawled, no email names it") ||
		strings.Contains(res.stdout, "promise") {
		t.Errorf("report never-seen.com: exit %d, printed %q%q; want 1 and that there is no record", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, env, "report", "never-seen.com", "--json")
	if res.code != 1 || res.stdout != "" || !strings.Contains(res.stderr, "no record of never-seen.com") {
		t.Errorf("report never-seen.com --json: exit %d, printed %q%q; want 1, nothing on stdout", res.code, res.stdout, res.stderr)
	}
	// Listed but never crawled: a report, but no verdict on nothing.
	runCLI(t, env, "sites", "add", "bücher.de")
	res = runCLI(t, env, "report", "xn--bcher-kva.de")
	if res.code != 0 || !strings.Contains(res.stdout, "Crawl report: bücher.de (xn--bcher-kva.de)") ||
		!strings.Contains(res.stdout, "No verdict") || strings.Contains(res.stdout, "Every promise checked was kept") {
		t.Errorf("report of a listed, never crawled site: exit %d\n%s", res.code, res.stdout)
	}
}

// TestTextShowsPeopleTimesAndUnicodeNames: text output writes times as
// 2026-12-01 10:21:50 UTC and an IDN as bücher.de (xn--bcher-kva.de); JSON
// keeps RFC 3339 and the A-label.
func TestTextShowsPeopleTimesAndUnicodeNames(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	human := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)
	tests := []struct {
		args     []string
		withTime bool
	}{
		{[]string{"sites", "add", "bücher.de"}, false},
		{[]string{"sites", "list"}, false},
		{[]string{"exclude", "add", "bücher.de", "--by", "anna"}, false},
		{[]string{"exclude", "add", "bücher.de", "--by", "anna"}, true}, // already excluded since ...
		{[]string{"exclude", "list"}, true},
		{[]string{"exclude", "check", "bücher.de"}, true},
	}
	for _, tt := range tests {
		res := runCLI(t, env, tt.args...)
		if !strings.Contains(res.stdout, "bücher.de (xn--bcher-kva.de)") {
			t.Errorf("%v printed %q, want the site as bücher.de (xn--bcher-kva.de)", tt.args, res.stdout)
		}
		if tt.withTime && !human.MatchString(res.stdout) {
			t.Errorf("%v printed %q, want times as 2026-12-01 10:21:50 UTC", tt.args, res.stdout)
		}
		if regexp.MustCompile(`\d\dT\d\d:`).MatchString(res.stdout) {
			t.Errorf("%v printed an RFC 3339 time for people: %q", tt.args, res.stdout)
		}
	}
	res := runCLI(t, env, "--json", "exclude", "list")
	if !strings.Contains(res.stdout, `"site":"xn--bcher-kva.de"`) || !regexp.MustCompile(`"excluded_at":"\d{4}-\d\d-\d\dT`).MatchString(res.stdout) {
		t.Errorf("exclude list --json = %q, want the A-label and RFC 3339", res.stdout)
	}
}
