package botpage

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/net/idna"
	"golang.org/x/time/rate"

	"github.com/lohisoft/lohibot/policy"
)

//go:embed status.html.tmpl
var statusTemplate string

// Paths of the status page.
const (
	StatusPath     = PagePath + "/status"
	StatusJSONPath = PagePath + "/status.json"
)

// MaxStatusInput is the longest domain or address the status page reads.
const MaxStatusInput = 2048

// SiteStatus is what the status page says about one site; its JSON form is
// the body of /bot/status.json. It holds only public facts: whether the
// site is on the crawl list, whether and since when it is excluded (never
// who asked or how), when the bot last sent it a request, and its last
// visit's page requests against the budget.
type SiteStatus struct {
	// Site is the site looked up, as policy.SiteOf names it (IDN as
	// punycode).
	Site     string `json:"site"`
	Listed   bool   `json:"listed"`
	Excluded bool   `json:"excluded"`
	// ExcludedSince is when the exclusion took effect; nil when the site
	// is not excluded.
	ExcludedSince *time.Time `json:"excluded_since"`
	// LastRequest is when the bot last sent the site a request (robots.txt
	// included); nil when it never did.
	LastRequest *time.Time `json:"last_request"`
	// LastCycle is the site's last visit; nil when there was none.
	LastCycle *CycleStatus `json:"last_cycle"`
	// Budget is the most page requests a visit may spend now.
	Budget int `json:"budget"`
	// Verify says how to check that requests claiming to be the bot were
	// ours.
	Verify Verification `json:"verify"`
	// Log is where the records are published; nil when no log is.
	Log *LogInfo `json:"log,omitempty"`
	// ExclusionLeaf is the leaf index in the log of the site's latest
	// exclusion event; nil when there is none or it is not logged yet.
	ExclusionLeaf *int64 `json:"exclusion_leaf_index,omitempty"`
}

// LogInfo names the transparency log: its base URL (the signed checkpoint
// is URL + "/checkpoint", the hash tiles under URL + "/tile/") and the
// note verifier key of its checkpoints.
type LogInfo struct {
	URL         string `json:"url"`
	VerifierKey string `json:"verifier_key"`
}

// CycleStatus is one visit of a site.
type CycleStatus struct {
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// PageRequests counts the visit's requests for pages (redirects and
	// retries included, robots.txt not), against Budget, the visit's own
	// budget.
	PageRequests int `json:"page_requests"`
	Budget       int `json:"budget"`
}

// Verification is how a webmaster checks a request: forward-confirmed
// reverse DNS under ReverseDNSSuffix, or the address list at IPsURL.
type Verification struct {
	ReverseDNSSuffix string   `json:"reverse_dns_suffix"`
	IPs              []string `json:"ips"`
	IPsURL           string   `json:"ips_url"`
}

// StatusLookup returns the status of site (as policy.SiteOf names it): the
// fields Listed, Excluded, ExcludedSince, LastRequest and LastCycle. It is
// called for every lookup and must be safe for concurrent use.
type StatusLookup func(ctx context.Context, site string) (*SiteStatus, error)

// StatusOptions configures a StatusHandler. A nil *StatusOptions is the
// zero value.
type StatusOptions struct {
	// Rate is how many lookups a client address may make per second in
	// the long run, and Burst how many at once. Zero means one every two
	// seconds, with bursts of 20.
	Rate  rate.Limit
	Burst int
	// MaxClients bounds how many client addresses (and networks) the
	// limiter remembers; past it, the least recently seen are forgotten.
	// Zero means 10000.
	MaxClients int
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Logger receives lookup failures. Nil means slog.Default().
	Logger *slog.Logger
}

// StatusHandler serves the status page (/bot/status, HTML in the page's
// languages) and its JSON form (/bot/status.json), rate limited per client
// address. It is safe for concurrent use.
type StatusHandler struct {
	page    *Page
	facts   func() *Facts
	lookup  StatusLookup
	limiter *clientLimiter
	log     *slog.Logger
}

