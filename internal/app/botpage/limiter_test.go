package botpage_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/app/botpage"
)

// TestRateLimitNotFlushed: a client that spent its lookups stays limited
// while lookups come from 10,000 other /64s (of its own /48, and each of
// a /48 of its own): asking from many addresses empties no one's bucket.
func TestRateLimitNotFlushed(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	fl := &fakeLookup{}
	h, err := botpage.NewStatusHandler(func() *botpage.Facts { return testFacts() }, fl.lookup,
		&botpage.StatusOptions{Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(addr string) int {
		req := httptest.NewRequest(http.MethodGet, "/bot/status.json?site=shop.com", nil)
		req.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeStatusJSON(w, req)
		return w.Code
	}
	const victim = "[2001:db8:1:1::1]:4000"
	for ask(victim) == http.StatusOK {
	}
	for i := range 10000 {
		ask(fmt.Sprintf("[2001:db8:1:%x::1]:4000", i+2)) // the same /48
		ask(fmt.Sprintf("[2001:%x:1::1]:4000", i+1))     // a /48 each
		now = now.Add(100 * time.Microsecond)            // 1 s in all: less than a token takes to come back
	}
	if code := ask(victim); code != http.StatusTooManyRequests {
		t.Errorf("the client that spent its lookups, after 10,000 other /64s asked: status %d, want 429", code)
	}
}
