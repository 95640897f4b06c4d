package serve

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/crawler"
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
	backlog := false // the last scan filled every free slot: more sites may be due
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
		due, full, err := s.dueSites(crawlCtx, c)
		if err != nil && ctx.Err() == nil {
			s.log.Error("crawl list not read", "err", err)
		}
		s.metrics.sitesDue.Set(float64(len(due)))
		s.metrics.scans.Inc()
		started := 0
		for _, t := range due {
			if !s.claim(t.Site, c.MaxSitesParallel()) {
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
		backlog = full || started < len(due)
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
	fromID, err := s.store.LastRequestID(ctx)
	if err != nil {
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
	counts, err := s.store.RequestCounts(ctx, cycle, fromID)
	if err != nil {
		s.log.Warn("request log not read", "err", err)
		return
	}
	for _, c := range counts {
		s.metrics.Request(c.Purpose, c.Status, c.N)
	}
}

// dueSites returns as many due sites as c may start now (the crawler's
// rule: crawler.DueSites), passing over those this server is crawling, and
// whether it found that many (more may be due). c may start as many as its
// capacity (crawler.Crawler.SiteCapacity: on PostgreSQL, the sites its
// request slots serve at its measured pace) leaves room for: servers of a
// fleet share the due sites by what each can send, and a site none can
// serve yet stays due for the first that has room.
func (s *Server) dueSites(ctx context.Context, c *crawler.Crawler) (due []crawler.Target, full bool, err error) {
	s.mu.Lock()
	running := make(map[string]bool, len(s.running))
	for k := range s.running {
		running[k] = true
	}
	s.mu.Unlock()
	free := min(c.MaxSitesParallel(), c.SiteCapacity()) - len(running)
	if free <= 0 {
		return nil, true, nil
	}
	due, err = c.DueSites(ctx, free, func(site string) bool { return running[site] })
	if err != nil {
		return due, false, fmt.Errorf("serve: due sites: %w", err)
	}
	return due, len(due) == free, nil
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
	var disc *crawler.DiscoverOptions
	if cfg.Crawler.Discover {
		disc = &crawler.DiscoverOptions{MinLinks: cfg.Crawler.DiscoverMinLinks, MaxNew: cfg.Crawler.DiscoverMaxNew, PerDay: true}
	}
	return &crawler.Options{
		Discover:         disc,
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
