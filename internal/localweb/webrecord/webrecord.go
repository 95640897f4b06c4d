// Package webrecord records what a local web server received: every request
// with its host, path, headers of interest, start, end and status, and how
// many requests each host had in flight at once. It is the web server's own
// record that the demo and the tests hold the crawler to; it is small and has
// no test dependencies, so the demo can link it.
package webrecord

import (
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unique"
)

// Recorder records every request a test server receives: the truth that
// tests assert on (what was asked, by whom, when it started and ended, what
// was answered, and how many requests each host had in flight at once). It
// is safe for concurrent use; the zero value is ready to use.
type Recorder struct {
	// TallyOnly keeps no Hit, only the tallies per host (Tallies) and the
	// in-flight maxima: for records of hundreds of thousands of requests
	// (benchmarks), where keeping every hit would weigh more than the
	// crawler measured. Set it before the first request.
	TallyOnly bool
	// Clock, when set, is the clock of the hits' Start and End instead of
	// time.Now: a test on a fake clock (clocktest) records on it. Set it
	// before the first request.
	Clock func() time.Time

	mu       sync.Mutex // guards the fields below
	hits     []Hit
	tallies  map[string]*Tally
	inflight map[string]int
	maxIn    map[string]int
	counts   map[string]int // host+path → requests so far
}

// Begin records the arrival of r (v6 says it came over IPv6). It returns the
// writer to answer through (it keeps the status), the request's host
// (lowercase, without port), how many times that host and path have been
// asked for so far, this request included, and end, to call once the answer
// is complete.
func (rec *Recorder) Begin(rw http.ResponseWriter, r *http.Request, v6 bool) (sw *StatusWriter, host string, n int, end func()) {
	host = strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	// The strings that repeat from request to request are kept once.
	host = unique.Make(host).Value()
	hit := Hit{
		Host: host, Method: unique.Make(r.Method).Value(), Path: r.URL.RequestURI(), UserAgent: unique.Make(r.UserAgent()).Value(),
		RemoteAddr: r.RemoteAddr, IPv6: v6, Cookie: r.Header.Get("Cookie"), Referer: r.Referer(),
		Auth: r.Header.Get("Authorization") + r.Header.Get("Proxy-Authorization"), Start: rec.now(),
		Authority: unique.Make(r.Host).Value(),
	}
	if !rec.TallyOnly {
		hit.Header = r.Header.Clone()
	}
	rec.mu.Lock()
	if rec.inflight == nil {
		rec.inflight, rec.maxIn, rec.counts = map[string]int{}, map[string]int{}, map[string]int{}
	}
	if rec.tallies == nil {
		rec.tallies = map[string]*Tally{}
	}
	tl := rec.tallies[host]
	if tl == nil {
		tl = &Tally{MinGap: -1}
		rec.tallies[host] = tl
	}
	tl.Requests++
	if r.URL.Path != "/robots.txt" {
		tl.Pages++
	}
	if !tl.lastEnd.IsZero() {
		if g := hit.Start.Sub(tl.lastEnd); tl.MinGap < 0 || g < tl.MinGap {
			tl.MinGap = g
		}
	}
	rec.inflight[host]++
	rec.maxIn[host] = max(rec.maxIn[host], rec.inflight[host])
	key := host + " " + r.URL.Path
	rec.counts[key]++
	n = rec.counts[key]
	rec.mu.Unlock()

	sw = &StatusWriter{ResponseWriter: rw}
	end = func() {
		hit.End = rec.now()
		hit.Status = sw.Status
		rec.mu.Lock()
		if rec.inflight[host]--; rec.inflight[host] == 0 {
			delete(rec.inflight, host) // a record of many hosts keeps only the busy ones here
		}
		if tl := rec.tallies[host]; tl != nil && hit.End.After(tl.lastEnd) {
			tl.lastEnd = hit.End
		}
		if !rec.TallyOnly {
			hit.Seq = len(rec.hits) + 1
			rec.hits = append(rec.hits, hit)
		}
		rec.mu.Unlock()
	}
	return sw, host, n, end
}

// now reads the record's clock.
func (rec *Recorder) now() time.Time {
	if rec.Clock != nil {
		return rec.Clock()
	}
	return time.Now()
}

// Tally sums up the requests one host received.
type Tally struct {
	Requests int // requests received
	Pages    int // requests for a path other than /robots.txt
	// MinGap is the shortest gap between the end of a request and the
	// start of the next (-1 before a second request).
	MinGap  time.Duration
	lastEnd time.Time
}

