// Package policy decides which sites lohibot may crawl: it turns what people
// type into site names, keeps the exclusions and the crawl list with their
// append-only event log, and offers the Gate the crawler asks before every
// request.
package policy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// ErrBadSite is the sentinel wrapped by every *SiteError: the input does not
// name a site.
var ErrBadSite = errors.New("not a site")

// SiteError says why an input is not a site.
type SiteError struct {
	Input  string
	Reason string
}

func (e *SiteError) Error() string {
	// Never echo a password the input carried (user:password@host).
	return fmt.Sprintf("policy: %q is not a site: %s", MaskPassword(e.Input), e.Reason)
}

// MaskPassword returns input (a domain or URL) with the password of any
// user:password@ before its host replaced by xxxxx, as package redact
// writes it. Without a scheme, "a:b@host" may be a scheme too
// (mailto:webmaster@example.com), so only what follows the colon is masked.
func MaskPassword(input string) string {
	start, at := userinfoSpan(input)
	if at < 0 {
		return input
	}
	colon := strings.IndexByte(input[start:at], ':')
	if colon < 0 {
		return input
	}
	return input[:start+colon+1] + "xxxxx" + input[at:]
}

// userinfoSpan finds the authority of input (after "scheme://" or "//",
// else from the start, up to the first "/", "?" or "#") and the last "@"
// in it: where the authority starts, and the index of the "@" (-1 for
// none).
func userinfoSpan(input string) (start, at int) {
	if i := strings.Index(input, "://"); i >= 0 {
		start = i + 3
	} else if i := strings.Index(input, "//"); i >= 0 && strings.TrimSpace(input[:i]) == "" {
		start = i + 2
	}
	end := len(input)
	if i := strings.IndexAny(input[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at = strings.LastIndexByte(input[start:end], '@')
	if at >= 0 {
		at += start
	}
	return start, at
}

// WithoutUserinfo returns input (a domain or URL, as SiteOf takes) with
// any credentials before its host cut out, for showing it:
// "http://u:pw@x.com/a" gives "http://x.com/a", "u:pw@x.com" gives "x.com".
// It does no other change.
func WithoutUserinfo(input string) string {
	start, at := userinfoSpan(input)
	if at < 0 {
		return input
	}
	return input[:start] + input[at+1:]
}

// Unwrap makes errors.Is(err, ErrBadSite) true.
func (e *SiteError) Unwrap() error { return ErrBadSite }

// hostProfile is UTS #46 lookup processing with STD3 rules: it lowercases,
// maps and validates, and turns U-labels into punycode A-labels.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.StrictDomainName(true),
	idna.VerifyDNSLength(true),
	idna.Transitional(false),
)

// SiteOf returns the site named by input, as the project defines it: the
// registrable domain (eTLD+1 under the Public Suffix List, private section
// included), lowercase, IDN as punycode A-labels, no trailing dot. The input
// may be a bare domain or a URL with an http or https scheme, with or without
// port, path or query:
//
//	https://WWW.Shop.Example.co.uk:8443/x?y  → example.co.uk
//	bücher.de                                 → xn--bcher-kva.de
//	alice.github.io                           → alice.github.io
//
// Empty input, IP addresses, bare public suffixes, other schemes and names
// that are not valid hostnames or IDNA are refused with a *SiteError.
// SiteOf(SiteOf(x)) == SiteOf(x) for every x it accepts.
func SiteOf(input string) (string, error) {
	host, err := hostOfInput(input)
	if err != nil {
		return "", err
	}
	return siteOfHost(input, host)
}

// HostOf returns the normalised host named by input (a domain or an http(s)
// URL): lowercase, punycode, no trailing dot, no port. It refuses what SiteOf
// refuses, except that the host may be a subdomain of the site.
func HostOf(input string) (string, error) {
	host, err := hostOfInput(input)
	if err != nil {
		return "", err
	}
	if _, err := siteOfHost(input, host); err != nil {
		return "", err
	}
	return host, nil
}

// SiteOfHost returns the site of an already normalised host name, such as
// url.URL.Hostname() of a URL the crawler is about to fetch.
func SiteOfHost(host string) (string, error) {
	h, err := normalizeHost(host, host)
	if err != nil {
		return "", err
	}
	return siteOfHost(host, h)
}

func siteOfHost(input, host string) (string, error) {
	site, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return "", &SiteError{input, fmt.Sprintf("%s is a public suffix, not a registrable domain", host)}
	}
	return site, nil
}

