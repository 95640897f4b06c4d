// Package serve is `lohibot serve`: one process that runs the mailbox
// watcher, a crawl scheduler and an HTTP server (the bot page, ips.json,
// /healthz and /metrics), all from one Config, so that the public page and
// the crawler can never disagree.
//
// The daemon's wiring is not API, so it lives
// in internal/ next to internal/app/botpage (the page and its texts), and
// cmd/lohibot only turns flags, environment variables and signals into a
// Config and calls Run. The watcher (mailbot), the crawler (crawler) and the
// page (botpage) know nothing of each other; this package connects them
// through their hooks and feeds the metrics.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/botpage"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/translog"
	"github.com/lohisoft/lohibot/webbotauth"
)

// Options configures a Server. A nil *Options is the zero value.
type Options struct {
	// Load reads the configuration again for Reload (file, environment and
	// flags, in that order). Nil makes Reload fail.
	Load func() (*Config, error)
	// Listener is where the HTTP server accepts connections. Nil means a
	// TCP listener on Config.HTTP, opened by Run.
	Listener net.Listener
	// Logger receives the daemon's log. Nil means slog.Default().
	Logger *slog.Logger
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// ShutdownTimeout bounds the wait for HTTP requests in flight when Run
	// stops. Zero means 10 seconds.
	ShutdownTimeout time.Duration
}

// Server is the daemon. Create it with New, run it with Run, and Close it
// when Run has returned. Its methods are safe for concurrent use.
type Server struct {
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	store   *db.Store
	pol     *policy.Policy
	metrics *Metrics
	handler http.Handler

	cfg     atomic.Pointer[Config]
	facts   atomic.Pointer[botpage.Facts]
	signing atomic.Pointer[Signing]   // the keys of cfg
	pub     atomic.Pointer[publisher] // the log's publisher; nil without log.key_file

	// excluded asks for a checkpoint now: an exclusion was made.
	excluded chan struct{}

	// mailChanged and crawlChanged tell the watcher and the scheduler that
	// a reload changed their settings; rescan asks for a scan now.
	mailChanged  chan struct{}
	crawlChanged chan struct{}

	reloadMu sync.Mutex // serialises Reload

	mu       sync.Mutex // guards watcher and running
	watcher  watcherState
	running  map[string]bool // sites being crawled by this process
	listener net.Listener    // set by Run
}

// watcherState is what the health check asks of the running watcher
// (*mailbot.Watcher).
type watcherState interface {
	State() mailbot.WatchState
}

// New opens the database of cfg and prepares the daemon. It does I/O (the
// database connection and migration). cfg must pass Validate.
func New(ctx context.Context, cfg *Config, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	facts, err := cfg.Facts(o.Now().UTC())
	if err != nil {
		return nil, err
	}
	signing, err := cfg.Signing()
	if err != nil {
		return nil, err
	}
	facts.KeyIDs = signing.KeyIDs(o.Now())
	logKey, err := cfg.LogKey()
	if err != nil {
		return nil, err
	}
	if logKey != nil {
		facts.LogURL, facts.LogVerifierKey = cfg.LogURL(), logKey.VerifierKey()
	}
	// serve never creates a database: lohibot init does.
	store, err := db.OpenExisting(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	if err := publishKeys(ctx, store, signing, o.Now()); err != nil {
		store.Close()
		return nil, err
	}
	// Work that finds the database unreachable waits for it, with backoff
	// (db.Store.Retry), and says so in the log and the metrics.
	store.SetRetryLog(o.Logger)
	store.StartSealer(0, o.Logger) // sealed every few seconds and at Close
	s := &Server{
		opts:         o,
		log:          o.Logger,
		now:          o.Now,
		store:        store,
		pol:          policy.New(store, nil),
		metrics:      NewMetrics(),
		mailChanged:  make(chan struct{}, 1),
		crawlChanged: make(chan struct{}, 1),
		excluded:     make(chan struct{}, 1),
		running:      map[string]bool{},
	}
	if logKey != nil {
		s.pub.Store(&publisher{log: translog.New(store, cfg.logOrigin()), key: logKey})
		if err := s.PublishCheckpoint(ctx); err != nil {
			store.Close()
			return nil, err
		}
	}
	s.cfg.Store(cfg)
	s.facts.Store(facts)
	s.signing.Store(signing)
	s.metrics.loaded(o.Now())
	s.metrics.observeDB(store.Retries)
	page, err := botpage.NewHandler(s.facts.Load, &botpage.Options{Now: o.Now, Logger: o.Logger})
	if err != nil {
		store.Close()
		return nil, err
	}
	status, err := botpage.NewStatusHandler(s.facts.Load, s.siteStatus, &botpage.StatusOptions{Now: o.Now, Logger: o.Logger})
	if err != nil {
		store.Close()
		return nil, err
	}
	s.handler = s.routes(page, status)
	return s, nil
}

// Close closes the database. Call it after Run has returned.
func (s *Server) Close() error { return s.store.Close() }

// Handler returns the HTTP handler: /bot, /bot/, /bot/ips.json, the status
// page (/bot/status, /bot/status.json), /healthz
// and /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// Metrics returns the daemon's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Config returns the configuration in force.
func (s *Server) Config() *Config { return s.cfg.Load() }

// Store returns the daemon's database.
func (s *Server) Store() *db.Store { return s.store }

// Addr returns the address the HTTP server listens on, once Run has
// opened it; nil before.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil {
		return nil
	}
	return s.listener.Addr()
}

