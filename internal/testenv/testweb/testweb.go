// Package testweb runs a local web of many virtual sites for tests, the demo
// and benchmarks: one httptest server on 127.0.0.1 (plus [::1] on the same
// port when available) routes by Host, and an in-process DNS server
// (internal/localweb/localdns) resolves every site name to it. Hand DNSAddr to the
// crawler as its resolver (--resolver) and let it allow private addresses.
//
// The server records the truth: every request it saw with host, path, user
// agent, source address, start and end times and status (Hits), and the most
// requests it ever had in flight at once per host (MaxInFlight). Tests assert
// on that record, never on what the crawler says about itself.
//
// Every page body carries a canary sentence (Canary) outside the title,
// description, headings and link texts, so a test can prove that page text is
// never stored.
//
// Sites (see the Kind constants for what each serves): N plain sites
// (plain-000.test ...) with a configurable number of pages each, and one
// site of each scenario kind (robots.test, crawldelay.test, retry-secs.test,
// retry-date.test, retry-long.test, flaky.test, down.test, redirect.test,
// auth.test, forbidden.test, proxyauth.test, challenge.test, captcha.test,
// noindex.test, big.test, slow.test, huge.test, gzip.test, charset.test,
// v6only.test).
package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"github.com/lohisoft/lohibot/internal/localweb/webrecord"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/localweb/localdns"
	"github.com/lohisoft/lohibot/internal/localweb/sampleweb"
)

// Canary is the default sentence written into every page body. It must never
// be found in the crawler's database files.
const Canary = "The lohibot canary sings only in page bodies: quartz zebra 7F3A91."

// Site kinds. Each scenario kind is served by one site named KIND.test.
const (
	KindPlain      = "plain"                  // PagesPerSite pages linked in a chain and a fan; links to the next plain site
	KindRobots     = sampleweb.KindRobots     // robots.txt disallows /private/ for LohiSoftBot (allows /private/open.html), everything for *
	KindCrawlDelay = sampleweb.KindCrawlDelay // robots.txt sets Crawl-delay (Options.CrawlDelay) for LohiSoftBot; 4 pages
	KindRetrySecs  = "retry-secs"             // the first request of every path gets 429 with Retry-After: N seconds
	KindRetryDate  = "retry-date"             // the first request of every path gets 503 with Retry-After as an HTTP-date
	KindRetryLong  = "retry-long"             // every page gets 429 with Retry-After: 7200 (beyond the 1 h cap)
	KindFlaky      = "flaky"                  // the first two requests of every path get 503 without Retry-After
	KindDown       = "down"                   // every page gets 500
	KindRedirect   = "redirect"               // chains, a loop, a cross-site hop, a mailto: hop, a hop to 0.0.0.0, a hop to www.redirect.test
	KindAuth       = "auth"                   // /members/ answers 401; /wp-login.php is a login link; /after.html is linked after them
	KindForbidden  = "forbidden"              // /private.html answers 403
	KindProxyAuth  = "proxyauth"              // /p.html answers 407
	KindChallenge  = "challenge"              // every page answers 503 with cf-mitigated: challenge
	KindCaptcha    = "captcha"                // /search.html answers 403 with a captcha page
	KindNoindex    = "noindex"                // meta robots noindex, X-Robots-Tag noindex, meta nofollow, rel=nofollow links
	KindBig        = "big"                    // BigPages pages, far more than the budget of 20
	KindSlow       = "slow"                   // /drip.html sends one byte every 50 ms for SlowFor
	KindHuge       = "huge"                   // /huge.html is HugeSize bytes of HTML; /file.bin is binary
	KindGzip       = "gzip"                   // /bomb.html is a gzip bomb expanding to BombSize bytes
	KindCharset    = "charset"                // / in ISO-8859-1 (header), /sjis.html in Shift_JIS (meta), /cp1252.html in windows-1252 (meta)
	KindV6Only     = "v6only"                 // has only an AAAA record (::1): a tcp4 crawler cannot reach it
)

