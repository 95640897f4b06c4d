package serve

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/resolver"
)

// runScheduler crawls the sites that are due, at most
// crawler.max_sites_parallel at a time, until ctx ends. A reload that
// changes the crawler's settings starts a new crawler for the sites taken
// up from then on; the crawls in progress finish with the settings they
// started with (a cycle keeps one delay from start to end).
func (s *Server) runScheduler(ctx context.Context) {
	var retired sync.WaitGroup // generations finishing their crawls
	defer retired.Wait()
	for {
		if !s.crawlGeneration(ctx, s.cfg.Load(), &retired) {
			return
		}
		s.log.Info("crawl scheduler takes up new sites with the reloaded settings")
	}
}

// crawlGeneration schedules crawls with one crawler built from cfg. It
// returns false when ctx ended, after every crawl it started has stopped
// and the crawler is closed; and true when a reload changed the settings,
// leaving its crawls to finish (and then its crawler to close) under
// retired.
func (s *Server) crawlGeneration(ctx context.Context, cfg *Config, retired *sync.WaitGroup) (changed bool) {
	wait := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-s.crawlChanged:
			return true
		}
	}
	if !cfg.Crawler.Enabled {
		s.log.Info("crawler disabled (crawler.enabled = false)")
		return wait()
	}
	opts, err := crawlerOptions(cfg, s)
	if err != nil {
		s.log.Error("crawler not started", "err", err)
		return wait()
	}
	c, err := crawler.New(ctx, s.store, s.pol, opts)
	for err != nil {
		s.log.Error("crawler not started; retrying", "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-s.crawlChanged:
			return true
		case <-time.After(time.Duration(cfg.Crawler.ScanInterval)):
		}
		c, err = crawler.New(ctx, s.store, s.pol, opts)
	}

	crawlCtx, stopCrawls := context.WithCancel(ctx)
	var wg sync.WaitGroup
	finish := func() {
		wg.Wait()
		stopCrawls()
		if err := c.Close(); err != nil {
			s.log.Warn("crawler leases not released", "err", err)
		}
	}
	finished := make(chan struct{}, 1)
	backlog := false // the last scan found more due sites than free slots
	scan := time.NewTimer(0)
	defer scan.Stop()
	for {
		select {
		case <-ctx.Done():
			finish() // ctx's end has stopped crawlCtx's crawls
			return false
		case <-s.crawlChanged:
			retired.Go(finish)
			return true
		case <-scan.C:
		case <-finished:
			if !backlog {
				continue
			}
		}
		due, err := s.dueSites(crawlCtx, cfg, c.Holder())
		if err != nil && ctx.Err() == nil {
			s.log.Error("crawl list not read", "err", err)
		}
		s.metrics.sitesDue.Set(float64(len(due)))
		started := 0
		for _, t := range due {
			if !s.claim(t.Site, cfg.Crawler.MaxSitesParallel) {
				break
			}
			started++
			wg.Go(func() {
				defer func() {
					s.release(t.Site)
					signal(finished)
				}()
				s.crawlOne(crawlCtx, c, t)
			})
		}
		backlog = started < len(due)
		scan.Reset(time.Duration(cfg.Crawler.ScanInterval))
	}
}

// claim marks site as being crawled when fewer than limit sites are.
func (s *Server) claim(site string, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.running) >= limit {
		return false
	}
	s.running[site] = true
	s.metrics.sitesRunning.Set(float64(len(s.running)))
	return true
}

func (s *Server) release(site string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, site)
	s.metrics.sitesRunning.Set(float64(len(s.running)))
}

