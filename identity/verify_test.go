package identity_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/localweb/localdns"
	"github.com/lohisoft/lohibot/internal/resolver"
)

// Addresses of the test DNS zone (fleetDNS).
const (
	crawler1     = "79.139.58.98"  // crawler1.bot.lohisoft.com, both ways
	crawler2     = "79.139.58.121" // crawler2.bot.lohisoft.com, both ways
	forgedPTR    = "203.0.113.10"  // PTR crawler1.bot.lohisoft.com, whose A is crawler1's
	bareDomain   = "203.0.113.11"  // www.lohisoft.com, both ways: not the bot zone
	lookAlike    = "203.0.113.12"  // bot.lohisoft.com.evil.example, both ways
	xbot         = "203.0.113.13"  // xbot.lohisoft.com, both ways
	noPTR        = "203.0.113.14"  // NXDOMAIN
	ptrServFail  = "203.0.113.15"  // SERVFAIL on the PTR
	ptrTimeout   = "203.0.113.16"  // no answer to the PTR
	aServFail    = "203.0.113.17"  // PTR crawler3.bot.lohisoft.com, SERVFAIL on its A
	aTimeout     = "203.0.113.18"  // PTR crawler4.bot.lohisoft.com, no answer to its A
	onlyAAAA     = "203.0.113.19"  // PTR crawler5.bot.lohisoft.com, which has only AAAA
	zoneApex     = "203.0.113.20"  // PTR bot.lohisoft.com itself, both ways
	twoPTRs      = "203.0.113.21"  // PTR mail.example.net and crawler6.bot.lohisoft.com (both ways)
	ipv6Claiming = "2001:db8::1"   // PTR crawler1.bot.lohisoft.com, AAAA back
)

// lookupTimeout is the verifiers' per-lookup timeout in tests: short, yet
// long enough for a loaded machine running the race detector.
const lookupTimeout = time.Second

// fleetDNS starts a DNS server with the records above and returns a
// verifier on it with a short lookup timeout.
func fleetDNS(t testing.TB) (*localdns.Server, *identity.Verifier) {
	t.Helper()
	srv, err := localdns.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	both := func(ip, name string) {
		srv.AddPTR(ip, name)
		srv.AddA(name, ip)
	}
	both(crawler1, "crawler1.bot.lohisoft.com")
	both(crawler2, "crawler2.bot.lohisoft.com")
	srv.AddPTR(forgedPTR, "crawler1.bot.lohisoft.com")
	both(bareDomain, "www.lohisoft.com")
	both(lookAlike, "bot.lohisoft.com.evil.example")
	both(xbot, "xbot.lohisoft.com")
	srv.ServFail(ptrServFail)
	srv.Silent(ptrTimeout)
	srv.AddPTR(aServFail, "crawler3.bot.lohisoft.com")
	srv.ServFail("crawler3.bot.lohisoft.com")
	srv.AddPTR(aTimeout, "crawler4.bot.lohisoft.com")
	srv.Silent("crawler4.bot.lohisoft.com")
	srv.AddPTR(onlyAAAA, "crawler5.bot.lohisoft.com")
	srv.AddAAAA("crawler5.bot.lohisoft.com", "2001:db8::5")
	both(zoneApex, "bot.lohisoft.com")
	srv.AddPTR(twoPTRs, "mail.example.net", "crawler6.bot.lohisoft.com")
	srv.AddA("mail.example.net", twoPTRs)
	srv.AddA("crawler6.bot.lohisoft.com", twoPTRs)
	srv.AddPTR(ipv6Claiming, "crawler1.bot.lohisoft.com")
	srv.AddAAAA("crawler1.bot.lohisoft.com", ipv6Claiming)
	r, err := resolver.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return srv, identity.New(r, &identity.Options{Timeout: lookupTimeout})
}