// ScenarioKinds lists every scenario kind, one site each.
var ScenarioKinds = []string{
	KindRobots, KindCrawlDelay, KindRetrySecs, KindRetryDate, KindRetryLong, KindFlaky, KindDown,
	KindRedirect, KindAuth, KindForbidden, KindProxyAuth, KindChallenge, KindCaptcha, KindNoindex,
	KindBig, KindSlow, KindHuge, KindGzip, KindCharset, KindV6Only,
}

// Options configures Start. A nil *Options is the zero value; every zero
// field takes the default given.
type Options struct {
	// Plain is the number of plain sites, plain-000.test and up. Zero means 3.
	Plain int
	// PagesPerSite is the number of pages of each plain site. Zero means 30.
	PagesPerSite int
	// BigPages is the number of pages of big.test. Zero means 50.
	BigPages int
	// Canary is the sentence in every page body. Empty means Canary.
	Canary string
	// RetryAfter is the wait asked by retry-secs.test (whole seconds) and
	// retry-date.test. Zero means 1s.
	RetryAfter time.Duration
	// CrawlDelay is the Crawl-delay value of crawldelay.test, as written.
	// Empty means "1".
	CrawlDelay string
	// SlowFor is how long /drip.html of slow.test keeps dripping. Zero means
	// 10s.
	SlowFor time.Duration
	// HugeSize is the size of huge.test's /huge.html. Zero means 8 MiB.
	HugeSize int
	// BombSize is the decompressed size of gzip.test's /bomb.html. Zero means
	// 64 MiB.
	BombSize int
	// Latency is added before every response (not robots.txt). Zero means
	// none.
	Latency time.Duration
	// TallyOnly makes the record keep tallies per host instead of every
	// hit (see webrecord.Recorder.TallyOnly): for benchmarks whose record
	// of hundreds of thousands of requests would otherwise weigh more than
	// the crawler they measure.
	TallyOnly bool
	// Validators makes the plain sites' pages carry an ETag and a
	// Last-Modified, and answer a request whose If-None-Match matches (or,
	// without one, whose If-Modified-Since is not older) 304 Not Modified.
	Validators bool
	// ExternalLinks is how many links to other sites each plain site's
	// page carries besides its own (discovery at scale): to sites of a
	// pool of LinkedSites names, linked-0000.test and up, each with an A
	// record and a one-page site. Zero means none.
	ExternalLinks int
	// LinkedSites is the size of that pool. Zero means 1,000.
	LinkedSites int
	// Clock, when set, is the clock the record's hits are timed on (see
	// webrecord.Recorder.Clock): a test on a fake clock passes it.
	Clock func() time.Time
}

// Site is one virtual site of the web.
type Site struct {
	Name     string // the site (registrable domain), e.g. "robots.test"
	Host     string // the host of its start URL
	Kind     string // one of the Kind constants
	StartURL string // http://HOST:PORT/
	Pages    int    // how many distinct HTML pages a crawler can reach, robots aside
}

// Hit is one request the test web received (see webrecord.Hit).
type Hit = webrecord.Hit

// MaxOverlap returns, per host, the most requests that were in flight at
// once (see webrecord.MaxOverlap).
func MaxOverlap(hits []Hit) map[string]int { return webrecord.MaxOverlap(hits) }

// Gaps returns, per host, the gaps between consecutive requests (see
// webrecord.Gaps).
func Gaps(hits []Hit) map[string][]time.Duration { return webrecord.Gaps(hits) }

// Tally sums up the requests of one host (see webrecord.Tally).
type Tally = webrecord.Tally

// MinGap returns, per host, the shortest gap between consecutive requests
// (see webrecord.MinGap).
func MinGap(hits []Hit) map[string]time.Duration { return webrecord.MinGap(hits) }

