package crawler_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/dbtest"
	"github.com/lohisoft/lohibot/internal/testweb"
)

// TestNoRobotsAfterBudget: once a cycle has spent its budget, it ends
// without another request, even when the next URL of its frontier is on a
// host of the site not visited yet (whose robots.txt it would have
// fetched first, for nothing).
func TestNoRobotsAfterBudget(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 1, PagesPerSite: 30})
			s := e.web.Plain()[0]
			www := "www." + s.Host
			e.web.DNS.AddA(www, "127.0.0.1")
			// The start page links to 19 pages of its host, then to the
			// site's other host: the budget (the start page and those 19)
			// is spent when that link is next.
			e.web.Handle(s.Host, "/", func(rw http.ResponseWriter, r *http.Request) {
				var b strings.Builder
				for i := 1; i < crawler.Budget; i++ {
					fmt.Fprintf(&b, "<a href=\"/p/%d.html\">page %d</a>\n", i, i)
				}
				fmt.Fprintf(&b, "<a href=\"%s\">the other host</a>\n", e.web.URL(www, "/"))
				rw.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(rw, "<!DOCTYPE html><html><head><title>start</title></head><body>%s</body></html>", b.String())
			})
			c := e.crawler(t, nil)
			rs, err := c.Crawl(t.Context(), []crawler.Target{{Site: s.Name, StartURL: s.StartURL}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].Status != crawler.SiteCrawled || rs[0].Reason != "budget spent" {
				t.Fatalf("Crawl = %+v, want the site crawled to its budget", rs)
			}
			pages := 0
			for _, h := range e.web.Hits() {
				switch {
				case h.Host == www:
					t.Errorf("request %s%s sent after the budget was spent", h.Host, h.Path)
				case h.Path != "/robots.txt":
					pages++
				}
			}
			if pages != crawler.Budget {
				t.Errorf("%d page requests, want %d", pages, crawler.Budget)
			}
		})
	}
}
