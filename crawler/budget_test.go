package crawler_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
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

// TestEndRefusedKeepsLastCompletion: the last request of a cycle is
// completed with the cycle's end, in one write; when the end cannot be
// recorded (here a trigger refuses it), the completion is written alone,
// so that no request's record is lost with the end.
func TestEndRefusedKeepsLastCompletion(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 1, PagesPerSite: 25})
			s := e.web.Plain()[0]
			refuse := []string{`CREATE TRIGGER refuse_end BEFORE UPDATE OF status ON crawl_cycles
				WHEN NEW.status <> 'running' BEGIN SELECT RAISE(ABORT, 'end refused by the test'); END`}
			if engine == "postgres" {
				refuse = []string{`CREATE FUNCTION refuse_end() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN IF NEW.status <> 'running' THEN RAISE EXCEPTION 'end refused by the test'; END IF; RETURN NEW; END $$`,
					`CREATE TRIGGER refuse_end BEFORE UPDATE ON crawl_cycles FOR EACH ROW EXECUTE FUNCTION refuse_end()`}
			}
			for _, q := range refuse {
				if _, err := dbtest.SQL(e.store).ExecContext(t.Context(), q); err != nil {
					t.Fatal(err)
				}
			}
			c := e.crawler(t, nil)
			if _, err := c.Crawl(t.Context(), []crawler.Target{{Site: s.Name, StartURL: s.StartURL}}); err != nil {
				t.Fatal(err)
			}
			var sent, open int
			var status string
			if err := dbtest.SQL(e.store).QueryRowContext(t.Context(),
				`SELECT COUNT(*), COUNT(*) - COUNT(completed_at) FROM requests`).Scan(&sent, &open); err != nil {
				t.Fatal(err)
			}
			if err := dbtest.SQL(e.store).QueryRowContext(t.Context(), `SELECT status FROM crawl_cycles`).Scan(&status); err != nil {
				t.Fatal(err)
			}
			if sent != crawler.Budget+1 || open != 0 {
				t.Errorf("%d requests logged, %d of them not completed; want %d, all completed", sent, open, crawler.Budget+1)
			}
			if status != "running" {
				t.Errorf("cycle %q, want still running (its end was refused)", status)
			}
		})
	}
}
