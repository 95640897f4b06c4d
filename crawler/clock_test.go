package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestClock crawls on a fake clock (Options.Clock) that moves to each wait's
// end as soon as the crawler waits: the gaps, a Retry-After and the
// backoffs add up to hours of fake time and the crawl ends in moments of
// real time, with every wait in the log at exactly its length.
func TestClock(t *testing.T) {
	const (
		delay      = time.Minute
		retryAfter = 50 * time.Minute
	)
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine, &testweb.Options{Plain: 1, PagesPerSite: 4, RetryAfter: retryAfter})
			fc := clocktest.New(time.Time{})
			start := fc.Now()
			opts := e.options(t)
			opts.Clock = fc
			opts.Delay = delay
			opts.MaxSitesParallel = 1 // one wait at a time: each ends exactly when due
			c := e.crawler(t, opts)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go fc.AutoAdvance(ctx)

			realStart := time.Now()
			res := e.crawl(t, c, "plain-000.test", testweb.KindRetrySecs, testweb.KindFlaky)
			took := time.Since(realStart)
			for site, r := range res {
				if r.Status != crawler.SiteCrawled {
					t.Errorf("%s: %+v, want crawled", site, r)
				}
			}
			rows := e.requests(t)
			last := map[string]db.Request{}
			var sawRetryAfter, sawBackoff bool
			for _, r := range rows {
				if r.SentAt.Before(start) || r.CompletedAt == nil {
					t.Fatalf("request %d sent at %v, completed at %v: not on the fake clock from %v", r.ID, r.SentAt, r.CompletedAt, start)
				}
				prev, ok := last[r.Host]
				last[r.Host] = r
				if !ok {
					continue
				}
				gap := r.SentAt.Sub(*prev.CompletedAt)
				st := *prev.Status
				switch {
				case prev.RetryNotBefore != nil:
					sawRetryAfter = true
					if want := max(delay, retryAfter); gap != want {
						t.Errorf("%s: gap after %d with Retry-After %s = %v, want %v", r.URL, st, prev.RetryAfter, gap, want)
					}
				case st == http.StatusTooManyRequests || st >= 500:
					sawBackoff = true
					low := delay << (prev.Attempt + 1)
					if gap < low || gap > low+low/2 {
						t.Errorf("%s: backoff after %d (attempt %d) = %v, want %v to %v", r.URL, st, prev.Attempt, gap, low, low+low/2)
					}
				default:
					if gap != delay {
						t.Errorf("%s: gap = %v, want exactly %v", r.URL, gap, delay)
					}
				}
			}
			if !sawRetryAfter || !sawBackoff {
				t.Errorf("Retry-After seen %v, backoff seen %v: the web did not answer 429 and 503", sawRetryAfter, sawBackoff)
			}
			fake := fc.Now().Sub(start)
			t.Logf("%d requests: %v of fake time in %v", len(rows), fake, took)
			if fake < retryAfter+10*delay {
				t.Errorf("the crawl took %v of fake time, want hours", fake)
			}
			if took > 20*time.Second {
				t.Errorf("the crawl took %v of real time: it waited on the system clock", took)
			}
		})
	}
}

// TestClockSetForward crawls on a fake clock whose wall clock is set
// forward during every wait, as NTP stepping the system's clock does: the
// web server, timing its hits on the time that passed (not on the wall
// clock), still sees every gap whole. Measured on the wall clock, each gap
// was cut short by the part of it waited after the clock was set (the
// reservation's moment ahead).
func TestClockSetForward(t *testing.T) {
	const delay = time.Minute
	e, fc, c := setClockEnv(t, delay)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := 0
	go func() {
		for ctx.Err() == nil {
			if fc.AwaitTimers(ctx, 1) != nil {
				return
			}
			fc.Set(delay / 3)
			set++
			fc.AdvanceToNext()
		}
	}()
	res := e.crawl(t, c, "plain-000.test", testweb.KindRetrySecs)
	cancel()
	for site, r := range res {
		if r.Status != crawler.SiteCrawled {
			t.Errorf("%s: %+v, want crawled", site, r)
		}
	}
	checked := checkWholeGaps(t, e, delay, "plain-000.test") + checkWholeGaps(t, e, delay, "retry-secs.test")
	if checked < 5 {
		t.Errorf("%d gaps checked, want at least 5", checked)
	}
	t.Logf("%d gaps checked; the clock was set forward %d times", checked, set)
}

