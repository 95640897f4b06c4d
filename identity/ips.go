package identity

import (
	"fmt"
	"net/netip"
	"time"
)

// Crawler is one machine of the crawler fleet: the IPv4 address it sends
// every request from, and the host name its PTR record names (which resolves
// back to IP). The crawler binds IP as its source address (--source-ip), the
// bot page and `lohibot ips` publish it, and `lohibot verify` checks it, all
// from the same list.
type Crawler struct {
	IP   netip.Addr `json:"ip"`
	Host string     `json:"host"`
}

// DefaultCrawlers returns the fleet the bot page names: 79.139.58.98
// (crawler1.bot.lohisoft.com) and 79.139.58.121 (crawler2.bot.lohisoft.com).
// It returns a new slice on every call.
func DefaultCrawlers() []Crawler {
	return []Crawler{
		{IP: netip.MustParseAddr("79.139.58.98"), Host: "crawler1." + BotDomain},
		{IP: netip.MustParseAddr("79.139.58.121"), Host: "crawler2." + BotDomain},
	}
}

// CheckCrawlers reports the first way in which cs breaks the page's promises:
// an empty list, an address that is not IPv4, a host name not strictly below
// .bot.lohisoft.com, or an address or name listed twice.
func CheckCrawlers(cs []Crawler) error {
	if len(cs) == 0 {
		return fmt.Errorf("identity: no crawler address configured")
	}
	ips := make(map[netip.Addr]bool, len(cs))
	hosts := make(map[string]bool, len(cs))
	for _, c := range cs {
		if !c.IP.Is4() {
			return fmt.Errorf("identity: crawler address %v is not IPv4 (LohiSoftBot never uses IPv6)", c.IP)
		}
		if !IsBotHost(c.Host) {
			return fmt.Errorf("identity: crawler host %q is not under .%s", c.Host, BotDomain)
		}
		h := normalizeHost(c.Host)
		if ips[c.IP] || hosts[h] {
			return fmt.Errorf("identity: crawler %v (%s) listed twice", c.IP, h)
		}
		ips[c.IP], hosts[h] = true, true
	}
	return nil
}

// IPList is the machine-readable list of the crawler's addresses, in the
// shape the big crawlers publish (Google's googlebot.json):
//
//	{"creationTime": "2026-05-01T10:00:00Z", "prefixes": [{"ipv4Prefix": "79.139.58.98/32"}, ...]}
type IPList struct {
	// CreationTime is when the list was made, RFC 3339 in UTC.
	CreationTime string   `json:"creationTime"`
	Prefixes     []Prefix `json:"prefixes"`
}

// Prefix is one entry of an IPList: exactly one of its fields is set.
type Prefix struct {
	IPv4Prefix string `json:"ipv4Prefix,omitempty"`
	IPv6Prefix string `json:"ipv6Prefix,omitempty"`
}

// NewIPList returns the list of cs's addresses as single-address prefixes
// (/32), in the order given, made at now. It does no I/O.
func NewIPList(cs []Crawler, now time.Time) IPList {
	l := IPList{CreationTime: now.UTC().Format(time.RFC3339), Prefixes: make([]Prefix, 0, len(cs))}
	for _, c := range cs {
		p := netip.PrefixFrom(c.IP, c.IP.BitLen())
		if c.IP.Is4() {
			l.Prefixes = append(l.Prefixes, Prefix{IPv4Prefix: p.String()})
		} else {
			l.Prefixes = append(l.Prefixes, Prefix{IPv6Prefix: p.String()})
		}
	}
	return l
}
