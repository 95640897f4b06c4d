package resolver

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Defaults of a Client, as the Go resolver's (resolv.conf "timeout:5
// attempts:2").
const (
	DefaultTimeout  = 5 * time.Second
	DefaultAttempts = 2
)

const (
	// udpSize is the EDNS0 buffer size advertised, the DNS Flag Day 2020
	// value the Go resolver also uses.
	udpSize = 1232
	// maxCNAMEs bounds a CNAME chain (a loop ends there).
	maxCNAMEs = 8
)

// The texts of the *net.DNSError values a Client returns, as the Go
// resolver words them.
const (
	errNoSuchHost   = "no such host"
	errMisbehaving  = "server misbehaving"
	errMalformed    = "DNS response contained records which contain invalid names"
	errTooManyCNAME = "too many CNAME records"
)

// Client is a stub resolver that asks one DNS server (Addr) and nothing
// else: no /etc/hosts, no search domains, no other server. A query goes over
// UDP, again over TCP when the answer is truncated (RFC 7766), and is
// retried after a timeout or a failure of the server, up to Attempts times.
// CNAME chains are followed, in the answer and by asking again for the
// chain's end. Failures are *net.DNSError values worded as the Go resolver's:
// IsNotFound for NXDOMAIN and for a name without records of the type asked,
// IsTimeout for timeouts, IsTemporary for SERVFAIL and network errors.
//
// A Client keeps no state between lookups and is safe for concurrent use by
// multiple goroutines; its fields must not change once it is in use.
type Client struct {
	// Addr is the server's HOST:PORT (see Check).
	Addr string
	// Timeout bounds each attempt (a UDP exchange and its TCP fallback
	// each get this much), within the caller's ctx. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Attempts is how many times a query is sent before giving up. Zero
	// means DefaultAttempts.
	Attempts int
}

// LookupAddr returns the PTR names of addr (an IPv4 or IPv6 address), each
// with its trailing dot, as (*net.Resolver).LookupAddr does: names that are
// not valid host names are left out, and then returned with an error. It
// does I/O and blocks for at most Attempts times Timeout, or until ctx ends.
func (c *Client) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	arpa, err := dns.ReverseAddr(addr)
	if err != nil {
		return nil, &net.DNSError{Err: "unrecognized address", Name: addr}
	}
	rrs, err := c.lookup(ctx, arpa, dns.TypePTR)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(rrs))
	malformed := false
	for _, rr := range rrs {
		name := dns.Fqdn(rr.(*dns.PTR).Ptr)
		if !isDomainName(name) {
			malformed = true
			continue
		}
		names = append(names, name)
	}
	if malformed {
		return names, &net.DNSError{Err: errMalformed, Name: addr, Server: c.Addr}
	}
	return names, nil
}

// LookupNetIP returns the addresses of host: its A records for network
// "ip4", AAAA for "ip6", both for "ip". An address written as host is
// returned as it is. host is taken as fully qualified (no search domain is
// tried). It does I/O and blocks for at most Attempts times Timeout per
// record type, or until ctx ends.
func (c *Client) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	var qtypes []uint16
	switch network {
	case "ip":
		qtypes = []uint16{dns.TypeA, dns.TypeAAAA}
	case "ip4":
		qtypes = []uint16{dns.TypeA}
	case "ip6":
		qtypes = []uint16{dns.TypeAAAA}
	default:
		return nil, net.UnknownNetworkError(network)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if network == "ip4" && !ip.Unmap().Is4() || network == "ip6" && !ip.Is6() {
			return nil, &net.AddrError{Err: "no suitable address found", Addr: host}
		}
		return []netip.Addr{ip}, nil
	}
	name := dns.Fqdn(host)
	if host == "" || !isDomainName(name) {
		return nil, &net.DNSError{Err: errNoSuchHost, Name: host, IsNotFound: true}
	}
	var (
		addrs   []netip.Addr
		lastErr error
	)
	for _, qtype := range qtypes {
		rrs, err := c.lookup(ctx, name, qtype)
		if err != nil {
			var dnsErr *net.DNSError
			if lastErr == nil || !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
				lastErr = err
			}
			continue
		}
		for _, rr := range rrs {
			var ip net.IP
			switch rr := rr.(type) {
			case *dns.A:
				ip = rr.A.To4()
			case *dns.AAAA:
				ip = rr.AAAA.To16()
			}
			if a, ok := netip.AddrFromSlice(ip); ok {
				addrs = append(addrs, a)
			}
		}
	}
	if len(addrs) > 0 {
		return addrs, nil
	}
	if lastErr == nil {
		lastErr = &net.DNSError{Err: errNoSuchHost, Name: name, Server: c.Addr, IsNotFound: true}
	}
	return nil, lastErr
}

// lookup returns the records of type qtype of name (fully qualified),
// following CNAMEs. No record is an error with IsNotFound set.
func (c *Client) lookup(ctx context.Context, name string, qtype uint16) ([]dns.RR, error) {
	cnames := 0
	for {
		msg, err := c.exchange(ctx, name, qtype)
		if err != nil {
			return nil, err
		}
		asked := name
		for {
			rrs, target := records(msg.Answer, name, qtype)
			if len(rrs) > 0 {
				return rrs, nil
			}
			if target == "" {
				break
			}
			if cnames++; cnames > maxCNAMEs {
				return nil, &net.DNSError{Err: errTooManyCNAME, Name: asked, Server: c.Addr}
			}
			name = dns.Fqdn(target)
		}
		if name == asked {
			return nil, &net.DNSError{Err: errNoSuchHost, Name: name, Server: c.Addr, IsNotFound: true}
		}
		// The chain leaves the answer (the server does not recurse, or the
		// target is out of its zone): ask for its end.
	}
}

