package reply_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/smtptest"
	"github.com/lohisoft/lohibot/mailbot/reply"
)

const baseHeader = "From: Rossi <m.rossi@forno-example.it>\r\n" +
	"To: message@lohisoft.com\r\n" +
	"Subject: Rimozione sito\r\n" +
	"Message-ID: <abc.1@forno-example.it>\r\n" +
	"References: <older.0@lohisoft.com>\r\n"

var envelopes = []struct {
	name   string
	header string
	to     string
	skip   string
}{
	{"plain", baseHeader, "m.rossi@forno-example.it", ""},
	{"return-path wins", "Return-Path: <bounce-handler@forno-example.it>\r\n" + baseHeader, "", reply.SkipRoleAddress},
	{"return-path", "Return-Path: <Web@Forno-Example.it>\r\n" + baseHeader, "web@forno-example.it", ""},
	{"bounce", "Return-Path: <>\r\n" + baseHeader, "", reply.SkipBounce},
	{"dsn", baseHeader + "Content-Type: multipart/report; report-type=delivery-status; boundary=x\r\n", "", reply.SkipBounce},
	{"auto-submitted", baseHeader + "Auto-Submitted: auto-replied\r\n", "", reply.SkipAutomatic},
	{"auto-submitted no", baseHeader + "Auto-Submitted: no\r\n", "m.rossi@forno-example.it", ""},
	{"exchange oof", baseHeader + "X-Auto-Response-Suppress: OOF, AutoReply\r\n", "", reply.SkipAutomatic},
	{"list-id", baseHeader + "List-Id: <webmasters.example.org>\r\n", "", reply.SkipList},
	{"list-unsubscribe", baseHeader + "List-Unsubscribe: <mailto:leave@example.org>\r\n", "", reply.SkipList},
	{"precedence bulk", baseHeader + "Precedence: bulk\r\n", "", reply.SkipList},
	{"precedence junk", baseHeader + "Precedence: junk\r\n", "", reply.SkipList},
	{"noreply", strings.Replace(baseHeader, "m.rossi@", "no-reply@", 1), "", reply.SkipRoleAddress},
	{"noreply plus", strings.Replace(baseHeader, "m.rossi@", "noreply+x@", 1), "", reply.SkipRoleAddress},
	{"mailer-daemon", strings.Replace(baseHeader, "m.rossi@", "MAILER-DAEMON@", 1), "", reply.SkipRoleAddress},
	{"postmaster", strings.Replace(baseHeader, "m.rossi@", "postmaster@", 1), "", reply.SkipRoleAddress},
	{"list request", strings.Replace(baseHeader, "m.rossi@", "webmasters-request@", 1), "", reply.SkipRoleAddress},
	{"our own", strings.Replace(baseHeader, "Rossi <m.rossi@forno-example.it>", "message@lohisoft.com", 1), "", reply.SkipOwnAddress},
	{"no from", "Subject: x\r\n", "", reply.SkipNoAddress},
}

