package crawler

import (
	"context"
	"sync"
	"time"
)

// keyReads coalesces reads by key: one query at a time, for every key
// asked for while the last one ran. When thousands of sites start at
// once, or watch other crawlers' leases, the database sees a few reads of
// many keys, not one read (and one of the pool's connections) per site.
type keyReads[V any] struct {
	read    func(ctx context.Context, keys []string) (map[string]V, error)
	mu      sync.Mutex
	next    *keyRead[V] // the read the callers since the last began wait for
	reading bool
}

// keyRead is one query of keyReads: its keys, and once done is closed,
// the values it found (a key without one is not in got) or err.
type keyRead[V any] struct {
	keys []string
	done chan struct{}
	got  map[string]V
	err  error
}

// get returns the value read for key, and whether there is one, read with
// the keys other callers ask for at the same time.
func (kr *keyReads[V]) get(ctx context.Context, key string) (V, bool, error) {
	got, err := kr.getAll(ctx, key)
	v, ok := got[key]
	return v, ok, err
}

// getAll is get for several keys, read in the same query: the values found
// (a key without one is not in the map, which the caller must not change).
func (kr *keyReads[V]) getAll(ctx context.Context, keys ...string) (map[string]V, error) {
	kr.mu.Lock()
	if kr.next == nil {
		kr.next = &keyRead[V]{done: make(chan struct{})}
	}
	r := kr.next
	r.keys = append(r.keys, keys...)
	if !kr.reading {
		kr.reading, kr.next = true, nil
		go kr.run(r)
	}
	kr.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.got, nil
}

// run runs the read r, and then the one the callers that came meanwhile
// wait for, until none is waiting.
func (kr *keyReads[V]) run(r *keyRead[V]) {
	for r != nil {
		// (Shared by callers whose contexts differ: bounded by its own.)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r.got, r.err = kr.read(ctx, r.keys)
		cancel()
		close(r.done)
		kr.mu.Lock()
		r, kr.next = kr.next, nil
		kr.reading = r != nil
		kr.mu.Unlock()
	}
}
