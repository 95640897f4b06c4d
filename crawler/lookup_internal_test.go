package crawler

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/localweb/localdns"
	"github.com/lohisoft/lohibot/internal/resolver"
)

// TestLookupAsksOnlyTheResolver: with --resolver, a name that /etc/hosts
// lists (localhost) is resolved by the given server, and is not found when
// the server has no record of it.
func TestLookupAsksOnlyTheResolver(t *testing.T) {
	srv, res := localResolver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := newLookuper(res, time.Now).lookup(ctx, "localhost")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("lookup(localhost) without a record = %v, %v; want not found", got, err)
	}
	srv.AddA("localhost", "127.0.0.9")
	got, err = newLookuper(res, time.Now).lookup(ctx, "localhost")
	if err != nil || !slices.Equal(got, []netip.Addr{netip.MustParseAddr("127.0.0.9")}) {
		t.Errorf("lookup(localhost) = %v, %v; want the server's [127.0.0.9]", got, err)
	}
}

// localResolver starts an in-process DNS server, closed when the test
// ends, and returns it with the resolver (--resolver) that asks it.
func localResolver(t *testing.T) (*localdns.Server, resolver.Resolver) {
	t.Helper()
	srv, err := localdns.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	res, err := resolver.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return srv, res
}
