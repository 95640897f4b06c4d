package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lohisoft/lohibot/internal/redact"
)

// Waiting out a database that is unreachable for a moment (a PostgreSQL
// server restarted, a failover): Store.Retry.
const (
	// RetryBudget is how long the database may stay unreachable before
	// Store.Retry gives up: long enough for a restart or a failover, short
	// enough that a crawl that cannot go on says so within a minute or two.
	RetryBudget = 60 * time.Second
)

// ErrUnavailable is wrapped (in an *UnavailableError) by Store.Retry's
// error when the database stayed unreachable for RetryBudget.
var ErrUnavailable = errors.New("db: database unreachable")

// UnavailableError says that the database stayed unreachable for For, and
// the last error that said so. Its message is a sentence a person reads.
type UnavailableError struct {
	For time.Duration
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("the database has been unreachable for %s, so lohibot gave up (%s)", e.For.Round(time.Second), redact.Error(e.Err))
}

// Unwrap returns the last error.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Transient reports whether err says the database could not be reached or
// its connection was lost (PostgreSQL's SQLSTATE class 08, 57P01-57P03, a
// connection refused or reset, a connection closed under a query), so that
// the same work may succeed once the server is back. A refusal, a
// constraint, a full disk or a cancelled ctx is not transient. When the
// connection was lost during a commit, the commit's outcome is unknown:
// the caller must find out whether it landed before it runs the work again
// (work that is not idempotent).
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed), errors.As(err, &ne):
		return true
	}
	// pgx says so in words when a connection closed under it.
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF")
}

// outage is a Store's record of the database being unreachable, shared by
// every caller of Store.Retry: one prober watches for the database's
// return and wakes them all, and they give up together.
type outage struct {
	mu    sync.Mutex    // guards since, back, stop
	since time.Time     // when the first caller found the database unreachable; zero while reachable
	back  chan struct{} // closed when the database answers again; nil while reachable
	stop  chan struct{} // closed by Store.Close: probers end
	down  atomic.Bool   // since is set: the fast path of a success reads only this

	probers sync.WaitGroup // the probers running (probe)
	waiting atomic.Int64   // callers of Retry waiting for the database
	retries atomic.Int64
	log     atomic.Pointer[slog.Logger]
	gaveUp  atomic.Pointer[UnavailableError] // Retry's last giving up, until the database answers again
	budget  atomic.Int64                     // SetRetryBudget's, in nanoseconds; 0: RetryBudget
}

// SetRetryBudget sets how long Store.Retry waits for an unreachable
// database before it gives up; zero or less means RetryBudget.
func (s *Store) SetRetryBudget(d time.Duration) { s.outage.budget.Store(int64(max(d, 0))) }

// retryBudget is how long Retry waits in all.
func (s *Store) retryBudget() time.Duration {
	if d := time.Duration(s.outage.budget.Load()); d > 0 {
		return d
	}
	return RetryBudget
}

// SetRetryLog makes Store.Retry log to l when the database becomes
// unreachable and when it is back (nil: slog.Default()).
func (s *Store) SetRetryLog(l *slog.Logger) { s.outage.log.Store(l) }

// GaveUp returns the *UnavailableError of the last time Store.Retry gave up,
// unless the database has answered since; nil otherwise.
func (s *Store) GaveUp() error {
	if e := s.outage.gaveUp.Load(); e != nil {
		return e
	}
	return nil
}

// Retries returns how many times Store.Retry ran work again because the
// database was unreachable, since the store was opened.
func (s *Store) Retries() int64 { return s.outage.retries.Load() }