func hostOfInput(input string) (string, error) {
	s := strings.TrimSpace(input)
	if s == "" {
		return "", &SiteError{input, "empty"}
	}
	var rawHost string
	switch {
	case strings.Contains(s, "://"):
		if port, ok := urlPort(s); !ok {
			return "", &SiteError{input, fmt.Sprintf("bad port %q", port)}
		}
		u, err := url.Parse(s)
		if err != nil {
			return "", &SiteError{input, "not a valid URL"}
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
		default:
			return "", &SiteError{input, fmt.Sprintf("scheme %q is not http or https", u.Scheme)}
		}
		rawHost = u.Host
	case strings.HasPrefix(s, "//"):
		rawHost = strings.TrimPrefix(s, "//")
	default:
		if i := strings.IndexByte(s, ':'); i > 0 && !looksLikePort(s[i+1:]) && !strings.HasPrefix(s, "[") {
			seg := s[i+1:]
			if j := strings.IndexAny(seg, "/?#"); j >= 0 {
				seg = seg[:j]
			}
			switch {
			case strings.Contains(seg, "@") && strings.Contains(s[:i], "."):
				// user.name:password@host: not a port, and not echoed.
				return "", &SiteError{input, "a user name and password before the host (the bot never logs in)"}
			case seg != "" && strings.Trim(seg, "0123456789") == "",
				strings.Contains(s[:i], "."):
				// A host name before the colon (a scheme has no dot in
				// practice): what follows is a bad port, not a path.
				return "", &SiteError{input, fmt.Sprintf("bad port %q", seg)}
			default:
				return "", &SiteError{input, fmt.Sprintf("scheme %q is not http or https", s[:i])}
			}
		}
		rawHost = s
	}
	// Cut path, query and fragment, then user info and port.
	if i := strings.IndexAny(rawHost, "/?#"); i >= 0 {
		rawHost = rawHost[:i]
	}
	if i := strings.LastIndexByte(rawHost, '@'); i >= 0 {
		rawHost = rawHost[i+1:]
	}
	if strings.HasPrefix(rawHost, "[") {
		return "", &SiteError{input, "an IP address is not a site"}
	}
	if h, port, err := net.SplitHostPort(rawHost); err == nil {
		if port != "" && !looksLikePort(port) {
			return "", &SiteError{input, fmt.Sprintf("bad port %q", port)}
		}
		rawHost = h
	}
	return normalizeHost(input, rawHost)
}

func normalizeHost(input, h string) (string, error) {
	if h == "" {
		return "", &SiteError{input, "no host name"}
	}
	if _, err := netip.ParseAddr(strings.TrimSuffix(h, ".")); err == nil {
		return "", &SiteError{input, "an IP address is not a site"}
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || strings.HasSuffix(h, ".") {
		return "", &SiteError{input, "empty label in host name"}
	}
	if u, err := url.PathUnescape(h); err == nil {
		h = u
	}
	ascii, err := hostProfile.ToASCII(h)
	if err != nil {
		return "", &SiteError{input, fmt.Sprintf("not a valid host name: %v", trimIDNAError(err))}
	}
	if _, err := netip.ParseAddr(ascii); err == nil || looksLikeIPv4(ascii) {
		return "", &SiteError{input, "an IP address is not a site"}
	}
	if !strings.Contains(ascii, ".") {
		if _, icann := publicsuffix.PublicSuffix(ascii); icann {
			return "", &SiteError{input, fmt.Sprintf("%s is a top-level domain (a public suffix), not a registrable domain", ascii)}
		}
		return "", &SiteError{input, "not under a known top-level domain"}
	}
	// Round trip: the A-labels must decode to valid U-labels.
	if _, err := hostProfile.ToUnicode(ascii); err != nil {
		return "", &SiteError{input, fmt.Sprintf("not valid IDNA: %v", trimIDNAError(err))}
	}
	return ascii, nil
}

// looksLikeIPv4 catches the numeric forms browsers read as IPv4 (a last label
// made of digits, as in 1.2.3.4 or 10.1).
func looksLikeIPv4(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func looksLikePort(s string) bool {
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if s == "" || len(s) > 5 {
		return false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
		n = n*10 + int(r-'0')
	}
	return n >= 1 && n <= 65535
}

// urlPort checks the port of a URL with a scheme (s contains "://"): it
// returns the port as written and whether it is a usable one (1-65535, or
// none at all). url.Parse would only say "not a valid URL" of most bad ports.
func urlPort(s string) (string, bool) {
	authority := s[strings.Index(s, "://")+3:]
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority = authority[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	if strings.HasPrefix(authority, "[") {
		// An IP literal: refused later as an IP address.
		return "", true
	}
	i := strings.LastIndexByte(authority, ':')
	if i < 0 {
		return "", true
	}
	port := authority[i+1:]
	if port == "" {
		return "", true // "host:" is the default port (RFC 3986 3.2.3)
	}
	return port, looksLikePort(port)
}

func trimIDNAError(err error) string {
	return strings.TrimPrefix(err.Error(), "idna: ")
}