// records returns the records of type qtype owned by name in answer, or,
// when there are none, the target of name's CNAME ("" without one).
func records(answer []dns.RR, name string, qtype uint16) (rrs []dns.RR, cname string) {
	for _, rr := range answer {
		h := rr.Header()
		if h.Class != dns.ClassINET || !strings.EqualFold(h.Name, name) {
			continue
		}
		switch {
		case h.Rrtype == qtype:
			rrs = append(rrs, rr)
		case h.Rrtype == dns.TypeCNAME:
			cname = rr.(*dns.CNAME).Target
		}
	}
	if len(rrs) > 0 {
		return rrs, ""
	}
	return nil, cname
}

// exchange asks the server for name's records of type qtype and returns
// its answer when the rcode is NOERROR. NXDOMAIN ends at once; timeouts,
// network errors and other rcodes are retried up to c.Attempts times.
func (c *Client) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	var lastErr error
	for range attempts {
		if err := ctx.Err(); err != nil {
			return nil, c.netError(ctx, name, err)
		}
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		m.SetEdns0(udpSize, false)
		resp, err := c.exchangeOnce(ctx, m, "udp")
		if err == nil && resp.Truncated {
			resp, err = c.exchangeOnce(ctx, m, "tcp")
		}
		if err != nil {
			lastErr = c.netError(ctx, name, err)
			continue
		}
		switch resp.Rcode {
		case dns.RcodeSuccess:
			return resp, nil
		case dns.RcodeNameError:
			return nil, &net.DNSError{Err: errNoSuchHost, Name: name, Server: c.Addr, IsNotFound: true}
		case dns.RcodeServerFailure:
			lastErr = &net.DNSError{Err: errMisbehaving, Name: name, Server: c.Addr, IsTemporary: true}
		default:
			lastErr = &net.DNSError{Err: errMisbehaving, Name: name, Server: c.Addr}
		}
	}
	return nil, lastErr
}

// exchangeOnce sends m over network ("udp" or "tcp") and reads the answer
// to it, within c.Timeout and ctx.
func (c *Client) exchangeOnce(ctx context.Context, m *dns.Msg, network string) (*dns.Msg, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dc := &dns.Client{Net: network, Timeout: timeout, UDPSize: udpSize}
	conn, err := dc.DialContext(ctx, c.Addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// A ctx canceled before its deadline unblocks the read too.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	resp, _, err := dc.ExchangeWithConnContext(ctx, m, conn)
	if err != nil {
		return nil, err
	}
	q := m.Question[0]
	if len(resp.Question) != 1 || !strings.EqualFold(resp.Question[0].Name, q.Name) ||
		resp.Question[0].Qtype != q.Qtype || resp.Question[0].Qclass != q.Qclass {
		return nil, errors.New("resolver: the answer is to another question")
	}
	return resp, nil
}

// netError turns the failure of an exchange into a *net.DNSError: the
// caller's ctx ending (wrapped, so that errors.Is finds it), a timeout, or
// another error.
func (c *Client) netError(ctx context.Context, name string, err error) error {
	ctxErr := ctx.Err()
	if d, ok := ctx.Deadline(); ok && ctxErr == nil && !time.Now().Before(d) {
		ctxErr = context.DeadlineExceeded // the read deadline fired just before ctx's timer
	}
	if ctxErr != nil {
		return &net.DNSError{Err: ctxErr.Error(), Name: name, Server: c.Addr, UnwrapErr: ctxErr,
			IsTimeout: errors.Is(ctxErr, context.DeadlineExceeded)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &net.DNSError{Err: "i/o timeout", Name: name, Server: c.Addr, IsTimeout: true, IsTemporary: true}
	}
	return &net.DNSError{Err: err.Error(), Name: name, Server: c.Addr, IsTemporary: true}
}

// isDomainName reports whether s is a valid host name as the Go resolver
// checks the names it returns (RFC 1035, RFC 3696): labels of letters,
// digits, '-' and '_', 1 to 63 bytes, not starting or ending with '-', at
// most 253 bytes (254 with the trailing dot), not all digits.
func isDomainName(s string) bool {
	if s == "." {
		return true
	}
	l := len(s)
	if l == 0 || l > 254 || l == 254 && s[l-1] != '.' {
		return false
	}
	last := byte('.')
	nonNumeric := false
	partlen := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		default:
			return false
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_':
			nonNumeric = true
			partlen++
		case '0' <= c && c <= '9':
			partlen++
		case c == '-':
			if last == '.' {
				return false
			}
			partlen++
			nonNumeric = true
		case c == '.':
			if last == '.' || last == '-' || partlen > 63 || partlen == 0 {
				return false
			}
			partlen = 0
		}
		last = c
	}
	return last != '-' && partlen <= 63 && nonNumeric
}
