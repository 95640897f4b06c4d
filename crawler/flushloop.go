package crawler

import (
	"context"
	"time"

	"github.com/lohisoft/lohibot/internal/clock"
)

// flushLoop runs a write of what a background buffer holds (the link-text
// sink, discovery's candidates) every period, or at once when poked, on a
// goroutine of its own until close.
type flushLoop struct {
	flush func()
	kick  chan struct{} // (capacity 1) asks for a write now
	stop  context.CancelFunc
	done  chan struct{}
}

// startFlushLoop starts calling flush every period of clk, or when poked.
// flush is never called twice at once by the loop.
func startFlushLoop(clk clock.Clock, period time.Duration, flush func()) *flushLoop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &flushLoop{flush: flush, kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := clk.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			case <-l.kick:
			}
			flush()
		}
	}()
	return l
}

// poke asks for a write now; it never blocks.
func (l *flushLoop) poke() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// close stops the loop, waits for a write under way, and writes what is
// left.
func (l *flushLoop) close() {
	l.stop()
	<-l.done
	l.flush()
}