func TestReadEnvelope(t *testing.T) {
	for _, c := range envelopes {
		t.Run(c.name, func(t *testing.T) {
			env := reply.ReadEnvelope([]byte(c.header+"\r\nciao\r\n"), []string{"message@lohisoft.com"})
			if env.Skip != c.skip || (c.skip == "" && env.To != c.to) {
				t.Errorf("ReadEnvelope() = to %q skip %q; want to %q skip %q", env.To, env.Skip, c.to, c.skip)
			}
		})
	}
}

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newReplier(t *testing.T, store *db.Store, srv *smtptest.Server, c *clock) *reply.Replier {
	t.Helper()
	m, err := reply.ParseSMTPURL("smtp://bot%40lohisoft.com@" + srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	m.Password, m.Insecure = "sekrit", true
	return reply.New(store, &reply.Options{Sender: m, Now: c.now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// readReply parses a submitted reply and returns its header and decoded text.
func readReply(t *testing.T, data []byte) (mail.Header, string) {
	t.Helper()
	mr, err := mail.CreateReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("reply does not parse: %v\n%s", err, data)
	}
	p, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(p.Body)
	return mr.Header, string(b)
}

func TestQueueAndSend(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		srv := smtptest.New(t, "bot@lohisoft.com", "sekrit")
		c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		r := newReplier(t, store, srv, c)
		raw := []byte(baseHeader + "\r\nVi chiedo di non indicizzare forno-example.it.\r\nGrazie\r\n")
		at := time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC)

		rep, skip, err := r.Queue(ctx, reply.Request{MailID: 7, Raw: raw, Kind: db.ReplyAck,
			Sites: []string{"forno-example.it"}, At: at, Lang: "it", Authenticated: "forno-example.it", Text: "Vi chiedo di non indicizzare forno-example.it.\nGrazie"})
		if err != nil || rep == nil {
			t.Fatalf("Queue = %v, %q, %v", rep, skip, err)
		}
		sent, pending, err := r.Flush(ctx)
		if err != nil || sent != 1 || pending != 0 {
			t.Fatalf("Flush = %d, %d, %v; want 1 sent", sent, pending, err)
		}
		msgs := srv.Messages()
		if len(msgs) != 1 {
			t.Fatalf("server got %d messages", len(msgs))
		}
		got := msgs[0]
		if got.From != "message@lohisoft.com" || len(got.To) != 1 || got.To[0] != "m.rossi@forno-example.it" || got.User != "bot@lohisoft.com" {
			t.Errorf("envelope = %q -> %q (user %q)", got.From, got.To, got.User)
		}
		if !bytes.Equal(got.Data, rep.Raw) {
			t.Errorf("sent bytes differ from the stored ones")
		}
		h, body := readReply(t, got.Data)
		for k, want := range map[string]string{
			"Auto-Submitted": "auto-replied", "In-Reply-To": "<abc.1@forno-example.it>",
			"References": "<older.0@lohisoft.com> <abc.1@forno-example.it>", "Content-Language": "it",
			"Message-Id": "<" + rep.MessageID + ">",
		} {
			if v := h.Get(k); v != want {
				t.Errorf("%s = %q, want %q", k, v, want)
			}
		}
		if s, _ := h.Subject(); s != "Re: Rimozione sito" {
			t.Errorf("Subject = %q", s)
		}
		for _, want := range []string{"Buongiorno", "forno-example.it", "2026-03-02 08:59 UTC", "robots.txt",
			"risponda a questo", "> Vi chiedo di non indicizzare forno-example.it."} {
			if !strings.Contains(body, want) {
				t.Errorf("reply text lacks %q:\n%s", want, body)
			}
		}

		// The same sender and site within 24 h: no second reply.
		raw2 := bytes.Replace(raw, []byte("abc.1@"), []byte("abc.2@"), 1)
		if rep, skip, _ := r.Queue(ctx, reply.Request{MailID: 8, Raw: raw2, Kind: db.ReplyAck, Sites: []string{"forno-example.it"}, Authenticated: "forno-example.it"}); rep != nil || skip != reply.SkipRecent {
			t.Errorf("second Queue within 24h = %v, %q; want %q", rep, skip, reply.SkipRecent)
		}
		// Another site is acknowledged; the same one again after 24 h too.
		if rep, skip, _ := r.Queue(ctx, reply.Request{MailID: 8, Raw: raw2, Kind: db.ReplyAck, Sites: []string{"forno-example.it", "pane-example.it"}, Authenticated: "forno-example.it"}); rep == nil || rep.Sites != "pane-example.it" {
			t.Errorf("Queue of a new site = %+v, %q; want a reply about pane-example.it only", rep, skip)
		}
		c.t = c.t.Add(25 * time.Hour)
		if rep, skip, _ := r.Queue(ctx, reply.Request{MailID: 9, Raw: raw2, Kind: db.ReplyAck, Sites: []string{"forno-example.it"}, Authenticated: "forno-example.it"}); rep == nil {
			t.Errorf("Queue after 24h = nil, %q; want a reply", skip)
		}
		// Unknown language: English.
		rep, _, _ = r.Queue(ctx, reply.Request{MailID: 10, Raw: []byte(strings.Replace(baseHeader, "m.rossi", "jp", 1) + "\r\nx\r\n"),
			Kind: db.ReplyReceived, Lang: "ja", Authenticated: "forno-example.it"})
		if rep == nil || rep.Lang != "en" || !bytes.Contains(rep.Raw, []byte("A person at LohiSoft will read it")) {
			t.Errorf("received reply in an unknown language = %+v", rep)
		}
	})
}

