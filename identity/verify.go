// Package identity proves who LohiSoftBot is, as the bot's public page
// promises: forward-confirmed reverse DNS (FCrDNS) of an address under
// bot.lohisoft.com (Verifier), the machine-readable list of the crawler
// fleet's addresses (Crawler, IPList), and the check of a webmaster's access
// log against the crawler's own request log (VerifyLog).
//
// The `lohibot verify`, `verify-log` and `ips` commands, the crawler's source
// address and the bot page all use this package, so they cannot disagree.
package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/internal/resolver"
)

// BotDomain is the DNS zone of the crawler fleet. An address is LohiSoftBot's
// only when its PTR name is strictly below this zone (crawler1.bot.lohisoft.com)
// and that name resolves back to the address. The bare lohisoft.com zone, and
// bot.lohisoft.com itself, never qualify.
const BotDomain = "bot.lohisoft.com"

// DefaultTimeout is the time allowed for one DNS lookup when
// Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// ErrBadIP is returned (wrapped) for input that is not an IP address. It is
// bad input, not a failed verification.
var ErrBadIP = errors.New("identity: not an IP address")

// Status is the outcome of verifying one address.
type Status string

// The outcomes of a verification.
const (
	// StatusGenuine: a PTR name under .bot.lohisoft.com resolves back to
	// the address.
	StatusGenuine Status = "genuine"
	// StatusImpostor: the DNS answered, and the address is not ours (no PTR,
	// a PTR outside our zone, or a name of ours that does not point back;
	// any IPv6 address).
	StatusImpostor Status = "impostor"
	// StatusUnverifiable: a DNS lookup failed (SERVFAIL, timeout, network
	// error), so nothing can be said yet. Never reported as an impostor.
	StatusUnverifiable Status = "unverifiable"
)

// Result is the answer for one address. Its JSON form is the contract of
// `lohibot verify --json`: {"ip","genuine","hostnames","reason"}.
type Result struct {
	// IP is the address as verified: IPv4-mapped IPv6 addresses
	// (::ffff:79.139.58.98, as dual-stack servers log them) are unmapped.
	IP string `json:"ip"`
	// Status tells impostors from addresses that could not be verified;
	// its JSON name is the verdict of the command-line contract.
	Status  Status `json:"verdict"`
	Genuine bool   `json:"genuine"`
	// Hostnames are the PTR names of the address, lowercase, without the
	// trailing dot; never nil.
	Hostnames []string `json:"hostnames"`
	// Reason says why, for a human.
	Reason string `json:"reason"`
}

// Options configures a Verifier. A nil *Options is equivalent to a zero
// Options.
type Options struct {
	// Timeout bounds each DNS lookup (the PTR lookup, and each forward
	// lookup). Zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives debug records of failed lookups. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Verifier checks addresses by forward-confirmed reverse DNS. It keeps no
// state between calls and is safe for concurrent use by multiple goroutines.
type Verifier struct {
	r       resolver.Resolver
	timeout time.Duration
	log     *slog.Logger
}

// New returns a Verifier that asks r (see internal/resolver.New for the
// --resolver flag); a nil r means net.DefaultResolver.
func New(r resolver.Resolver, opts *Options) *Verifier {
	var o Options
	if opts != nil {
		o = *opts
	}
	if r == nil {
		r = net.DefaultResolver
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Verifier{r: r, timeout: o.Timeout, log: o.Logger}
}

// ParseIP parses an IPv4 or IPv6 address, with surrounding spaces allowed,
// and unmaps IPv4-mapped IPv6 addresses. It fails with an error wrapping
// ErrBadIP for anything else (host names, prefixes, ports).
func ParseIP(s string) (netip.Addr, error) {
	addr, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: %q", ErrBadIP, s)
	}
	return addr.Unmap(), nil
}

// Verify checks the address written in ip. It returns an error (wrapping
// ErrBadIP) only when ip is not an IP address; DNS failures are reported in
// the Result as StatusUnverifiable. It does I/O and blocks for at most a few
// lookup timeouts.
func (v *Verifier) Verify(ctx context.Context, ip string) (Result, error) {
	addr, err := ParseIP(ip)
	if err != nil {
		return Result{}, err
	}
	return v.VerifyAddr(ctx, addr), nil
}

// VerifyAll checks every address of addrs, at most 8 at a time, and returns
// the results in the same order. It does I/O and blocks until all are done.
func (v *Verifier) VerifyAll(ctx context.Context, addrs []netip.Addr) []Result {
	out := make([]Result, len(addrs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, a := range addrs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = v.VerifyAddr(ctx, a)
		})
	}
	wg.Wait()
	return out
}

