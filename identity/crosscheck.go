package identity

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/webbotauth"
	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// DefaultTolerance is how far apart the time of a line of a webmaster's log
// and the time of our request may be for the two to match, when
// LogOptions.Tolerance is zero: the servers' clocks differ, and the log time
// may be the end of the request rather than its start.
const DefaultTolerance = 2 * time.Minute

// ErrBadLog is wrapped by VerifyLog's errors when the access log itself
// cannot be read (a broken gzip stream, a read error): bad input, as opposed
// to a failing request log.
var ErrBadLog = errors.New("identity: cannot read access log")

// SentRequest is one request of our own request log, as the cross-check
// needs it.
type SentRequest struct {
	ID     int64
	URL    string
	SentAt time.Time
}

// RequestLog is our own log of the requests the crawler sent, which
// VerifyLog matches a webmaster's log against.
type RequestLog interface {
	// Sent calls fn for every request sent at a time in [from, to], in any
	// order, streaming. It stops at fn's first error and returns it.
	Sent(ctx context.Context, from, to time.Time, fn func(SentRequest) error) error
}

// StoreRequests returns the request log kept in the requests table of s.
// Each call to Sent is one query on the sent_at index.
func StoreRequests(s *db.Store) RequestLog { return storeRequests{s: s} }

type storeRequests struct{ s *db.Store }

func (l storeRequests) Sent(ctx context.Context, from, to time.Time, fn func(SentRequest) error) error {
	return l.s.RequestsSent(ctx, from, to, func(r db.SentRequest) error { return fn(SentRequest(r)) })
}

// LogOptions configures VerifyLog. A nil *LogOptions is equivalent to a zero
// LogOptions.
type LogOptions struct {
	// Format is the log's format. Empty means: detected from the first line
	// that parses (json, then combined, then common).
	Format Format
	// Tolerance is the largest time difference between a log line and our
	// request for them to match. Zero means DefaultTolerance.
	Tolerance time.Duration
	// AssumeClaimed makes every line a claim, whatever its user agent: for a
	// log that holds only the lines a webmaster attributes to LohiSoftBot,
	// and the only way lines of the common format (which has no user agent)
	// are checked at all. False means a line claims to be LohiSoftBot only
	// when its user agent says so (ClaimsBot).
	AssumeClaimed bool
	// MaxUnmatched caps LogReport.Unmatched. Zero means 100; the counts are
	// always complete.
	MaxUnmatched int
	// BatchSize is how many genuine lines are matched against the request
	// log together. Zero means 4096.
	BatchSize int
	// Concurrency is how many addresses are verified at the same time. Zero
	// means 8.
	Concurrency int
	// Keys are the Web Bot Auth key directory's keys. When set, a claimed
	// line whose log keeps the request's Signature-Input and Signature
	// (JSON logs, with the host) and whose signature verifies, judged at the
	// line's time, is genuine without DNS. Nil means signatures are not
	// looked at.
	Keys []webbotauth.JWK
	// Agent, when set with Keys, is the Signature-Agent origin a signature
	// must name.
	Agent string
}

// LogReport is VerifyLog's answer. Its JSON form is the contract of
// `lohibot verify-log --json`:
// {"claimed","genuine","impostor","unverifiable","matched","signed"*,"bad_signatures"*,"ips":[...],"malformed","unmatched":[...]}
// (* only when not zero: with LogOptions.Keys).
type LogReport struct {
	// Format is the format the log was read in.
	Format Format `json:"-"`
	// Lines counts the lines read, blank lines excepted.
	Lines int `json:"-"`
	// Claimed counts the lines that claimed to be LohiSoftBot; each is also
	// counted in exactly one of Genuine, Impostor and Unverifiable.
	Claimed      int `json:"claimed"`
	Genuine      int `json:"genuine"`
	Impostor     int `json:"impostor"`
	Unverifiable int `json:"unverifiable"`
	// Matched counts the genuine lines that match a request of our log.
	Matched int `json:"matched"`
	// Signed counts the claimed lines proven genuine by their Web Bot Auth
	// signature (LogOptions.Keys), without DNS; they are also in Genuine.
	Signed int `json:"signed,omitempty"`
	// BadSignatures counts claimed lines whose logged signature did not
	// verify; their address was judged by DNS as for unsigned lines.
	BadSignatures int `json:"bad_signatures,omitempty"`
	// IPs has one entry per address that claimed to be LohiSoftBot, most
	// lines first, then in address order (IPv4 before IPv6).
	IPs []IPReport `json:"ips"`
	// Malformed counts the lines skipped because they are not in the format.
	Malformed int `json:"malformed"`
	// Unmatched lists genuine lines with no match in our request log (at
	// most LogOptions.MaxUnmatched of them, in log order): those need a human.
	Unmatched []Unmatched `json:"unmatched"`
}

