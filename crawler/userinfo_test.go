package crawler_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestStartURLCredentialsNeverSent: a start URL carrying credentials (an
// old crawl list row, a caller that did not check) is crawled without
// them: no request carries Authorization, and no password reaches the
// request log or the index.
func TestStartURLCredentialsNeverSent(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 1, PagesPerSite: 3})
			c := e.crawler(t, nil)
			s := e.web.Plain()[0]
			u, err := url.Parse(s.StartURL)
			if err != nil {
				t.Fatal(err)
			}
			u.User = url.UserPassword("alice", "s3cret")
			rs, err := c.Crawl(t.Context(), []crawler.Target{{Site: s.Name, StartURL: u.String()}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].Status != crawler.SiteCrawled {
				t.Fatalf("Crawl = %+v, want the site crawled", rs)
			}
			hits := e.web.Hits()
			if len(hits) == 0 {
				t.Fatal("no request reached the server")
			}
			for _, h := range hits {
				if h.Auth != "" {
					t.Errorf("request %s%s carried Authorization %q", h.Host, h.Path, h.Auth)
				}
			}
			for _, r := range e.requests(t) {
				if strings.Contains(r.URL, "s3cret") || strings.Contains(r.URL, "alice") {
					t.Errorf("request log row %d holds the credentials: %s", r.ID, r.URL)
				}
			}
			var pages []db.Page
			if err := dbtest.Gorm(e.store).Find(&pages).Error; err != nil {
				t.Fatal(err)
			}
			for _, p := range pages {
				if strings.Contains(p.URL, "s3cret") {
					t.Errorf("index holds the credentials: %s", p.URL)
				}
			}
		})
	}
}
