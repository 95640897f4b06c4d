package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestReportListsRobotsRefusals crawls a site whose robots.txt disallows a
// folder it links to, and checks that the report lists, under the cycle,
// the URLs robots.txt refused (never requested, as the web server's record
// shows) with the rule that refused each, in text and in JSON.
func TestReportListsRobotsRefusals(t *testing.T) {
	dsn := dbtest.DSN(t, "sqlite")
	web, err := testweb.Start(&testweb.Options{Plain: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	site := web.Site(testweb.KindRobots)
	if r := runCLI(t, nil, "--db", dsn, "sites", "add", site.StartURL); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runCLI(t, nil, "--db", dsn, "--resolver", web.DNSAddr, "crawl", site.Name, "--allow-private", "--delay", "50ms")
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, h := range web.HitsFor(site.Host) {
		if strings.HasPrefix(h.Path, "/private/") && h.Path != "/private/open.html" {
			t.Fatalf("the server received %s, which robots.txt disallows", h.Path)
		}
	}

	r = runCLI(t, nil, "--db", dsn, "report", site.Name, "--format", "json")
	if r.code != 0 {
		t.Fatalf("report --format json: exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Cycles []struct {
			RobotsRefused []struct {
				URL        string `json:"url"`
				RobotsRule string `json:"robots_rule"`
				RobotsLine int    `json:"robots_line"`
			} `json:"robots_refused"`
		} `json:"cycles"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, c := range rep.Cycles {
		for _, f := range c.RobotsRefused {
			if !strings.Contains(f.URL, "/private/") || !strings.Contains(strings.ToLower(f.RobotsRule), "disallow") || f.RobotsLine == 0 {
				t.Errorf("refusal %+v: want a /private/ URL with its Disallow rule and line", f)
			}
			urls = append(urls, f.URL)
		}
	}
	if len(urls) == 0 {
		t.Fatalf("the JSON report lists no URL refused by robots.txt:\n%s", r.stdout)
	}

	r = runCLI(t, nil, "--db", dsn, "report", site.Name)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "URLs robots.txt refused, not requested") || !strings.Contains(r.stdout, urls[0]) {
		t.Errorf("the text report does not list the URLs robots.txt refused (%v):\n%s", urls, r.stdout)
	}
}