// OK reports whether every line that claimed to be LohiSoftBot was genuine
// and matched a request of our log.
func (r *LogReport) OK() bool {
	return r.Genuine == r.Claimed && r.Matched == r.Genuine
}

// IPReport is what the log says about one address that claimed to be
// LohiSoftBot.
type IPReport struct {
	IP      string `json:"ip"`
	Genuine bool   `json:"genuine"`
	// Requests counts the address's lines that claimed to be LohiSoftBot.
	Requests int `json:"requests"`
	// Matched counts those that match a request of our log.
	Matched int `json:"matched"`
	// Signed counts those proven by their signature.
	Signed int `json:"signed,omitempty"`
	// Verification is the address's FCrDNS answer.
	Verification Result `json:"-"`
}

// Unmatched is a genuine line with no match in our request log.
type Unmatched struct {
	Line   int       `json:"line"`
	IP     string    `json:"ip"`
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	// Host is the virtual host when the log has one.
	Host   string `json:"host,omitempty"`
	Target string `json:"target"`
}

// VerifyLog reads a webmaster's access log from r (gunzipping it when it
// starts with the gzip magic bytes), takes the lines that claim to be
// LohiSoftBot, verifies each distinct address once with v, and matches the
// lines of genuine addresses against reqs: same request target (and virtual
// host, when the log has one; host case and default ports ignored), sent
// within the tolerance, each of our requests matching at most one line. v
// must not be nil; a nil reqs matches nothing.
//
// Malformed lines are counted and skipped. Memory stays bounded whatever the
// size of the log: lines are streamed, genuine lines are matched in batches,
// and only the per-address counts (and a capped list of unmatched lines)
// grow. VerifyLog does I/O (DNS, the request log), runs verifications
// concurrently, and stops early with ctx's error. Its errors wrap ErrBadLog
// when the log cannot be read.
func VerifyLog(ctx context.Context, r io.Reader, v *Verifier, reqs RequestLog, opts *LogOptions) (*LogReport, error) {
	var o LogOptions
	if opts != nil {
		o = *opts
	}
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.MaxUnmatched <= 0 {
		o.MaxUnmatched = 100
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 4096
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	c := &logCheck{
		opts:     o,
		v:        v,
		reqs:     reqs,
		rep:      &LogReport{IPs: []IPReport{}, Unmatched: []Unmatched{}},
		states:   make(map[netip.Addr]*ipState),
		signedBy: make(map[netip.Addr]*ipState),
		sem:      make(chan struct{}, o.Concurrency),
		consumed: make(map[int64]struct{}),
	}
	err := c.run(ctx, r)
	c.wg.Wait() // every verification ends: ctx is done or they finished
	if err != nil {
		return nil, err
	}
	return c.report(), nil
}

// maxPending bounds the claim lines held while their address is verified.
const maxPending = 16384

// maxConsumed bounds the set of our requests already matched; past it the
// set starts afresh (a request could then match a second line far away in
// the log, which is harmless for the counts of a sane log).
const maxConsumed = 1 << 20

// maxClusterSpan bounds the time range of one request log query.
const maxClusterSpan = time.Hour

// logCheck is the state of one VerifyLog. Only the goroutine running
// VerifyLog touches it, except ipState.res (see there).
type logCheck struct {
	opts LogOptions
	v    *Verifier
	reqs RequestLog
	rep  *LogReport

	states   map[netip.Addr]*ipState
	signedBy map[netip.Addr]*ipState // addresses of signed lines, not looked up
	sem      chan struct{}           // one slot per running verification
	wg       sync.WaitGroup
	js       jsonScanner
	entry    rawEntry
	pending  []claimLine // claims whose address is being verified, in log order
	batch    []claimLine // genuine claims waiting to be matched
	consumed map[int64]struct{}
}

// ipState is the verification of one address. res is written by the
// verifying goroutine before it closes done, and read by VerifyLog after.
type ipState struct {
	addr     netip.Addr
	rep      IPReport
	done     chan struct{}
	res      Result
	resolved bool // done has been observed closed
}

type claimLine struct {
	st     *ipState
	line   int
	t      time.Time
	method string
	host   string // normalised; empty when the log has none
	target string // origin-form request target
}

type rawLine struct {
	b       []byte
	tooLong bool
}

func (c *logCheck) run(ctx context.Context, r io.Reader) error {
	lr, err := newLineReader(r)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadLog, err)
	}
	format := c.opts.Format
	var replay []rawLine
	if format == "" {
		for len(replay) < 100 {
			line, tooLong, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("%w: %w", ErrBadLog, err)
			}
			replay = append(replay, rawLine{b: slices.Clone(line), tooLong: tooLong})
			if tooLong {
				continue
			}
			if f := DetectFormat(line); f != "" {
				format = f
				break
			}
		}
		if format == "" {
			format = FormatCombined
		}
	}
	c.rep.Format = format
	n := 0
	for _, l := range replay {
		n++
		if err := c.line(ctx, format, n, l.b, l.tooLong); err != nil {
			return err
		}
	}
	for {
		line, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrBadLog, n+1, err)
		}
		n++
		if n&4095 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := c.line(ctx, format, n, line, tooLong); err != nil {
			return err
		}
	}
	if lr.zr != nil {
		if err := lr.zr.Close(); err != nil {
			return fmt.Errorf("%w: %w", ErrBadLog, err)
		}
	}
	if err := c.drainAndSettle(ctx, true); err != nil {
		return err
	}
	if err := c.flush(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// line handles one line of the log.
func (c *logCheck) line(ctx context.Context, f Format, n int, b []byte, tooLong bool) error {
	if tooLong {
		c.rep.Lines++
		c.rep.Malformed++
		return nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	c.rep.Lines++
	e := &c.entry
	if err := parseLine(f, b, e, &c.js); err != nil {
		c.rep.Malformed++
		return nil
	}
	if !c.opts.AssumeClaimed && !claimsBot(e.ua) {
		return nil
	}
	c.rep.Claimed++
	if c.opts.Keys != nil && len(e.sig) > 0 {
		if c.signed(e) {
			st := c.signedState(e.addr)
			st.rep.Requests++
			st.rep.Signed++
			c.rep.Signed++
			c.rep.Genuine++
			cl := claimLine{st: st, line: n, t: e.t, method: string(e.method)}
			cl.host, cl.target = splitTarget(string(e.host), string(e.target))
			c.batch = append(c.batch, cl)
			if len(c.batch) >= c.opts.BatchSize {
				return c.flush(ctx)
			}
			return nil
		}
		c.rep.BadSignatures++
	}
	st := c.state(ctx, e.addr)
	st.rep.Requests++
	cl := claimLine{st: st, line: n, t: e.t, method: string(e.method)}
	cl.host, cl.target = splitTarget(string(e.host), string(e.target))
	if c.resolved(st) {
		return c.settle(ctx, cl)
	}
	c.pending = append(c.pending, cl)
	return c.drainAndSettle(ctx, len(c.pending) >= maxPending)
}

// state returns the verification of addr, starting it when the address is
// new. It blocks while Concurrency verifications run.
func (c *logCheck) state(ctx context.Context, addr netip.Addr) *ipState {
	if st, ok := c.states[addr]; ok {
		return st
	}
	st := &ipState{addr: addr, rep: IPReport{IP: addr.String()}, done: make(chan struct{})}
	c.states[addr] = st
	if !addr.Is4() { // no DNS needed: answer at once
		st.res = c.v.VerifyAddr(ctx, addr)
		close(st.done)
		return st
	}
	c.sem <- struct{}{}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.sem }()
		st.res = c.v.VerifyAddr(ctx, addr)
		close(st.done)
	}()
	return st
}

