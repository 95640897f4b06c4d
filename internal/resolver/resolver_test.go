package resolver_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/lohisoft/lohibot/internal/localweb/localdns"
	"github.com/lohisoft/lohibot/internal/resolver"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestResolverUsesServer(t *testing.T) {
	srv, err := localdns.NewServer()
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
	ctx := testCtx(t)
	got, err := r.LookupNetIP(ctx, "ip4", "site1.test")
	if err != nil || !slices.Equal(got, addrs("127.0.0.1")) {
		t.Errorf("LookupNetIP(site1.test) = %v, %v; want [127.0.0.1]", got, err)
	}
	names, err := r.LookupAddr(ctx, "79.139.58.98")
	if err != nil || !slices.Equal(names, []string{"crawler1.bot.lohisoft.com."}) {
		t.Errorf("LookupAddr = %v, %v", names, err)
	}
	_, err = r.LookupNetIP(ctx, "ip4", "nothing.test")
	if !isNotFound(err) {
		t.Errorf("LookupNetIP(nothing.test) err = %v, want not found", err)
	}
	_, err = r.LookupAddr(ctx, "203.0.113.9")
	if !isNotFound(err) {
		t.Errorf("LookupAddr(203.0.113.9) err = %v, want not found", err)
	}
	_, err = r.LookupNetIP(ctx, "ip4", "broken.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || dnsErr.IsNotFound || !dnsErr.IsTemporary {
		t.Errorf("LookupNetIP(broken.test) err = %#v, want a temporary failure", err)
	}
	if _, err := resolver.New("no-port"); err == nil {
		t.Error("New(no-port) succeeded, want error")
	}
}

