package mailbot_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/imaptest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/mailbot"
)

const (
	testUser     = "bot@test"
	testPassword = "secret"
)

// memIMAP is the in-memory test server (package imaptest).
type memIMAP struct{ *imaptest.Server }

func startMemIMAP(t *testing.T, caps imap.CapSet) *memIMAP {
	t.Helper()
	return startMemIMAPOpts(t, caps, false)
}

// startMemIMAPOpts starts a server; noIdle hides IDLE, so the client polls.
func startMemIMAPOpts(t *testing.T, caps imap.CapSet, noIdle bool) *memIMAP {
	t.Helper()
	return &memIMAP{imaptest.Start(t, &imaptest.Options{Caps: caps, NoIdle: noIdle, User: testUser, Password: testPassword})}
}

func (m *memIMAP) stop()                               { m.Stop() }
func (m *memIMAP) start(t *testing.T)                  { m.Restart(t) }
func (m *memIMAP) deliver(t *testing.T, raw []byte)    { m.Deliver(t, raw) }
func (m *memIMAP) count(t *testing.T, mbox string) int { return m.Count(mbox) }

func (m *memIMAP) endpoint(t *testing.T) mailbot.Endpoint {
	host, port, _ := net.SplitHostPort(m.Addr)
	p, _ := strconv.Atoi(port)
	return mailbot.Endpoint{Security: mailbot.SecurityStartTLS, Host: host, Port: p, Username: testUser, Mailbox: "INBOX"}
}

// events collects what a Watcher reports.
type events struct {
	mu     sync.Mutex
	msgs   []mailbot.WatchEvent
	states []bool
	conn   chan bool
}

func newEvents() *events { return &events{conn: make(chan bool, 100)} }

func (e *events) options(o *mailbot.WatchOptions) *mailbot.WatchOptions {
	o.OnMessage = func(ev mailbot.WatchEvent) {
		e.mu.Lock()
		e.msgs = append(e.msgs, ev)
		e.mu.Unlock()
	}
	o.OnState = func(st mailbot.WatchState) {
		e.mu.Lock()
		e.states = append(e.states, st.Connected)
		e.mu.Unlock()
		e.conn <- st.Connected
	}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	return o
}

func (e *events) waitConnected(t *testing.T, want bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case c := <-e.conn:
			if c == want {
				return
			}
		case <-timeout:
			t.Fatalf("watcher never reported connected = %v", want)
		}
	}
}

func (e *events) messages() []mailbot.WatchEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]mailbot.WatchEvent(nil), e.msgs...)
}

// waitExcluded polls the database until site is excluded.
func waitExcluded(t *testing.T, store *db.Store, site string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	testutil.Eventually(t, within, site+" excluded", func() bool {
		var n int64
		if err := dbtest.Gorm(store).Model(&db.Exclusion{}).Where("site = ?", site).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	return time.Since(start)
}

// waitWaiting waits until the watcher on fc waits: in IDLE (its timer
// starts once the server has acknowledged the IDLE), between two polls, or
// before reconnecting. The in-memory server does not report mail that
// arrives between the last command and IDLE (Dovecot does), so a test
// delivers only once the watcher waits.
func waitWaiting(t *testing.T, fc *clocktest.Clock) {
	t.Helper()
	fc.WaitTimers(t, 1)
}

// waitEmpty waits until the watcher has moved every message out of the
// INBOX (the move follows the commit).
func waitEmpty(t *testing.T, srv *memIMAP) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "an empty INBOX", func() bool { return srv.count(t, "INBOX") == 0 })
}

var (
	capsRev2 = imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}} // IDLE, MOVE, UIDPLUS
	capsRev1 = imap.CapSet{imap.CapIMAP4rev1: {}}                        // none of them
)

func TestWatchOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps imap.CapSet
	}{{"IMAP4rev2", capsRev2}, {"IMAP4rev1 without MOVE", capsRev1}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startMemIMAP(t, tc.caps)
			for _, f := range testFiles {
				srv.deliver(t, readTestdata(t, f))
			}
			srv.deliver(t, readTestdata(t, "exclude-one.eml")) // the same message twice
			proc, pol, store := newSQLiteProcessor(t)
			ev := newEvents()
			w := mailbot.NewWatcher(proc, ev.options(&mailbot.WatchOptions{
				Endpoint: srv.endpoint(t), Password: testPassword, Insecure: true, Once: true,
				ProcessedFolder: "Done",
			}))
			if err := w.Run(context.Background()); err != nil {
				t.Fatalf("Run(once) = %v", err)
			}
			counts := map[string]int{"INBOX": srv.count(t, "INBOX"), "Done": srv.count(t, "Done"), "Review": srv.count(t, "Review")}
			if diff := cmp.Diff(map[string]int{"INBOX": 0, "Done": 5, "Review": 3}, counts); diff != "" {
				t.Errorf("mailbox counts (-want +got):\n%s", diff)
			}
			want := []string{"bakery-example.com", "garden-example.org", "oldschool-example.com", "toys-example.co.uk"}
			if diff := cmp.Diff(want, excludedSites(t, pol)); diff != "" {
				t.Errorf("exclusions (-want +got):\n%s", diff)
			}
			if n := countRows(t, store, &db.MailMessage{}, ""); n != 7 {
				t.Errorf("stored messages = %d, want 7", n)
			}
			msgs := ev.messages()
			dups := 0
			for _, m := range msgs {
				if m.Result.Duplicate {
					dups++
				}
				if m.Delivered.IsZero() {
					t.Errorf("event for uid %d has no delivery time", m.UID)
				}
			}
			if len(msgs) != 8 || dups != 1 {
				t.Errorf("events = %d with %d duplicates, want 8 with 1", len(msgs), dups)
			}
			if st := w.State(); st.Connected || st.Processed != 8 {
				t.Errorf("State() after Run = %+v, want disconnected, 8 processed", st)
			}

			// A second run finds nothing to do.
			if err := w.Run(context.Background()); err != nil {
				t.Fatalf("second Run(once) = %v", err)
			}
			if n := len(ev.messages()); n != 8 {
				t.Errorf("events after a second run = %d, want 8", n)
			}
		})
	}
}

func TestWatchBackground(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps imap.CapSet
		idle bool
	}{{"IDLE", capsRev2, true}, {"polling", capsRev1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startMemIMAPOpts(t, tc.caps, !tc.idle)
			proc, _, store := newSQLiteProcessor(t)
			ev := newEvents()
			wire := &testutil.Buffer{}
			fc := clocktest.New(time.Time{})
			w := mailbot.NewWatcher(proc, ev.options(&mailbot.WatchOptions{
				Endpoint: srv.endpoint(t), Password: testPassword, Insecure: true,
				DebugWriter: wire, Clock: fc,
			}))
			// With IDLE, the server's notice alone wakes the watcher (the
			// fake time stands still); polling, the next poll does.
			wake := func() {
				if !tc.idle {
					if d, ok := fc.AdvanceToNext(); !ok || d != mailbot.DefaultPollInterval {
						t.Errorf("the watcher waits %v (%v) between polls, want %v", d, ok, mailbot.DefaultPollInterval)
					}
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			ev.waitConnected(t, true)
			if st := w.State(); !st.Connected || !st.Since.Equal(fc.Now()) {
				t.Errorf("State() = %+v after the connected event, want connected since %v (the fake clock)", st, fc.Now())
			}

			waitWaiting(t, fc)
			srv.deliver(t, readTestdata(t, "exclude-one.eml"))
			wake()
			took := waitExcluded(t, store, "bakery-example.com", 10*time.Second)
			t.Logf("time to exclusion (%s): %v", tc.name, took)
			// The in-memory server loses track of a mailbox when a message
			// arrives during a MOVE ("* 0 EXPUNGE"); Dovecot does not.
			waitEmpty(t, srv)
			waitWaiting(t, fc)
			srv.deliver(t, readTestdata(t, "other.eml"))
			wake()
			testutil.Eventually(t, 10*time.Second, "the message in Review", func() bool { return srv.count(t, "Review") == 1 })

			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run after cancel = %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
			if w.State().Connected {
				t.Errorf("State().Connected = true after Run returned")
			}
			// Stopping logs out of the server; it does not just hang up.
			if !strings.Contains(wire.String(), " LOGOUT\r\n") {
				t.Errorf("the watcher did not send LOGOUT when stopped")
			}
			if idled := strings.Contains(wire.String(), " IDLE\r\n"); idled != tc.idle {
				t.Errorf("the watcher sent IDLE: %v, want %v", idled, tc.idle)
			}
		})
	}
}

