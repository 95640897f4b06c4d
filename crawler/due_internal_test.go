package crawler

import (
	"net/http"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/clock/clocktest"
)

// TestGapOnClockNeverSet checks that a host's gap is measured on the clock
// that is never set (clock.Clock.Mono): setting the system's clock forward
// during the gap (NTP stepping it) does not cut the gap short, and setting
// it back makes the wait longer, so that the log's times stay in order.
func TestGapOnClockNeverSet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		retry  string
		want   time.Duration // the gap after the answer
	}{
		{"gap", http.StatusOK, "", time.Minute},
		{"Retry-After", http.StatusTooManyRequests, "120", 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := clocktest.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
			c := &Crawler{clock: fc}
			fc.Advance(time.Hour) // Mono is not zero
			hs := &hostState{host: "a.example", gap: time.Minute}
			res := &exchangeResult{row: &reqRow{}, resp: &response{Status: tc.status}, completedAt: c.now(), completed: fc.Mono()}
			c.settle(hs, res, &completion{RetryAfter: tc.retry})
			if got := c.untilDue(hs); got != tc.want {
				t.Fatalf("due in %v after the answer, want %v", got, tc.want)
			}
			fc.Advance(10 * time.Second)
			fc.Set(tc.want) // the wall clock past the gap's end
			if got, want := c.untilDue(hs), tc.want-10*time.Second; got != want {
				t.Errorf("due in %v once 10s passed and the clock was set %v forward, want %v: the gap was cut short", got, tc.want, want)
			}
			fc.Set(-tc.want - 30*time.Second) // 30s behind the time passed
			if got, want := c.untilDue(hs), tc.want+20*time.Second; got != want {
				t.Errorf("due in %v once 10s passed and the clock was set 30s back, want %v (next_at on the wall clock)", got, want)
			}
		})
	}
}
