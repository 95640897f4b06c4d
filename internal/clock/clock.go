// Package clock is the time source of the crawler and the mail watcher:
// what they read the time from and how they wait (gaps, backoffs,
// Retry-After, lease waits, tickers). Production code uses Real; tests
// pass the fake of package clocktest, which only moves when the test
// advances it, so a test waits for an event instead of a fixed sleep.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time: the wall clock, which jumps when the
	// system's clock is set (by NTP, by hand, after a suspend).
	Now() time.Time
	// Mono returns the time on a clock that is never set, as the time
	// since a fixed point of the process: it only moves on, as fast as
	// the time passes. A wait that must last (a host's gap) is measured
	// on it, not on Now, so that setting the clock forward never cuts it
	// short.
	Mono() time.Duration
	// NewTimer returns a Timer that sends the time on its channel once,
	// after at least d (at once when d <= 0), as time.NewTimer does.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a Ticker that sends the time on its channel every
	// d, dropping ticks a slow reader misses, as time.NewTicker does. It
	// panics when d <= 0.
	NewTicker(d time.Duration) Ticker
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	// C returns the channel the time is sent on when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It returns false when the timer
	// had fired or been stopped already.
	Stop() bool
}

// Ticker is a periodic timer made by a Clock.
type Ticker interface {
	// C returns the channel the ticks are sent on.
	C() <-chan time.Time
	// Stop turns the ticker off; no more ticks are sent.
	Stop()
}

// Real is the system clock: the time package. Its zero value is ready to
// use; its timers cost what the time package's do (a realTimer holds one
// pointer, so making one does not allocate beyond time.NewTimer).
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// monoStart is Real.Mono's fixed point: time.Now carries a monotonic
// reading, which time.Since uses.
var monoStart = time.Now()

// Mono returns the time since the process started on the system's
// monotonic clock (time.Since on a reading of time.Now).
func (Real) Mono() time.Duration { return time.Since(monoStart) }

// NewTimer returns time.NewTimer(d).
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker returns time.NewTicker(d).
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Or returns c, or Real when c is nil: the default of an options field.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Sleep waits d on c, or until ctx ends; it returns ctx's error when ctx
// ended first (or had ended already), nil otherwise. It blocks.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// Until returns the time from c's now until t.
func Until(c Clock, t time.Time) time.Duration { return t.Sub(c.Now()) }
