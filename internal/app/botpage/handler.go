package botpage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Paths the Handler serves.
const (
	PagePath = "/bot"
	IPsPath  = "/bot/ips.json"
)

// Options configures a Handler. A nil *Options is the zero value.
type Options struct {
	// Now returns the current time, for an IP list whose Facts have no
	// IPsCreated. Nil means time.Now.
	Now func() time.Time
	// Logger receives rendering failures. Nil means slog.Default().
	Logger *slog.Logger
}

// Handler serves the bot page and its IP list from the facts current at
// each request, so a configuration reload shows at once. It is safe for
// concurrent use.
type Handler struct {
	page  *Page
	facts func() *Facts
	now   func() time.Time
	log   *slog.Logger

	mu          sync.Mutex // guards cachedFacts and cached
	cachedFacts *Facts
	cached      map[Lang][]byte // the pages rendered from cachedFacts
}

// NewHandler returns a Handler that asks facts for the values to show on
// every request. facts must be safe for concurrent use and never return
// nil; the Facts it returns must not be modified afterwards (return a new
// *Facts for new values): the rendered pages are kept until it does.
func NewHandler(facts func() *Facts, opts *Options) (*Handler, error) {
	var o Options
	if opts != nil {
		o = *opts
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
	return &Handler{page: p, facts: facts, now: o.Now, log: o.Logger}, nil
}

// Register adds the page (at /bot and /bot/, neither redirecting to the
// other) and the IP list (/bot/ips.json) to mux, for GET and HEAD.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PagePath, h.ServePage)
	mux.HandleFunc("GET "+PagePath+"/{$}", h.ServePage)
	mux.HandleFunc("GET "+IPsPath, h.ServeIPs)
}

// ServePage serves the page in the language of ?lang= or Accept-Language.
func (h *Handler) ServePage(w http.ResponseWriter, r *http.Request) {
	lang, fromHeader := Negotiate(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
	body, err := h.render(lang)
	if err != nil {
		h.log.Error("bot page not rendered", "lang", string(lang), "err", err)
		http.Error(w, "the bot page is unavailable", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Language", string(lang))
	hd.Set("Content-Security-Policy", h.page.ContentSecurityPolicy())
	if fromHeader {
		hd.Set("Vary", "Accept-Language")
	}
	serveBody(w, r, body)
}

// render returns the page in lang for the current facts, rendering it
// only once per facts value.
func (h *Handler) render(lang Lang) ([]byte, error) {
	f := h.facts()
	h.mu.Lock()
	if h.cachedFacts == f {
		if b, ok := h.cached[lang]; ok {
			h.mu.Unlock()
			return b, nil
		}
	}
	h.mu.Unlock()
	var buf bytes.Buffer
	if err := h.page.Render(&buf, lang, f); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cachedFacts != f {
		h.cachedFacts, h.cached = f, make(map[Lang][]byte, len(Langs()))
	}
	h.cached[lang] = buf.Bytes()
	return buf.Bytes(), nil
}

// ServeIPs serves the machine-readable list: the JSON of `lohibot ips`,
// as application/json, never redirected.
func (h *Handler) ServeIPs(w http.ResponseWriter, r *http.Request) {
	f := h.facts()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f.IPList(h.now())); err != nil {
		h.log.Error("ip list not encoded", "err", err)
		http.Error(w, "the ip list is unavailable", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Access-Control-Allow-Origin", "*")
	serveBody(w, r, buf.Bytes())
}

// serveBody writes body with an ETag, answering If-None-Match with 304.
// Responses may be stored but must be revalidated, so a reload shows at
// once.
func serveBody(w http.ResponseWriter, r *http.Request, body []byte) {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// etagMatch reports whether an If-None-Match value names etag, by the weak
// comparison RFC 9110 section 13.1.2 asks for.
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