// Web is a running local web. Its methods are safe for concurrent use.
type Web struct {
	// DNSAddr is the HOST:PORT of the DNS server that resolves every site
	// name: pass it as --resolver.
	DNSAddr string
	// DNS is the DNS server itself, to add records.
	DNS *localdns.Server
	// Port is the TCP port every site is served on (on 127.0.0.1 and ::1).
	Port int
	// Canary is the sentence in every page body.
	Canary string

	opts     Options
	srv      *httptest.Server
	srv6     *http.Server
	ln6      net.Listener
	sites    []Site
	kinds    map[string]string // host → kind
	site     map[string]string // host → site name
	bombOnce sync.Once
	bomb     []byte

	// Recorder holds what the server received: Hits, HitsFor, MaxInFlight
	// and Reset come from it.
	Recorder

	mu     sync.Mutex // guards custom
	custom map[string]http.HandlerFunc

	windowsMu sync.Mutex
	windows   map[int]string // externalLinks' windows, by first pool site
}

// Start starts the web: the DNS server and the HTTP server. Close it when
// done.
func Start(opts *Options) (*Web, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Plain == 0 {
		o.Plain = 3
	}
	if o.PagesPerSite == 0 {
		o.PagesPerSite = 30
	}
	if o.BigPages == 0 {
		o.BigPages = 50
	}
	if o.Canary == "" {
		o.Canary = Canary
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = time.Second
	}
	if o.CrawlDelay == "" {
		o.CrawlDelay = "1"
	}
	if o.SlowFor == 0 {
		o.SlowFor = 10 * time.Second
	}
	if o.HugeSize == 0 {
		o.HugeSize = 8 << 20
	}
	if o.BombSize == 0 {
		o.BombSize = 64 << 20
	}
	if o.LinkedSites == 0 {
		o.LinkedSites = 1000
	}
	dns, err := localdns.NewServer()
	if err != nil {
		return nil, fmt.Errorf("testweb: dns: %w", err)
	}
	w := &Web{
		DNSAddr: dns.Addr,
		DNS:     dns,
		Canary:  o.Canary,
		opts:    o,
		kinds:   map[string]string{},
		site:    map[string]string{},
		custom:  map[string]http.HandlerFunc{},
	}
	w.Recorder.TallyOnly, w.Recorder.Clock = o.TallyOnly, o.Clock
	w.gzipBomb()
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { w.serve(rw, r, false) }))
	// The listener exists already (NewUnstartedServer); the servers start
	// only once the site tables below are complete.
	_, port, _ := net.SplitHostPort(w.srv.Listener.Addr().String())
	w.Port, _ = strconv.Atoi(port)

	add := func(kind, name string, pages int) {
		host := name
		w.sites = append(w.sites, Site{Name: name, Host: host, Kind: kind, StartURL: w.URL(host, "/"), Pages: pages})
		w.kinds[host] = kind
		w.site[host] = name
		if kind == KindV6Only {
			dns.AddAAAA(host, "::1")
		} else {
			dns.AddA(host, "127.0.0.1")
		}
	}
	for i := 0; i < o.Plain; i++ {
		add(KindPlain, fmt.Sprintf("plain-%03d.test", i), o.PagesPerSite)
	}
	pages := map[string]int{
		KindRobots: 4, KindCrawlDelay: 4, KindRetrySecs: 3, KindRetryDate: 3, KindRetryLong: 1,
		KindFlaky: 3, KindDown: 1, KindRedirect: 4, KindAuth: 3, KindForbidden: 3, KindProxyAuth: 2,
		KindChallenge: 1, KindCaptcha: 3, KindNoindex: 4, KindBig: o.BigPages, KindSlow: 2,
		KindHuge: 2, KindGzip: 2, KindCharset: 3, KindV6Only: 1,
	}
	for _, k := range ScenarioKinds {
		add(k, k+".test", pages[k])
	}
	if o.ExternalLinks > 0 {
		for i := 0; i < o.LinkedSites; i++ {
			host := linkedSite(i)
			dns.AddA(host, "127.0.0.1")
			w.kinds[host] = kindLinked
			w.site[host] = host
		}
	}
	// A second host of redirect.test, and a name that resolves to an
	// address no crawler may dial.
	dns.AddA("www.redirect.test", "127.0.0.1")
	w.kinds["www.redirect.test"] = KindRedirect
	w.site["www.redirect.test"] = "redirect.test"
	dns.AddA("zero.test", "0.0.0.0")

	w.srv.Start()
	if ln, err := net.Listen("tcp6", net.JoinHostPort("::1", port)); err == nil {
		w.ln6 = ln
		w.srv6 = &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { w.serve(rw, r, true) })}
		go w.srv6.Serve(ln)
	}
	return w, nil
}

