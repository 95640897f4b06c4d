package crawler

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/robotstxt"
	"github.com/lohisoft/lohibot/webbotauth"
)

// ErrRefusedAddress is wrapped by *AddressError: the crawler will not
// connect to that address.
var ErrRefusedAddress = errors.New("crawler: refused address")

// AddressError says why the dialer refused an address. It is checked after
// DNS, at dial time, so neither a redirect nor a DNS answer can get past it.
type AddressError struct {
	Addr   string
	Reason string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("crawler: refused to connect to %s: %s", e.Addr, e.Reason)
}

// Unwrap makes errors.Is(err, ErrRefusedAddress) true.
func (e *AddressError) Unwrap() error { return ErrRefusedAddress }

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	ietf      = netip.MustParsePrefix("192.0.0.0/24")
	bench     = netip.MustParsePrefix("198.18.0.0/15")
	reserved  = netip.MustParsePrefix("240.0.0.0/4")
	testNets  = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24")}
	broadcast = netip.MustParseAddr("255.255.255.255")
)

// CheckAddr says whether the crawler may connect to ip: IPv4 only; never
// unspecified, "this network", multicast or broadcast; and, unless
// allowPrivate, never loopback, private, link-local, shared (CGNAT),
// benchmarking, documentation or reserved addresses. It returns nil or an
// *AddressError.
func CheckAddr(ip netip.Addr, allowPrivate bool) error {
	refuse := func(why string) error { return &AddressError{Addr: ip.String(), Reason: why} }
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if !ip.Is4() {
		return refuse("not IPv4 (the bot never uses IPv6)")
	}
	switch {
	case ip.IsUnspecified() || thisNet.Contains(ip):
		return refuse("unspecified address")
	case ip.IsMulticast() || ip == broadcast:
		return refuse("multicast or broadcast address")
	}
	if allowPrivate {
		return nil
	}
	switch {
	case ip.IsLoopback():
		return refuse("loopback address")
	case ip.IsPrivate():
		return refuse("private address")
	case ip.IsLinkLocalUnicast():
		return refuse("link-local address")
	case cgnat.Contains(ip), ietf.Contains(ip), bench.Contains(ip), reserved.Contains(ip):
		return refuse("special-purpose address")
	}
	for _, p := range testNets {
		if p.Contains(ip) {
			return refuse("documentation address")
		}
	}
	return nil
}

// maxLookups bounds the DNS lookups in flight at once. Hundreds of sites
// starting together would otherwise send hundreds of queries in the same
// instant; a resolver drops what it cannot take, and a dropped query is
// only sent again after the resolver timeout (5 s), which stalls that
// host's whole crawl.
const maxLookups = 16

// The addresses a crawler keeps per host name. A host crawled at a gap
// longer than maxKeepAliveGap opens a connection, and so resolves its name,
// for every request: 21 lookups per site and cycle, each a query to the
// resolver. Kept for a minute (many resolvers' shortest TTL), a name is
// resolved about twice per cycle at the default delay; it is dropped when
// its site's cycle ends (lookuper.forget). Every address is still checked
// when it is dialed (CheckAddr), whatever its age.
const (
	dnsKeep     = time.Minute
	maxDNSNames = 1 << 16
)

// lookuper resolves host names to IPv4 addresses, at most maxLookups at a
// time, and keeps each answer for dnsKeep.
type lookuper struct {
	r     resolver.Resolver
	sem   chan struct{}
	now   func() time.Time
	names *lru.Cache[string, resolved]
}

// resolved is a host name's addresses, and until when they are used.
type resolved struct {
	addrs []netip.Addr
	until time.Time
}

func newLookuper(r resolver.Resolver, now func() time.Time) *lookuper {
	names, _ := lru.New[string, resolved](maxDNSNames)
	return &lookuper{r: r, sem: make(chan struct{}, maxLookups), now: now, names: names}
}

// lookup returns host's IPv4 addresses.
func (l *lookuper) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if r, ok := l.names.Get(host); ok && l.now().Before(r.until) {
		return r.addrs, nil
	}
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-l.sem }()
	addrs, err := l.r.LookupNetIP(ctx, "ip4", host)
	if err == nil && len(addrs) > 0 {
		l.names.Add(host, resolved{addrs: addrs, until: l.now().Add(dnsKeep)})
	}
	return addrs, err
}

// forget drops host's addresses: its site's cycle is done. Kept until they
// age out or the least recently used give way, a long-running crawler's
// cache held every name of the last minute and more (BenchmarkServeMemory:
// 9 MB of 12 grown over 45,000 hosts in waves).
func (l *lookuper) forget(host string) {
	l.names.Remove(host)
}

