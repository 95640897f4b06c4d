package crawler_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestCrawlLoggedWhileRunning crawls with the store's sequencer running
// every 20 ms, as the crawl command runs it (on SQLite the crawler's writer
// writes the appends, db.Store.SealVia): once the crawl and its crawler are
// done, every request is a leaf of the log, and the log verifies.
func TestCrawlLoggedWhileRunning(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 3, PagesPerSite: 30})
			e.store.StartSealer(20*time.Millisecond, nil)
			c := e.crawler(t, nil)
			res := e.crawl(t, c, "plain-000.test", "plain-001.test", "plain-002.test")
			if len(res) != 3 {
				t.Fatalf("results %+v, want 3 sites", res)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			// What the crawl's last turn left (the crawl command's store
			// appends it when it closes).
			if _, err := e.store.AppendLog(context.Background()); err != nil {
				t.Fatal(err)
			}
			var problems []db.LogProblem
			rep, err := e.store.VerifyLog(context.Background(), func(p db.LogProblem) error {
				problems = append(problems, p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			requests := len(e.requests(t))
			if len(problems) != 0 || rep.Unlogged != 0 || rep.Size < int64(requests) {
				t.Errorf("verify: problems %+v, report %+v; want none, the %d requests in the log", problems, rep, requests)
			}
		})
	}
}