// TestClockSetBack sets the wall clock an hour back while a request is on
// the wire: the log keeps the host's requests in order (each completed no
// earlier than it was sent, the next sent a gap after), the audit finds
// nothing, and the server sees every gap whole.
func TestClockSetBack(t *testing.T) {
	const delay = time.Minute
	e, fc, c := setClockEnv(t, delay)
	site := e.web.Plain()[0]
	var setBack atomic.Bool
	e.web.Handle(site.Host, "/p/1.html", func(w http.ResponseWriter, r *http.Request) {
		if setBack.CompareAndSwap(false, true) {
			fc.Set(-time.Hour)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><html><head><title>one</title></head><body><a href="/p/2.html">two</a></body></html>`)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go fc.AutoAdvance(ctx)
	for s, r := range e.crawl(t, c, "plain-000.test") {
		if r.Status != crawler.SiteCrawled {
			t.Errorf("%s: %+v, want crawled", s, r)
		}
	}
	cancel()
	if !setBack.Load() {
		t.Fatal("/p/1.html was not requested: the clock was never set back")
	}
	var prev *db.Request
	for _, r := range e.requests(t) {
		if r.CompletedAt == nil || r.CompletedAt.Before(r.SentAt) {
			t.Errorf("request %d (%s) sent at %v, completed at %v: want completed no earlier than sent", r.ID, r.URL, r.SentAt, r.CompletedAt)
		}
		if prev != nil && prev.CompletedAt != nil && r.SentAt.Sub(*prev.CompletedAt) < delay {
			t.Errorf("request %d (%s) sent at %v, %v after request %d completed: want at least %v", r.ID, r.URL, r.SentAt, r.SentAt.Sub(*prev.CompletedAt), prev.ID, delay)
		}
		prev = &r
	}
	if n := checkWholeGaps(t, e, delay, site.Host); n < 4 {
		t.Errorf("%d gaps checked, want at least 4", n)
	}
	sum, err := audit.Run(context.Background(), e.store, nil, func(v audit.Violation) error {
		t.Errorf("audit: %+v", v)
		return nil
	})
	if err != nil || !sum.OK() {
		t.Errorf("audit = %+v, %v; want no violation", sum, err)
	}
}

// setClockEnv returns a local web of one plain site of four pages and
// retry-secs.test, whose record times its hits on the fake clock's Mono
// (the time passed, whatever its wall clock is set to), and a crawler on
// that fake clock at delay, one site at a time.
func setClockEnv(t *testing.T, delay time.Duration) (*env, *clocktest.Clock, *crawler.Crawler) {
	t.Helper()
	fc := clocktest.New(time.Time{})
	passed := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 4,
		Clock: func() time.Time { return passed.Add(fc.Mono()) }})
	opts := e.options(t)
	opts.Clock = fc
	opts.Delay = delay
	opts.MaxSitesParallel = 1
	return e, fc, e.crawler(t, opts)
}

// checkWholeGaps fails t for every gap shorter than delay between two
// requests to host, as the web server timed them, and returns how many
// gaps it checked.
func checkWholeGaps(t *testing.T, e *env, delay time.Duration, host string) int {
	t.Helper()
	hs := e.web.HitsFor(host)
	for i := 1; i < len(hs); i++ {
		if gap := hs[i].Start.Sub(hs[i-1].End); gap < delay {
			t.Errorf("%s: the server saw a gap of %v before %s, want at least %v", host, gap, hs[i].Path, delay)
		}
	}
	return max(len(hs)-1, 0)
}
