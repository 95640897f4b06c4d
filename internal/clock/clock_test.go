package clock_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lohisoft/lohibot/internal/clock"
)

// The real clock waits in real time; synctest's bubble makes that time
// virtual, so the test takes no time and the lengths are exact.
func TestRealSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.Or(nil)
		start, mono := c.Now(), c.Mono()
		if err := clock.Sleep(t.Context(), c, 5*time.Second); err != nil {
			t.Fatalf("Sleep = %v, want nil", err)
		}
		if got := c.Now().Sub(start); got != 5*time.Second {
			t.Errorf("Sleep(5s) took %v", got)
		}
		if got := clock.Until(c, start.Add(time.Minute)); got != 55*time.Second {
			t.Errorf("Until = %v, want 55s", got)
		}
		if got := c.Mono() - mono; got != 5*time.Second {
			t.Errorf("Mono moved %v in Sleep(5s)", got)
		}

		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		start = c.Now()
		if err := clock.Sleep(ctx, c, time.Hour); err != context.Canceled {
			t.Errorf("Sleep after cancel = %v, want context.Canceled", err)
		}
		if got := c.Now().Sub(start); got != time.Second {
			t.Errorf("a cancelled Sleep returned after %v, want 1s", got)
		}
		if err := clock.Sleep(ctx, c, 0); err != context.Canceled {
			t.Errorf("Sleep(0) on an ended ctx = %v, want context.Canceled", err)
		}

		tk := c.NewTicker(time.Second)
		for i := range 3 {
			<-tk.C()
			if got := c.Now().Sub(start); got != time.Duration(i+2)*time.Second {
				t.Errorf("tick %d at %v", i, got)
			}
		}
		tk.Stop()
		tm := c.NewTimer(time.Second)
		if !tm.Stop() {
			t.Errorf("Stop of a pending timer = false")
		}
	})
}

// The real clock adds no allocation to a wait: the crawler waits before
// every request.
func TestRealSleepAllocs(t *testing.T) {
	ctx := context.Background()
	var c clock.Clock = clock.Real{}
	base := testing.AllocsPerRun(100, func() {
		tm := time.NewTimer(time.Nanosecond)
		<-tm.C
	})
	got := testing.AllocsPerRun(100, func() {
		if err := clock.Sleep(ctx, c, time.Nanosecond); err != nil {
			t.Fatal(err)
		}
	})
	if got > base {
		t.Errorf("Sleep allocates %v times, time.NewTimer %v", got, base)
	}
}
