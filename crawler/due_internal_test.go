package crawler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
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

// TestReservedForDueTime checks that a request reserved once its host is
// (nearly) due is logged as sent when the gap ends on the clock that is
// never set, as it is sent then, not at the moment of its reservation,
// when the wall clock was set forward during the gap.
func TestReservedForDueTime(t *testing.T) {
	ctx := context.Background()
	s := dbtest.OpenDSN(t, dbtest.DSN(t, "sqlite"))
	fc := clocktest.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	c, err := New(ctx, s, policy.New(s, nil), &Options{Node: "t", Clock: fc, Timeout: 10 * time.Second, LeaseTTL: 24 * time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const host = "a.example"
	hs := c.hostState(host)
	defer c.leaveHost(ctx, hs)
	if err := c.leaseHost(ctx, hs); err != nil {
		t.Fatal(err)
	}
	hs.gap = time.Minute
	res := &exchangeResult{row: &reqRow{}, resp: &response{Status: http.StatusOK}, completedAt: c.now(), completed: fc.Mono()}
	c.settle(hs, res, &completion{})
	fc.Advance(time.Minute - 500*time.Microsecond) // within the moment a reservation is made ahead
	fc.Set(time.Hour)
	due := fc.Now().Add(500 * time.Microsecond)

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		row := &reqRow{Site: host, Host: host, Origin: "https://" + host, URL: "https://" + host + "/robots.txt", Purpose: db.PurposeRobots}
		_, _, err := c.exchangeDue(rctx, hs, row)
		done <- err
	}()
	fc.WaitTimers(t, 1) // reserved, and waiting for its time
	var rows []db.Request
	if err := dbtest.Gorm(s).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !rows[0].SentAt.Equal(due) {
		t.Errorf("request rows %+v, want one sent at %v (the gap's end)", rows, due)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("exchangeDue = %v once cancelled, want context.Canceled", err)
	}
}