// newClient builds the one HTTP client of a crawler: tcp4 only, the source
// address bound, addresses checked after DNS, explicit timeouts, no
// cookies, no proxy, no automatic redirects (each hop is a request of its
// own), gzip decoded transparently (and bounded by the reader). Names are
// resolved through l.
func newClient(o *Options, l *lookuper) *httpClients {
	// Connecting (DNS included) and the TLS handshake get up to 10 s each,
	// the response headers up to 20 s, all within the overall Timeout.
	step := min(o.Timeout, 10*time.Second)
	d := &net.Dialer{
		Timeout:   step,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return &AddressError{Addr: address, Reason: "unparsable address"}
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return &AddressError{Addr: address, Reason: "unparsable address"}
			}
			return CheckAddr(ip, o.AllowPrivate)
		},
	}
	if o.SourceIP.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: net.IP(o.SourceIP.Unmap().AsSlice())}
	}
	h := &httpClients{every: rotateDials, next: rotateDials}
	// dial resolves addr's host (unless it is an address) and connects to
	// its IPv4 addresses in turn; the address check runs at connect time.
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		h.dials.Add(1)
		ctx, cancel := context.WithTimeout(ctx, step)
		defer cancel()
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: "tcp4", Err: err}
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return sentConnOf(d.DialContext(ctx, "tcp4", addr))
		}
		ips, err := l.lookup(ctx, host)
		if err == nil && len(ips) == 0 {
			err = &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: "tcp4", Err: err}
		}
		var first error
		for _, ip := range ips {
			conn, err := d.DialContext(ctx, "tcp4", net.JoinHostPort(ip.Unmap().String(), port))
			if err == nil {
				return &sentConn{Conn: conn}, nil
			}
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, first
	}
	h.fresh = func() *http.Client {
		tr := &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				return dial(ctx, addr)
			},
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    step,
			ResponseHeaderTimeout:  2 * step,
			ExpectContinueTimeout:  time.Second,
			IdleConnTimeout:        idleConnTimeout,
			MaxIdleConns:           o.MaxConns,
			MaxIdleConnsPerHost:    1,
			MaxConnsPerHost:        1,
			ForceAttemptHTTP2:      true,
			MaxResponseHeaderBytes: 64 << 10,
		}
		return &http.Client{
			Transport: tr,
			Timeout:   o.Timeout,
			Jar:       nil,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	h.cur = h.fresh()
	return h
}

// rotateDials is how many connections a crawler's HTTP client opens
// before a fresh one takes its place (httpClients).
const rotateDials = 4096

// httpClients is the crawler's HTTP client (an http.Client over an
// http.Transport), replaced by a fresh one once it has opened rotateDials
// connections. A Transport keeps entries per host (its idle connections'
// map and their waiting lists, its connections per host) that it never
// gives back: a host's last request, sent with Connection: close, leaves
// its place in the waiting list, and Go's maps do not shrink. In a crawler
// that runs for months and meets new hosts every day (serve) they grew
// with every host ever crawled (BenchmarkServeMemory: 7 MB over 45,000
// hosts). The client replaced closes its idle connections at once and the
// others as their requests end, and is then garbage; a host crawled
// across the change dials once more. One request at a time per host is
// the crawler's own rule (its host state and leases), not the Transport's
// MaxConnsPerHost, so the change never lets two go to a host at once. (The
// client is replaced whole rather than its Transport behind a RoundTripper
// of lohibot's: http.Client watches each request of a Transport it does
// not know with a goroutine and a timer of its own.)
type httpClients struct {
	dials atomic.Int64 // connections opened, all clients together
	fresh func() *http.Client
	every int64 // dials between two replacements (rotateDials)

	mu   sync.Mutex
	cur  *http.Client
	next int64 // dials at which cur is replaced
}

// get returns the client to send a request with.
func (h *httpClients) get() *http.Client {
	h.mu.Lock()
	var old *http.Client
	if n := h.dials.Load(); n >= h.next {
		old, h.cur, h.next = h.cur, h.fresh(), n+h.every
	}
	cur := h.cur
	h.mu.Unlock()
	if old != nil {
		old.CloseIdleConnections()
	}
	return cur
}

// closeIdle closes the current client's idle connections: those of the
// clients replaced were closed when they were.
func (h *httpClients) closeIdle() {
	h.mu.Lock()
	cur := h.cur
	h.mu.Unlock()
	cur.CloseIdleConnections()
}

