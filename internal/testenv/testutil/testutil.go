// Package testutil holds the small helpers that tests of several packages
// share: a buffer safe for concurrent use and a deadline-bounded wait for a
// condition. It is for tests only and never linked into the binary.
package testutil

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer safe for concurrent use: a child process, a
// logger or a goroutine may write while the test reads. The zero value is
// an empty buffer ready to use.
type Buffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// PollInterval is how often Eventually checks its condition.
const PollInterval = 20 * time.Millisecond

// DefaultWait is how long Eventually waits when given no time.
const DefaultWait = 30 * time.Second

// Eventually polls cond every PollInterval until it holds, and fails the
// test (t.Fatalf, "timed out after D waiting for WHAT") when d (zero:
// DefaultWait) passes first. It blocks; call it from the test's goroutine.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if d <= 0 {
		d = DefaultWait
	}
	if !Within(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// Within polls cond every PollInterval until it holds (true) or d passes
// (false), for a test that reports the failure itself.
func Within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(PollInterval)
	}
	return true
}
