package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/lohisoft/lohibot/internal/app/botpage"
	"github.com/lohisoft/lohibot/webbotauth"
)

// Health statuses of /healthz.
const (
	StatusOK       = "ok"
	StatusDown     = "down"
	StatusDisabled = "disabled" // not configured: not a failure
)

// Health is the body of /healthz: the daemon is healthy (200) when every
// part is ok or disabled, and unavailable (503) otherwise, with Down naming
// the parts that are not.
type Health struct {
	Status   string    `json:"status"` // ok, or unavailable
	Down     []string  `json:"down"`   // the parts that are down, never null
	Database Part      `json:"database"`
	Watcher  Part      `json:"watcher"`
	Crawler  CrawlPart `json:"crawler"`
}

// Part is the state of one part of the daemon.
type Part struct {
	Status string `json:"status"`
	// Error says why it is down.
	Error string `json:"error,omitempty"`
	// Since is when the watcher's connection state last changed.
	Since *time.Time `json:"since,omitempty"`
}

// CrawlPart is the crawl scheduler's state; it never makes the daemon
// unhealthy (a crawl's failures are in the metrics).
type CrawlPart struct {
	Status       string `json:"status"` // ok or disabled
	SitesRunning int    `json:"sites_running"`
}

// routes builds the HTTP handler.
func (s *Server) routes(page *botpage.Handler, status *botpage.StatusHandler) http.Handler {
	mux := http.NewServeMux()
	pages := http.NewServeMux()
	page.Register(pages)
	status.Register(pages)
	mux.Handle("GET "+botpage.PagePath, s.metrics.instrument("bot", pages))
	mux.Handle("GET "+botpage.PagePath+"/{$}", s.metrics.instrument("bot", pages))
	mux.Handle("GET "+botpage.IPsPath, s.metrics.instrument("ips", pages))
	mux.Handle("GET "+botpage.StatusPath, s.metrics.instrument("status", pages))
	mux.Handle("GET "+botpage.StatusJSONPath, s.metrics.instrument("status", pages))
	mux.Handle("GET "+webbotauth.DirectoryPath, s.metrics.instrument("directory", http.HandlerFunc(s.serveDirectory)))
	mux.Handle("GET "+LogCheckpointPath, s.metrics.instrument("log", http.HandlerFunc(s.serveCheckpoint)))
	mux.Handle("GET "+LogTilePrefix+"{path...}", s.metrics.instrument("log", http.HandlerFunc(s.serveTile)))
	mux.Handle("GET /healthz", s.metrics.instrument("healthz", http.HandlerFunc(s.serveHealth)))
	mux.Handle("GET /metrics", s.metrics.instrument("metrics", s.metrics.Handler()))
	return mux
}

// Check returns the daemon's health: the database answers a query within
// two seconds, and the watcher (when configured) is connected. It does I/O.
func (s *Server) Check(ctx context.Context) *Health {
	h := &Health{Status: StatusOK, Down: []string{}}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		h.Database = Part{Status: StatusDown, Error: err.Error()}
		h.Down = append(h.Down, "database")
	} else {
		h.Database = Part{Status: StatusOK}
	}
	switch w := s.watcherStatus(); {
	case s.cfg.Load().Mail.IMAP == "":
		h.Watcher = Part{Status: StatusDisabled}
	case w == nil:
		h.Watcher = Part{Status: StatusDown, Error: "not started"}
		h.Down = append(h.Down, "watcher")
	default:
		st := w.State()
		var since *time.Time
		if !st.Since.IsZero() {
			since = &st.Since
		}
		if st.Connected {
			h.Watcher = Part{Status: StatusOK, Since: since}
		} else {
			msg := st.LastError
			if msg == "" {
				msg = "not connected"
			}
			h.Watcher = Part{Status: StatusDown, Error: msg, Since: since}
			h.Down = append(h.Down, "watcher")
		}
	}
	h.Crawler = CrawlPart{Status: StatusOK}
	if !s.cfg.Load().Crawler.Enabled {
		h.Crawler.Status = StatusDisabled
	}
	s.mu.Lock()
	h.Crawler.SitesRunning = len(s.running)
	s.mu.Unlock()
	if len(h.Down) > 0 {
		h.Status = "unavailable"
	}
	return h
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	h := s.Check(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if h.Status != StatusOK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(h)
}

// siteStatus looks up what the status page may say about site: the
// botpage.StatusLookup of /bot/status. It does I/O.
func (s *Server) siteStatus(ctx context.Context, site string) (*botpage.SiteStatus, error) {
	st, err := s.store.SiteStatus(ctx, site)
	if err != nil {
		return nil, err
	}
	out := &botpage.SiteStatus{Site: site, Listed: st.Listed, Excluded: st.ExcludedSince != nil,
		ExcludedSince: st.ExcludedSince, LastRequest: st.LastRequest, ExclusionLeaf: st.ExclusionLeaf}
	if c := st.LastCycle; c != nil {
		out.LastCycle = &botpage.CycleStatus{StartedAt: c.StartedAt, FinishedAt: c.FinishedAt, PageRequests: c.PageRequests, Budget: c.Budget}
	}
	return out, nil
}

// serveDirectory serves the Web Bot Auth key directory of the configuration
// in force; 404 when it lists no key.
func (s *Server) serveDirectory(w http.ResponseWriter, r *http.Request) {
	sg := s.signing.Load()
	if sg == nil || len(sg.Keys) == 0 {
		http.NotFound(w, r)
		return
	}
	sg.Directory.ServeHTTP(w, r)
}
