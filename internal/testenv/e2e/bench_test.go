package e2e_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/clocktest"
	"github.com/lohisoft/lohibot/internal/testenv/dovecottest"
	"github.com/lohisoft/lohibot/internal/testenv/imaptest"
	"github.com/lohisoft/lohibot/internal/testenv/smtptest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/mailbot/reply"
	"github.com/lohisoft/lohibot/policy"
)

// exclusionMail is a plain exclusion request for site.
func exclusionMail(site string, n int) []byte {
	return []byte(fmt.Sprintf("Authentication-Results: mx.lohibot.test; dkim=pass header.d=%s\r\n"+
		"From: Webmaster <webmaster@%s>\r\nTo: message@lohisoft.com\r\n"+
		"Subject: Please stop crawling %s\r\nMessage-ID: <tte-%d-%d@%s>\r\nDate: %s\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"+
		"Hello,\r\n\r\nplease stop crawling %s and remove it from your crawl list.\r\n\r\nThanks\r\n",
		site, site, site, n, time.Now().UnixNano(), site, time.Now().Format(time.RFC1123Z), site))
}

// BenchmarkTimeToExclusion measures the time from the moment the mail
// server has accepted an exclusion email to the commit of the exclusion in
// the database, with the watcher waiting in IMAP IDLE (under 2 s
// with Dovecot). Each op is one email, delivered once the watcher is idle;
// s/exclusion is the median and max-s/exclusion the slowest.
//
//	LOHIBOT_TEST_DOVECOT=1 go test -run '^$' -bench TimeToExclusion -benchtime 5x ./internal/testenv/e2e
func BenchmarkTimeToExclusion(b *testing.B) {
	b.Run("dovecot", func(b *testing.B) {
		srv := dovecottest.Start(b) // skips without LOHIBOT_TEST_DOVECOT
		ep, err := mailbot.ParseIMAPURL(srv.URL(false))
		if err != nil {
			b.Fatal(err)
		}
		benchTimeToExclusion(b, *ep, dovecottest.Password, func(raw []byte) { srv.Deliver(raw, "") }, nil)
	})
	// The same with acknowledgements on: every exclusion is answered by
	// email through an SMTP server, beside the watcher.
	b.Run("dovecot-acks", func(b *testing.B) {
		srv := dovecottest.Start(b)
		ep, err := mailbot.ParseIMAPURL(srv.URL(false))
		if err != nil {
			b.Fatal(err)
		}
		smtpSrv := smtptest.New(b, "", "")
		benchTimeToExclusion(b, *ep, dovecottest.Password, func(raw []byte) { srv.Deliver(raw, "") }, smtpSrv)
	})
	b.Run("in-process", func(b *testing.B) {
		srv := imaptest.Start(b, nil)
		host, port, _ := net.SplitHostPort(srv.Addr)
		p, _ := strconv.Atoi(port)
		ep := mailbot.Endpoint{Security: mailbot.SecurityStartTLS, Host: host, Port: p, Username: "bot@test", Mailbox: "INBOX"}
		benchTimeToExclusion(b, ep, "secret", func(raw []byte) { srv.Deliver(b, raw) }, nil)
	})
}

func benchTimeToExclusion(b *testing.B, ep mailbot.Endpoint, password string, deliver func([]byte), smtpSrv *smtptest.Server) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(b.TempDir(), "lohibot.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	events := make(chan mailbot.WatchEvent, 16)
	quiet := slog.New(slog.DiscardHandler)
	var replies *reply.Replier
	if smtpSrv != nil {
		m, err := reply.ParseSMTPURL("smtp://" + smtpSrv.Addr)
		if err != nil {
			b.Fatal(err)
		}
		m.Insecure = true
		replies = reply.New(store, &reply.Options{Sender: m, Logger: quiet, MaxPerDay: 1 << 30})
		rctx, stop := context.WithCancel(ctx)
		rdone := make(chan struct{})
		go func() { _ = replies.Run(rctx); close(rdone) }()
		defer func() { stop(); <-rdone }()
	}
	// On a fake clock, a pending timer says the watcher waits in IDLE.
	fc := clocktest.New(time.Time{})
	w := mailbot.NewWatcher(mailbot.New(policy.New(store, nil), &mailbot.Options{Logger: quiet, Replies: replies,
		AuthservID: "mx.lohibot.test"}), &mailbot.WatchOptions{
		Endpoint: ep, Password: password, Insecure: true, Logger: quiet, Clock: fc,
		OnMessage: func(ev mailbot.WatchEvent) { events <- ev },
		OnState:   func(mailbot.WatchState) {},
	})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() {
		cancel()
		<-done
	}()
	testutil.Eventually(b, 10*time.Second, "the watcher to connect", func() bool { return w.State().Connected })
	var took []time.Duration
	n := 0
	b.ResetTimer()
	for b.Loop() {
		n++
		site := fmt.Sprintf("tte%d-example.com", n)
		// Deliver once the watcher waits in IDLE again, so that each
		// email measures the IDLE path.
		b.StopTimer()
		fc.WaitTimers(b, 1)
		b.StartTimer()
		deliver(exclusionMail(site, n))
		accepted := time.Now()
		select {
		case ev := <-events:
			if ev.Result == nil || ev.Result.Outcome != mailbot.OutcomeExcluded || !slices.Contains(ev.Result.Excluded, site) {
				b.Fatalf("email for %s: result %+v, want its exclusion", site, ev.Result)
			}
			took = append(took, ev.Result.Committed.Sub(accepted))
		case <-time.After(20 * time.Second):
			b.Fatalf("email for %s not applied within 20 s", site)
		}
	}
	b.StopTimer()
	if smtpSrv != nil {
		// Every exclusion was acknowledged.
		testutil.Eventually(b, 10*time.Second, fmt.Sprintf("%d acknowledgements", n), func() bool { return len(smtpSrv.Messages()) >= n })
	}
	slices.Sort(took)
	if len(took) > 0 {
		b.ReportMetric(took[len(took)/2].Seconds(), "s/exclusion")
		b.ReportMetric(took[len(took)-1].Seconds(), "max-s/exclusion")
	}
}
