// Package sampleweb runs a small web of sample sites on loopback for the
// demo and the end-to-end test: one HTTP server on 127.0.0.1 routes by Host,
// and an in-process DNS server (internal/localweb/localdns) resolves every site name
// to it. Hand DNSAddr to the crawler as its resolver (--resolver) and let it
// allow private addresses (--allow-private).
//
// Unlike internal/testenv/testweb, whose sites are named *.test, these sites have
// names under real top-level domains (bakery-example.it, ...), because the
// mailbox classifier only takes names under ICANN top-level domains for
// sites, and the demo and the end-to-end test exclude sites by email. The
// names never reach a real DNS server: only the in-process one answers them.
//
// The server records the truth, in testweb's Hit form so that testweb's
// MaxOverlap, Gaps and MinGap apply: every request with its host, path, user
// agent, start and end times and status. Every page body carries a canary
// sentence (Canary) outside the indexed fields.
package sampleweb

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/internal/localweb/localdns"
	"github.com/lohisoft/lohibot/internal/localweb/webrecord"
)

// Canary is the sentence written into every page body. It must never be
// found in the crawler's database.
const Canary = "Sample web canary: only page bodies carry violet otter 51C2."

// Site kinds.
const (
	KindPlain      = "plain"      // Options.Pages pages, linked in a chain
	KindRobots     = "robots"     // robots.txt keeps LohiSoftBot out of /private/ (but /private/open.html)
	KindCrawlDelay = "crawldelay" // robots.txt asks for Options.CrawlDelay
	KindRetry      = "retry"      // the first request of every page gets 429 with Retry-After
	KindLogin      = "login"      // /members/ answers 401; a /login link is never to be followed
	KindBig        = "big"        // Options.BigPages pages, more than the budget
)

// Options configures Start. A nil *Options is the zero value; every zero
// field takes the default given.
type Options struct {
	// Pages is the number of pages of each plain site. Zero means 25.
	Pages int
	// BigPages is the number of pages of the big site. Zero means 40.
	BigPages int
	// CrawlDelay is the Crawl-delay the crawl-delay site asks for, in
	// whole seconds. Zero means 3s.
	CrawlDelay time.Duration
	// RetryAfter is the Retry-After of the retry site, in whole seconds.
	// Zero means 3s.
	RetryAfter time.Duration
}

// Site is one sample site.
type Site struct {
	Name     string // the site (registrable domain), also its only host
	Kind     string
	StartURL string // http://NAME:PORT/
	Says     string // what the site shows, in a few words
}

// The sample sites. Their names are fictional; only the in-process DNS
// server resolves them.
var sites = []struct{ name, kind string }{
	{"robots-example.com", KindRobots},
	{"slowdown-example.org", KindCrawlDelay},
	{"busy-example.net", KindRetry},
	{"members-example.com", KindLogin},
	{"library-example.org", KindBig},
	{"trattoria-example.it", KindPlain},
	{"cykel-example.dk", KindPlain},
	{"kavezo-example.hu", KindPlain},
	{"garten-example.de", KindPlain},
}

// Web is a running sample web. Its methods are safe for concurrent use.
type Web struct {
	// DNSAddr is the HOST:PORT of the DNS server that resolves every site
	// name: pass it as --resolver.
	DNSAddr string
	// DNS is the DNS server itself, to add records.
	DNS *localdns.Server
	// Port is the TCP port of every site, on 127.0.0.1.
	Port int

	opts  Options
	srv   *http.Server
	ln    net.Listener
	done  chan struct{} // closed when Serve returned
	sites []Site
	kind  map[string]string // host → kind

	// Recorder holds what the server received: Hits and HitsFor come from
	// it.
	webrecord.Recorder
}

// Start starts the DNS server and the web. Close it when done.
func Start(opts *Options) (*Web, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Pages <= 0 {
		o.Pages = 25
	}
	if o.BigPages <= 0 {
		o.BigPages = 40
	}
	if o.CrawlDelay <= 0 {
		o.CrawlDelay = 3 * time.Second
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 3 * time.Second
	}
	dns, err := localdns.NewServer()
	if err != nil {
		return nil, fmt.Errorf("sampleweb: dns: %w", err)
	}
	w := &Web{DNSAddr: dns.Addr, DNS: dns, opts: o, kind: map[string]string{}}
	// The listener exists already; the server starts serving only once the
	// site table is complete.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		dns.Close()
		return nil, fmt.Errorf("sampleweb: %w", err)
	}
	w.ln, w.done = ln, make(chan struct{})
	w.srv = &http.Server{Handler: http.HandlerFunc(w.serve), ReadHeaderTimeout: 10 * time.Second}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	w.Port, _ = strconv.Atoi(port)
	for _, s := range sites {
		dns.AddA(s.name, "127.0.0.1")
		w.kind[s.name] = s.kind
		w.sites = append(w.sites, Site{Name: s.name, Kind: s.kind, StartURL: w.URL(s.name, "/"), Says: w.says(s.kind)})
	}
	go func() {
		defer close(w.done)
		w.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return w, nil
}