// Run runs the HTTP server, the mailbox watcher and the crawl scheduler
// until ctx ends or the HTTP server fails, then stops them in order: the
// scheduler stops taking sites and the crawls in progress are interrupted
// (their requests in flight are completed in the log as interrupted, their
// cycles recorded as stopped, to be resumed), the watcher finishes the
// message it is on and disconnects, and last the HTTP server finishes the
// requests it is serving. Run blocks until all of that is done. It returns
// nil after ctx ended, or the HTTP server's error.
func (s *Server) Run(ctx context.Context) error {
	ln := s.opts.Listener
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", s.cfg.Load().HTTP)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	s.mu.Lock()
	s.listener = ln
	s.mu.Unlock()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.log.Info("serving", "http", ln.Addr().String(), "db_engine", string(s.store.Dialect))

	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var wg sync.WaitGroup
	wg.Go(func() { s.runWatcher(workCtx) })
	wg.Go(func() { s.runScheduler(workCtx) })
	wg.Go(func() { s.runPurge(workCtx) })
	wg.Go(func() { s.runCheckpoints(workCtx) })

	httpErr := make(chan error, 1)
	go func() { httpErr <- srv.Serve(ln) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-httpErr:
		err = fmt.Errorf("serve: http: %w", err)
	}
	s.log.Info("stopping")
	stopWork()
	wg.Wait()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && err == nil {
		err = fmt.Errorf("serve: http shutdown: %w", serr)
	}
	if herr := <-httpErr; err == nil && herr != nil && !errors.Is(herr, http.ErrServerClosed) {
		err = fmt.Errorf("serve: http: %w", herr)
	}
	s.log.Info("stopped")
	return err
}

// Reload reads the configuration again (Options.Load) and puts it in
// force: the page and ips.json show it from the next request on, the
// watcher reconnects when its settings changed, and when the crawler's
// changed, the sites taken up from then on are crawled with the new ones
// (the crawls in progress finish with the settings they started with). The database and the HTTP address need a restart: a reload that
// changes them keeps the old ones and logs it. A configuration that fails
// Validate changes nothing and is returned as an error.
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	err := s.reload()
	s.metrics.reloaded(err, s.now())
	if err != nil {
		s.log.Error("configuration not reloaded; the old one stays in force", "err", err)
		return err
	}
	return nil
}

func (s *Server) reload() error {
	if s.opts.Load == nil {
		return errors.New("serve: no way to reload the configuration")
	}
	cfg, err := s.opts.Load()
	if err != nil {
		return err
	}
	old := s.cfg.Load()
	if cfg.DB != old.DB {
		s.log.Warn("db changes need a restart; keeping the old one")
		cfg.DB = old.DB
	}
	if cfg.HTTP != old.HTTP {
		s.log.Warn("http address changes need a restart; keeping the old one", "http", old.HTTP)
		cfg.HTTP = old.HTTP
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	oldFacts := s.facts.Load()
	created := s.now().UTC()
	if fleet, err := cfg.Fleet(); err == nil && reflect.DeepEqual(fleet, oldFacts.Crawlers) {
		created = oldFacts.IPsCreated // the list did not change
	}
	facts, err := cfg.Facts(created)
	if err != nil {
		return err
	}
	signing, err := cfg.Signing()
	if err != nil {
		return err
	}
	facts.KeyIDs = signing.KeyIDs(s.now())
	logKey, err := cfg.LogKey()
	if err != nil {
		return err
	}
	if logKey != nil {
		facts.LogURL, facts.LogVerifierKey = cfg.LogURL(), logKey.VerifierKey()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := publishKeys(ctx, s.store, signing, s.now()); err != nil {
		return err
	}
	s.signing.Store(signing)
	if cfg.Log != old.Log {
		var pub *publisher
		if logKey != nil {
			pub = &publisher{log: translog.New(s.store, cfg.logOrigin()), key: logKey}
			if err := pub.publish(ctx, s.now()); err != nil {
				return err
			}
		}
		s.pub.Store(pub)
	}
	s.cfg.Store(cfg)
	s.facts.Store(facts)
	if !reflect.DeepEqual(cfg.Mail, old.Mail) {
		signal(s.mailChanged)
	}
	if !reflect.DeepEqual(cfg.Crawler, old.Crawler) || cfg.Node != old.Node || cfg.Resolver != old.Resolver {
		signal(s.crawlChanged)
	}
	s.log.Info("configuration reloaded")
	return nil
}

// signal wakes whoever waits on c, without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// publishKeys records the directory's keys in the database with the window
// in which each may sign (from now when the configuration gives none), so
// the audit can tell whether a request was signed with a key published at
// the time.
func publishKeys(ctx context.Context, store *db.Store, sg *Signing, now time.Time) error {
	for _, k := range sg.Keys {
		jwk, err := json.Marshal(webbotauth.PublicJWK(k.Public))
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		rec := db.SigningKey{KeyID: webbotauth.Thumbprint(k.Public), JWK: string(jwk), NotBefore: k.NotBefore}
		if rec.NotBefore.IsZero() {
			rec.NotBefore = now.UTC().Truncate(time.Microsecond)
		}
		if !k.NotAfter.IsZero() {
			na := k.NotAfter.UTC()
			rec.NotAfter = &na
		}
		if err := store.PublishSigningKey(ctx, rec); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	return nil
}

// purgeInterval is how often serve purges the index entries of unverified
// exclusions whose hold has ended.
const purgeInterval = time.Hour

// runPurge runs policy.PurgeDue at once and then every purgeInterval until
// ctx ends: an unverified exclusion unopposed for its hold loses its kept
// index entries within the hour. A failure is logged and retried.
func (s *Server) runPurge(ctx context.Context) {
	t := time.NewTicker(purgeInterval)
	defer t.Stop()
	for {
		done, err := s.pol.PurgeDue(ctx)
		if len(done) > 0 {
			s.log.Info("unverified exclusions unopposed: index purged", "sites", strings.Join(done, " "))
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("purge of unverified exclusions failed; retried within the hour", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