// resolved reports whether st's verification has finished.
func (c *logCheck) resolved(st *ipState) bool {
	if st.resolved {
		return true
	}
	select {
	case <-st.done:
		st.resolved = true
		st.rep.Genuine = st.res.Genuine
		st.rep.Verification = st.res
		return true
	default:
		return false
	}
}

// drainAndSettle settles the pending claims whose address is verified, in
// log order up to the first that is not; with block, it waits for all of
// them.
func (c *logCheck) drainAndSettle(ctx context.Context, block bool) error {
	i := 0
	for ; i < len(c.pending); i++ {
		st := c.pending[i].st
		if !c.resolved(st) {
			if !block {
				break
			}
			<-st.done
			c.resolved(st)
		}
	}
	ready := slices.Clone(c.pending[:i])
	c.pending = c.pending[:copy(c.pending, c.pending[i:])]
	for _, cl := range ready {
		if err := c.settle(ctx, cl); err != nil {
			return err
		}
	}
	return nil
}

// settle counts a claim whose address is verified, and queues genuine ones
// for matching.
func (c *logCheck) settle(ctx context.Context, cl claimLine) error {
	switch cl.st.res.Status {
	case StatusGenuine:
		c.rep.Genuine++
		c.batch = append(c.batch, cl)
		if len(c.batch) >= c.opts.BatchSize {
			return c.flush(ctx)
		}
	case StatusUnverifiable:
		c.rep.Unverifiable++
	default:
		c.rep.Impostor++
	}
	return nil
}

