// Package resolver builds the *net.Resolver behind the global --resolver
// flag: every DNS lookup goes to one given server instead of the system's.
package resolver

import (
	"context"
	"fmt"
	"net"
	"time"
)

// New returns a resolver that sends every query to addr (HOST:PORT), over
// UDP with a TCP fallback as the Go resolver does. An empty addr means the
// system's resolver (net.DefaultResolver).
func New(addr string) (*net.Resolver, error) {
	if addr == "" {
		return net.DefaultResolver, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("resolver: %q is not HOST:PORT: %w", addr, err)
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}, nil
}
