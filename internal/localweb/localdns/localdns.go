// Package localdns runs an in-process DNS server on loopback for tests and
// the demo: A and PTR records from a table, empty answers for AAAA of known
// names, NXDOMAIN for unknown names, and names that fail with SERVFAIL or
// never answer.
package localdns

import (
	"net"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// Server is a running DNS server. Its records may be changed while it runs;
// it is safe for concurrent use.
type Server struct {
	// Addr is the HOST:PORT the server listens on (UDP), for --resolver.
	Addr string

	srv *dns.Server

	mu       sync.RWMutex // guards the maps below
	a        map[string][]net.IP
	aaaa     map[string][]net.IP
	ptr      map[string][]string
	servfail map[string]bool
	silent   map[string]bool

	askedMu sync.Mutex     // guards asked
	asked   map[string]int // names asked (lowercase, no trailing dot) → queries
}

// NewServer starts a DNS server on 127.0.0.1 with no records. Close it when
// done.
func NewServer() (*Server, error) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Addr:     pc.LocalAddr().String(),
		a:        map[string][]net.IP{},
		aaaa:     map[string][]net.IP{},
		ptr:      map[string][]string{},
		servfail: map[string]bool{},
		silent:   map[string]bool{},
		asked:    map[string]int{},
	}
	mux := dns.NewServeMux()
	mux.HandleFunc(".", s.handle)
	started := make(chan struct{})
	s.srv = &dns.Server{PacketConn: pc, Handler: mux, NotifyStartedFunc: func() { close(started) }}
	go s.srv.ActivateAndServe()
	<-started
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Shutdown() }

func fqdn(name string) string { return dns.Fqdn(strings.ToLower(name)) }

// Asked returns how many queries the server received per name (any type),
// by name in lowercase without its trailing dot: the record of which names
// a client looked up.
func (s *Server) Asked() map[string]int {
	s.askedMu.Lock()
	defer s.askedMu.Unlock()
	out := make(map[string]int, len(s.asked))
	for k, v := range s.asked {
		out[k] = v
	}
	return out
}

// AddA adds A records for name (IPv4 addresses).
func (s *Server) AddA(name string, ips ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ip := range ips {
		s.a[fqdn(name)] = append(s.a[fqdn(name)], net.ParseIP(ip).To4())
	}
}

// AddAAAA adds AAAA records for name.
func (s *Server) AddAAAA(name string, ips ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ip := range ips {
		s.aaaa[fqdn(name)] = append(s.aaaa[fqdn(name)], net.ParseIP(ip))
	}
}

// AddPTR adds PTR records for ip (IPv4 or IPv6) pointing at names.
func (s *Server) AddPTR(ip string, names ...string) {
	rev, err := dns.ReverseAddr(ip)
	if err != nil {
		panic("dnstest: bad IP " + ip)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		s.ptr[rev] = append(s.ptr[rev], fqdn(n))
	}
}

// ServFail makes every query for name (or, for an IP, its PTR name) answer
// SERVFAIL.
func (s *Server) ServFail(name string) { s.mark(s.servfail, name) }

// Silent makes every query for name (or, for an IP, its PTR name) go
// unanswered, so clients time out.
func (s *Server) Silent(name string) { s.mark(s.silent, name) }

func (s *Server) mark(m map[string]bool, name string) {
	key := fqdn(name)
	if rev, err := dns.ReverseAddr(name); err == nil && net.ParseIP(name) != nil {
		key = rev
	}
	s.mu.Lock()
	m[key] = true
	s.mu.Unlock()
}

func (s *Server) handle(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	s.askedMu.Lock()
	s.asked[strings.TrimSuffix(name, ".")]++
	s.askedMu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.silent[name] {
		return
	}
	if s.servfail[name] {
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
		return
	}
	known := len(s.a[name]) > 0 || len(s.aaaa[name]) > 0 || len(s.ptr[name]) > 0
	if !known {
		m.Rcode = dns.RcodeNameError
		w.WriteMsg(m)
		return
	}
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: q.Name, Rrtype: t, Class: dns.ClassINET, Ttl: 60}
	}
	switch q.Qtype {
	case dns.TypeA:
		for _, ip := range s.a[name] {
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA), A: ip})
		}
	case dns.TypeAAAA:
		for _, ip := range s.aaaa[name] {
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: ip})
		}
	case dns.TypePTR:
		for _, n := range s.ptr[name] {
			m.Answer = append(m.Answer, &dns.PTR{Hdr: hdr(dns.TypePTR), Ptr: n})
		}
	}
	w.WriteMsg(m)
}
