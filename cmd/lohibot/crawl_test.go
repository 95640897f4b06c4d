package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestCrawlUsage covers the crawl command's answers that need no web:
// usage errors exit 2, and an empty crawl list is a remark on stderr, so
// stdout stays JSON-only with --json.
func TestCrawlUsage(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	tests := []struct {
		name       string
		args       []string
		code       int
		wantStdout string // exact
		wantStderr string // substring
	}{
		{"empty list", []string{"crawl", "--all"}, 0, "", "nothing to crawl"},
		{"empty list json", []string{"crawl", "--all", "--json"}, 0, "", "nothing to crawl"},
		{"empty list json first", []string{"--json", "crawl", "--all", "--delay=1s"}, 0, "", "nothing to crawl"},
		{"neither sites nor all", []string{"crawl"}, 2, "", "--all"},
		{"both sites and all", []string{"crawl", "--all", "example.com"}, 2, "", "not both"},
		{"zero delay", []string{"crawl", "example.com", "--delay", "0s"}, 2, "", "--delay"},
		{"negative recrawl", []string{"crawl", "example.com", "--recrawl-after=-1h"}, 2, "", "--recrawl-after"},
		{"no parallelism", []string{"crawl", "example.com", "--max-sites-parallel", "0"}, 2, "", "--max-sites-parallel"},
		{"IPv6 source", []string{"crawl", "example.com", "--source-ip", "::1"}, 2, "", "IPv4"},
		{"bad resolver", []string{"crawl", "example.com", "--resolver", "nohostport"}, 2, "", "resolver"},
		{"public suffix", []string{"crawl", "co.uk"}, 2, "", "co.uk"},
		{"unknown flag", []string{"crawl", "--all", "--bogus"}, 2, "", "unknown flag"},
		{"recrawl in days", []string{"crawl", "--all", "--recrawl-after", "7d"}, 0, "", "nothing to crawl"},
		{"recrawl in fractional days", []string{"crawl", "--all", "--recrawl-after=0.5d"}, 0, "", "nothing to crawl"},
		{"recrawl as Go duration", []string{"crawl", "--all", "--recrawl-after=168h"}, 0, "", "nothing to crawl"},
		{"bad recrawl", []string{"crawl", "--all", "--recrawl-after", "xd"}, 2, "", "recrawl-after"},
		{"zero recrawl in days", []string{"crawl", "--all", "--recrawl-after", "0d"}, 2, "", "recrawl-after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, env, tt.args...)
			if r.code != tt.code || r.stdout != tt.wantStdout || !strings.Contains(r.stderr, tt.wantStderr) {
				t.Errorf("lohibot %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q",
					strings.Join(tt.args, " "), r.code, r.stdout, r.stderr, tt.code, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

func TestDaysDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		str  string
	}{
		{"7d", 7 * 24 * time.Hour, "7d"},
		{"1.5d", 36 * time.Hour, "36h0m0s"},
		{"168h", 7 * 24 * time.Hour, "7d"},
		{"90m", 90 * time.Minute, "1h30m0s"},
	}
	for _, tt := range tests {
		var d daysDuration
		if err := d.Set(tt.in); err != nil || time.Duration(d) != tt.want || d.String() != tt.str {
			t.Errorf("Set(%q) = %v (%s), %v; want %v (%s)", tt.in, time.Duration(d), d.String(), err, tt.want, tt.str)
		}
	}
	for _, bad := range []string{"", "d", "xd", "7days", "seven"} {
		var d daysDuration
		if err := d.Set(bad); err == nil {
			t.Errorf("Set(%q) = %v, want an error", bad, time.Duration(d))
		}
	}
}

// TestCrawlOnlyListedSites: crawl SITE refuses a site that is not on the
// crawl list (exit 2, nothing sent), naming the closest listed site, so a
// typo never crawls a stranger; --add puts it on the list and crawls it.
func TestCrawlOnlyListedSites(t *testing.T) {
	web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	listed, stranger := web.Plain()[0], web.Plain()[1]
	if r := runCLI(t, env, "sites", "add", listed.StartURL); r.code != 0 {
		t.Fatalf("sites add: exit %d: %s", r.code, r.stderr)
	}
	crawl := []string{"--resolver", web.DNSAddr, "crawl", "--allow-private", "--delay", "10ms"}
	r := runCLI(t, env, append(crawl, stranger.Name)...)
	if r.code != 2 || !strings.Contains(r.stderr, stranger.Name+" is not on the crawl list") ||
		!strings.Contains(r.stderr, "closest listed site is "+listed.Name) || !strings.Contains(r.stderr, "--add") {
		t.Errorf("crawl of a site not listed: exit %d, stderr %q; want 2, naming the closest listed site and --add", r.code, r.stderr)
	}
	if hits := web.Hits(); len(hits) != 0 {
		t.Errorf("a refused crawl sent %d requests", len(hits))
	}
	r = runCLI(t, env, append(crawl, "--add", stranger.StartURL)...)
	if r.code != 0 || !strings.Contains(r.stdout, stranger.Name+": crawled") {
		t.Errorf("crawl --add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, env, "sites", "list"); !strings.Contains(r.stdout, stranger.Name) {
		t.Errorf("after crawl --add, sites list lacks %s:\n%s", stranger.Name, r.stdout)
	}
	if r := runCLI(t, env, "crawl", "--all", "--add"); r.code != 2 {
		t.Errorf("crawl --all --add: exit %d, want 2", r.code)
	}
}
