package clocktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/clock"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
)

var start = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestTimer(t *testing.T) {
	f := clocktest.New(start)
	if !f.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", f.Now(), start)
	}
	tm := f.NewTimer(10 * time.Second)
	if f.Timers() != 1 {
		t.Errorf("Timers = %d, want 1", f.Timers())
	}
	f.Advance(9 * time.Second)
	if _, ok := received(tm.C()); ok {
		t.Fatal("the timer fired 1 s early")
	}
	f.Advance(5 * time.Second)
	v, ok := received(tm.C())
	if !ok || !v.Equal(start.Add(10*time.Second)) {
		t.Errorf("timer sent %v, %v; want %v", v, ok, start.Add(10*time.Second))
	}
	if !f.Now().Equal(start.Add(14 * time.Second)) {
		t.Errorf("Now = %v after advancing 14 s", f.Now())
	}
	if tm.Stop() {
		t.Errorf("Stop of a fired timer = true")
	}
	if f.Timers() != 0 {
		t.Errorf("Timers = %d after firing, want 0", f.Timers())
	}

	// A stopped timer never fires, even if it was due and not read.
	tm = f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Errorf("Stop of a pending timer = false")
	}
	f.Advance(time.Hour)
	if _, ok := received(tm.C()); ok {
		t.Errorf("a stopped timer fired")
	}
	// A timer of zero fires at once.
	if _, ok := received(f.NewTimer(0).C()); !ok {
		t.Errorf("NewTimer(0) did not fire at once")
	}
}

func TestTickerAndOrder(t *testing.T) {
	f := clocktest.New(start)
	tk := f.NewTicker(time.Second)
	tm := f.NewTimer(2500 * time.Millisecond)
	d, ok := f.AdvanceToNext()
	if !ok || d != 2500*time.Millisecond {
		t.Fatalf("AdvanceToNext = %v, %v; want 2.5s, true", d, ok)
	}
	// The ticker's first tick waits unread; the second is dropped.
	if v, ok := received(tk.C()); !ok || !v.Equal(start.Add(time.Second)) {
		t.Errorf("tick = %v, %v; want the first, at 1 s", v, ok)
	}
	if v, ok := received(tm.C()); !ok || !v.Equal(start.Add(2500*time.Millisecond)) {
		t.Errorf("timer = %v, %v; want 2.5 s", v, ok)
	}
	if _, ok := f.AdvanceToNext(); ok {
		t.Errorf("AdvanceToNext with only a ticker pending moved the clock")
	}
	f.Advance(time.Second)
	if v, ok := received(tk.C()); !ok || !v.Equal(start.Add(3*time.Second)) {
		t.Errorf("tick = %v, %v; want 3 s", v, ok)
	}
	tk.Stop()
	f.Advance(time.Hour)
	if _, ok := received(tk.C()); ok {
		t.Errorf("a stopped ticker ticked")
	}
}

// WaitTimers returns once the code under test waits; clock.Sleep on the
// fake ends when the test advances the time, and not before.
func TestWaitTimersAndSleep(t *testing.T) {
	f := clocktest.New(time.Time{})
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(context.Background(), f, time.Hour) }()
	f.WaitTimers(t, 1)
	select {
	case <-done:
		t.Fatal("Sleep returned before the clock moved")
	default:
	}
	f.Advance(time.Hour)
	if err := <-done; err != nil {
		t.Errorf("Sleep = %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- clock.Sleep(ctx, f, time.Hour) }()
	f.WaitTimers(t, 1)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Sleep after cancel = %v", err)
	}
	if f.Timers() != 0 {
		t.Errorf("a cancelled Sleep left its timer: %d pending", f.Timers())
	}
}

func TestAutoAdvance(t *testing.T) {
	f := clocktest.New(start)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.AutoAdvance(ctx)
	for range 3 {
		if err := clock.Sleep(ctx, f, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.Now().Sub(start); got != 72*time.Hour {
		t.Errorf("three sleeps of a day took %v of fake time", got)
	}
}

// Set moves the wall clock alone, as setting the system's clock does: the
// time passed (Mono) and the timers do not see it.
func TestSet(t *testing.T) {
	f := clocktest.New(start)
	tm := f.NewTimer(10 * time.Second)
	f.Advance(4 * time.Second)
	f.Set(time.Minute)
	if want := start.Add(64 * time.Second); !f.Now().Equal(want) {
		t.Errorf("Now = %v after Advance(4s) and Set(1m), want %v", f.Now(), want)
	}
	if got := f.Mono(); got != 4*time.Second {
		t.Errorf("Mono = %v, want 4s: Set is not time passed", got)
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("a timer fired when the wall clock was set forward")
	}
	f.Advance(6 * time.Second)
	v, ok := received(tm.C())
	if want := start.Add(70 * time.Second); !ok || !v.Equal(want) {
		t.Errorf("timer sent %v, %v after 10s passed; want the wall time %v", v, ok, want)
	}
	f.Set(-2 * time.Minute)
	if want := start.Add(-50 * time.Second); !f.Now().Equal(want) || f.Mono() != 10*time.Second {
		t.Errorf("after Set(-2m): Now = %v, Mono = %v; want %v, 10s", f.Now(), f.Mono(), want)
	}
}