func (w *Web) says(kind string) string {
	switch kind {
	case KindRobots:
		return "robots.txt keeps LohiSoftBot out of /private/"
	case KindCrawlDelay:
		return fmt.Sprintf("robots.txt asks for Crawl-delay: %d", secs(w.opts.CrawlDelay))
	case KindRetry:
		return fmt.Sprintf("answers 429 with Retry-After: %d to the first request of each page", secs(w.opts.RetryAfter))
	case KindLogin:
		return "has a members area behind a login (401)"
	case KindBig:
		return fmt.Sprintf("has %d pages (the budget is 20 page requests per site)", w.opts.BigPages)
	default:
		return fmt.Sprintf("a plain site of %d pages", w.opts.Pages)
	}
}

func secs(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// Close stops the web and the DNS server. It blocks until in-flight
// requests end.
func (w *Web) Close() {
	w.srv.Close() // closes the listener and every connection
	<-w.done
	w.DNS.Close()
}

// URL returns the absolute URL of path on host, with the web's port.
func (w *Web) URL(host, path string) string {
	return "http://" + host + ":" + strconv.Itoa(w.Port) + path
}

// Sites returns every site.
func (w *Web) Sites() []Site { return append([]Site(nil), w.sites...) }

// Site returns the site of a name or of a kind (the first of that kind).
func (w *Web) Site(nameOrKind string) Site {
	for _, s := range w.sites {
		if s.Name == nameOrKind || s.Kind == nameOrKind {
			return s
		}
	}
	panic("sampleweb: no site " + nameOrKind)
}

// PageHits counts the requests other than /robots.txt in hits.
func PageHits(hits []webrecord.Hit) int {
	n := 0
	for _, h := range hits {
		if h.Path != "/robots.txt" {
			n++
		}
	}
	return n
}

func (w *Web) serve(rw http.ResponseWriter, r *http.Request) {
	sw, host, n, end := w.Begin(rw, r, false)
	defer end()
	kind, ok := w.kind[host]
	if !ok {
		http.Error(sw, "no such site", http.StatusNotFound)
		return
	}
	if r.URL.Path == "/robots.txt" {
		w.robots(sw, kind)
		return
	}
	w.page(sw, r, host, kind, n)
}

func (w *Web) robots(rw http.ResponseWriter, kind string) {
	ServeRobots(rw, kind, strconv.Itoa(secs(w.opts.CrawlDelay)))
}

// ServeRobots answers a request for /robots.txt on a site of kind: for
// KindRobots a file that keeps every other agent out and LohiSoftBot out of
// /private/ (but /private/open.html), for KindCrawlDelay one that asks
// LohiSoftBot for crawlDelay (the value as written in the file, such as
// "1" or "0.5"), and 404 for every other kind.
func ServeRobots(rw http.ResponseWriter, kind, crawlDelay string) {
	var body string
	switch kind {
	case KindRobots:
		body = "# Everyone else stays out; LohiSoftBot may read all but /private/.\nUser-agent: *\nDisallow: /\n\nUser-agent: LohiSoftBot\nDisallow: /private/\nAllow: /private/open.html\n"
	case KindCrawlDelay:
		body = "User-agent: LohiSoftBot\nCrawl-delay: " + crawlDelay + "\nAllow: /\n"
	default:
		http.NotFound(rw, nil)
		return
	}
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(rw, body)
}

// doc writes an HTML page with the canary in its body.
func doc(rw http.ResponseWriter, title string, links ...string) {
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	for _, l := range links {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(l), html.EscapeString(linkText(l)))
	}
	fmt.Fprintf(rw, "<!DOCTYPE html>\n<html><head><title>%s</title>\n<meta name=\"description\" content=\"%s, a sample page\"></head>\n<body>\n<h1>%s</h1>\n<p>%s</p>\n<ul>\n%s</ul>\n</body></html>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(title), Canary, b.String())
}

func linkText(path string) string {
	t := strings.Trim(strings.TrimSuffix(path, ".html"), "/")
	if t == "" {
		return "home"
	}
	return strings.ReplaceAll(t, "/", " ")
}

func (w *Web) page(rw *webrecord.StatusWriter, r *http.Request, host, kind string, n int) {
	p := r.URL.Path
	switch kind {
	case KindPlain, KindBig:
		pages := w.opts.Pages
		if kind == KindBig {
			pages = w.opts.BigPages
		}
		i := 0
		if p != "/" {
			var err error
			i, err = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/p/"), ".html"))
			if !strings.HasPrefix(p, "/p/") || err != nil || i < 1 || i >= pages {
				http.NotFound(rw, r)
				return
			}
		}
		var links []string
		for j := i + 1; j <= i+2 && j < pages; j++ {
			links = append(links, fmt.Sprintf("/p/%d.html", j))
		}
		doc(rw, fmt.Sprintf("%s, page %d", host, i), append(links, "/")...)
	case KindRobots:
		switch p {
		case "/":
			doc(rw, "Robots home", "/private/secret.html", "/private/open.html", "/public/a.html", "/public/b.html")
		case "/private/secret.html", "/private/open.html", "/public/a.html", "/public/b.html":
			doc(rw, "Robots "+p, "/")
		default:
			http.NotFound(rw, r)
		}
	case KindCrawlDelay:
		switch p {
		case "/", "/a.html", "/b.html", "/c.html":
			doc(rw, "Slow down "+p, "/a.html", "/b.html", "/c.html")
		default:
			http.NotFound(rw, r)
		}
	case KindRetry:
		switch p {
		case "/", "/a.html", "/b.html":
		default:
			http.NotFound(rw, r)
			return
		}
		if n == 1 {
			rw.Header().Set("Retry-After", strconv.Itoa(secs(w.opts.RetryAfter)))
			http.Error(rw, "too many requests: come back later", http.StatusTooManyRequests)
			return
		}
		doc(rw, "Busy "+p, "/a.html", "/b.html")
	case KindLogin:
		switch p {
		case "/":
			doc(rw, "Members home", "/about.html", "/login", "/members/", "/contact.html")
		case "/about.html", "/contact.html":
			doc(rw, "Members "+p, "/")
		case "/login":
			doc(rw, "Log in")
		case "/members/":
			rw.Header().Set("WWW-Authenticate", `Basic realm="members"`)
			http.Error(rw, "login required", http.StatusUnauthorized)
		default:
			http.NotFound(rw, r)
		}
	default:
		http.NotFound(rw, r)
	}
}

// Report summarises, from the server's record, what every promise of the
// bot page looks like on this web: one line per finding, and whether each
// holds. It is what the demo narrates and what the end-to-end test asserts.
type Report struct {
	Requests     int
	BadUserAgent int                        // requests without the bot's user agent
	WithCookie   int                        // requests carrying Cookie, Authorization or Referer
	MaxOverlap   int                        // most requests in flight at once on one host
	MinGap       map[string]time.Duration   // per host
	PageRequests map[string]int             // per site, robots.txt excluded
	RetryGap     time.Duration              // after the first 429, until the next request to that host
	AfterLogin   int                        // requests to the login site after its 401
	Disallowed   []string                   // paths robots.txt disallows that were requested anyway
	LoginFetched bool                       // the /login link was followed
	Statuses     map[int]int                // responses by status
	ByHost       map[string][]webrecord.Hit // the record, per host, by start time
}

// Check reads the record hits and reports what it shows.
func (w *Web) Check(hits []webrecord.Hit) *Report {
	rep := &Report{Requests: len(hits), MinGap: webrecord.MinGap(hits), PageRequests: map[string]int{}, Statuses: map[int]int{}, ByHost: map[string][]webrecord.Hit{}}
	for _, h := range hits {
		if h.UserAgent != "LohiSoftBot/1.0 (+https://lohisoft.com/bot)" && h.UserAgent != "LohiSoftBot/1.0 (+message@lohisoft.com)" {
			rep.BadUserAgent++
		}
		if h.Cookie != "" || h.Auth != "" || h.Referer != "" {
			rep.WithCookie++
		}
		if h.Path != "/robots.txt" {
			rep.PageRequests[h.Host]++
		}
		rep.Statuses[h.Status]++
		rep.ByHost[h.Host] = append(rep.ByHost[h.Host], h)
		if w.kind[h.Host] == KindRobots && strings.HasPrefix(h.Path, "/private/") && h.Path != "/private/open.html" {
			rep.Disallowed = append(rep.Disallowed, h.Host+h.Path)
		}
		if w.kind[h.Host] == KindLogin && h.Path == "/login" {
			rep.LoginFetched = true
		}
	}
	for _, n := range webrecord.MaxOverlap(hits) {
		rep.MaxOverlap = max(rep.MaxOverlap, n)
	}
	for host, hs := range rep.ByHost {
		sort.Slice(hs, func(i, j int) bool { return hs[i].Start.Before(hs[j].Start) })
		after := -1
		for i, h := range hs {
			if after >= 0 {
				after++
			}
			switch {
			case h.Status == http.StatusUnauthorized && w.kind[host] == KindLogin && after < 0:
				after = 0
			case h.Status == http.StatusTooManyRequests && rep.RetryGap == 0 && i+1 < len(hs):
				rep.RetryGap = hs[i+1].Start.Sub(h.End)
			}
		}
		if after > 0 {
			rep.AfterLogin += after
		}
	}
	return rep
}

// RetryAfter is the Retry-After the retry site sends.
func (w *Web) RetryAfter() time.Duration { return time.Duration(secs(w.opts.RetryAfter)) * time.Second }

// CrawlDelay is the Crawl-delay the crawl-delay site asks for.
func (w *Web) CrawlDelay() time.Duration { return time.Duration(secs(w.opts.CrawlDelay)) * time.Second }
