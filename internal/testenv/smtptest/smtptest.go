// Package smtptest runs an in-process SMTP submission server on loopback
// that records what clients submit, for tests of the replies.
package smtptest

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one submitted message.
type Message struct {
	From string
	To   []string
	Data []byte
	User string // the authenticated user, "" when none
}

// Server is a recording SMTP server. It is safe for concurrent use.
type Server struct {
	// Addr is HOST:PORT of the listener.
	Addr string
	// User and Password are the credentials PLAIN accepts; "" accepts no
	// login (and requires none).
	User, Password string

	mu   sync.Mutex // guards msgs and fail
	msgs []Message
	fail int // how many more DATA commands to refuse with 451
}

// New starts a server on 127.0.0.1:0 that accepts user/password over
// plaintext (AllowInsecureAuth), and stops it when the test ends.
func New(t testing.TB, user, password string) *Server {
	t.Helper()
	s := &Server{User: user, Password: password}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// FailNext makes the next n submissions fail with a temporary error.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = n
}

// Messages returns what was submitted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

type session struct {
	s    *Server
	user string
	msg  Message
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.s.User || password != ss.s.Password {
			return errors.New("invalid credentials")
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, opts *smtp.MailOptions) error {
	if ss.s.User != "" && ss.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	ss.msg = Message{From: from, User: ss.user}
	return nil
}

func (ss *session) Rcpt(to string, opts *smtp.RcptOptions) error {
	ss.msg.To = append(ss.msg.To, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	if ss.s.fail > 0 {
		ss.s.fail--
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	ss.msg.Data = b
	ss.s.msgs = append(ss.s.msgs, ss.msg)
	return nil
}

func (ss *session) Reset()        { ss.msg = Message{} }
func (ss *session) Logout() error { return nil }
