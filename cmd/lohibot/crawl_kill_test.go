package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestCrawlKilledMidRequest kills a crawler process (kill -9) while its
// request is on the wire, resumes the crawl with a second process, and
// checks that the audit passes and that the web server's own record agrees:
// one request in flight per host, the gap kept between the dead crawler's
// request and the next, at most 20 pages. The dead crawler's row is closed
// as abandoned at its lease's expiry.
func TestCrawlKilledMidRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crawler processes")
	}
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)

		web, err := testweb.Start(&testweb.Options{Plain: 1, PagesPerSite: 30})
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		site := web.Plain()[0]
		const slowPath = "/p/2.html"
		arrived := make(chan struct{})
		var once sync.Once
		var mu sync.Mutex
		calls := 0
		web.Handle(site.Host, slowPath, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			calls++
			first := calls == 1
			mu.Unlock()
			if first {
				once.Do(func() { close(arrived) })
				<-r.Context().Done() // hold the request until the crawler is gone
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!DOCTYPE html><html><head><title>slow</title></head><body><a href="/p/5.html">next</a></body></html>`)
		})

		if r := runCLI(t, nil, "--db", dsn, "sites", "add", site.StartURL); r.code != 0 {
			t.Fatalf("sites add: exit %d: %s", r.code, r.stderr)
		}
		const delay = 300 * time.Millisecond
		args := []string{"--db", dsn, "--resolver", web.DNSAddr, "crawl", site.Name, "--allow-private",
			"--delay", delay.String(), "--lease-ttl", "2s", "--timeout", "1s"}
		first := lohibotProcess(ctx, args...)
		var firstErr strings.Builder
		first.Stderr = &firstErr
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			first.Process.Kill()
			first.Wait()
			t.Fatalf("the crawler never asked for %s; stderr:\n%s", slowPath, firstErr.String())
		}
		if err := first.Process.Kill(); err != nil { // SIGKILL: no cleanup at all
			t.Fatal(err)
		}
		first.Wait()

		second := lohibotProcess(ctx, args...)
		out, err := second.CombinedOutput()
		if err != nil {
			t.Fatalf("resumed crawl: %v\n%s", err, out)
		}

		var abandoned []db.Request
		if err := dbtest.Gorm(store).Where("outcome = ?", "abandoned").Find(&abandoned).Error; err != nil {
			t.Fatal(err)
		}
		if len(abandoned) != 1 || !strings.HasSuffix(abandoned[0].URL, slowPath) || abandoned[0].CompletedAt == nil {
			t.Errorf("abandoned rows = %+v, want the one request for %s, closed", abandoned, slowPath)
		}
		var open int64
		dbtest.Gorm(store).Model(&db.Request{}).Where("completed_at IS NULL").Count(&open)
		if open != 0 {
			t.Errorf("%d request rows left open after the resumed crawl", open)
		}

		r := runCLI(t, nil, "--db", dsn, "audit")
		if r.code != 0 {
			t.Errorf("audit after kill -9 and resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}

		// The crawl's records are in the log: editing one is caught.
		if r := runCLI(t, nil, "--db", dsn, "audit", "integrity"); r.code != 0 {
			t.Errorf("audit integrity before editing: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		tamper, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		err = dbtest.Gorm(tamper).Exec("UPDATE requests SET status = 404 WHERE id = ?", abandonedID(abandoned)).Error
		tamper.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, nil, "--db", dsn, "audit", "integrity"); r.code != 1 || !strings.Contains(r.stdout, fmt.Sprintf("requests row %d", abandonedID(abandoned))) {
			t.Errorf("audit integrity after editing the abandoned request: exit %d, want 1 naming it\n%s%s", r.code, r.stdout, r.stderr)
		}

		hits := web.HitsFor(site.Host)
		if n := testweb.MaxOverlap(hits)[site.Host]; n > 1 {
			t.Errorf("the server saw %d requests to %s in flight at once", n, site.Host)
		}
		if g, ok := testweb.MinGap(hits)[site.Host]; ok && g < delay {
			t.Errorf("the server saw a gap of %v between two requests to %s, want at least %v", g, site.Host, delay)
		}
		if n := web.PageHitsPerSite(hits)[site.Name]; n > 20 {
			t.Errorf("the server saw %d page requests to %s, want at most 20", n, site.Name)
		}
		if n := web.PageHitsPerSite(hits)[site.Name]; n < 10 {
			t.Errorf("the server saw only %d page requests to %s: the crawl did not resume", n, site.Name)
		}
	})
}

func abandonedID(rs []db.Request) int64 {
	if len(rs) == 0 {
		return 1
	}
	return rs[0].ID
}
