package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/mailbot"
)

// TestSiteLineCounts checks a site's line against the crawl's summary: it
// counts every request sent, robots.txt included, as the summary does; and
// a recrawl answered by 304s says the pages are unchanged, not "0 pages"
// alone.
func TestSiteLineCounts(t *testing.T) {
	line := siteLine(crawler.SiteResult{Site: "example.com", Status: crawler.SiteCrawled, Reason: "nothing left to fetch",
		Requests: 5, RobotsRequests: 1, NotModified: 5})
	for _, want := range []string{"6 requests", "0 pages, 5 unchanged"} {
		if !strings.Contains(line, want) {
			t.Errorf("site line %q lacks %q", line, want)
		}
	}
	if got := unchanged(0); got != "" {
		t.Errorf("unchanged(0) = %q, want nothing said", got)
	}
}

// TestMailSummaryPlural: one message is "1 message", one reply "1 reply".
func TestMailSummaryPlural(t *testing.T) {
	var b bytes.Buffer
	if err := printMailSummary(&b, false, "imported", &mailbot.ImportSummary{Messages: 1, RepliesSent: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "imported 1 message:") || !strings.Contains(b.String(), "1 reply sent") {
		t.Errorf("summary %q, want imported 1 message: ... 1 reply sent", b.String())
	}
}

// TestTourFolderIgnored: the README's tour keeps its database in ./try,
// which git must ignore.
func TestTourFolderIgnored(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(readme), "--dir try") && !strings.Contains("\n"+string(ignore), "\n/try/\n") {
		t.Errorf(".gitignore does not ignore /try/, the README tour's folder")
	}
}