// Tallies returns the tally of every host seen since the last Reset.
func (rec *Recorder) Tallies() map[string]Tally {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make(map[string]Tally, len(rec.tallies))
	for k, v := range rec.tallies {
		out[k] = *v
	}
	return out
}

// Hits returns every request seen so far, in order of arrival (none with
// TallyOnly).
func (rec *Recorder) Hits() []Hit {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Hit(nil), rec.hits...)
}

// Idle waits, at most d, until no request is in flight, and reports
// whether none is: a request's hit is recorded once its answer is complete
// (Begin's end), which can be after the client read all it wanted of it.
// Read the record after Idle to see every request that arrived before.
func (rec *Recorder) Idle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		rec.mu.Lock()
		busy := len(rec.inflight)
		rec.mu.Unlock()
		if busy == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// HitsFor returns the requests seen for one host, in order of arrival.
func (rec *Recorder) HitsFor(host string) []Hit {
	var out []Hit
	for _, h := range rec.Hits() {
		if h.Host == host {
			out = append(out, h)
		}
	}
	return out
}

// MaxInFlight returns, per host, the most requests the server ever had in
// flight at once (counted live, from handler start to handler end).
func (rec *Recorder) MaxInFlight() map[string]int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make(map[string]int, len(rec.maxIn))
	for k, v := range rec.maxIn {
		out[k] = v
	}
	return out
}

// Reset forgets the hits, the tallies, the in-flight maxima and the per-path counters
// (so scenario sites fail again from their first request).
func (rec *Recorder) Reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.hits = nil
	rec.tallies = nil
	rec.maxIn = map[string]int{}
	rec.counts = map[string]int{}
}

// StatusWriter is an http.ResponseWriter that remembers the status written.
type StatusWriter struct {
	http.ResponseWriter
	Status int // the status sent, 0 until the answer starts
}

// WriteHeader sends the status line and remembers code.
func (s *StatusWriter) WriteHeader(code int) {
	if s.Status == 0 {
		s.Status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write sends body bytes (and a 200 status first, if none was sent).
func (s *StatusWriter) Write(b []byte) (int, error) {
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush sends what is buffered, when the underlying writer can.
func (s *StatusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hit is one request the server saw.
type Hit struct {
	Seq        int // order of arrival, from 1
	Host       string
	Method     string
	Path       string // path and query as sent
	UserAgent  string
	RemoteAddr string // the client's IP:port (shows the source address)
	IPv6       bool   // arrived on the [::1] listener
	Cookie     string // any Cookie header (should be empty)
	Referer    string // any Referer header (should be empty)
	Auth       string // any Authorization or Proxy-Authorization header (should be empty)
	Start      time.Time
	End        time.Time // when the handler returned (after the body was written or the client went away)
	Status     int
	Authority  string      // the Host as sent, port included
	Header     http.Header // the request's header fields (a copy), Signature ones included
}

// MaxOverlap returns, per host, the largest number of hits whose
// [Start, End] intervals overlap.
func MaxOverlap(hits []Hit) map[string]int {
	type ev struct {
		t     time.Time
		delta int
	}
	per := map[string][]ev{}
	for _, h := range hits {
		per[h.Host] = append(per[h.Host], ev{h.Start, +1}, ev{h.End, -1})
	}
	out := map[string]int{}
	for host, evs := range per {
		sort.Slice(evs, func(i, j int) bool {
			if evs[i].t.Equal(evs[j].t) {
				return evs[i].delta > evs[j].delta // touching counts as overlap
			}
			return evs[i].t.Before(evs[j].t)
		})
		cur, maxv := 0, 0
		for _, e := range evs {
			cur += e.delta
			if cur > maxv {
				maxv = cur
			}
		}
		out[host] = maxv
	}
	return out
}

// Gaps returns, per host, the gaps between the end of each hit and the
// start of the next one, in order of arrival.
func Gaps(hits []Hit) map[string][]time.Duration {
	per := map[string][]Hit{}
	for _, h := range hits {
		per[h.Host] = append(per[h.Host], h)
	}
	out := map[string][]time.Duration{}
	for host, hs := range per {
		sort.Slice(hs, func(i, j int) bool { return hs[i].Start.Before(hs[j].Start) })
		for i := 1; i < len(hs); i++ {
			out[host] = append(out[host], hs[i].Start.Sub(hs[i-1].End))
		}
	}
	return out
}

// MinGap returns, per host with at least two hits, the smallest gap.
func MinGap(hits []Hit) map[string]time.Duration {
	out := map[string]time.Duration{}
	for host, gs := range Gaps(hits) {
		for i, g := range gs {
			if i == 0 || g < out[host] {
				out[host] = g
			}
		}
	}
	return out
}
