// Package clocktest gives tests a fake clock.Clock that only moves when the
// test moves it, and ways to wait for events instead of sleeping: until the
// code under test is waiting on a timer (WaitTimers), or until a condition
// holds (Eventually).
package clocktest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/clock"
)

// Clock is a fake clock.Clock. Its time stands still until Advance (or
// AdvanceToNext, AutoAdvance) moves it, which fires the timers and tickers
// that fall due, in order, each seeing the time it was due at. Set moves
// its wall clock (Now) alone, as setting the system's clock does: Mono and
// the timers do not see it. It is safe for concurrent use.
type Clock struct {
	mu      sync.Mutex    // guards the fields below
	now     time.Time     // the fake time, as it has passed: timers and Mono run on it
	set     time.Duration // what Set added to now for Now (the wall clock)
	start   time.Time     // now when the clock was made: Mono's fixed point
	waiting []*waiter     // timers and tickers not yet fired or stopped
	changed chan struct{} // closed (and replaced) whenever waiting changes
}

var _ clock.Clock = (*Clock)(nil)

// New returns a fake clock reading start (the zero time means the real
// time now, truncated to the microsecond as the database keeps it).
func New(start time.Time) *Clock {
	if start.IsZero() {
		start = time.Now().UTC().Truncate(time.Microsecond)
	}
	return &Clock{now: start, start: start, changed: make(chan struct{})}
}

// waiter is a timer (period 0) or a ticker.
type waiter struct {
	f      *Clock
	when   time.Time
	period time.Duration
	c      chan time.Time
}

func (w *waiter) C() <-chan time.Time { return w.c }

// Stop removes the timer; it returns whether it was still pending. A value
// sent before and not received is dropped, as with time.Timer since Go
// 1.23.
func (w *waiter) Stop() bool {
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.waiting, w)
	if i >= 0 {
		f.waiting = slices.Delete(f.waiting, i, i+1)
		f.changedLocked()
	}
	select {
	case <-w.c:
	default:
	}
	return i >= 0
}

type ticker struct{ *waiter }

func (t ticker) Stop() { t.waiter.Stop() }

// Now returns the fake wall time: the time passed, moved by Set.
func (f *Clock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wallLocked()
}

func (f *Clock) wallLocked() time.Time { return f.now.Add(f.set) }

// Mono returns the fake time passed since the clock was made: Advance
// moves it, Set does not.
func (f *Clock) Mono() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now.Sub(f.start)
}

// Set sets the wall clock (Now) d later (earlier when d < 0), as NTP or an
// operator setting the system's clock does: no time passes, so Mono stays
// and no timer fires.
func (f *Clock) Set(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set += d
}

// NewTimer returns a timer that fires when the fake time reaches now+d (at
// once when d <= 0).
func (f *Clock) NewTimer(d time.Duration) clock.Timer {
	w := &waiter{f: f, c: make(chan time.Time, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.when = f.now.Add(d)
	if d <= 0 {
		w.c <- f.wallLocked()
		return w
	}
	f.waiting = append(f.waiting, w)
	f.changedLocked()
	return w
}

// NewTicker returns a ticker that ticks every d of fake time. It panics
// when d <= 0, as time.NewTicker does.
func (f *Clock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("clocktest: non-positive interval for NewTicker")
	}
	w := &waiter{f: f, period: d, c: make(chan time.Time, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.when = f.now.Add(d)
	f.waiting = append(f.waiting, w)
	f.changedLocked()
	return ticker{w}
}

// changedLocked wakes WaitTimers. f.mu must be held.
func (f *Clock) changedLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Advance moves the fake time forward by d, firing in order every timer
// and ticker due by then. A ticker whose last tick was not received drops
// the next, as time.Ticker does. It does not wait for anyone to react.
func (f *Clock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advanceLocked(f.now.Add(d))
}

func (f *Clock) advanceLocked(to time.Time) {
	fired := false
	for {
		var next *waiter
		for _, w := range f.waiting {
			if !w.when.After(to) && (next == nil || w.when.Before(next.when)) {
				next = w
			}
		}
		if next == nil {
			break
		}
		if next.when.After(f.now) {
			f.now = next.when
		}
		select {
		case next.c <- f.wallLocked():
		default:
		}
		if next.period > 0 {
			next.when = next.when.Add(next.period)
		} else {
			f.waiting = slices.DeleteFunc(f.waiting, func(w *waiter) bool { return w == next })
			fired = true
		}
	}
	if to.After(f.now) {
		f.now = to
	}
	if fired {
		f.changedLocked()
	}
}

// Timers returns the number of timers pending (tickers not counted): how
// many waits the code under test is in.
func (f *Clock) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.timersLocked()
}

func (f *Clock) timersLocked() int {
	n := 0
	for _, w := range f.waiting {
		if w.period == 0 {
			n++
		}
	}
	return n
}

// AdvanceToNext moves the fake time to the earliest pending timer (not
// ticker) and fires it, with every ticker due by then. It returns how far
// the time moved, and false when no timer was pending (then nothing
// moves).
func (f *Clock) AdvanceToNext() (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next *waiter
	for _, w := range f.waiting {
		if w.period == 0 && (next == nil || w.when.Before(next.when)) {
			next = w
		}
	}
	if next == nil {
		return 0, false
	}
	from := f.now
	f.advanceLocked(next.when)
	return f.now.Sub(from), true
}

// AwaitTimers blocks until at least n timers (not tickers) are pending, or
// ctx ends (then it returns ctx's error).
func (f *Clock) AwaitTimers(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		ok, ch := f.timersLocked() >= n, f.changed
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitTimeout bounds the waits of WaitTimers and Eventually: an event that
// has not happened by then is taken as never happening.
const WaitTimeout = 30 * time.Second

// WaitTimers waits until the code under test is in at least n timer waits
// (a gap, a backoff, an IDLE that has begun), and fails the test when that
// does not happen within WaitTimeout. It must be called from the test's
// goroutine.
func (f *Clock) WaitTimers(t testing.TB, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	if err := f.AwaitTimers(ctx, n); err != nil {
		t.Fatalf("clocktest: %d timers pending after %v, want %d", f.Timers(), WaitTimeout, n)
	}
}

// AutoAdvance moves the fake time to each timer as soon as one is pending,
// so that every wait of the code under test ends at once in real time and
// takes exactly its length in fake time, until ctx ends. It blocks: run it
// in a goroutine. Suited to code with one wait at a time; with several,
// the earliest always fires first.
func (f *Clock) AutoAdvance(ctx context.Context) {
	for ctx.Err() == nil {
		if f.AwaitTimers(ctx, 1) != nil {
			return
		}
		f.AdvanceToNext()
	}
}
