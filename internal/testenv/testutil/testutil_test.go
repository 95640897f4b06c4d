package testutil_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/testutil"
)

func TestBufferConcurrent(t *testing.T) {
	var b testutil.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "%d", i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Errorf("len(String()) = %d, want 800", n)
	}
}

func TestWithin(t *testing.T) {
	var n atomic.Int32
	if !testutil.Within(time.Second, func() bool { return n.Add(1) >= 3 }) {
		t.Errorf("Within = false for a condition that holds on the third call")
	}
	start := time.Now()
	if testutil.Within(50*time.Millisecond, func() bool { return false }) {
		t.Errorf("Within = true for a condition that never holds")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("Within gave up after %v, before its deadline", d)
	}
}

func TestEventually(t *testing.T) {
	testutil.Eventually(t, time.Second, "a condition that holds", func() bool { return true })
}
