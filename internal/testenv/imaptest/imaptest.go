// Package imaptest runs go-imap's in-memory IMAP server on a loopback port
// for tests: one user with an INBOX, mail delivered straight into it, and a
// server that can be stopped and started again on the same port.
//
// Unlike go-imap's own, its IDLE never misses mail: go-imap's server
// acknowledges IDLE before it listens for updates, so mail delivered in
// between waited for the next command; this one reports what is queued
// when IDLE begins and whenever Deliver adds mail, as Dovecot does. It can
// also hide IDLE from the client, which then has to poll.
package imaptest

import (
	"bytes"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
)

// Options configures a Server. A nil *Options is the zero value.
type Options struct {
	// Caps are the capabilities offered. Nil means IMAP4rev1 and
	// IMAP4rev2 (IDLE, MOVE, UIDPLUS). go-imap's server offers IDLE with
	// IMAP4rev1 in any case: set NoIdle to leave it out.
	Caps imap.CapSet
	// NoIdle leaves IDLE out of every capability list.
	NoIdle bool
	// User and Password are the one account's. Empty means "bot@test" and
	// "secret".
	User, Password string
}

// Server is a running in-memory IMAP server. Its methods are safe for
// concurrent use.
type Server struct {
	// Addr is the server's host:port on 127.0.0.1; it stays the same
	// across Stop and Restart.
	Addr string
	// User is the account's mailboxes, for reading them directly.
	User *imapmemserver.User

	opts Options
	kick chan struct{} // Deliver wakes an IDLE to report the new mail

	mu  sync.Mutex // guards srv
	srv *imapserver.Server
}

// Start starts a server and stops it when the test ends.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Caps == nil {
		o.Caps = imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}}
	}
	if o.User == "" {
		o.User = "bot@test"
	}
	if o.Password == "" {
		o.Password = "secret"
	}
	s := &Server{User: imapmemserver.NewUser(o.User, o.Password), opts: o, kick: make(chan struct{}, 1)}
	if err := s.User.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) serve(ln net.Listener) {
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &session{user: s.User, kick: s.kick}, nil, nil
		},
		Caps:         s.opts.Caps,
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	})
	if s.opts.NoIdle {
		ln = noIdleListener{ln}
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go srv.Serve(ln)
}

// Stop closes the listener and every connection.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Restart serves again on the same address after Stop.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	var ln net.Listener
	testutil.Eventually(t, 5*time.Second, "the port free again", func() bool {
		var err error
		ln, err = net.Listen("tcp4", s.Addr)
		return err == nil
	})
	s.serve(ln)
}

// Deliver appends a message to the INBOX and tells an IDLE client.
func (s *Server) Deliver(t testing.TB, raw []byte) {
	t.Helper()
	if _, err := s.User.Append("INBOX", bytes.NewReader(raw), &imap.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Count returns the number of messages in mailbox, or -1 when there is no
// such mailbox.
func (s *Server) Count(mailbox string) int {
	st, err := s.User.Status(mailbox, &imap.StatusOptions{NumMessages: true})
	if err != nil {
		return -1
	}
	return int(*st.NumMessages)
}

// session is the in-memory server's session with an IDLE that reports
// what is queued when it begins, and again whenever Deliver kicks it.
type session struct {
	*imapmemserver.UserSession // nil until Login

	user *imapmemserver.User
	kick <-chan struct{}
}

func (s *session) Login(username, password string) error {
	if err := s.user.Login(username, password); err != nil {
		return err
	}
	s.UserSession = imapmemserver.NewUserSession(s.user)
	return nil
}

func (s *session) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	for {
		if err := s.Poll(w, true); err != nil {
			return err
		}
		select {
		case <-s.kick:
		case <-stop:
			return nil
		}
	}
}

// noIdleListener hides IDLE from the server's capability lists (the
// connections are plaintext: the server has no TLS).
type noIdleListener struct{ net.Listener }

func (l noIdleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return noIdleConn{c}, nil
}

type noIdleConn struct{ net.Conn }

func (c noIdleConn) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("CAPABILITY")) {
		return c.Conn.Write(p)
	}
	var out []byte
	for _, line := range bytes.SplitAfter(p, []byte("\r\n")) {
		if bytes.Contains(line, []byte("CAPABILITY")) {
			line = bytes.ReplaceAll(line, []byte(" IDLE"), nil)
		}
		out = append(out, line...)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
