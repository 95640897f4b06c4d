package reply

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/lohisoft/lohibot/internal/redact"
)

// ErrBadSMTPURL is wrapped by ParseSMTPURL's errors.
var ErrBadSMTPURL = errors.New("reply: bad SMTP URL")

// SMTP submits messages to a mail server (RFC 6409 submission). A zero
// port means 465 for smtps and 587 for smtp. It is safe for concurrent
// use: each Send opens its own connection.
type SMTP struct {
	// TLS is true for smtps:// (implicit TLS); smtp:// uses STARTTLS.
	TLS  bool
	Host string
	Port int
	// User is the login; "" means no authentication.
	User     string
	Password string
	// Insecure sends smtp:// in plaintext (no STARTTLS) and accepts an
	// unverified certificate: for servers on loopback only.
	Insecure bool
	// TLSConfig is the base TLS configuration. Nil means the defaults.
	TLSConfig *tls.Config
	// Timeout bounds one Send. Zero means 30 seconds.
	Timeout time.Duration
}

// ParseSMTPURL parses smtp://USER@HOST:PORT or smtps://USER@HOST:PORT (the
// user is optional, "%40" spells an @ in it). A password in the URL is
// refused: it comes from a file or the environment.
func ParseSMTPURL(s string) (*SMTP, error) {
	if redact.HasPassword(s) {
		// Refused before parsing: a password holding "/" or a blank
		// would come back, whole or in part, in the parser's error.
		return nil, fmt.Errorf("%w %q: no password in the URL; use --smtp-password-file or LOHIBOT_SMTP_PASSWORD", ErrBadSMTPURL, redact.URL(s))
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w %q: %w", ErrBadSMTPURL, s, err)
	}
	m := &SMTP{}
	switch strings.ToLower(u.Scheme) {
	case "smtps":
		m.TLS = true
	case "smtp":
	default:
		return nil, fmt.Errorf("%w %q: want smtp://USER@HOST:PORT or smtps://USER@HOST:PORT", ErrBadSMTPURL, s)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return nil, fmt.Errorf("%w: no password in the URL; use --smtp-password-file or LOHIBOT_SMTP_PASSWORD", ErrBadSMTPURL)
		}
		m.User = u.User.Username()
	}
	m.Host = u.Hostname()
	if m.Host == "" {
		return nil, fmt.Errorf("%w %q: no host", ErrBadSMTPURL, s)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("%w %q: unexpected path or query", ErrBadSMTPURL, s)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("%w %q: bad port", ErrBadSMTPURL, s)
		}
		m.Port = n
	}
	return m, nil
}

// Addr returns HOST:PORT with the default port filled in.
func (m *SMTP) Addr() string {
	port := m.Port
	if port == 0 {
		port = 587
		if m.TLS {
			port = 465
		}
	}
	return net.JoinHostPort(m.Host, strconv.Itoa(port))
}

// IsLoopback reports whether the server is on this machine.
func (m *SMTP) IsLoopback() bool {
	if strings.EqualFold(m.Host, "localhost") {
		return true
	}
	ip := net.ParseIP(m.Host)
	return ip != nil && ip.IsLoopback()
}

// Send submits msg from from to the recipients. A 5xx answer to a
// recipient or the message is a *PermanentError. It does I/O and blocks for
// at most Timeout.
func (m *SMTP) Send(ctx context.Context, from string, to []string, msg []byte) error {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tlsConf := &tls.Config{}
	if m.TLSConfig != nil {
		tlsConf = m.TLSConfig.Clone()
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = m.Host
	}
	if m.Insecure {
		tlsConf.InsecureSkipVerify = true
	}
	d := &net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", m.Addr())
	if err != nil {
		return fmt.Errorf("reply: smtp connect %s: %w", m.Addr(), err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// go-smtp has no ctx: closing the connection ends a blocked call.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var c *smtp.Client
	switch {
	case m.TLS:
		c = smtp.NewClient(tls.Client(conn, tlsConf))
	case m.Insecure:
		// Loopback only (checked by the caller): plaintext is allowed.
		c = smtp.NewClient(conn)
	default:
		c, err = smtp.NewClientStartTLS(conn, tlsConf)
		if err != nil {
			conn.Close()
			return fmt.Errorf("reply: smtp %s: STARTTLS: %w", m.Addr(), err)
		}
	}
	defer c.Close()
	if m.User != "" {
		if err := c.Auth(sasl.NewPlainClient("", m.User, m.Password)); err != nil {
			return fmt.Errorf("reply: smtp login as %s: %w", m.User, err)
		}
	}
	if err := c.SendMail(from, to, bytes.NewReader(msg)); err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) && se.Code >= 500 {
			return &PermanentError{Err: fmt.Errorf("reply: smtp send: %w", err)}
		}
		return fmt.Errorf("reply: smtp send: %w", err)
	}
	if err := c.Quit(); err != nil {
		// The message was accepted; a failed QUIT changes nothing.
		return nil
	}
	return nil
}
