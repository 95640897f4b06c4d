package resolver_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/dnstest"
	"github.com/lohisoft/lohibot/internal/resolver"
)

func TestResolverUsesServer(t *testing.T) {
	srv, err := dnstest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.AddA("site1.test", "127.0.0.1")
	srv.AddPTR("79.139.58.98", "crawler1.bot.lohisoft.com")
	srv.ServFail("broken.test")
	r, err := resolver.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, "site1.test")
	if err != nil || !slices.Equal(addrs, []string{"127.0.0.1"}) {
		t.Errorf("LookupHost(site1.test) = %v, %v; want [127.0.0.1]", addrs, err)
	}
	names, err := r.LookupAddr(ctx, "79.139.58.98")
	if err != nil || !slices.Equal(names, []string{"crawler1.bot.lohisoft.com."}) {
		t.Errorf("LookupAddr = %v, %v", names, err)
	}
	_, err = r.LookupHost(ctx, "nothing.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("LookupHost(nothing.test) err = %v, want not found", err)
	}
	_, err = r.LookupHost(ctx, "broken.test")
	if !errors.As(err, &dnsErr) || dnsErr.IsNotFound {
		t.Errorf("LookupHost(broken.test) err = %v, want a temporary failure", err)
	}
	if _, err := resolver.New("no-port"); err == nil {
		t.Error("New(no-port) succeeded, want error")
	}
}

func TestNewRefusesBadAddresses(t *testing.T) {
	for _, addr := range []string{"nohostport", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:dns", "127.0.0.1:-1"} {
		if _, err := resolver.New(addr); err == nil {
			t.Errorf("New(%q) = nil error, want a refusal", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:53", ":53", "[::1]:5353", "dns.example:65535"} {
		if _, err := resolver.New(addr); err != nil {
			t.Errorf("New(%q) = %v, want a resolver", addr, err)
		}
	}
}
