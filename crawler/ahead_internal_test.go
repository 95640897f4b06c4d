package crawler

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// TestReserveAhead checks how far ahead of its time a request is reserved:
// on PostgreSQL maxReserveAhead while at least a quarter of the request
// slots are free, else (and on SQLite) twice the recent reservation time
// plus 1 ms; never more than a quarter of the gap.
func TestReserveAhead(t *testing.T) {
	const took = 3 * time.Millisecond
	adaptive := 2*took + time.Millisecond
	for _, tt := range []struct {
		name  string
		pg    bool
		busy  int // request slots taken, of 8
		gap   time.Duration
		ahead time.Duration
	}{
		{"sqlite", false, 0, time.Second, adaptive},
		{"postgres, slots free", true, 0, time.Second, maxReserveAhead},
		{"postgres, half the slots taken", true, 4, time.Second, maxReserveAhead},
		{"postgres, under three quarters of the slots taken", true, 5, time.Second, maxReserveAhead},
		{"postgres, three quarters of the slots taken", true, 6, time.Second, adaptive},
		{"postgres, short gap", true, 0, 100 * time.Millisecond, 25 * time.Millisecond},
		{"postgres, gap of 400 ms", true, 0, 400 * time.Millisecond, 100 * time.Millisecond},
		{"sqlite, short gap", false, 0, 20 * time.Millisecond, 5 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Crawler{traits: db.Traits{HeldAhead: tt.pg}, inFlight: make(chan struct{}, 8)}
			c.reserveTook.Store(int64(took))
			for range tt.busy {
				c.inFlight <- struct{}{}
			}
			if got := c.reserveAhead(tt.gap); got != tt.ahead {
				t.Errorf("reserveAhead(%v) = %v, want %v", tt.gap, got, tt.ahead)
			}
		})
	}
}