// Close stops the servers. It blocks until in-flight requests end.
func (w *Web) Close() {
	w.srv.CloseClientConnections()
	w.srv.Close()
	if w.srv6 != nil {
		w.srv6.Close()
	}
	w.DNS.Close()
}

// URL returns the absolute URL of path on host, with the web's port.
func (w *Web) URL(host, path string) string {
	return "http://" + host + ":" + strconv.Itoa(w.Port) + path
}

// Sites returns every site, plain ones first.
func (w *Web) Sites() []Site { return append([]Site(nil), w.sites...) }

// Plain returns the plain sites.
func (w *Web) Plain() []Site {
	var out []Site
	for _, s := range w.sites {
		if s.Kind == KindPlain {
			out = append(out, s)
		}
	}
	return out
}

// Site returns the site of a scenario kind (or a plain site's name).
func (w *Web) Site(kindOrName string) Site {
	for _, s := range w.sites {
		if s.Kind == kindOrName || s.Name == kindOrName {
			if s.Kind == KindPlain && s.Name != kindOrName {
				continue
			}
			return s
		}
	}
	panic("testweb: no site " + kindOrName)
}

// SiteOfHost returns the site a host of this web belongs to, or "".
func (w *Web) SiteOfHost(host string) string { return w.site[host] }

// Handle serves host's path (exact, without query) with h instead of the
// site's own answer, robots.txt included; hits are still recorded. A nil h
// removes the override.
func (w *Web) Handle(host, path string, h http.HandlerFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if h == nil {
		delete(w.custom, host+" "+path)
		return
	}
	w.custom[host+" "+path] = h
}

// PageHitsPerSite counts the requests per site other than /robots.txt.
func (w *Web) PageHitsPerSite(hits []Hit) map[string]int {
	out := map[string]int{}
	for _, h := range hits {
		if h.Path != "/robots.txt" {
			out[w.site[h.Host]]++
		}
	}
	return out
}

func (w *Web) serve(rw http.ResponseWriter, r *http.Request, v6 bool) {
	sw, host, n, end := w.Begin(rw, r, v6)
	defer end()
	w.mu.Lock()
	custom := w.custom[host+" "+r.URL.Path]
	w.mu.Unlock()
	if custom != nil {
		custom(sw, r)
		return
	}
	kind, ok := w.kinds[host]
	if !ok {
		http.Error(sw, "no such site", http.StatusNotFound)
		return
	}
	if r.URL.Path == "/robots.txt" {
		w.robots(sw, kind)
		return
	}
	if w.opts.Latency > 0 {
		select {
		case <-time.After(w.opts.Latency):
		case <-r.Context().Done():
			return
		}
	}
	w.page(sw, r, host, kind, n)
}

func (w *Web) robots(rw http.ResponseWriter, kind string) {
	sampleweb.ServeRobots(rw, kind, w.opts.CrawlDelay)
}

// doc writes an HTML page with the canary in its body.
func (w *Web) doc(rw http.ResponseWriter, status int, title, head, body string) {
	if rw.Header().Get("Content-Type") == "" {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	rw.WriteHeader(status)
	fmt.Fprintf(rw, "<!DOCTYPE html>\n<html><head><title>%s</title>\n<meta name=\"description\" content=\"About %s\">%s</head>\n<body>\n<h1>%s</h1>\n<p>%s</p>\n%s\n</body></html>\n",
		html.EscapeString(title), html.EscapeString(title), head, html.EscapeString(title), html.EscapeString(w.Canary), body)
}

// validatorsSince is the Last-Modified of every page when
// Options.Validators is set.
const validatorsSince = "Mon, 02 Jan 2006 15:04:05 GMT"

func links(paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "<a href=\"%s\">link to %s</a>\n", p, html.EscapeString(p))
	}
	return b.String()
}

