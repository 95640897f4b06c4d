// Package resolver builds the *net.Resolver behind the global --resolver
// flag: every DNS lookup goes to one given server instead of the system's.
package resolver

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// New returns a resolver that sends every query to addr (HOST:PORT), over
// UDP with a TCP fallback as the Go resolver does. An empty addr means the
// system's resolver (net.DefaultResolver).
func New(addr string) (*net.Resolver, error) {
	if addr == "" {
		return net.DefaultResolver, nil
	}
	if err := Check(addr); err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}, nil
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
