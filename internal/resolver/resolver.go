// Package resolver builds the DNS resolver behind the global --resolver
// flag: every DNS lookup goes to one given server instead of the system's,
// and nothing else (no /etc/hosts, no search domains) is consulted.
package resolver

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// Resolver is what lohibot asks of DNS: the methods of *net.Resolver that
// its callers use, with their meaning (names returned by LookupAddr end in a
// dot; a name with no records fails with a *net.DNSError whose IsNotFound is
// set). Both *net.Resolver and *Client implement it.
type Resolver interface {
	// LookupAddr returns the PTR names of addr.
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	// LookupNetIP returns the addresses of host; network is "ip", "ip4"
	// or "ip6".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var (
	_ Resolver = (*net.Resolver)(nil)
	_ Resolver = (*Client)(nil)
)

// New returns the resolver for --resolver addr: a *Client that sends every
// query to addr (HOST:PORT) and to nothing else, never reading /etc/hosts.
// An empty addr means the system's resolver (net.DefaultResolver, which
// reads /etc/hosts as the system is configured to). It does no I/O.
func New(addr string) (Resolver, error) {
	if addr == "" {
		return net.DefaultResolver, nil
	}
	if err := Check(addr); err != nil {
		return nil, err
	}
	return &Client{Addr: addr}, nil
}

// Check says why addr is not a usable DNS server address: not HOST:PORT
// (an empty HOST is the local machine), or a port that is not a number from 1 to 65535. It does no I/O.
func Check(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("resolver: %q is not HOST:PORT: %w", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("resolver: %q: bad port %q", addr, port)
	}
	return nil
}

// DialContext returns a dial function (for http.Transport.DialContext) that
// resolves the host of addr through r, IPv4 only for "tcp4" and IPv6 only
// for "tcp6", and connects with d to each address in turn until one
// answers. A host that is an address is dialed as it is. It does I/O.
func DialContext(r Resolver, d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return d.DialContext(ctx, network, addr)
		}
		family := "ip"
		switch network {
		case "tcp4", "udp4":
			family = "ip4"
		case "tcp6", "udp6":
			family = "ip6"
		}
		ips, err := r.LookupNetIP(ctx, family, host)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		var first error
		for _, ip := range ips {
			conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return conn, nil
			}
			if first == nil {
				first = err
			}
		}
		if first == nil {
			first = &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: errNoSuchHost, Name: host, IsNotFound: true}}
		}
		return nil, first
	}
}
