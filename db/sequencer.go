package db

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// DefaultSealEvery is how often a background sealer appends to the
// transparency log (AppendLog).
const DefaultSealEvery = 5 * time.Second

// sealer is a Store's background sealer: the sequencer of the
// transparency log in this process.
type sealer struct {
	mu     sync.Mutex // guards cancel, done and kick
	cancel context.CancelFunc
	done   chan struct{}
	kick   chan struct{}
	log    *slog.Logger
}

// StartSealer starts appending the final records to the transparency log
// (AppendLog) in the background: every interval (zero means
// DefaultSealEvery), whenever SealSoon asks (at most every minSealGap, or
// once an interval if shorter), and a last time when Close is called. A
// process that writes evidence starts one, so its rows are leaves within
// seconds and at the latest when it stops. On PostgreSQL a turn that finds
// another process sealing does not wait for it: it comes back a gap later
// (the last seal, when it stops, does wait). Failures are logged to log
// (nil means slog.Default()) and retried at the next turn. Calling it again
// does nothing. It is safe for concurrent use.
func (s *Store) StartSealer(interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultSealEvery
	}
	if log == nil {
		log = slog.Default()
	}
	z := &s.sealer
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, kick := make(chan struct{}), make(chan struct{}, 1)
	z.cancel, z.done, z.kick, z.log = cancel, done, kick, log
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		again := false
		for {
			if !again {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				case <-kick:
				}
			}
			// A turn that finds another process's Seal at work (a
			// fleet's crawlers each run a sealer) leaves the rows to it
			// and comes back after the gap, rather than wait for it
			// holding a connection of the pool: its rows are sealed by
			// the one or the other. In BenchmarkCrawlFleet's crawl by
			// two crawlers, their sealers waited for each other 14
			// times, 55 ms each on average (pg_stat_statements), each
			// time with one of the pool's three connections.
			_, ran, err := s.appendLog(ctx, false)
			if err != nil && ctx.Err() == nil {
				log.Warn("appending the records to the transparency log failed; retrying later", "err", err)
			}
			again = err == nil && !ran
			// A kick that comes meanwhile waits for the gap (kicks
			// coalesce into one): the cycles of a crawl end together,
			// and a seal per cycle's end wrote a block each.
			select {
			case <-ctx.Done():
				return
			case <-time.After(min(interval, minSealGap)):
			}
		}
	}()
}

// minSealGap is the least time between two seals of a background sealer.
// A crawl's cycles end together, over the last moments of the crawl: the
// shorter the gap, the fewer rows its last seal (StopSealer) has left to
// seal when the crawl ends, and the less another crawler of a fleet waits
// for the sealers' lock before sealing its own.
const minSealGap = 250 * time.Millisecond

// SealSoon asks the background sealer, if one runs, to append now (at the end
// of a crawl cycle, say). It never blocks.
func (s *Store) SealSoon() {
	z := &s.sealer
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.kick == nil {
		return
	}
	select {
	case z.kick <- struct{}{}:
	default:
	}
}

// StopSealer stops the background sealer and appends a last time, at once
// rather than when the store is closed (which then has nothing left to
// seal). A command calls it once the evidence it writes is final, so that
// the last seal runs while it closes the rest (a crawler's connections
// and leases) rather than after. Rows written after it are sealed by the
// next process that seals. Close calls it too. Calling it again does
// nothing.
func (s *Store) StopSealer() {
	z := &s.sealer
	z.mu.Lock()
	cancel, done, log := z.cancel, z.done, z.log
	z.cancel, z.done, z.kick = nil, nil, nil
	z.mu.Unlock()
	if done == nil {
		return
	}
	cancel()
	<-done
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if _, err := s.AppendLog(ctx); err != nil {
		log.Warn("appending the records to the transparency log failed at exit; the next process appends them", "err", err)
	}
}

// openSealWriter opens the connection an append to the log is written
// with on SQLite: a fast-path connection to the database file, which keeps
// its statements prepared and binds their arguments cheaply. On SQLite the
// append's write transaction holds the database's one write lock, which a
// running crawl's writer waits for. It returns nil when the store is
// PostgreSQL or not a file.
func (s *Store) openSealWriter(ctx context.Context) (*FastConn, error) {
	if s.Dialect == Postgres {
		return nil, nil
	}
	path, err := s.SQLiteFile(ctx)
	if err != nil {
		return nil, nil // not a file: the pool writes it
	}
	return OpenFastConn(path, FastOptions{})
}

// sealWriter is who writes the appends of AppendLog (see SealVia).
type sealWriter struct {
	write func(ctx context.Context, f func(tx WriteTx) error) error
}

// SealVia has AppendLog write its appends on SQLite with write, which runs
// f in a write transaction and commits it (a crawler's writer, which
// commits the work of many callers together), until the returned func is
// called. On SQLite an append holds the database's one write lock; written
// on a connection of its own, with thousands of goroutines of a crawl
// taking the CPU from it, it would hold the lock (and every request of the
// crawl) for tens of milliseconds, where the writer writes it in its turn. The last call wins; the returned func undoes only its own call.
func (s *Store) SealVia(write func(ctx context.Context, f func(tx WriteTx) error) error) (undo func()) {
	w := &sealWriter{write: write}
	s.sealVia.Store(w)
	return func() { s.sealVia.CompareAndSwap(w, nil) }
}