func (w *Web) page(rw *StatusWriter, r *http.Request, host, kind string, n int) {
	p := r.URL.Path
	switch kind {
	case KindPlain, KindBig:
		pages := w.opts.PagesPerSite
		if kind == KindBig {
			pages = w.opts.BigPages
		}
		i := 0
		if p != "/" {
			if !strings.HasPrefix(p, "/p/") {
				http.NotFound(rw, r)
				return
			}
			var err error
			i, err = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/p/"), ".html"))
			if err != nil || i < 1 || i >= pages {
				http.NotFound(rw, r)
				return
			}
		}
		var ls []string
		for j := i + 1; j <= i+3 && j < pages; j++ {
			ls = append(ls, fmt.Sprintf("/p/%d.html", j))
		}
		ls = append(ls, "/")
		body := links(ls...)
		if kind == KindPlain {
			// Other sites' links feed anchor text only.
			body += fmt.Sprintf("<a href=\"%s\">friends at %s</a>\n", w.URL("big.test", "/"), "big.test")
			body += w.externalLinks(host, i)
		}
		if w.opts.Validators {
			etag := fmt.Sprintf("\"%s-%d\"", host, i)
			rw.Header().Set("ETag", etag)
			rw.Header().Set("Last-Modified", validatorsSince)
			inm, ims := r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")
			if inm == etag || (inm == "" && ims == validatorsSince) {
				rw.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.doc(rw, 200, fmt.Sprintf("%s page %d", host, i), "", body)
	case kindLinked:
		if p != "/" {
			http.NotFound(rw, r)
			return
		}
		w.doc(rw, 200, host+" home", "", links("/"))
	case KindRobots:
		switch p {
		case "/":
			w.doc(rw, 200, "Robots home", "", links("/private/secret.html", "/private/open.html", "/public/a.html", "/public/b.html"))
		case "/private/secret.html", "/private/open.html", "/public/a.html", "/public/b.html":
			w.doc(rw, 200, "Robots "+p, "", links("/"))
		default:
			http.NotFound(rw, r)
		}
	case KindCrawlDelay:
		switch p {
		case "/", "/a.html", "/b.html", "/c.html":
			w.doc(rw, 200, "Crawl-delay "+p, "", links("/a.html", "/b.html", "/c.html"))
		default:
			http.NotFound(rw, r)
		}
	case KindRetrySecs, KindRetryDate, KindFlaky:
		if p != "/" && p != "/a.html" && p != "/b.html" {
			http.NotFound(rw, r)
			return
		}
		secs := int((w.opts.RetryAfter + time.Second - 1) / time.Second)
		switch {
		case kind == KindRetrySecs && n == 1:
			rw.Header().Set("Retry-After", strconv.Itoa(secs))
			http.Error(rw, "slow down", http.StatusTooManyRequests)
			return
		case kind == KindRetryDate && n == 1:
			rw.Header().Set("Retry-After", time.Now().Add(w.opts.RetryAfter+time.Second).UTC().Format(http.TimeFormat))
			http.Error(rw, "come back later", http.StatusServiceUnavailable)
			return
		case kind == KindFlaky && n <= 2:
			http.Error(rw, "temporarily down", http.StatusServiceUnavailable)
			return
		}
		w.doc(rw, 200, kind+" "+p, "", links("/a.html", "/b.html"))
	case KindRetryLong:
		rw.Header().Set("Retry-After", "7200")
		http.Error(rw, "go away for two hours", http.StatusTooManyRequests)
	case KindDown:
		http.Error(rw, "broken", http.StatusInternalServerError)
	case KindRedirect:
		w.redirect(rw, r, host)
	case KindAuth:
		switch p {
		case "/":
			w.doc(rw, 200, "Auth home", "", links("/about.html", "/wp-login.php", "/members/", "/after.html"))
		case "/about.html", "/after.html":
			w.doc(rw, 200, "Auth "+p, "", links("/"))
		case "/members/":
			rw.Header().Set("WWW-Authenticate", `Basic realm="members"`)
			http.Error(rw, "login required", http.StatusUnauthorized)
		case "/wp-login.php":
			w.doc(rw, 200, "Log in", "", "<form><input type=password></form>")
		default:
			http.NotFound(rw, r)
		}
	case KindForbidden:
		switch p {
		case "/":
			w.doc(rw, 200, "Forbidden home", "", links("/private.html", "/after.html"))
		case "/after.html":
			w.doc(rw, 200, "Forbidden after", "", links("/"))
		case "/private.html":
			http.Error(rw, "forbidden", http.StatusForbidden)
		default:
			http.NotFound(rw, r)
		}
	case KindProxyAuth:
		switch p {
		case "/":
			w.doc(rw, 200, "Proxy home", "", links("/p.html", "/after.html"))
		case "/p.html":
			rw.Header().Set("Proxy-Authenticate", `Basic realm="proxy"`)
			http.Error(rw, "proxy authentication required", http.StatusProxyAuthRequired)
		default:
			w.doc(rw, 200, "Proxy "+p, "", "")
		}
	case KindChallenge:
		rw.Header().Set("cf-mitigated", "challenge")
		w.doc(rw, 503, "Just a moment...", "", "<noscript>Enable JavaScript and cookies to continue</noscript>"+links("/next.html"))
	case KindCaptcha:
		switch p {
		case "/":
			w.doc(rw, 200, "Captcha home", "", links("/search.html", "/after.html"))
		case "/search.html":
			w.doc(rw, 403, "Attention Required", "", `<div class="g-recaptcha" data-sitekey="x"></div><p>Please complete the captcha to prove you are human.</p>`)
		default:
			w.doc(rw, 200, "Captcha "+p, "", "")
		}
	case KindNoindex:
		switch p {
		case "/":
			w.doc(rw, 200, "Noindex home", "", links("/meta-noindex.html", "/header-noindex.html", "/nofollow.html")+
				`<a rel="nofollow" href="/hidden-rel.html">rel nofollow</a>`)
		case "/meta-noindex.html":
			w.doc(rw, 200, "Meta noindex", `<meta name="robots" content="noindex">`, links("/"))
		case "/header-noindex.html":
			rw.Header().Set("X-Robots-Tag", "noindex")
			w.doc(rw, 200, "Header noindex", "", links("/"))
		case "/nofollow.html":
			w.doc(rw, 200, "Meta nofollow", `<meta name="LohiSoftBot" content="nofollow">`, links("/hidden-meta.html"))
		default:
			w.doc(rw, 200, "Hidden "+p, "", "")
		}
	case KindSlow:
		switch p {
		case "/":
			w.doc(rw, 200, "Slow home", "", links("/drip.html"))
		case "/drip.html":
			rw.Header().Set("Content-Type", "text/html")
			rw.WriteHeader(200)
			fmt.Fprint(rw, "<html><head><title>drip</title></head><body><p>"+html.EscapeString(w.Canary))
			deadline := time.Now().Add(w.opts.SlowFor)
			for time.Now().Before(deadline) {
				if _, err := rw.Write([]byte("x")); err != nil {
					return
				}
				rw.Flush()
				select {
				case <-time.After(50 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
		default:
			http.NotFound(rw, r)
		}
	case KindHuge:
		switch p {
		case "/":
			w.doc(rw, 200, "Huge home", "", links("/huge.html", "/file.bin"))
		case "/huge.html":
			rw.Header().Set("Content-Type", "text/html")
			rw.WriteHeader(200)
			fmt.Fprint(rw, "<html><head><title>huge</title></head><body><p>"+html.EscapeString(w.Canary)+"</p>")
			line := []byte(strings.Repeat("<p>filler filler filler filler</p>", 30) + "\n")
			for n := 0; n < w.opts.HugeSize; n += len(line) {
				if _, err := rw.Write(line); err != nil {
					return
				}
			}
		case "/file.bin":
			rw.Header().Set("Content-Type", "application/octet-stream")
			rw.WriteHeader(200)
			buf := make([]byte, 64<<10)
			for n := 0; n < w.opts.HugeSize; n += len(buf) {
				if _, err := rw.Write(buf); err != nil {
					return
				}
			}
		default:
			http.NotFound(rw, r)
		}
	case KindGzip:
		switch p {
		case "/":
			w.doc(rw, 200, "Gzip home", "", links("/bomb.html"))
		case "/bomb.html":
			rw.Header().Set("Content-Type", "text/html")
			rw.Header().Set("Content-Encoding", "gzip")
			rw.WriteHeader(200)
			rw.Write(w.gzipBomb())
		default:
			http.NotFound(rw, r)
		}
	case KindCharset:
		w.charsetPage(rw, r)
	default:
		w.doc(rw, 200, host, "", "")
	}
}

func (w *Web) redirect(rw *StatusWriter, r *http.Request, host string) {
	p := r.URL.Path
	to := func(loc string) { http.Redirect(rw, r, loc, http.StatusFound) }
	if host == "www.redirect.test" {
		if p == "/landing.html" {
			w.doc(rw, 200, "Landing on www", "", "")
			return
		}
		http.NotFound(rw, r)
		return
	}
	switch p {
	case "/":
		w.doc(rw, 200, "Redirect home", "", links("/chain/1", "/loop/a", "/away", "/mailto", "/zero", "/www"))
	case "/chain/1":
		to("/chain/2")
	case "/chain/2":
		to("/chain/3")
	case "/chain/3":
		to("/final.html")
	case "/final.html":
		w.doc(rw, 200, "Final", "", "")
	case "/loop/a":
		to("/loop/b")
	case "/loop/b":
		to("/loop/a")
	case "/away":
		to(w.URL("plain-000.test", "/"))
	case "/mailto":
		to("mailto:someone@redirect.test")
	case "/zero":
		to(w.URL("zero.test", "/"))
	case "/www":
		to(w.URL("www.redirect.test", "/landing.html"))
	default:
		http.NotFound(rw, r)
	}
}

// Latin-1, Shift_JIS and windows-1252 encodings of the charset pages.
var (
	latin1Title = []byte("Caf\xe9 M\xfcller \xe0 la carte")                          // "Café Müller à la carte"
	sjisTitle   = []byte("\x93\xfa\x96\x7b\x8c\xea\x82\xcc\x83\x79\x81\x5b\x83\x57") // "日本語のページ"
	cp1252Title = []byte("\x93Smart quotes\x94 \x80 5")                              // "“Smart quotes” € 5"
)

func (w *Web) charsetPage(rw http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	switch r.URL.Path {
	case "/":
		rw.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		b.WriteString("<html><head><title>")
		b.Write(latin1Title)
		b.WriteString("</title></head><body><h1>")
		b.Write(latin1Title)
		b.WriteString("</h1><p>" + html.EscapeString(w.Canary) + "</p>" + links("/sjis.html", "/cp1252.html") + "</body></html>")
	case "/sjis.html":
		rw.Header().Set("Content-Type", "text/html")
		b.WriteString(`<html><head><meta charset="shift_jis"><title>`)
		b.Write(sjisTitle)
		b.WriteString("</title></head><body><p>" + html.EscapeString(w.Canary) + "</p></body></html>")
	case "/cp1252.html":
		rw.Header().Set("Content-Type", "text/html")
		b.WriteString(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><title>`)
		b.Write(cp1252Title)
		b.WriteString("</title></head><body><p>" + html.EscapeString(w.Canary) + "</p></body></html>")
	default:
		http.NotFound(rw, r)
		return
	}
	rw.WriteHeader(200)
	rw.Write(b.Bytes())
}

// gzipBomb builds, once, a gzip body that expands to BombSize bytes: one
// small member (64 KiB of zeros) repeated, which gzip readers decode as one
// stream (RFC 1952 allows several members).
func (w *Web) gzipBomb() []byte {
	w.bombOnce.Do(func() {
		var zb bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&zb, gzip.BestSpeed)
		zw.Write([]byte("<html><head><title>bomb</title></head><body><p>"))
		zw.Close()
		head := append([]byte(nil), zb.Bytes()...)
		zb.Reset()
		zw, _ = gzip.NewWriterLevel(&zb, gzip.BestSpeed)
		zw.Write(make([]byte, 64<<10))
		zw.Close()
		member := zb.Bytes()
		w.bomb = head
		for n := 0; n < w.opts.BombSize; n += 64 << 10 {
			w.bomb = append(w.bomb, member...)
		}
	})
	return w.bomb
}

// Recorder records every request a test server receives (see
// webrecord.Recorder).
type Recorder = webrecord.Recorder

// StatusWriter keeps the status an answer was written with (see
// webrecord.StatusWriter).
type StatusWriter = webrecord.StatusWriter

// kindLinked is the kind of the sites of the ExternalLinks pool: one page.
const kindLinked = "linked"

// linkedSite is the name of site i of the ExternalLinks pool.
func linkedSite(i int) string { return fmt.Sprintf("linked-%04d.test", i) }

// externalLinks is the ExternalLinks links of page i of host: a window of
// the pool that moves with the page and the site, so that every pool site
// is linked from many sites.
func (w *Web) externalLinks(host string, i int) string {
	n := w.opts.ExternalLinks
	if n == 0 {
		return ""
	}
	start := (len(host)*131 + i*n) % w.opts.LinkedSites
	for _, c := range host {
		start = (start*31 + int(c)) % w.opts.LinkedSites
	}
	// A window is made once: the web's own work stays small beside the
	// crawler's that a benchmark measures.
	w.windowsMu.Lock()
	defer w.windowsMu.Unlock()
	if s, ok := w.windows[start]; ok {
		return s
	}
	var b strings.Builder
	for j := 0; j < n; j++ {
		s := linkedSite((start + j) % w.opts.LinkedSites)
		fmt.Fprintf(&b, "<a href=\"%s\">news from %s</a>\n", w.URL(s, "/"), s)
	}
	if w.windows == nil {
		w.windows = map[int]string{}
	}
	w.windows[start] = b.String()
	return w.windows[start]
}

// LinkedSites returns the names of the sites of the ExternalLinks pool
// (none without ExternalLinks).
func (w *Web) LinkedSites() []string {
	if w.opts.ExternalLinks == 0 {
		return nil
	}
	out := make([]string, w.opts.LinkedSites)
	for i := range out {
		out[i] = linkedSite(i)
	}
	return out
}

// Link is a link of a page AddPage serves: its href (written as given) and
// its text.
type Link struct{ Href, Text string }

// AddPage serves an HTML page (the canary in its body) at path of host,
// with title and links, as Handle does; host (an A-label name) gets an A
// record when it has none. A site of only such pages answers 404 to any
// other path, robots.txt included.
func (w *Web) AddPage(host, path, title string, ls ...Link) {
	w.DNS.AddA(host, "127.0.0.1")
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a>\n", html.EscapeString(l.Href), html.EscapeString(l.Text))
	}
	body := b.String()
	w.Handle(host, path, func(rw http.ResponseWriter, r *http.Request) { w.doc(rw, 200, title, "", body) })
}

// CheckPolite fails t unless the server's record keeps the politeness
// promises: never two requests in flight on one host (counted live, and
// from hits), and at least minGap between two requests to a host. The
// server's end of a request can trail the crawler's by a little when the
// crawler hangs up on a body (huge, slow): 10 ms are allowed.
func (w *Web) CheckPolite(t testing.TB, hits []Hit, minGap time.Duration) {
	t.Helper()
	for host, n := range w.MaxInFlight() {
		if n > 1 {
			t.Errorf("MaxInFlight[%s] = %d, want 1", host, n)
		}
	}
	for host, n := range MaxOverlap(hits) {
		if n > 1 {
			t.Errorf("MaxOverlap[%s] = %d, want 1", host, n)
		}
	}
	for host, g := range MinGap(hits) {
		if g < minGap-10*time.Millisecond {
			t.Errorf("MinGap[%s] = %v, want >= %v", host, g, minGap)
		}
	}
}