// TestResolverIgnoresHosts: with a server given, names and addresses of
// /etc/hosts (localhost, 127.0.0.1, ::1) are asked of the server, and only
// of it.
func TestResolverIgnoresHosts(t *testing.T) {
	srv, err := localdns.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.AddPTR("127.0.0.1", "crawler7.bot.lohisoft.com", "crawler8.bot.lohisoft.com")
	srv.AddPTR("::1", "crawler6.bot.lohisoft.com")
	srv.AddA("crawler7.bot.lohisoft.com", "127.0.0.1")
	srv.AddAAAA("crawler6.bot.lohisoft.com", "::1")
	r, err := resolver.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	tests := []struct {
		addr string
		want []string
	}{
		{"127.0.0.1", []string{"crawler7.bot.lohisoft.com.", "crawler8.bot.lohisoft.com."}},
		{"::1", []string{"crawler6.bot.lohisoft.com."}},
	}
	for _, tt := range tests {
		names, err := r.LookupAddr(ctx, tt.addr)
		if err != nil || !slices.Equal(names, tt.want) {
			t.Errorf("LookupAddr(%s) = %v, %v; want %v", tt.addr, names, err, tt.want)
		}
	}
	if got, err := r.LookupNetIP(ctx, "ip4", "crawler7.bot.lohisoft.com."); err != nil || !slices.Equal(got, addrs("127.0.0.1")) {
		t.Errorf("LookupNetIP(ip4, crawler7) = %v, %v; want [127.0.0.1]", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip6", "crawler6.bot.lohisoft.com"); err != nil || !slices.Equal(got, addrs("::1")) {
		t.Errorf("LookupNetIP(ip6, crawler6) = %v, %v; want [::1]", got, err)
	}
	for _, host := range []string{"localhost", "runsc", "vm"} {
		if got, err := r.LookupNetIP(ctx, "ip4", host); !isNotFound(err) {
			t.Errorf("LookupNetIP(ip4, %s) = %v, %v; want not found (the server has no record)", host, got, err)
		}
	}
	srv.AddA("localhost", "127.0.0.9")
	if got, err := r.LookupNetIP(ctx, "ip4", "localhost"); err != nil || !slices.Equal(got, addrs("127.0.0.9")) {
		t.Errorf("LookupNetIP(ip4, localhost) = %v, %v; want the server's [127.0.0.9]", got, err)
	}
}

// TestNewWithoutServer: no --resolver means the system's resolver, which
// reads /etc/hosts.
func TestNewWithoutServer(t *testing.T) {
	r, err := resolver.New("")
	if err != nil {
		t.Fatal(err)
	}
	if r != net.DefaultResolver {
		t.Fatalf("New(\"\") = %T %v, want net.DefaultResolver", r, r)
	}
	got, err := r.LookupNetIP(testCtx(t), "ip4", "localhost")
	for i := range got {
		got[i] = got[i].Unmap() // the Go resolver answers ::ffff:127.0.0.1
	}
	if err != nil || !slices.Contains(got, netip.MustParseAddr("127.0.0.1")) {
		t.Errorf("LookupNetIP(ip4, localhost) = %v, %v; want 127.0.0.1 from /etc/hosts", got, err)
	}
}

// TestEmptyAnswer: NOERROR without records of the type asked is "not found",
// as the Go resolver says it.
func TestEmptyAnswer(t *testing.T) {
	srv, err := localdns.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.AddA("v4only.test", "192.0.2.1")
	srv.AddAAAA("v6only.test", "2001:db8::1")
	r := &resolver.Client{Addr: srv.Addr}
	ctx := testCtx(t)
	if got, err := r.LookupNetIP(ctx, "ip6", "v4only.test"); !isNotFound(err) || got != nil {
		t.Errorf("LookupNetIP(ip6, v4only.test) = %v, %v; want not found", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip4", "v6only.test"); !isNotFound(err) || got != nil {
		t.Errorf("LookupNetIP(ip4, v6only.test) = %v, %v; want not found", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip", "v4only.test"); err != nil || !slices.Equal(got, addrs("192.0.2.1")) {
		t.Errorf("LookupNetIP(ip, v4only.test) = %v, %v; want [192.0.2.1]", got, err)
	}
	if got, err := r.LookupAddr(ctx, "192.0.2.1"); !isNotFound(err) || len(got) != 0 {
		t.Errorf("LookupAddr(192.0.2.1) = %v, %v; want not found", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip4", "192.0.2.7"); err != nil || !slices.Equal(got, addrs("192.0.2.7")) {
		t.Errorf("LookupNetIP(ip4, 192.0.2.7) = %v, %v; want the address itself", got, err)
	}
	if _, err := r.LookupNetIP(ctx, "tcp", "v4only.test"); err == nil {
		t.Error("LookupNetIP(tcp, ...) succeeded, want an unknown network error")
	}
}

// serve runs handler on UDP and TCP on one loopback port and returns it.
// handler is told whether the query came over TCP.
func serve(t *testing.T, handler func(req *dns.Msg, tcp bool) *dns.Msg) string {
	t.Helper()
	var (
		pc  net.PacketConn
		ln  net.Listener
		err error
	)
	for range 20 {
		if pc, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp4", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		if m := handler(req, w.LocalAddr().Network() == "tcp"); m != nil {
			w.WriteMsg(m)
		}
	})
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go s.ActivateAndServe()
		<-started
		t.Cleanup(func() { s.Shutdown() })
	}
	return pc.LocalAddr().String()
}

func rr(t *testing.T, s string) dns.RR {
	t.Helper()
	r, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// zone answers from records, as a non-recursive server: only the records
// owned by the name asked, CNAMEs included; NXDOMAIN for names it lacks.
func zone(t *testing.T, records ...string) func(*dns.Msg, bool) *dns.Msg {
	var rrs []dns.RR
	for _, s := range records {
		rrs = append(rrs, rr(t, s))
	}
	return func(req *dns.Msg, _ bool) *dns.Msg {
		m := new(dns.Msg)
		m.SetReply(req)
		q := req.Question[0]
		known := false
		for _, r := range rrs {
			if !strings.EqualFold(r.Header().Name, q.Name) {
				continue
			}
			known = true
			if r.Header().Rrtype == q.Qtype || r.Header().Rrtype == dns.TypeCNAME {
				m.Answer = append(m.Answer, r)
			}
		}
		if !known {
			m.Rcode = dns.RcodeNameError
		}
		return m
	}
}

func TestCNAMEChain(t *testing.T) {
	// A recursive server's answer: the whole chain, in any order.
	full := serve(t, func(req *dns.Msg, _ bool) *dns.Msg {
		m := new(dns.Msg)
		m.SetReply(req)
		if req.Question[0].Qtype == dns.TypeA {
			m.Answer = []dns.RR{
				rr(t, "b.example.test. 60 IN CNAME c.example.test."),
				rr(t, "other.example.test. 60 IN A 192.0.2.99"), // not on the chain
				rr(t, "C.example.test. 60 IN A 192.0.2.3"),
				rr(t, "www.example.test. 60 IN CNAME b.example.test."),
			}
		}
		return m
	})
	// An authoritative server: each hop asked for in turn; a loop; a
	// chain that ends at a name that does not exist.
	hops := zone(t,
		"www.example.test. 60 IN CNAME a.example.test.",
		"a.example.test. 60 IN CNAME b.example.net.",
		"b.example.net. 60 IN A 192.0.2.4",
		"b.example.net. 60 IN A 192.0.2.5",
		"loop1.example.test. 60 IN CNAME loop2.example.test.",
		"loop2.example.test. 60 IN CNAME loop1.example.test.",
		"dangling.example.test. 60 IN CNAME gone.example.test.",
		"4.3.2.1.in-addr.arpa. 60 IN CNAME 4.0/25.3.2.1.in-addr.arpa.",
		"4.0/25.3.2.1.in-addr.arpa. 60 IN PTR host.example.test.",
	)
	ctx := testCtx(t)
	r := &resolver.Client{Addr: full}
	if got, err := r.LookupNetIP(ctx, "ip4", "www.example.test"); err != nil || !slices.Equal(got, addrs("192.0.2.3")) {
		t.Errorf("whole chain: LookupNetIP = %v, %v; want [192.0.2.3]", got, err)
	}
	r = &resolver.Client{Addr: serve(t, hops)}
	if got, err := r.LookupNetIP(ctx, "ip4", "www.example.test"); err != nil || !slices.Equal(got, addrs("192.0.2.4", "192.0.2.5")) {
		t.Errorf("chain across zones: LookupNetIP = %v, %v; want [192.0.2.4 192.0.2.5]", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip4", "loop1.example.test"); err == nil || isNotFound(err) {
		t.Errorf("CNAME loop: LookupNetIP = %v, %v; want a failure", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip4", "dangling.example.test"); !isNotFound(err) {
		t.Errorf("dangling CNAME: LookupNetIP = %v, %v; want not found", got, err)
	}
	// RFC 2317 classless reverse delegation: PTR behind a CNAME.
	if got, err := r.LookupAddr(ctx, "1.2.3.4"); err != nil || !slices.Equal(got, []string{"host.example.test."}) {
		t.Errorf("RFC 2317: LookupAddr = %v, %v; want [host.example.test.]", got, err)
	}
}

// TestTCPFallback: a truncated UDP answer is asked again over TCP.
func TestTCPFallback(t *testing.T) {
	var tcpQueries atomic.Int32
	addr := serve(t, func(req *dns.Msg, tcp bool) *dns.Msg {
		m := new(dns.Msg)
		m.SetReply(req)
		if !tcp {
			m.Truncated = true
			return m
		}
		tcpQueries.Add(1)
		for i := 1; i <= 3; i++ {
			m.Answer = append(m.Answer, &dns.PTR{
				Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 60},
				Ptr: "crawler" + string(rune('0'+i)) + ".bot.lohisoft.com."})
		}
		return m
	})
	r := &resolver.Client{Addr: addr}
	got, err := r.LookupAddr(testCtx(t), "127.0.0.1")
	want := []string{"crawler1.bot.lohisoft.com.", "crawler2.bot.lohisoft.com.", "crawler3.bot.lohisoft.com."}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("LookupAddr = %v, %v; want %v", got, err, want)
	}
	if n := tcpQueries.Load(); n != 1 {
		t.Errorf("%d queries over TCP, want 1", n)
	}
}

// TestMalformedPTR: names that are not host names are left out, and said so.
func TestMalformedPTR(t *testing.T) {
	addr := serve(t, zone(t,
		`1.2.0.192.in-addr.arpa. 60 IN PTR good.example.test.`,
		`1.2.0.192.in-addr.arpa. 60 IN PTR bad\032name.example.test.`,
	))
	got, err := (&resolver.Client{Addr: addr}).LookupAddr(testCtx(t), "192.0.2.1")
	if err == nil || !slices.Equal(got, []string{"good.example.test."}) {
		t.Errorf("LookupAddr = %q, %v; want [good.example.test.] and an error", got, err)
	}
}

// TestTimeout: a server that never answers fails as a timeout within the
// Client's Timeout times Attempts, or the caller's deadline.
func TestTimeout(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var queries atomic.Int32
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			queries.Add(1)
		}
	}()
	r := &resolver.Client{Addr: pc.LocalAddr().String(), Timeout: 100 * time.Millisecond, Attempts: 2}
	start := time.Now()
	_, err = r.LookupNetIP(testCtx(t), "ip4", "slow.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsTimeout || dnsErr.IsNotFound {
		t.Errorf("LookupNetIP = %#v, want a timeout", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("LookupNetIP took %v, want about 200ms (2 attempts of 100ms)", d)
	}
	if n := queries.Load(); n != 2 {
		t.Errorf("the server got %d queries, want 2", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = (&resolver.Client{Addr: pc.LocalAddr().String()}).LookupAddr(ctx, "192.0.2.1")
	if !errors.As(err, &dnsErr) || !dnsErr.IsTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("LookupAddr past the deadline = %#v, want a timeout wrapping context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("LookupAddr took %v past a 150ms deadline", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = (&resolver.Client{Addr: pc.LocalAddr().String()}).LookupAddr(ctx, "192.0.2.1")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("LookupAddr canceled = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("LookupAddr took %v after its ctx was canceled at 100ms", d)
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

// BenchmarkLookupNetIP compares one A lookup through a Client with the Go
// resolver dialing the same server (what New returned before).
//
//	go test -run '^$' -bench LookupNetIP ./internal/resolver/
func BenchmarkLookupNetIP(b *testing.B) {
	srv, err := localdns.NewServer()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	srv.AddA("site1.test", "127.0.0.1")
	goRes := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr)
	}}
	for _, r := range []struct {
		name string
		r    resolver.Resolver
	}{{"client", &resolver.Client{Addr: srv.Addr}}, {"net.Resolver", goRes}} {
		b.Run(r.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := r.r.LookupNetIP(ctx, "ip4", "site1.test"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