func TestRetryWithBackoff(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		srv := smtptest.New(t, "bot@lohisoft.com", "sekrit")
		srv.FailNext(2)
		c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		r := newReplier(t, store, srv, c)
		raw := []byte(baseHeader + "\r\nstop\r\n")
		rep, _, err := r.Queue(ctx, reply.Request{MailID: 1, Raw: raw, Kind: db.ReplyAck, Sites: []string{"forno-example.it"}, Authenticated: "forno-example.it"})
		if err != nil || rep == nil {
			t.Fatal(err)
		}
		if sent, pending, _ := r.Flush(ctx); sent != 0 || pending != 1 {
			t.Fatalf("Flush with a failing server = %d sent, %d pending", sent, pending)
		}
		// Not due yet: nothing is tried.
		if sent, pending, _ := r.Flush(ctx); sent != 0 || pending != 0 {
			t.Fatalf("Flush before the backoff = %d sent, %d pending", sent, pending)
		}
		c.t = c.t.Add(time.Minute)
		r.Flush(ctx) // second failure
		c.t = c.t.Add(90 * time.Second)
		if sent, _, _ := r.Flush(ctx); sent != 0 {
			t.Fatalf("sent before the doubled backoff")
		}
		c.t = c.t.Add(time.Minute)
		if sent, _, _ := r.Flush(ctx); sent != 1 {
			t.Fatalf("not sent after the backoff")
		}
		reps, _ := store.MailRepliesOf(ctx, 1)
		if len(reps) != 1 || reps[0].Status != db.ReplySent || reps[0].Attempts != 3 || reps[0].SentAt == nil {
			t.Errorf("stored reply = %+v; want sent after 3 attempts", reps[0])
		}
		if n := len(srv.Messages()); n != 1 {
			t.Errorf("server got %d messages, want 1", n)
		}
	})
}

func TestParseSMTPURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		addr string
		user string
		tls  bool
		ok   bool
	}{
		{"smtp://bot%40lohisoft.com@smtp.example.com:587", "smtp.example.com:587", "bot@lohisoft.com", false, true},
		{"smtps://bot@smtp.example.com", "smtp.example.com:465", "bot", true, true},
		{"smtp://127.0.0.1:2525", "127.0.0.1:2525", "", false, true},
		{"smtp://bot:pw@smtp.example.com", "", "", false, false},
		{"imap://bot@smtp.example.com", "", "", false, false},
		{"smtp://bot@smtp.example.com:99999", "", "", false, false},
		{"smtp://", "", "", false, false},
	} {
		m, err := reply.ParseSMTPURL(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseSMTPURL(%q) error = %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if err == nil && (m.Addr() != c.addr || m.User != c.user || m.TLS != c.tls) {
			t.Errorf("ParseSMTPURL(%q) = %s %q tls %v", c.in, m.Addr(), m.User, m.TLS)
		}
	}
}

func TestLanguages(t *testing.T) {
	if n := len(reply.Languages()); n != 13 {
		t.Errorf("%d languages, want 13", n)
	}
}

// TestNoBackscatter: a sender our server did not authenticate gets no
// reply (and the skip is recorded for staff); an authenticated one gets at
// most three a day, whatever the sites; the daily cap holds for all
// senders together.
func TestNoBackscatter(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		srv := smtptest.New(t, "bot@lohisoft.com", "sekrit")
		c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		r := newReplier(t, store, srv, c)
		raw := []byte(baseHeader + "\r\nPlease stop crawling forno-example.it.\r\n")

		// Not authenticated: nothing queued, a skipped row for staff.
		rep, skip, err := r.Queue(ctx, reply.Request{MailID: 1, Raw: raw, Kind: db.ReplyAck, Sites: []string{"forno-example.it"},
			Text: "Please stop crawling forno-example.it."})
		if err != nil || rep != nil || skip != reply.SkipUnauthenticated {
			t.Fatalf("Queue(unauthenticated) = %+v, %q, %v; want skipped as unauthenticated", rep, skip, err)
		}
		// Authenticated for another domain than the reply address.
		rep, skip, _ = r.Queue(ctx, reply.Request{MailID: 2, Raw: raw, Kind: db.ReplyReceived, Authenticated: "attacker-example.com"})
		if rep != nil || skip != reply.SkipUnauthenticated {
			t.Errorf("Queue(authenticated elsewhere) = %+v, %q; want skipped", rep, skip)
		}
		got, err := store.MailRepliesOf(ctx, 1)
		if err != nil || len(got) != 1 || got[0].Status != db.ReplySkipped || got[0].LastError != reply.SkipUnauthenticated || len(got[0].Raw) != 0 {
			t.Errorf("stored skip = %+v, %v; want one skipped row saying why, without bytes", got, err)
		}

		// A burst of five sites from one authenticated sender: three replies.
		replies := 0
		for i := range 5 {
			site := fmt.Sprintf("site%d-example.it", i)
			rep, skip, err := r.Queue(ctx, reply.Request{MailID: int64(10 + i), Raw: raw, Kind: db.ReplyAck, Sites: []string{site},
				Authenticated: "forno-example.it"})
			if err != nil {
				t.Fatal(err)
			}
			if rep != nil {
				replies++
			} else if i >= 3 && skip != reply.SkipRecipientLimit {
				t.Errorf("reply %d skipped for %q, want %q", i, skip, reply.SkipRecipientLimit)
			}
		}
		if replies != 3 {
			t.Errorf("%d replies to one sender's burst of 5, want 3", replies)
		}
		if got, _ := store.MailRepliesOf(ctx, 14); len(got) != 1 || got[0].Status != db.ReplySkipped || got[0].Sites != "site4-example.it" {
			t.Errorf("the fifth site's skip = %+v; want recorded with its site", got)
		}
		if sent, _, err := r.Flush(ctx); err != nil || sent != 3 || len(srv.Messages()) != 3 {
			t.Errorf("Flush = %d sent, %v; server got %d; want 3", sent, err, len(srv.Messages()))
		}
		// A day later the sender may be answered again.
		c.t = c.t.Add(Window() + time.Second)
		if rep, skip, _ := r.Queue(ctx, reply.Request{MailID: 20, Raw: raw, Kind: db.ReplyAck, Sites: []string{"site9-example.it"},
			Authenticated: "forno-example.it"}); rep == nil {
			t.Errorf("Queue a day later = nil, %q", skip)
		}

		// The daily cap counts every recipient.
		capped := reply.New(store, &reply.Options{MaxPerDay: 2, Now: c.now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		for i, who := range []string{"a", "b", "c"} {
			raw := []byte(strings.Replace(baseHeader, "m.rossi@", who+"@", 1) + "\r\nx\r\n")
			rep, skip, _ := capped.Queue(ctx, reply.Request{MailID: int64(30 + i), Raw: raw, Kind: db.ReplyReceived, Authenticated: "forno-example.it"})
			if wantSkip := i >= 1; (rep == nil) != wantSkip || wantSkip && skip != reply.SkipDailyLimit {
				t.Errorf("capped Queue from %s = %+v, %q; want a skip from the second on (one reply already today)", who, rep, skip)
			}
		}
	})
}