// The server goes away mid-watch and comes back: the watcher reconnects,
// nothing is lost and nothing is applied twice.
func TestWatchReconnect(t *testing.T) {
	srv := startMemIMAP(t, capsRev2)
	proc, _, store := newSQLiteProcessor(t)
	ev := newEvents()
	fc := clocktest.New(time.Time{})
	w := mailbot.NewWatcher(proc, ev.options(&mailbot.WatchOptions{
		Endpoint: srv.endpoint(t), Password: testPassword, Insecure: true,
		MinBackoff: 20 * time.Second, MaxBackoff: 200 * time.Second, Clock: fc,
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	ev.waitConnected(t, true)
	waitWaiting(t, fc)
	srv.deliver(t, readTestdata(t, "exclude-one.eml"))
	waitExcluded(t, store, "bakery-example.com", 10*time.Second)
	waitEmpty(t, srv)

	srv.stop()
	ev.waitConnected(t, false)
	srv.deliver(t, readTestdata(t, "exclude-two.eml")) // arrives while the watcher is away
	// Five failed reconnects, each after a backoff twice the last, up to
	// MaxBackoff; then the server is back and the sixth succeeds. The
	// server starts only once the fifth has failed (the watcher waits).
	for i, want := range []time.Duration{20, 40, 80, 160, 200, 200} {
		waitWaiting(t, fc)
		if i == 5 {
			srv.start(t)
		}
		if d, _ := fc.AdvanceToNext(); d != want*time.Second {
			t.Errorf("backoff %d = %v, want %v", i+1, d, want*time.Second)
		}
	}
	ev.waitConnected(t, true)
	waitExcluded(t, store, "garden-example.org", 10*time.Second)
	waitEmpty(t, srv)

	cancel()
	<-done
	if n := countRows(t, store, &db.MailMessage{}, ""); n != 2 {
		t.Errorf("stored messages = %d, want 2", n)
	}
	if n := countRows(t, store, &db.PolicyEvent{}, ""); n != 3 {
		t.Errorf("policy events = %d, want 3 (one per site)", n)
	}
	if in, done := srv.count(t, "INBOX"), srv.count(t, "Processed"); in != 0 || done != 2 {
		t.Errorf("INBOX %d, Processed %d; want 0, 2", in, done)
	}
	for _, m := range ev.messages() {
		if m.Result.Duplicate {
			t.Errorf("message %s applied twice", m.Result.MessageID)
		}
	}
}

// When the database cannot store a message, the message stays in the
// mailbox: the commit comes before the move.
func TestWatchDatabaseDown(t *testing.T) {
	srv := startMemIMAP(t, capsRev2)
	srv.deliver(t, readTestdata(t, "exclude-one.eml"))
	proc, _, store := newSQLiteProcessor(t)
	store.Close()
	w := mailbot.NewWatcher(proc, &mailbot.WatchOptions{
		Endpoint: srv.endpoint(t), Password: testPassword, Insecure: true, Once: true, Logger: quietLogger(),
	})
	if err := w.Run(context.Background()); err == nil {
		t.Errorf("Run(once) with the database down = nil, want an error")
	}
	if n := srv.count(t, "INBOX"); n != 1 {
		t.Errorf("INBOX holds %d messages, want 1 (not moved)", n)
	}
	if n := srv.count(t, "Processed"); n != 0 {
		t.Errorf("Processed holds %d messages, want 0", n)
	}
}

func TestWatchLoginFailure(t *testing.T) {
	srv := startMemIMAP(t, capsRev2)
	proc, _, _ := newSQLiteProcessor(t)
	w := mailbot.NewWatcher(proc, &mailbot.WatchOptions{
		Endpoint: srv.endpoint(t), Password: "wrong", Insecure: true, Once: true, Logger: quietLogger(),
	})
	err := w.Run(context.Background())
	if err == nil {
		t.Fatal("Run with a wrong password = nil, want an error")
	}
	if st := w.State(); st.Connected || st.LastError == "" {
		t.Errorf("State() = %+v, want disconnected with the error", st)
	}
}

// Without --insecure, a plaintext server is refused (STARTTLS is required).
func TestWatchRequiresTLS(t *testing.T) {
	srv := startMemIMAP(t, capsRev2)
	proc, _, _ := newSQLiteProcessor(t)
	w := mailbot.NewWatcher(proc, &mailbot.WatchOptions{
		Endpoint: srv.endpoint(t), Password: testPassword, Once: true, Logger: quietLogger(),
	})
	if err := w.Run(context.Background()); err == nil {
		t.Fatal("Run over plaintext without Insecure = nil, want an error")
	}
}
