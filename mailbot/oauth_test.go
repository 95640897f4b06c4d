package mailbot_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"

	"github.com/lohisoft/lohibot/mailbot"
)

// oauthSession is an IMAP session that accepts only one OAuth mechanism
// with one token: LOGIN and PLAIN are refused.
type oauthSession struct {
	*imapmemserver.UserSession // nil until authenticated
	srv                        *oauthIMAP
}

func (s *oauthSession) Close() error {
	if s.UserSession != nil {
		return s.UserSession.Close()
	}
	return nil
}

func (s *oauthSession) Login(string, string) error { return imapserver.ErrAuthFailed }

func (s *oauthSession) AuthenticateMechanisms() []string { return []string{s.srv.mech} }

func (s *oauthSession) Authenticate(mech string) (sasl.Server, error) {
	check := func(user, token string) error {
		s.srv.mu.Lock()
		s.srv.seen = append(s.srv.seen, token)
		want := s.srv.token
		s.srv.mu.Unlock()
		if user != testUser || token != want {
			return errors.New("invalid token")
		}
		s.UserSession = imapmemserver.NewUserSession(s.srv.user)
		return nil
	}
	switch mech {
	case mailbot.MechOAuthBearer:
		return sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			if err := check(o.Username, o.Token); err != nil {
				return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
			}
			return nil
		}), nil
	case mailbot.MechXOAuth2:
		return &xoauth2Server{check: check}, nil
	}
	return nil, errors.New("unsupported mechanism")
}

// xoauth2Server is the server side of XOAUTH2.
type xoauth2Server struct {
	check  func(user, token string) error
	failed bool
}

func (x *xoauth2Server) Next(resp []byte) ([]byte, bool, error) {
	if x.failed {
		return nil, true, errors.New("invalid token")
	}
	parts := strings.Split(string(resp), "\x01")
	var user, token string
	for _, p := range parts {
		if v, ok := strings.CutPrefix(p, "user="); ok {
			user = v
		}
		if v, ok := strings.CutPrefix(p, "auth=Bearer "); ok {
			token = v
		}
	}
	if err := x.check(user, token); err != nil {
		x.failed = true
		return []byte(`{"status":"401","schemes":"bearer"}`), false, nil
	}
	return nil, true, nil
}

type oauthIMAP struct {
	user *imapmemserver.User
	mech string
	addr string

	mu    sync.Mutex // guards token and seen
	token string
	seen  []string
}

func startOAuthIMAP(t *testing.T, mech, token string) *oauthIMAP {
	t.Helper()
	o := &oauthIMAP{mech: mech, token: token, user: imapmemserver.NewUser(testUser, testPassword)}
	if err := o.user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &oauthSession{srv: o}, nil, nil
		},
		Caps: capsRev2, InsecureAuth: true, Logger: log.New(io.Discard, "", 0),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return o
}

func TestWatchOAuth(t *testing.T) {
	for _, mech := range []string{mailbot.MechXOAuth2, mailbot.MechOAuthBearer} {
		t.Run(mech, func(t *testing.T) {
			srv := startOAuthIMAP(t, mech, "token-1")
			host, port, _ := net.SplitHostPort(srv.addr)
			p, _ := strconv.Atoi(port)
			ep := mailbot.Endpoint{Security: mailbot.SecurityStartTLS, Host: host, Port: p, Username: testUser, Mailbox: "INBOX"}
			tokenFile := filepath.Join(t.TempDir(), "token")
			os.WriteFile(tokenFile, []byte("token-1\n"), 0o600)
			readToken := func() (string, error) {
				b, err := os.ReadFile(tokenFile)
				return strings.TrimSpace(string(b)), err
			}
			if _, err := srv.user.Append("INBOX", bytes.NewReader(readTestdata(t, "exclude-one.eml")), &imap.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			proc, pol, _ := newSQLiteProcessor(t)
			run := func() error {
				w := mailbot.NewWatcher(proc, &mailbot.WatchOptions{Endpoint: ep, Token: readToken, Insecure: true, Once: true,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				return w.Run(context.Background())
			}
			if err := run(); err != nil {
				t.Fatalf("Run with a good token = %v", err)
			}
			if got := excludedSites(t, pol); len(got) != 1 || got[0] != "bakery-example.com" {
				t.Errorf("excluded = %v after an OAuth login", got)
			}
			// The token is read again on each connect: a rotated token is used.
			srv.mu.Lock()
			srv.token = "token-2"
			srv.mu.Unlock()
			os.WriteFile(tokenFile, []byte("token-2\n"), 0o600)
			if err := run(); err != nil {
				t.Fatalf("Run with the rotated token = %v", err)
			}
			// A wrong token fails the login; a password is never tried.
			os.WriteFile(tokenFile, []byte("stale\n"), 0o600)
			if err := run(); err == nil || !strings.Contains(err.Error(), mech) {
				t.Errorf("Run with a stale token = %v, want a %s failure", err, mech)
			}
			srv.mu.Lock()
			seen := strings.Join(srv.seen, " ")
			srv.mu.Unlock()
			if seen != "token-1 token-2 stale" {
				t.Errorf("tokens the server saw = %q", seen)
			}
		})
	}
}
