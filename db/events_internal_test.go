package db

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestPolicyWatchVersionShared checks how concurrent calls of Version share
// reads: the first call reads at once; the calls made while that read is
// under way share one read, begun after it ends (so after each of them
// asked), and get what that read found, not what the earlier one did.
func TestPolicyWatchVersionShared(t *testing.T) {
	var (
		mu    sync.Mutex
		reads int
	)
	release := make(chan int64) // the version each read finds, one per read
	started := make(chan struct{}, 10)
	w := &PolicyWatch{readVersion: func(ctx context.Context) (int64, error) {
		mu.Lock()
		reads++
		mu.Unlock()
		started <- struct{}{}
		return <-release, nil
	}}
	type answer struct {
		v   int64
		err error
	}
	first := make(chan answer, 1)
	go func() {
		v, err := w.Version(context.Background())
		first <- answer{v, err}
	}()
	<-started // the first read is under way
	const n = 20
	later := make(chan answer, n)
	var asked sync.WaitGroup
	for range n {
		asked.Go(func() {
			v, err := w.Version(context.Background())
			later <- answer{v, err}
		})
	}
	// Let the later callers queue behind the read under way.
	time.Sleep(50 * time.Millisecond)
	release <- 1
	if a := <-first; a.err != nil || a.v != 1 {
		t.Fatalf("first caller got %d, %v; want 1", a.v, a.err)
	}
	<-started // the second read, for all the later callers
	release <- 2
	asked.Wait()
	close(later)
	for a := range later {
		if a.err != nil || a.v != 2 {
			t.Errorf("a later caller got %d, %v; want 2 (a read begun after it asked)", a.v, a.err)
		}
	}
	mu.Lock()
	if reads != 2 {
		t.Errorf("%d reads for 1 + %d callers, want 2", reads, n)
	}
	mu.Unlock()
	// Nothing under way now: the next call reads again.
	go func() { <-started; release <- 3 }()
	if v, err := w.Version(context.Background()); err != nil || v != 3 {
		t.Errorf("a call after the others got %d, %v; want 3", v, err)
	}
}

// TestPolicyWatchVersionCancel checks that a caller whose context ends
// stops waiting, and that the read it began still answers the others.
func TestPolicyWatchVersionCancel(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	w := &PolicyWatch{readVersion: func(ctx context.Context) (int64, error) {
		started <- struct{}{}
		<-release
		return 7, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := w.Version(ctx)
		got <- err
	}()
	<-started
	cancel()
	if err := <-got; err != context.Canceled {
		t.Fatalf("cancelled caller got %v, want context.Canceled", err)
	}
	close(release)
	// The read the cancelled caller began ended; a new call reads anew.
	go func() { <-started }()
	if v, err := w.Version(context.Background()); err != nil || v != 7 {
		t.Errorf("Version = %d, %v; want 7", v, err)
	}
}