// NewStatusHandler returns a StatusHandler that states the facts of facts
// (as NewHandler does) and the status lookup returns.
func NewStatusHandler(facts func() *Facts, lookup StatusLookup, opts *StatusOptions) (*StatusHandler, error) {
	var o StatusOptions
	if opts != nil {
		o = *opts
	}
	if o.Rate == 0 {
		o.Rate = rate.Every(2 * time.Second)
	}
	if o.Burst == 0 {
		o.Burst = 20
	}
	if o.MaxClients == 0 {
		o.MaxClients = 10000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	p, err := NewPage()
	if err != nil {
		return nil, err
	}
	return &StatusHandler{page: p, facts: facts, lookup: lookup, log: o.Logger,
		limiter: newClientLimiter(o.Rate, o.Burst, o.MaxClients, o.Now)}, nil
}

// Register adds /bot/status and /bot/status.json to mux, for GET and HEAD.
func (h *StatusHandler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+StatusPath, h.ServeStatus)
	mux.HandleFunc("GET "+StatusJSONPath, h.ServeStatusJSON)
}

// errBadInput is what lookup returns for an input that names no site.
var errBadInput = errors.New("botpage: not a site")

// errLimited is what lookup returns when the client made too many lookups.
var errLimited = errors.New("botpage: too many lookups")

// lookupSite normalises input and looks the site up, after the client's
// rate limit allows it. retry says when to ask again after errLimited.
func (h *StatusHandler) lookupSite(r *http.Request, input string) (st *SiteStatus, retry time.Duration, err error) {
	if ok, wait := h.limiter.allow(clientKey(clientAddr(r))); !ok {
		return nil, wait, errLimited
	}
	if strings.TrimSpace(input) == "" || len(input) > MaxStatusInput {
		return nil, 0, errBadInput
	}
	site, err := policy.SiteOf(input)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errBadInput, err)
	}
	st, err = h.lookup(r.Context(), site)
	if err != nil {
		return nil, 0, err
	}
	f := h.facts()
	out := &SiteStatus{Site: site, Listed: st.Listed, Excluded: st.Excluded, ExcludedSince: utcSecond(st.ExcludedSince),
		LastRequest: utcSecond(st.LastRequest), Budget: f.Budget, Verify: verification(f)}
	if c := st.LastCycle; c != nil {
		out.LastCycle = &CycleStatus{StartedAt: *utcSecond(&c.StartedAt), FinishedAt: utcSecond(c.FinishedAt),
			PageRequests: c.PageRequests, Budget: c.Budget}
	}
	if f.LogURL != "" {
		out.Log = &LogInfo{URL: f.LogURL, VerifierKey: f.LogVerifierKey}
		out.ExclusionLeaf = st.ExclusionLeaf
	}
	out.Excluded = out.Excluded || out.ExcludedSince != nil
	return out, 0, nil
}

func verification(f *Facts) Verification {
	v := Verification{ReverseDNSSuffix: "." + strings.TrimPrefix(f.BotDomain, "."), IPsURL: f.IPsURL, IPs: []string{}}
	for _, c := range f.Crawlers {
		v.IPs = append(v.IPs, c.IP.String())
	}
	return v
}

func utcSecond(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Second)
	return &u
}