func TestVerify(t *testing.T) {
	t.Parallel()
	_, v := fleetDNS(t)
	tests := []struct {
		ip        string
		wantIP    string
		status    identity.Status
		hostnames []string
		reason    string
	}{
		{crawler1, crawler1, identity.StatusGenuine, []string{"crawler1.bot.lohisoft.com"}, "crawler1.bot.lohisoft.com resolves back to 79.139.58.98"},
		{crawler2, crawler2, identity.StatusGenuine, []string{"crawler2.bot.lohisoft.com"}, "crawler2.bot.lohisoft.com resolves back to 79.139.58.121"},
		{" ::ffff:79.139.58.98 ", crawler1, identity.StatusGenuine, []string{"crawler1.bot.lohisoft.com"}, "crawler1.bot.lohisoft.com resolves back to 79.139.58.98"},
		{twoPTRs, twoPTRs, identity.StatusGenuine, []string{"mail.example.net", "crawler6.bot.lohisoft.com"}, "crawler6.bot.lohisoft.com resolves back to 203.0.113.21"},
		{forgedPTR, forgedPTR, identity.StatusImpostor, []string{"crawler1.bot.lohisoft.com"}, "PTR claims our name but crawler1.bot.lohisoft.com resolves to 79.139.58.98, not 203.0.113.10"},
		{bareDomain, bareDomain, identity.StatusImpostor, []string{"www.lohisoft.com"}, "PTR www.lohisoft.com not under .bot.lohisoft.com"},
		{lookAlike, lookAlike, identity.StatusImpostor, []string{"bot.lohisoft.com.evil.example"}, "PTR bot.lohisoft.com.evil.example not under .bot.lohisoft.com"},
		{xbot, xbot, identity.StatusImpostor, []string{"xbot.lohisoft.com"}, "PTR xbot.lohisoft.com not under .bot.lohisoft.com"},
		{zoneApex, zoneApex, identity.StatusImpostor, []string{"bot.lohisoft.com"}, "PTR bot.lohisoft.com not under .bot.lohisoft.com"},
		{onlyAAAA, onlyAAAA, identity.StatusImpostor, []string{"crawler5.bot.lohisoft.com"}, "PTR claims our name but crawler5.bot.lohisoft.com has no A record"},
		{noPTR, noPTR, identity.StatusImpostor, []string{}, "no PTR record"},
		{ipv6Claiming, ipv6Claiming, identity.StatusImpostor, []string{}, "IPv6 address: LohiSoftBot never uses IPv6"},
		{ptrServFail, ptrServFail, identity.StatusUnverifiable, []string{}, ""},
		{ptrTimeout, ptrTimeout, identity.StatusUnverifiable, []string{}, "unverifiable: PTR lookup failed: timeout"},
		{aServFail, aServFail, identity.StatusUnverifiable, []string{"crawler3.bot.lohisoft.com"}, ""},
		{aTimeout, aTimeout, identity.StatusUnverifiable, []string{"crawler4.bot.lohisoft.com"}, "unverifiable: A lookup of crawler4.bot.lohisoft.com failed: timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			t.Parallel()
			got, err := v.Verify(context.Background(), tt.ip)
			if err != nil {
				t.Fatalf("Verify(%q) error %v", tt.ip, err)
			}
			if got.IP != tt.wantIP || got.Status != tt.status || got.Genuine != (tt.status == identity.StatusGenuine) {
				t.Errorf("Verify(%q) = %+v, want ip %s status %s", tt.ip, got, tt.wantIP, tt.status)
			}
			if got.Hostnames == nil || !slices.Equal(got.Hostnames, tt.hostnames) {
				t.Errorf("Verify(%q).Hostnames = %#v, want %#v", tt.ip, got.Hostnames, tt.hostnames)
			}
			if tt.reason != "" && got.Reason != tt.reason {
				t.Errorf("Verify(%q).Reason = %q, want %q", tt.ip, got.Reason, tt.reason)
			}
			if got.Reason == "" || (got.Status == identity.StatusUnverifiable) != strings.HasPrefix(got.Reason, "unverifiable: ") {
				t.Errorf("Verify(%q).Reason = %q, want non-empty and starting with \"unverifiable: \" exactly when unverifiable", tt.ip, got.Reason)
			}
		})
	}
}

func TestVerifyBadInput(t *testing.T) {
	_, v := fleetDNS(t)
	for _, in := range []string{"", "crawler1.bot.lohisoft.com", "79.139.58.98/32", "79.139.58.98:80", "1.2.3", "999.1.1.1"} {
		if got, err := v.Verify(context.Background(), in); !errors.Is(err, identity.ErrBadIP) {
			t.Errorf("Verify(%q) = %+v, %v; want ErrBadIP", in, got, err)
		}
	}
}

func TestVerifyTimeoutIsPerLookup(t *testing.T) {
	t.Parallel()
	_, v := fleetDNS(t)
	start := time.Now()
	got := v.VerifyAddr(context.Background(), netip.MustParseAddr(aTimeout))
	if got.Status != identity.StatusUnverifiable {
		t.Errorf("VerifyAddr(%s) = %+v, want unverifiable", aTimeout, got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("VerifyAddr(%s) took %v despite a %v lookup timeout", aTimeout, d, lookupTimeout)
	}
}

func TestIsBotHost(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"crawler1.bot.lohisoft.com", true},
		{"crawler1.bot.lohisoft.com.", true},
		{"Crawler1.BOT.LohiSoft.COM.", true},
		{"a.b.bot.lohisoft.com", true},
		{"bot.lohisoft.com", false},
		{"bot.lohisoft.com.", false},
		{".bot.lohisoft.com", false},
		{"crawler1..bot.lohisoft.com", false},
		{"www.lohisoft.com", false},
		{"lohisoft.com", false},
		{"xbot.lohisoft.com", false},
		{"crawler1.xbot.lohisoft.com", false},
		{"bot.lohisoft.com.evil.example", false},
		{"crawler1.bot.lohisoft.com.evil.example.", false},
		{"crawler1.bot.lohisoft.co", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := identity.IsBotHost(tt.name); got != tt.want {
				t.Errorf("IsBotHost(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestVerifyAll(t *testing.T) {
	_, v := fleetDNS(t)
	ips := []string{noPTR, crawler1, forgedPTR, crawler2, crawler1, ipv6Claiming}
	addrs := make([]netip.Addr, len(ips))
	for i, ip := range ips {
		addrs[i] = netip.MustParseAddr(ip)
	}
	got := v.VerifyAll(context.Background(), addrs)
	want := []bool{false, true, false, true, true, false}
	for i, r := range got {
		if r.IP != ips[i] || r.Genuine != want[i] {
			t.Errorf("VerifyAll(%v)[%d] = %+v, want ip %s genuine %v", ips, i, r, ips[i], want[i])
		}
	}
}
