package mailbot_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dovecottest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/mailbot"
)

// Integration tests against a real Dovecot (skipped unless
// LOHIBOT_TEST_DOVECOT is set).

func dovecotWatcher(t *testing.T, srv *dovecottest.Server, tls bool, proc *mailbot.Processor, ev *events, o mailbot.WatchOptions) *mailbot.Watcher {
	t.Helper()
	ep, err := mailbot.ParseIMAPURL(srv.URL(tls))
	if err != nil {
		t.Fatal(err)
	}
	o.Endpoint = *ep
	o.Password = dovecottest.Password
	o.Insecure = true // self-signed certificate
	return mailbot.NewWatcher(proc, ev.options(&o))
}

func TestDovecotWatchOnce(t *testing.T) {
	srv := dovecottest.Start(t)
	for _, f := range testFiles {
		srv.Deliver(readTestdata(t, f), "")
	}
	srv.Deliver(readTestdata(t, "exclude-one.eml"), "") // the same message twice
	for _, tls := range []bool{true, false} {
		proc, pol, store := newSQLiteProcessor(t)
		ev := newEvents()
		w := dovecotWatcher(t, srv, tls, proc, ev, mailbot.WatchOptions{Once: true})
		if err := w.Run(context.Background()); err != nil {
			t.Fatalf("Run(once, tls %v) = %v", tls, err)
		}
		if !tls {
			// The first run moved everything; the second finds nothing.
			if n := len(ev.messages()); n != 0 {
				t.Errorf("second run handled %d messages, want 0", n)
			}
			continue
		}
		counts := map[string]int{"INBOX": srv.Count("INBOX"), "Processed": srv.Count("Processed"), "Review": srv.Count("Review")}
		if diff := cmp.Diff(map[string]int{"INBOX": 0, "Processed": 5, "Review": 3}, counts); diff != "" {
			t.Errorf("mailbox counts (-want +got):\n%s", diff)
		}
		want := []string{"bakery-example.com", "garden-example.org", "oldschool-example.com", "toys-example.co.uk"}
		if diff := cmp.Diff(want, excludedSites(t, pol)); diff != "" {
			t.Errorf("exclusions (-want +got):\n%s", diff)
		}
		if n := countRows(t, store, &db.MailMessage{}, ""); n != 7 {
			t.Errorf("stored messages = %d, want 7", n)
		}
	}
}

// A new exclusion delivered while the watcher idles is applied at once.
// The time from the start of delivery to the exclusion row is logged; only
// a generous bound is asserted.
func TestDovecotTimeToExclusion(t *testing.T) {
	srv := dovecottest.Start(t)
	proc, _, store := newSQLiteProcessor(t)
	ev := newEvents()
	fc := clocktest.New(time.Time{})
	w := dovecotWatcher(t, srv, false, proc, ev, mailbot.WatchOptions{Clock: fc})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	ev.waitConnected(t, true)
	waitWaiting(t, fc) // in IDLE

	var took []time.Duration
	for i := range 5 {
		site := "tte" + string(rune('a'+i)) + "-example.com"
		start := time.Now()
		srv.Deliver(testMessage(site+"@tte", "exclude", site), "")
		waitExcluded(t, store, site, 10*time.Second)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("time to exclusion with IDLE over 5 deliveries: min %v, median %v, max %v", took[0], took[2], took[4])
	if took[4] > 10*time.Second {
		t.Errorf("time to exclusion %v, want under 10 s", took[4])
	}
}

// Dovecot stops in the middle of a watch and starts again: the watcher
// reconnects; nothing is lost, nothing is applied twice.
func TestDovecotRestart(t *testing.T) {
	srv := dovecottest.Start(t)
	proc, _, store := newSQLiteProcessor(t)
	ev := newEvents()
	fc := clocktest.New(time.Time{})
	w := dovecotWatcher(t, srv, true, proc, ev, mailbot.WatchOptions{Clock: fc})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	ev.waitConnected(t, true)
	srv.Deliver(readTestdata(t, "exclude-one.eml"), "")
	waitExcluded(t, store, "bakery-example.com", 10*time.Second)

	srv.Stop()
	ev.waitConnected(t, false)
	srv.Deliver(readTestdata(t, "exclude-two.eml"), "") // while Dovecot is down
	srv.Deliver(readTestdata(t, "other.eml"), "")
	// Three failed reconnects; Dovecot starts while the watcher waits
	// before the fourth, which succeeds.
	for range 3 {
		waitWaiting(t, fc)
		fc.AdvanceToNext()
	}
	waitWaiting(t, fc)
	srv.Start()
	fc.AdvanceToNext()
	ev.waitConnected(t, true)
	waitExcluded(t, store, "garden-example.org", 10*time.Second)
	srv.Deliver(readTestdata(t, "no-message-id.eml"), "") // after the restart
	waitExcluded(t, store, "oldschool-example.com", 10*time.Second)
	// A message applied before (say the watcher crashed between the commit
	// and the move) is moved without being applied again.
	srv.Deliver(readTestdata(t, "exclude-one.eml"), "")
	testutil.Eventually(t, 10*time.Second, "an empty INBOX", func() bool { return srv.Count("INBOX") == 0 })

	if n := countRows(t, store, &db.MailMessage{}, ""); n != 4 {
		t.Errorf("stored messages = %d, want 4", n)
	}
	if n := countRows(t, store, &db.PolicyEvent{}, ""); n != 4 {
		t.Errorf("policy events = %d, want 4 (one per site, none repeated)", n)
	}
	counts := map[string]int{"INBOX": srv.Count("INBOX"), "Processed": srv.Count("Processed"), "Review": srv.Count("Review")}
	if diff := cmp.Diff(map[string]int{"INBOX": 0, "Processed": 4, "Review": 1}, counts); diff != "" {
		t.Errorf("mailbox counts (-want +got):\n%s", diff)
	}
	dups := 0
	for _, m := range ev.messages() {
		if m.Result.Duplicate {
			dups++
		}
	}
	if dups != 1 {
		t.Errorf("duplicates = %d, want 1 (the redelivered message)", dups)
	}
}
