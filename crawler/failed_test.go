package crawler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestSiteStoppedByErrorFails stops a site's cycle with an error of the
// database that no wait cures (a trigger refusing the request log's sixth
// row): the site ends failed, not stopped, with the error as its reason,
// and the error is counted, in the site's result and in the crawl's.
func TestSiteStoppedByErrorFails(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 25})
	opts := e.options(t)
	opts.Delay = 20 * time.Millisecond
	c := e.crawler(t, opts)
	if _, err := dbtest.SQL(e.store).Exec(`CREATE TRIGGER refuse_sixth BEFORE INSERT ON requests
		WHEN (SELECT count(*) FROM requests) >= 5 BEGIN SELECT RAISE(ABORT, 'test: the request log refuses'); END`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := c.Crawl(ctx, e.plainTargets())
	if err != nil {
		t.Fatalf("Crawl: %v", err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1", len(rs))
	}
	r := rs[0]
	if r.Status != crawler.SiteFailed || !strings.Contains(r.Reason, "the request log refuses") {
		t.Errorf("site: %s, %q; want %s with the database's error", r.Status, r.Reason, crawler.SiteFailed)
	}
	if r.Errors != 1 {
		t.Errorf("site's errors = %d, want 1", r.Errors)
	}
	if n := c.Stats().Errors; n != 1 {
		t.Errorf("crawl's errors = %d, want 1", n)
	}
}