func (s *Store) retryLog() *slog.Logger {
	if l := s.outage.log.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Retry runs f, and runs it again while it fails with a Transient error,
// until f succeeds, fails otherwise, ctx ends, or the database has been
// unreachable for RetryBudget (or SetRetryBudget's): then it returns an
// *UnavailableError. Meanwhile one prober of the store pings the database,
// 100 ms after the first failure and then twice as long each time up to
// 500 ms, and every caller waiting runs its f again as soon as a ping is
// answered: a database back from a restart is found within half a second,
// and an unreachable one costs the server two connection attempts a
// second, however many callers wait. The time the database has been unreachable
// is the store's, so once one caller gave up, the others give up at their
// next failure; and none runs its f again after RetryBudget, even while
// the database answers pings. The waits are on the system's clock (an outage is real
// time). f must be safe to run again after a failure: when its failure
// was a lost commit, f finds out whether the commit landed. Retry is safe
// for concurrent use; it blocks while it waits.
func (s *Store) Retry(ctx context.Context, f func() error) error {
	var first time.Time // f's first failure
	for {
		err := f()
		if err == nil {
			s.reachable()
			return nil
		}
		if !Transient(err) || ctx.Err() != nil {
			return err
		}
		if first.IsZero() {
			first = time.Now()
		}
		down, budget, back := s.unreachable(err)
		// (However the database answers pings, f is not run past the
		// budget.)
		down = max(down, time.Since(first))
		if down >= budget {
			e := &UnavailableError{For: down, Err: err}
			if s.outage.gaveUp.Swap(e) == nil {
				s.retryLog().Error("database unreachable for too long: giving up", "was_down", down.Round(time.Millisecond), "err", redact.Error(err))
			}
			return e
		}
		s.outage.waiting.Add(1)
		t := time.NewTimer(budget - down)
		select {
		case <-ctx.Done():
			t.Stop()
			s.outage.waiting.Add(-1)
			return err
		case <-back:
			t.Stop()
		case <-t.C:
		}
		s.outage.waiting.Add(-1)
		s.outage.retries.Add(1)
	}
}

// The prober's pings: the wait before the first, the longest wait between
// two (a database back is found within it), and how long one may take.
const (
	probeFirst   = 100 * time.Millisecond
	probeMax     = 500 * time.Millisecond
	probeTimeout = 2 * time.Second
)

// unreachable notes that the database was found unreachable (err), and
// returns for how long it has been, the budget of the wait, and the
// channel closed when it answers again. The first caller of an outage
// starts the prober.
func (s *Store) unreachable(err error) (time.Duration, time.Duration, <-chan struct{}) {
	o := &s.outage
	o.mu.Lock()
	defer o.mu.Unlock()
	now, budget := time.Now(), s.retryBudget()
	if o.since.IsZero() {
		o.since, o.back = now, make(chan struct{})
		o.down.Store(true)
		s.retryLog().Warn("database unreachable: retrying with backoff", "for_at_most", budget, "err", redact.Error(err))
		if o.stop == nil {
			o.stop = make(chan struct{})
		}
		o.probers.Add(1)
		go s.probe(o.stop, now.Add(budget))
	}
	return now.Sub(o.since), budget, o.back
}

// probe pings the database with backoff until it answers (then it wakes
// the callers waiting: reachable), until the wait's budget is spent, or
// until stop is closed.
func (s *Store) probe(stop <-chan struct{}, until time.Time) {
	defer s.outage.probers.Done()
	wait := probeFirst
	for {
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		// The idle connections are dropped first: made before the
		// outage, each would fail once at its next use (a server
		// restarted ended them), and the ping would answer for one.
		s.pool.SetMaxIdleConns(0)
		s.pool.SetMaxIdleConns(s.idle)
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		err := s.pool.PingContext(ctx)
		cancel()
		if err == nil {
			s.reachable()
			return
		}
		if time.Now().After(until) {
			return
		}
		wait = min(2*wait, probeMax)
	}
}

// reachable notes that the database answered, and wakes the callers
// waiting for it.
func (s *Store) reachable() {
	o := &s.outage
	if !o.down.Load() && o.gaveUp.Load() == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gaveUp.Store(nil)
	o.down.Store(false)
	if !o.since.IsZero() {
		s.retryLog().Warn("database reachable again: going on", "was_down", time.Since(o.since).Round(time.Millisecond), "waiting", o.waiting.Load())
		close(o.back)
		o.since, o.back = time.Time{}, nil
	}
}

// stopProbes ends the probers and waits for them (Store.Close).
func (s *Store) stopProbes() {
	o := &s.outage
	o.mu.Lock()
	if o.stop == nil {
		o.stop = make(chan struct{})
	}
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	o.mu.Unlock()
	o.probers.Wait()
}
