package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/dbtest"
	"github.com/lohisoft/lohibot/internal/testweb"
)

// writePages indexes n pages of example.com whose titles all hold "bakery".
func writePages(t *testing.T, dsn string, n int) {
	t.Helper()
	store, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for i := range n {
		p := &db.Page{URL: fmt.Sprintf("https://example.com/p%d", i), Site: "example.com", Title: fmt.Sprintf("Bakery %d", i),
			Status: 200, FetchedAt: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)}
		if err := store.DB.Create(p).Error; err != nil {
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
	web.Handle(login.Host, "/", func(rw http.ResponseWriter, r *http.Request) { http.Error(rw, "login", 401) })
	dsn := dbtest.DSN(t, "sqlite")
	base := []string{"--db", dsn, "--resolver", web.DNSAddr, "crawl", "--allow-private", "--delay", "10ms"}

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
