package identity_test

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/identity"
)

func TestDefaultCrawlers(t *testing.T) {
	got := identity.DefaultCrawlers()
	want := []identity.Crawler{
		{IP: netip.MustParseAddr("79.139.58.98"), Host: "crawler1.bot.lohisoft.com"},
		{IP: netip.MustParseAddr("79.139.58.121"), Host: "crawler2.bot.lohisoft.com"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("DefaultCrawlers() mismatch (-want +got):\n%s", diff)
	}
	if err := identity.CheckCrawlers(got); err != nil {
		t.Errorf("CheckCrawlers(DefaultCrawlers()) = %v, want nil", err)
	}
	got[0].Host = "changed"
	if identity.DefaultCrawlers()[0].Host != "crawler1.bot.lohisoft.com" {
		t.Error("DefaultCrawlers() shares its slice between calls")
	}
}

func TestCheckCrawlers(t *testing.T) {
	ip := netip.MustParseAddr
	tests := []struct {
		name string
		cs   []identity.Crawler
		ok   bool
	}{
		{"empty", nil, false},
		{"ipv6", []identity.Crawler{{IP: ip("2001:db8::1"), Host: "c1.bot.lohisoft.com"}}, false},
		{"bare domain", []identity.Crawler{{IP: ip("79.139.58.98"), Host: "crawler1.lohisoft.com"}}, false},
		{"look-alike", []identity.Crawler{{IP: ip("79.139.58.98"), Host: "crawler1.bot.lohisoft.com.evil.example"}}, false},
		{"duplicate ip", []identity.Crawler{{IP: ip("79.139.58.98"), Host: "c1.bot.lohisoft.com"}, {IP: ip("79.139.58.98"), Host: "c2.bot.lohisoft.com"}}, false},
		{"duplicate host", []identity.Crawler{{IP: ip("79.139.58.98"), Host: "c1.bot.lohisoft.com"}, {IP: ip("79.139.58.99"), Host: "C1.bot.lohisoft.com."}}, false},
		{"three", []identity.Crawler{{IP: ip("79.139.58.98"), Host: "c1.bot.lohisoft.com"}, {IP: ip("79.139.58.99"), Host: "c2.bot.lohisoft.com"}, {IP: ip("79.139.58.100"), Host: "c3.bot.lohisoft.com."}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := identity.CheckCrawlers(tt.cs); (err == nil) != tt.ok {
				t.Errorf("CheckCrawlers(%v) = %v, want ok %v", tt.cs, err, tt.ok)
			}
		})
	}
}

func TestNewIPList(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 30, 0, 0, time.FixedZone("CEST", 2*3600))
	l := identity.NewIPList(identity.DefaultCrawlers(), now)
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"creationTime":"2026-05-01T10:30:00Z","prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"}]}`
	if string(b) != want {
		t.Errorf("json(NewIPList(DefaultCrawlers())) = %s, want %s", b, want)
	}
}