// crawlOne crawls one site and feeds the metrics from its result and its
// requests in the log.
func (s *Server) crawlOne(ctx context.Context, c *crawler.Crawler, t crawler.Target) {
	var fromID int64
	if err := s.store.SQL.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM requests`).Scan(&fromID); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("request log not read", "err", err)
		}
		return
	}
	results, _ := c.Crawl(ctx, []crawler.Target{t})
	for _, r := range results {
		s.metrics.ObserveSite(r)
		if r.CycleID != 0 {
			s.countRequests(ctx, r.CycleID, fromID)
		}
	}
}

// countRequests adds the requests of cycle logged after fromID to the
// request metrics, by purpose and status.
func (s *Server) countRequests(ctx context.Context, cycle, fromID int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	q := `SELECT purpose, COALESCE(status, 0), COUNT(*) FROM requests WHERE cycle_id = ? AND id > ? GROUP BY purpose, COALESCE(status, 0)`
	rows, err := s.store.SQL.QueryContext(ctx, rebind(s.store, q), cycle, fromID)
	if err != nil {
		s.log.Warn("request log not read", "err", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var (
			purpose   string
			status, n int
		)
		if err := rows.Scan(&purpose, &status, &n); err != nil {
			s.log.Warn("request log not read", "err", err)
			return
		}
		s.metrics.Request(purpose, status, n)
	}
}

// dueRow is a listed, not excluded site with its last cycle and its cycle
// lease.
type dueRow struct {
	Name         string
	StartURL     string
	CycleID      *int64
	StartedAt    *time.Time
	Status       *string
	LeaseHolder  *string
	LeaseExpires *time.Time
}

// dueSites returns the sites of the crawl list that are due, never-crawled
// ones first, then by the start of their last cycle: not excluded, not
// being crawled by this process or (per its live cycle lease) by another
// crawler, and either never crawled, interrupted (a cycle left running or
// stopped: the crawler resumes it), or last started RecrawlAfter ago or
// more. The crawler checks all of this again under its lease; this only
// keeps the scheduler from handing it sites it would skip.
func (s *Server) dueSites(ctx context.Context, cfg *Config, holder string) ([]crawler.Target, error) {
	var rows []dueRow
	err := s.store.DB.WithContext(ctx).Raw(`SELECT s.name AS name, s.start_url AS start_url,
		c.id AS cycle_id, c.started_at AS started_at, c.status AS status,
		l.holder AS lease_holder, l.expires_at AS lease_expires
		FROM sites s
		LEFT JOIN exclusions e ON e.site = s.name
		LEFT JOIN crawl_cycles c ON c.id = (SELECT MAX(c2.id) FROM crawl_cycles c2 WHERE c2.site = s.name)
		LEFT JOIN host_leases l ON l.host = 'cycle:' || s.name
		WHERE e.site IS NULL`).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("serve: due sites: %w", err)
	}
	now := db.Now()
	recrawl := time.Duration(cfg.Crawler.RecrawlAfter)
	s.mu.Lock()
	running := make(map[string]bool, len(s.running))
	for k := range s.running {
		running[k] = true
	}
	s.mu.Unlock()
	var due []dueRow
	for _, r := range rows {
		switch {
		case running[r.Name]:
		case r.LeaseExpires != nil && r.LeaseExpires.After(now) && r.LeaseHolder != nil && *r.LeaseHolder != holder:
			// Another crawler of the fleet is on it.
		case r.CycleID == nil || r.StartedAt == nil:
			due = append(due, r)
		case *r.Status == db.CycleRunning || *r.Status == db.CycleStopped:
			due = append(due, r)
		case now.Sub(*r.StartedAt) >= recrawl:
			due = append(due, r)
		}
	}
	slices.SortStableFunc(due, func(a, b dueRow) int {
		switch {
		case a.StartedAt == nil && b.StartedAt == nil:
			return 0
		case a.StartedAt == nil:
			return -1
		case b.StartedAt == nil:
			return 1
		}
		return a.StartedAt.Compare(*b.StartedAt)
	})
	out := make([]crawler.Target, len(due))
	for i, r := range due {
		start := r.StartURL
		if start == "" {
			start = "https://" + r.Name + "/"
		}
		out[i] = crawler.Target{Site: r.Name, StartURL: start}
	}
	return out, nil
}

// crawlerOptions turns cfg into the crawler's options.
func crawlerOptions(cfg *Config, s *Server) (*crawler.Options, error) {
	res, err := resolver.New(cfg.Resolver)
	if err != nil {
		return nil, err
	}
	var src netip.Addr
	if cfg.Crawler.SourceIP != "" {
		if src, err = netip.ParseAddr(cfg.Crawler.SourceIP); err != nil {
			return nil, fmt.Errorf("serve: crawler.source_ip: %w", err)
		}
	} else {
		s.log.Warn("crawler.source_ip is not set: requests leave from whatever address the system picks, which may not be one the bot page publishes")
	}
	return &crawler.Options{
		UserAgent:        cfg.Crawler.UserAgent,
		Node:             cfg.Node,
		Delay:            time.Duration(cfg.Crawler.Delay),
		RecrawlAfter:     time.Duration(cfg.Crawler.RecrawlAfter),
		MaxSitesParallel: cfg.Crawler.MaxSitesParallel,
		AllowPrivate:     cfg.Crawler.AllowPrivate,
		SourceIP:         src,
		Resolver:         res,
		Timeout:          time.Duration(cfg.Crawler.Timeout),
		Logger:           s.log,
		Signer:           s.signing.Load().Signer,
	}, nil
}

// rebind turns ? placeholders into PostgreSQL's $n.
func rebind(store *db.Store, q string) string {
	if store.Dialect != db.Postgres {
		return q
	}
	out := make([]byte, 0, len(q)+8)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			out = append(out, fmt.Sprintf("$%d", n)...)
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}