// maxKeepAliveGap is the longest gap across which the connection to a host
// is kept open for its next request. Across a longer gap (the default delay
// is 5 s) fetch asks for the connection to be closed after the answer: an
// idle keep-alive connection holds memory at both ends (buffers, and on
// each side goroutines) for the whole gap, and common servers close it
// themselves after 5 s (Apache's KeepAliveTimeout), so it would seldom
// serve again. A crawl at the default delay thus holds connections only
// for the requests in flight.
const maxKeepAliveGap = 3 * time.Second

// idleConnTimeout closes a connection that was kept for a short gap and
// then waited longer after all (a Retry-After, a backoff, the end of the
// site's cycle).
const idleConnTimeout = maxKeepAliveGap + 2*time.Second

// response is what one HTTP exchange gave.
type response struct {
	Status    int
	Header    http.Header
	Body      []byte // only for text/html (pages) or a 2xx robots.txt, bounded
	Bytes     int64  // body bytes read, after decompression
	Truncated bool   // the body was longer than the bound
	// Unread says the body was not read to its end (truncated, or not
	// wanted): the connection was closed on a server still sending.
	Unread  bool
	HTML    bool // the content type is HTML
	Err     error
	Timeout bool
	Refused bool // the dialer refused the address
	// NotSent says the crawl was interrupted before a byte of the request
	// was written to a connection: it never left the machine.
	NotSent  bool
	Duration time.Duration
	Stamp    webbotauth.Stamp // what the request was signed with (zero: unsigned)
}

// challengeBody bounds what is read of an error page to recognise a
// challenge.
const challengeBody = 64 << 10

// fetch sends one GET and reads what may be read. It never follows
// redirects and never sends cookies, credentials or a Referer. Unless
// keepAlive, the connection is closed after the answer (Connection: close).
func (c *Crawler) fetch(ctx context.Context, rawURL string, robotsTxt bool, cond db.Validators, keepAlive bool) *response {
	start := time.Now() // Duration is the exchange's real length, not a wait: not on Options.Clock
	r := &response{}
	rctx, cancel := context.WithCancel(ctx) // also ends a drain that takes too long
	defer cancel()
	// What each connection the request was given had written when it got
	// it (GotConn; the transport may try a second one): a request
	// interrupted before any of them wrote another byte never left the
	// machine. (A connection kept from the host's last request is given
	// at once and the request written after: interrupted in between, it
	// was given a connection and never sent.)
	var given sentMarks
	rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		given.add(info.Conn)
	}})
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, rawURL, nil)
	if err != nil {
		r.Err = fmt.Errorf("crawler: %w", err)
		return r
	}
	req.Close = !keepAlive
	if req.URL.User != nil {
		// net/http would send them as Authorization: Basic.
		r.Err = errors.New("crawler: refused to send a URL with credentials")
		return r
	}
	req.Header.Set("User-Agent", c.ua)
	if robotsTxt {
		req.Header.Set("Accept", "text/plain, */*;q=0.1")
	} else {
		req.Header.Set("Accept", "text/html, application/xhtml+xml;q=0.9, */*;q=0.1")
	}
	// A conditional request (RFC 9110 13.1): the version fetched last time.
	if cond.ETag != "" {
		req.Header.Set("If-None-Match", cond.ETag)
	}
	if cond.LastModified != "" {
		req.Header.Set("If-Modified-Since", cond.LastModified)
	}
	if c.opts.Signer != nil {
		if r.Stamp, err = c.opts.Signer.Sign(req); err != nil {
			r.Err = fmt.Errorf("crawler: %w", err)
			return r
		}
	}
	resp, err := c.client.get().Do(req)
	if err != nil {
		r.Duration = time.Since(start)
		r.Err = err
		r.classify(ctx)
		r.NotSent = ctx.Err() != nil && !given.wrote()
		return r
	}
	defer resp.Body.Close()
	r.Status = resp.StatusCode
	r.Header = resp.Header
	r.HTML = isHTML(resp.Header.Get("Content-Type"))
	var limit int64
	switch {
	case robotsTxt && resp.StatusCode >= 200 && resp.StatusCode < 300:
		limit = robotstxt.MaxSize
	case robotsTxt:
		limit = 0
	case r.HTML && resp.StatusCode >= 200 && resp.StatusCode < 300:
		limit = MaxBody
	case r.HTML && resp.StatusCode >= 400:
		limit = challengeBody
	}
	if limit > 0 {
		b, err := readUpTo(resp.Body, resp.ContentLength, limit)
		if int64(len(b)) > limit {
			b, r.Truncated = b[:limit], true
		}
		r.Body, r.Bytes = b, int64(len(b))
		if err != nil {
			r.Err = err
			r.classify(ctx)
		}
	}
	if limit == 0 && (robotsTxt || r.HTML) && resp.ContentLength >= 0 && resp.ContentLength <= drainMax {
		// A short answer that is not kept (an unavailable robots.txt, a
		// redirect's page) is read to its end and dropped, so that the
		// connection can serve the host's next request instead of a new
		// one (lookup, connect) being opened. A longer one, or one that
		// does not arrive within drainTime, is left: the connection closes.
		t := time.AfterFunc(drainTime, cancel)
		n, err := io.Copy(io.Discard, resp.Body)
		t.Stop()
		r.Bytes = n
		r.Unread = err != nil
	} else if limit == 0 && resp.ContentLength != 0 {
		r.Unread = true
	}
	r.Unread = r.Unread || r.Truncated
	r.Duration = time.Since(start)
	return r
}