// ServeStatusJSON answers /bot/status.json?site=: the SiteStatus as JSON;
// 400 with {"error"} for a missing or invalid site, 429 when the client
// made too many lookups.
func (h *StatusHandler) ServeStatusJSON(w http.ResponseWriter, r *http.Request) {
	input := r.URL.Query().Get("site")
	st, retry, err := h.lookupSite(r, input)
	code := http.StatusOK
	var body any = st
	switch {
	case errors.Is(err, errLimited):
		code, body = http.StatusTooManyRequests, jsonError{"too many lookups from your address: try again later"}
		w.Header().Set("Retry-After", retryAfter(retry))
	case errors.Is(err, errBadInput) && strings.TrimSpace(input) == "":
		code, body = http.StatusBadRequest, jsonError{"no site given: ask for " + StatusJSONPath + "?site=example.com"}
	case errors.Is(err, errBadInput):
		code, body = http.StatusBadRequest, jsonError{badInputText(input, err)}
	case err != nil:
		h.log.Error("site status not looked up", "err", err)
		code, body = http.StatusInternalServerError, jsonError{"the status cannot be looked up right now"}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(body); err != nil {
		http.Error(w, "the status cannot be encoded", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Access-Control-Allow-Origin", "*")
	writeStatus(w, r, code, buf.Bytes())
}

type jsonError struct {
	Error string `json:"error"`
}

// badInputText says, in English, why input names no site.
func badInputText(input string, err error) string {
	if len(input) > MaxStatusInput {
		return fmt.Sprintf("the site is longer than %d characters", MaxStatusInput)
	}
	var se *policy.SiteError
	if errors.As(err, &se) {
		return fmt.Sprintf("%q is not a site: %s", displayInput(input), se.Reason)
	}
	return fmt.Sprintf("%q is not a site", displayInput(input))
}

// ServeStatus answers /bot/status: the lookup form and, with ?site=, the
// site's status, in the language of ?lang= or Accept-Language. An invalid
// site is answered 400 with a message, too many lookups 429.
func (h *StatusHandler) ServeStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	lang, fromHeader := Negotiate(q.Get("lang"), r.Header.Get("Accept-Language"))
	input, asked := q.Get("site"), q.Has("site")
	cat := h.page.cats[lang]
	t := &translator{c: cat}
	v := &statusView{Input: displayInput(input)}
	code := http.StatusOK
	if asked {
		st, retry, err := h.lookupSite(r, input)
		switch {
		case errors.Is(err, errLimited):
			code = http.StatusTooManyRequests
			v.Error, _ = t.T("status_rate_limited")
			w.Header().Set("Retry-After", retryAfter(retry))
		case errors.Is(err, errBadInput):
			code = http.StatusBadRequest
			v.Error, _ = t.T("status_bad_input", "input", shorten(displayInput(input), 80))
		case err != nil:
			h.log.Error("site status not looked up", "err", err)
			code = http.StatusInternalServerError
			v.Error, _ = t.T("status_unavailable")
		default:
			v.Result = &resultView{SiteStatus: st, Display: displaySite(st.Site)}
			v.JSONLink = StatusJSONPath + "?site=" + url.QueryEscape(st.Site)
		}
	}
	var buf bytes.Buffer
	if err := h.page.renderStatus(&buf, cat, h.facts(), v); err != nil {
		h.log.Error("status page not rendered", "lang", string(lang), "err", err)
		http.Error(w, "the status page is unavailable", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Language", string(lang))
	hd.Set("Content-Security-Policy", h.page.statusCSP())
	if fromHeader {
		hd.Set("Vary", "Accept-Language")
	}
	writeStatus(w, r, code, buf.Bytes())
}

// writeStatus writes a status response: never stored, since it changes
// with every crawl.
func writeStatus(w http.ResponseWriter, r *http.Request, code int, body []byte) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// displayInput is what the visitor typed, bounded and without control
// characters, to show back (escaped by the template).
func displayInput(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	return shorten(s, MaxStatusInput)
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// displaySite writes a site as people write it: an IDN in Unicode with
// its punycode beside.
func displaySite(site string) string {
	u, err := idna.ToUnicode(site)
	if err != nil || u == site {
		return site
	}
	return u + " (" + site + ")"
}

// statusView is what the status template reads.
type statusView struct {
	Lang       Lang
	T          *translator
	F          *Facts
	Langs      []langLink
	Style      template.CSS
	BotPath    string
	StatusPath string
	MaxInput   int
	Input      string
	Error      template.HTML
	Result     *resultView
	JSONLink   string
	Suffix     template.HTML
	Example    string
}

type resultView struct {
	*SiteStatus
	Display string
}

// renderStatus writes the status page in cat's language for f and v.
func (p *Page) renderStatus(w *bytes.Buffer, cat *catalog, f *Facts, v *statusView) error {
	if err := f.Check(); err != nil {
		return err
	}
	base := p.view(cat, f)
	v.Lang, v.T, v.F, v.Style = cat.lang, base.T, f, base.Style
	v.BotPath, v.StatusPath, v.MaxInput = PagePath, StatusPath, MaxStatusInput
	v.Suffix, v.Example = base.Suffix, base.Example
	for _, l := range base.Langs {
		q := url.Values{"lang": {string(l.Lang)}}
		if v.Input != "" {
			q.Set("site", v.Input)
		}
		l.Rel = "?" + q.Encode()
		v.Langs = append(v.Langs, l)
	}
	if err := p.statusTmpl.Execute(w, v); err != nil {
		return fmt.Errorf("botpage: render status %s: %w", cat.lang, err)
	}
	return nil
}

// statusCSP is the status page's Content-Security-Policy: the bot page's,
// but its form may submit to the page itself.
func (p *Page) statusCSP() string {
	return "default-src 'none'; style-src " + p.styleSrc + "; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// clientLimiter limits the lookups of each client address (an IPv4
// address, an IPv6 /64) and, wider, of its network (an IPv4 /24, an IPv6
// /48), which allows wideFactor times as much. Each remembers its buckets
// in a cache of its own that evicts the least recently used: an address
// that keeps asking keeps its bucket, and no one can empty the limiter by
// asking from many other addresses. A global bucket (globalRate) is taken
// first, and a network's before an address's bucket is made, so lookups
// from many addresses are refused before they make buckets: 10,000 new
// /64s cannot push out a bucket before it has refilled.
type clientLimiter struct {
	rate   rate.Limit
	burst  int
	now    func() time.Time
	global *rate.Limiter

	mu      sync.Mutex // makes a lookup's two buckets one decision
	clients *lru.Cache[netip.Prefix, *rate.Limiter]
	nets    *lru.Cache[netip.Prefix, *rate.Limiter]
}

// wideFactor is how many times an address's rate and burst a network may
// use: a network holds many clients (an office, a mobile carrier's NAT).
const wideFactor = 8

func newClientLimiter(r rate.Limit, burst, max int, now func() time.Time) *clientLimiter {
	clients, _ := lru.New[netip.Prefix, *rate.Limiter](max)
	nets, _ := lru.New[netip.Prefix, *rate.Limiter](max)
	return &clientLimiter{rate: r, burst: burst, now: now, clients: clients, nets: nets,
		global: rate.NewLimiter(globalRate, globalBurst)}
}

// The lookups of all clients together: far above what people ask, and
// below what takes a whole limiter's worth of new buckets in the time one
// bucket refills (10,000 at the default 20 per 40 s).
const (
	globalRate  = 100
	globalBurst = 1000
)

// allow takes a token of key's bucket and of its network's, or says how
// long until both have one.
func (l *clientLimiter) allow(key netip.Prefix) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	rg := l.global.ReserveN(now, 1)
	if d := rg.DelayFrom(now); d > 0 {
		rg.CancelAt(now)
		return false, d
	}
	rw := l.bucket(l.nets, networkOf(key), l.rate*wideFactor, l.burst*wideFactor).ReserveN(now, 1)
	if d := rw.DelayFrom(now); d > 0 {
		rw.CancelAt(now)
		rg.CancelAt(now)
		return false, d
	}
	rc := l.bucket(l.clients, key, l.rate, l.burst).ReserveN(now, 1)
	if d := rc.DelayFrom(now); d > 0 {
		rc.CancelAt(now)
		rw.CancelAt(now)
		rg.CancelAt(now)
		return false, d
	}
	return true, 0
}

// bucket returns key's limiter in cache, made with r and burst when the
// cache has none. l.mu must be held.
func (l *clientLimiter) bucket(cache *lru.Cache[netip.Prefix, *rate.Limiter], key netip.Prefix, r rate.Limit, burst int) *rate.Limiter {
	lim, ok := cache.Get(key)
	if !ok {
		lim = rate.NewLimiter(r, burst)
		cache.Add(key, lim)
	}
	return lim
}

// networkOf is the network a client key belongs to: the /24 of an IPv4
// address, the /48 of an IPv6 /64.
func networkOf(key netip.Prefix) netip.Prefix {
	bits := 24
	if key.Addr().Is6() {
		bits = 48
	}
	p, _ := key.Addr().Prefix(bits)
	return p
}

// clientAddr returns the address of the client that sent r: the remote
// address, or, when that is a loopback address (a reverse proxy on the same
// machine, as the operations guide sets up), the last address of the
// X-Forwarded-For header the proxy added. The header is never trusted from
// any other peer, so a client cannot choose its own bucket.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Unmap().IsLoopback() {
		return host
	}
	xff := r.Header.Values("X-Forwarded-For")
	if len(xff) == 0 {
		return host
	}
	parts := strings.Split(xff[len(xff)-1], ",")
	if last := strings.TrimSpace(parts[len(parts)-1]); last != "" {
		if _, err := netip.ParseAddr(last); err == nil {
			return last
		}
	}
	return host
}

// clientKey is the limiter's key for a remote address: the IPv4 address,
// or the /64 of an IPv6 one (a host usually holds a whole /64).
func clientKey(addr string) netip.Prefix {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}
	}
	a = a.Unmap()
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}