// Window is reply.Window, as a function so a test reads it once.
func Window() time.Duration { return reply.Window }

// TestReplyHeaderInjection: a bare CR (or LF) in the Message-ID or
// References of the received message never reaches the reply's header:
// only well-formed msg-ids are carried over.
func TestReplyHeaderInjection(t *testing.T) {
	for _, c := range []struct {
		name, header    string
		inReplyTo, refs string
	}{
		{"bare CR in Message-ID", "Message-ID: <a@forno-example.it>\rX-Injected: yes\r\n", "", ""},
		// A bare LF ends the field (LF line ends are common): X-Injected is
		// a field of the received message, not of the reply.
		{"bare LF in Message-ID", "Message-ID: <a@forno-example.it>\nX-Injected: yes\r\n", "<a@forno-example.it>", "<a@forno-example.it>"},
		{"bare CR in References", "Message-ID: <b@forno-example.it>\r\nReferences: <x@y>\rX-Injected: yes\r\n",
			"<b@forno-example.it>", "<x@y> <b@forno-example.it>"},
		{"no angle brackets", "Message-ID: b@forno-example.it\r\n", "", ""},
		{"folded References", "Message-ID: <c@forno-example.it>\r\nReferences: <p@q>\r\n\t<r@s>\r\n",
			"<c@forno-example.it>", "<p@q> <r@s> <c@forno-example.it>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte("From: Rossi <m.rossi@forno-example.it>\r\nTo: message@lohisoft.com\r\nSubject: Stop\r\n" +
				c.header + "\r\nstop\r\n")
			dbtest.ForEach(t, func(t *testing.T, dsn string) {
				store := dbtest.OpenDSN(t, dsn)
				r := reply.New(store, &reply.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				rep, skip, err := r.Queue(context.Background(), reply.Request{MailID: 1, Raw: raw, Kind: db.ReplyAck,
					Sites: []string{"forno-example.it"}, Authenticated: "forno-example.it"})
				if err != nil || rep == nil {
					t.Fatalf("Queue = %v, %q, %v", rep, skip, err)
				}
				head, _, _ := bytes.Cut(rep.Raw, []byte("\r\n\r\n"))
				for i, line := range bytes.Split(head, []byte("\r\n")) {
					if bytes.ContainsAny(line, "\r\n") || bytes.Contains(line, []byte("X-Injected")) {
						t.Errorf("header line %d = %q", i, line)
					}
				}
				h, _ := readReply(t, rep.Raw)
				if h.Get("In-Reply-To") != c.inReplyTo || h.Get("References") != c.refs {
					t.Errorf("In-Reply-To %q, References %q; want %q, %q", h.Get("In-Reply-To"), h.Get("References"), c.inReplyTo, c.refs)
				}
			})
		})
	}
}