// VerifyAddr checks addr by forward-confirmed reverse DNS, as the bot page
// tells webmasters to:
//
//  1. an IPv6 address is never LohiSoftBot (the crawler dials IPv4 only);
//  2. the PTR names of the address are looked up; no PTR (NXDOMAIN, or an
//     empty answer) means not genuine;
//  3. only names strictly below .bot.lohisoft.com count (see IsBotHost);
//  4. a forward lookup of such a name, A records only, must return addr.
//
// Any name that passes makes the address genuine. A lookup that fails for
// another reason than "no such name" makes the answer unverifiable, unless
// another name proves the address genuine. Each lookup gets its own timeout
// (Options.Timeout) under ctx. It does I/O.
func (v *Verifier) VerifyAddr(ctx context.Context, addr netip.Addr) Result {
	addr = addr.Unmap()
	res := Result{IP: addr.String(), Hostnames: []string{}, Status: StatusImpostor}
	if !addr.Is4() {
		res.Reason = "IPv6 address: LohiSoftBot never uses IPv6"
		return res
	}
	names, err := v.lookupPTR(ctx, addr)
	for _, n := range names {
		if n = normalizeHost(n); n != "" {
			res.Hostnames = append(res.Hostnames, n)
		}
	}
	if err != nil && len(res.Hostnames) == 0 {
		if isNotFound(err) {
			res.Reason = "no PTR record"
			return res
		}
		v.log.Debug("identity: PTR lookup failed", "ip", res.IP, "err", err)
		res.Status = StatusUnverifiable
		res.Reason = "unverifiable: PTR lookup failed: " + lookupError(err)
		return res
	}
	if len(res.Hostnames) == 0 {
		res.Reason = "no PTR record"
		return res
	}
	var (
		rejected    []string // why each of our names failed
		unverified  []string // our names whose forward lookup failed
		foreign     []string // names outside our zone
		ourNameSeen bool
	)
	for _, name := range res.Hostnames {
		if !IsBotHost(name) {
			foreign = append(foreign, name)
			continue
		}
		ourNameSeen = true
		addrs, err := v.lookupA(ctx, name)
		switch {
		case err != nil && isNotFound(err):
			rejected = append(rejected, name+" has no A record")
		case err != nil:
			v.log.Debug("identity: A lookup failed", "ip", res.IP, "host", name, "err", err)
			unverified = append(unverified, "A lookup of "+name+" failed: "+lookupError(err))
		case containsAddr(addrs, addr):
			res.Genuine = true
			res.Status = StatusGenuine
			res.Reason = name + " resolves back to " + res.IP
			return res
		case len(addrs) == 0:
			rejected = append(rejected, name+" has no A record")
		default:
			rejected = append(rejected, fmt.Sprintf("%s resolves to %s, not %s", name, joinAddrs(addrs), res.IP))
		}
	}
	if len(unverified) > 0 {
		res.Status = StatusUnverifiable
		res.Reason = "unverifiable: " + strings.Join(unverified, "; ")
		return res
	}
	if !ourNameSeen {
		res.Reason = fmt.Sprintf("PTR %s not under .%s", strings.Join(foreign, ", "), BotDomain)
		return res
	}
	res.Reason = "PTR claims our name but " + strings.Join(rejected, "; ")
	return res
}

func (v *Verifier) lookupPTR(ctx context.Context, addr netip.Addr) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	return v.r.LookupAddr(ctx, addr.String())
}

// lookupA asks for the A records of name only. The name is made fully
// qualified so that no search domain of the system's resolver is tried.
func (v *Verifier) lookupA(ctx context.Context, name string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	return v.r.LookupNetIP(ctx, "ip4", name+".")
}

// IsBotHost reports whether name is strictly below .bot.lohisoft.com, case
// insensitively and with or without the trailing dot: crawler1.bot.lohisoft.com
// is, while bot.lohisoft.com, www.lohisoft.com, xbot.lohisoft.com and
// bot.lohisoft.com.evil.example are not. It does no I/O.
func IsBotHost(name string) bool {
	name = normalizeHost(name)
	const suffix = "." + BotDomain
	if !strings.HasSuffix(name, suffix) {
		return false
	}
	label := name[:len(name)-len(suffix)]
	return label != "" && !strings.HasPrefix(label, ".") && !strings.HasSuffix(label, ".")
}

// normalizeHost lowercases a DNS name and drops one trailing dot.
func normalizeHost(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// lookupError words a failed lookup briefly: timeouts and server failures,
// without the resolver's address.
func lookupError(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &dnsErr) && dnsErr.IsTimeout:
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &dnsErr):
		return dnsErr.Err
	}
	return err.Error()
}

func containsAddr(addrs []netip.Addr, want netip.Addr) bool {
	for _, a := range addrs {
		if a.Unmap() == want {
			return true
		}
	}
	return false
}

func joinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.Unmap().String()
	}
	return strings.Join(s, ", ")
}