// readUpTo reads r to its end, or to limit+1 bytes when it holds more,
// into a buffer of the length announced (n, -1 when unknown) when that is
// at most limit: one allocation for a body whose length is known, where
// io.ReadAll grows its buffer from 512 bytes.
func readUpTo(r io.Reader, n, limit int64) ([]byte, error) {
	size := int64(512)
	if n >= 0 && n <= limit {
		size = n + 1 // (the read that finds the end needs room for a byte)
	}
	b := make([]byte, 0, size)
	lr := io.LimitReader(r, limit+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// sentConn is a connection of the crawler's client that knows whether it
// wrote since a given moment, for fetch to tell a request that never left
// the machine (NotSent) from one that did. It is safe for concurrent use.
type sentConn struct {
	net.Conn
	// writing counts the writes under way; written the bytes written.
	// A write adds to writing before it starts and takes away after it
	// added what it wrote, so a reader that finds no write under way
	// (read first) finds every byte written so far.
	writing atomic.Int64
	written atomic.Int64
}

// sentConnOf wraps a connection just dialled, or passes its error on.
func sentConnOf(conn net.Conn, err error) (net.Conn, error) {
	if err != nil {
		return nil, err
	}
	return &sentConn{Conn: conn}, nil
}

func (c *sentConn) Write(b []byte) (int, error) {
	c.writing.Add(1)
	defer c.writing.Add(-1)
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	return n, err
}

// sentMarks are the connections a request was given and what each had
// written then. It is safe for concurrent use.
type sentMarks struct {
	mu    sync.Mutex // guards marks
	marks []sentMark
}

// sentMark is a connection and what it had written when a request was
// given it; conn is nil for a connection that is not a sentConn.
type sentMark struct {
	conn    *sentConn
	written int64
}

// add notes that the request was given conn, looking through TLS to the
// connection beneath.
func (m *sentMarks) add(conn net.Conn) {
	if t, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = t.NetConn()
	}
	mark := sentMark{}
	if sc, ok := conn.(*sentConn); ok {
		mark = sentMark{conn: sc, written: sc.written.Load()}
	}
	m.mu.Lock()
	m.marks = append(m.marks, mark)
	m.mu.Unlock()
}

// wrote says whether any of the request may have left the machine: a
// connection it was given wrote since, or is writing (a connection that is
// not a sentConn counts as written). It is exact once the transport has
// closed the connections, as it does before it returns a request it
// cancelled: a write begun after that writes nothing. In doubt it says
// yes: a request written is never taken for one not sent.
func (m *sentMarks) wrote() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mk := range m.marks {
		if mk.conn == nil || mk.conn.writing.Load() > 0 || mk.conn.written.Load() > mk.written {
			return true
		}
	}
	return false
}

// What fetch reads of an answer it does not keep, to reuse the connection.
const (
	drainMax  = 4 << 10
	drainTime = time.Second
)

func (r *response) classify(ctx context.Context) {
	var ne net.Error
	switch {
	case errors.Is(r.Err, ErrRefusedAddress):
		r.Refused = true
	case ctx.Err() != nil:
	case errors.Is(r.Err, context.DeadlineExceeded), errors.As(r.Err, &ne) && ne.Timeout():
		r.Timeout = true
	}
}

func isHTML(ct string) bool {
	if ct == "" {
		return true // no type: let the parser find nothing if it is not HTML
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/html")
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}