// flush matches the batch of genuine claims against the request log: the
// lines are sorted by time and cut into clusters where they are close, and
// each cluster is one query of the request log over its time range widened
// by the tolerance.
func (c *logCheck) flush(ctx context.Context) error {
	b := c.batch
	slices.SortStableFunc(b, func(x, y claimLine) int { return x.t.Compare(y.t) })
	tol := c.opts.Tolerance
	for i := 0; i < len(b); {
		j := i + 1
		for j < len(b) && b[j].t.Sub(b[j-1].t) <= 2*tol && b[j].t.Sub(b[i].t) <= maxClusterSpan {
			j++
		}
		if err := c.match(ctx, b[i:j]); err != nil {
			return err
		}
		i = j
	}
	c.batch = c.batch[:0]
	return nil
}

type candidate struct {
	id   int64
	host string
	t    time.Time
	used bool
}

// match pairs the lines of one cluster (sorted by time) with our requests:
// each line takes the nearest unused request with the same target (and
// host, when both are known) within the tolerance.
func (c *logCheck) match(ctx context.Context, lines []claimLine) error {
	tol := c.opts.Tolerance
	targets := make(map[string][]*candidate)
	for _, l := range lines {
		if l.target != "" {
			targets[l.target] = nil
		}
	}
	if len(targets) > 0 && c.reqs != nil {
		from, to := lines[0].t.Add(-tol), lines[len(lines)-1].t.Add(tol)
		err := c.reqs.Sent(ctx, from, to, func(r SentRequest) error {
			if _, done := c.consumed[r.ID]; done {
				return nil
			}
			host, target, ok := splitURL(r.URL)
			if !ok {
				return nil
			}
			if list, want := targets[target]; want {
				targets[target] = append(list, &candidate{id: r.ID, host: host, t: r.SentAt})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, l := range lines {
		var best *candidate
		var bestD time.Duration
		for _, cd := range targets[l.target] {
			if cd.used || (l.host != "" && cd.host != l.host) {
				continue
			}
			d := l.t.Sub(cd.t).Abs()
			if d <= tol && (best == nil || d < bestD) {
				best, bestD = cd, d
			}
		}
		if best == nil {
			c.rep.Unmatched = append(c.rep.Unmatched, Unmatched{Line: l.line, IP: l.st.rep.IP, Time: l.t.UTC(),
				Method: l.method, Host: l.host, Target: l.target})
			continue
		}
		best.used = true
		if len(c.consumed) >= maxConsumed {
			clear(c.consumed)
		}
		c.consumed[best.id] = struct{}{}
		l.st.rep.Matched++
		c.rep.Matched++
	}
	// Keep the first lines of the log, whatever the order of the batches.
	slices.SortFunc(c.rep.Unmatched, func(x, y Unmatched) int { return cmp.Compare(x.Line, y.Line) })
	if len(c.rep.Unmatched) > c.opts.MaxUnmatched {
		c.rep.Unmatched = slices.Clip(c.rep.Unmatched[:c.opts.MaxUnmatched])
	}
	return nil
}

func (c *logCheck) report() *LogReport {
	states := make([]*ipState, 0, len(c.states))
	for _, st := range c.states {
		c.resolved(st)                         // all are done: VerifyLog waited
		if sg, ok := c.signedBy[st.addr]; ok { // one row per address
			st.rep.Requests += sg.rep.Requests
			st.rep.Matched += sg.rep.Matched
			st.rep.Signed += sg.rep.Signed
			delete(c.signedBy, st.addr)
		}
		states = append(states, st)
	}
	for _, st := range c.signedBy {
		states = append(states, st)
	}
	slices.SortFunc(states, func(x, y *ipState) int {
		if n := cmp.Compare(y.rep.Requests, x.rep.Requests); n != 0 {
			return n
		}
		return x.addr.Compare(y.addr)
	})
	for _, st := range states {
		c.rep.IPs = append(c.rep.IPs, st.rep)
	}
	return c.rep
}

// splitTarget normalises a logged request: an absolute-form target gives its
// own host; hosts are lowercased, without a trailing dot or the default
// ports 80 and 443.
func splitTarget(host, target string) (string, string) {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		if h, t, ok := splitURL(target); ok {
			return h, t
		}
	}
	return normHostPort(host, ""), target
}

// splitURL splits one of our request URLs into its normalised host and its
// origin-form request target (what the server logs).
func splitURL(raw string) (host, target string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", "", false
	}
	return normHostPort(u.Host, u.Scheme), u.RequestURI(), true
}

func normHostPort(hostport, scheme string) string {
	h := strings.ToLower(hostport)
	switch {
	case strings.HasSuffix(h, ":80") && scheme != "https":
		h = strings.TrimSuffix(h, ":80")
	case strings.HasSuffix(h, ":443") && scheme != "http":
		h = strings.TrimSuffix(h, ":443")
	}
	return strings.TrimSuffix(h, ".")
}

// signedState returns the per-address counts of signed lines from addr,
// which need no lookup: a signature proves the line whatever the address.
func (c *logCheck) signedState(addr netip.Addr) *ipState {
	if st, ok := c.signedBy[addr]; ok {
		return st
	}
	st := &ipState{addr: addr, rep: IPReport{IP: addr.String(), Genuine: true}, resolved: true}
	c.signedBy[addr] = st
	return st
}

// signed reports whether e's logged Web Bot Auth signature verifies with
// LogOptions.Keys for the request the line describes, judged at the line's
// time. The line must name the host (the signature covers @authority).
func (c *logCheck) signed(e *rawEntry) bool {
	if len(e.host) == 0 || len(e.sigInput) == 0 {
		return false
	}
	target := string(e.target)
	if !strings.HasPrefix(target, "/") {
		target = "/"
	}
	u, err := url.Parse("https://" + string(e.host) + target)
	if err != nil {
		return false
	}
	h := http.Header{"Signature-Input": {string(e.sigInput)}, "Signature": {string(e.sig)}}
	if len(e.sigAgent) > 0 {
		h.Set("Signature-Agent", string(e.sigAgent))
	}
	m := &httpsig.Message{Method: string(e.method), URL: u, Authority: string(e.host), Header: h}
	_, err = webbotauth.Verify(m, c.opts.Keys, &webbotauth.VerifyOptions{Now: e.t, Agent: c.opts.Agent})
	return err == nil
}
