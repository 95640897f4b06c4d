package mailbot

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/lohisoft/lohibot/internal/redact"
)

// ErrBadURL is returned (wrapped) for an IMAP URL that cannot be used.
var ErrBadURL = errors.New("mailbot: bad IMAP URL")

// Security is how a Watcher protects its IMAP connection.
type Security int

// The connection securities.
const (
	// SecurityTLS is implicit TLS from the first byte (imaps://, port 993).
	SecurityTLS Security = iota
	// SecurityStartTLS is a plain connection upgraded with STARTTLS
	// (imap://, port 143), RFC 9051 section 6.2.1.
	SecurityStartTLS
)

// Endpoint is a mailbox on an IMAP server, as named by an
// imaps://USER@HOST[:PORT]/MAILBOX URL (RFC 5092, without the parts
// lohibot does not use).
type Endpoint struct {
	Security Security
	Host     string // a host name or IP address, without brackets
	Port     int
	Username string
	Mailbox  string // INBOX when the URL names none
}

// ParseIMAPURL parses imaps://USER@HOST[:PORT]/MAILBOX or
// imap://USER@HOST[:PORT]/MAILBOX. The user may contain '@' (written as is
// or as %40). A password in the URL is refused: it would show in the
// process list and the shell history. Errors wrap ErrBadURL.
func ParseIMAPURL(s string) (*Endpoint, error) {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrBadURL, redact.URL(s), why) }
	if redact.HasPassword(s) {
		// Said before anything else is parsed: a password holding "/" or
		// a blank would otherwise be taken for a path or a host.
		return nil, bad("a password does not belong in the URL: use --password-file or LOHIBOT_IMAP_PASSWORD")
	}
	var e Endpoint
	rest, ok := strings.CutPrefix(s, "imaps://")
	if ok {
		e.Security, e.Port = SecurityTLS, 993
	} else if rest, ok = strings.CutPrefix(s, "imap://"); ok {
		e.Security, e.Port = SecurityStartTLS, 143
	} else {
		return nil, bad("want imaps://USER@HOST[:PORT]/MAILBOX or imap://...")
	}
	authority, path, _ := strings.Cut(rest, "/")
	if strings.ContainsAny(authority, "?#") || strings.ContainsAny(path, "?#") {
		return nil, bad("queries and fragments are not supported")
	}
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return nil, bad("no user: write USER@HOST")
	}
	userinfo, hostport := authority[:at], authority[at+1:]
	if strings.Contains(userinfo, ":") {
		return nil, bad("a password does not belong in the URL: use --password-file or LOHIBOT_IMAP_PASSWORD")
	}
	user, err := url.PathUnescape(userinfo)
	if err != nil || user == "" {
		return nil, bad("bad user")
	}
	e.Username = user
	host := hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return nil, bad("bad port")
		}
		host, e.Port = h, port
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	if host == "" || strings.ContainsAny(host, "[]/ ") {
		return nil, bad("bad host")
	}
	e.Host = strings.ToLower(host)
	mailbox, err := url.PathUnescape(strings.TrimSuffix(path, "/"))
	if err != nil {
		return nil, bad("bad mailbox")
	}
	if mailbox == "" {
		mailbox = "INBOX"
	}
	e.Mailbox = mailbox
	return &e, nil
}

// Addr is HOST:PORT, for dialling.
func (e *Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// String returns the endpoint as a URL (never with a password).
func (e *Endpoint) String() string {
	scheme := "imaps"
	if e.Security == SecurityStartTLS {
		scheme = "imap"
	}
	return scheme + "://" + url.PathEscape(e.Username) + "@" + e.Addr() + "/" + url.PathEscape(e.Mailbox)
}

// IsLoopback reports whether the host is localhost or a loopback address,
// the only place an insecure connection is allowed.
func (e *Endpoint) IsLoopback() bool {
	if e.Host == "localhost" || strings.HasSuffix(e.Host, ".localhost") {
		return true
	}
	ip := net.ParseIP(e.Host)
	return ip != nil && ip.IsLoopback()
}
