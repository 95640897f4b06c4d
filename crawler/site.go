package crawler

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot/crawler/extract"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/clock"
	"github.com/lohisoft/lohibot/internal/retryafter"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/robotstxt"
)

// Target is a site to crawl and the URL its crawl starts from.
type Target struct {
	Site     string
	StartURL string
}

// Site statuses of a SiteResult.
const (
	SiteCrawled  = "crawled"  // a cycle ran to its end
	SiteStopped  = "stopped"  // interrupted; the cycle is taken up again next time
	SiteSkipped  = "skipped"  // visited recently, or another crawler is on it
	SiteExcluded = "excluded" // the policy gate refused it: nothing was sent
	SiteFailed   = "failed"   // an error of lohibot itself (database, bad start URL)
	// SiteNothingFetched: a cycle ran to its end without a single page
	// (robots.txt unreachable, every host left, no HTML answer); Reason
	// says why in one clause.
	SiteNothingFetched = "nothing-fetched"
)

// SiteResult is how one site's crawl went.
type SiteResult struct {
	Site    string `json:"site"`
	CycleID int64  `json:"cycle_id,omitempty"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	// Requests counts the page requests sent (redirect hops and retries
	// included); RobotsRequests the robots.txt fetches. Together they are
	// what the crawl's Stats count as requests.
	Requests       int `json:"requests"`
	RobotsRequests int `json:"robots_requests"`
	Pages          int `json:"pages"`
	RobotsRefused  int `json:"robots_refused"`
	// HostsLeft counts the hosts the cycle stopped asking, as promised (a
	// login, a bot protection, robots.txt unreachable, repeated failures):
	// handled, not errors.
	HostsLeft int `json:"hosts_left"`
	// Errors counts requests that failed or were answered 5xx, and one
	// more when the site failed (Status SiteFailed).
	Errors int `json:"errors"`
	// NotModified counts the page requests answered 304 Not Modified (a
	// conditional recrawl of a page unchanged since the last cycle).
	NotModified int `json:"not_modified"`
}

// Targets turns the crawl command's arguments into targets: each SITE
// (a domain or URL; a URL sets the start URL, a listed site keeps its own
// otherwise), or with all, every site of the crawl list.
func Targets(ctx context.Context, pol *policy.Policy, args []string, all bool) ([]Target, error) {
	listed, err := pol.Sites(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]string{}
	var out []Target
	for _, s := range listed {
		byName[s.Name] = s.StartURL
		if all {
			out = append(out, Target{Site: s.Name, StartURL: s.StartURL})
		}
	}
	if all {
		return out, nil
	}
	for _, a := range args {
		site, err := policy.SiteOf(a)
		if err != nil {
			return nil, err
		}
		start := byName[site]
		if strings.Contains(a, "://") {
			start = a
		}
		if start == "" {
			start = "https://" + site + "/"
		}
		out = append(out, Target{Site: site, StartURL: start})
	}
	return out, nil
}

// Crawl crawls every target and returns one result per distinct site in
// target order. It returns ctx's error when interrupted (the results so far
// are still returned; interrupted cycles are recorded as stopped). See
// CrawlEach for how many sites are crawled at once.
func (c *Crawler) Crawl(ctx context.Context, targets []Target) ([]SiteResult, error) {
	seen := map[string]int{}
	var ts []Target
	for _, t := range targets {
		if _, ok := seen[t.Site]; !ok {
			seen[t.Site] = len(ts)
			ts = append(ts, t)
		}
	}
	results := make([]SiteResult, len(ts))
	started := make([]bool, len(ts))
	err := c.CrawlEach(ctx, withNoError(slices.Values(ts)), func(r SiteResult) {
		i := seen[r.Site]
		results[i], started[i] = r, true
	})
	// Interrupted: keep the results of the sites taken up, in order.
	n := len(ts)
	for n > 0 && !started[n-1] {
		n--
	}
	return results[:n], err
}

// withNoError turns a sequence into one that never yields an error.
func withNoError[T any](seq iter.Seq[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for v := range seq {
			if !yield(v, nil) {
				return
			}
		}
	}
}

// CrawlEach crawls the sites next yields, in that order, each once (the
// caller deduplicates), and calls done with each site's result as it
// finishes (from the site's goroutine; done must be safe for concurrent
// use). It reads the next target only when a site may start, so a crawl
// list of any length costs memory only for the sites in progress.
//
// Every site in progress runs at once, up to Options.MaxSitesParallel: a
// site waiting for its host's gap or a Retry-After holds neither a request
// slot nor a goroutine (only its state and a timer: see siteRun.proceed),
// and what is bounded is what costs: requests in flight
// (Options.MaxInFlight) and open connections (Options.MaxConns). It blocks until every site taken up has finished,
// and returns ctx's error when interrupted, or the first error next
// yields (no site is taken up after it).
func (c *Crawler) CrawlEach(ctx context.Context, next iter.Seq2[Target, error], done func(SiteResult)) error {
	sem := make(chan struct{}, c.opts.MaxSitesParallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	for t, err := range next {
		if err != nil {
			wg.Wait()
			return err
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if ctx.Err() != nil {
			<-sem
			return ctx.Err()
		}
		// Starting a site (the gate, its cycle, what the last cycle left)
		// is work for the database: at most MaxInFlight sites start at
		// once, and a site waiting to start is not taken from next.
		select {
		case c.starting <- struct{}{}:
		case <-ctx.Done():
			<-sem
			return ctx.Err()
		}
		var once sync.Once
		started := func() { once.Do(func() { <-c.starting }) }
		c.stats.sites.Add(1)
		wg.Add(1)
		go c.crawlSite(ctx, t, started, func(r SiteResult) {
			defer wg.Done()
			defer func() { <-sem }()
			c.stats.sitesDone.Add(1)
			if r.Status == SiteFailed {
				// A site that failed is an error of the crawl, whatever
				// failed it: the summary counts it, and the crawl fails.
				r.Errors++
				c.stats.errors.Add(1)
			}
			c.log.Info("site done", "site", r.Site, "status", r.Status, "reason", r.Reason, "requests", r.Requests, "pages", r.Pages)
			if c.opts.OnSite != nil {
				c.opts.OnSite(r)
			}
			if done != nil {
				done(r)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// item is a URL waiting in a site's frontier.
type item struct {
	url        string
	redirectOf *int64
	hops       int
}

// loginPath matches links to pages that need a login: the crawler does not
// follow them.
var loginPath = regexp.MustCompile(`(?i)(^|/)(wp-login\.php|wp-admin|login|log-in|logon|signin|sign-in|sign_in|signup|sign-up|register|logout|log-out|my-account|account|auth|oauth2?|sso|checkout|cart)(/|\.|$)`)

// maxFrontier bounds the URLs a site's crawl keeps waiting.
const maxFrontier = 1000

// siteRun is the state of one site's crawl.
type siteRun struct {
	c      *Crawler
	site   string
	cy     *cycle
	hosts  *hostSet
	queue  []item
	queued map[string]bool
	seen   map[string]bool // URLs requested in this cycle
	left   map[string]string
	res    *SiteResult
	// prev holds the validators of the pages of the site's previous
	// cycle, sent back so that an unchanged page answers 304.
	prev map[string]db.Validators
	// cur is the URL being fetched while its host's gap is waited out.
	cur *pending
	// finish is given the site's result when its crawl ends.
	finish func(SiteResult)
	// last is the completion of the cycle's last request, written with
	// the cycle's end (see handle).
	last *completion
	// unreachable is the first host whose robots.txt got no answer at all,
	// and why ("host: dial tcp: ..."); "" when every robots.txt answered.
	unreachable string
	// counted is what the site counts in Crawler.work (noteWork).
	counted int
	// wanted is the holder of another crawler of the fleet that asked
	// for the site (handover.go), set by grantLoop and taken at a gap.
	wanted atomic.Pointer[string]
}

// pending is a URL of the frontier taken up, and which attempt at it is
// next.
type pending struct {
	it      item
	u       *url.URL
	hs      *hostState
	attempt int
}

// crawlSite crawls one site and calls finish with its result, from
// whichever goroutine ends the crawl: the site's crawl runs in steps, and
// while it waits for a host it holds no goroutine (siteRun.proceed). It
// calls started once the site has started (or will not), or waits for
// another crawler.
func (c *Crawler) crawlSite(ctx context.Context, t Target, started func(), finish func(SiteResult)) {
	r, res := c.startSite(ctx, t, started)
	started()
	if r == nil {
		c.verdicts.Delete(t.Site)
		finish(res)
		return
	}
	r.finish = finish
	c.sitesRunning.Add(1)
	c.noteWork(r, r.cy.Budget-r.cy.Spent)
	if c.traits.Shared {
		c.runs.Store(r.site, r)
	}
	c.step(func() { r.proceed(ctx) })
}

// startSite starts the site's cycle and returns its run, or nil and the
// site's result when there is nothing to crawl (a bad start URL, an
// excluded site, a site visited recently or crawled by another crawler).
func (c *Crawler) startSite(ctx context.Context, t Target, waiting func()) (*siteRun, SiteResult) {
	res := SiteResult{Site: t.Site}
	start, err := url.Parse(t.StartURL)
	if err != nil || (start.Scheme != "http" && start.Scheme != "https") {
		res.Status, res.Reason = SiteFailed, fmt.Sprintf("bad start URL %q", t.StartURL)
		return nil, res
	}
	start.Fragment = ""
	// Credentials are never sent (the bot never logs in), nor stored in
	// the request log, the index or a report: a start URL that carries
	// some (from an old crawl list row) is crawled without them.
	start.User = nil
	t.StartURL = start.String()
	v, err := c.askGate(ctx, t.Site)
	if err != nil {
		res.Status, res.Reason = SiteFailed, err.Error()
		return nil, res
	}
	if v.Excluded {
		res.Status, res.Reason = SiteExcluded, fmt.Sprintf("on the exclusion list at policy v%d; nothing was sent", v.Version)
		return nil, res
	}
	// The start URL's host is taken (in this process) before the cycle
	// starts, so that its lease is taken in the cycle's own transaction
	// (see startCycle).
	hosts := c.newHostSet(0)
	cy, err := c.startCycle(ctx, t.Site, waiting, hosts.get(start.Hostname()))
	if err != nil {
		hosts.close(ctx)
		var skip *errSkip
		if errors.As(err, &skip) {
			res.Status, res.Reason = SiteSkipped, skip.reason
			return nil, res
		}
		res.Status, res.Reason = SiteFailed, err.Error()
		if ctx.Err() != nil {
			res.Status, res.Reason = SiteStopped, "interrupted"
		}
		return nil, res
	}
	res.CycleID = cy.ID
	hosts.setDelay(cy.Delay)
	hosts.noteEnded(cy.ended)
	r := &siteRun{c: c, site: t.Site, cy: cy, hosts: hosts, queued: map[string]bool{}, seen: map[string]bool{},
		left: map[string]string{}, res: &res}
	// A site's first cycle has no earlier one to read validators from:
	// when thousands of sites start at once, their reads are spared.
	if !cy.First {
		var prev map[string]db.Validators
		err := c.retry(ctx, func() (err error) {
			prev, err = c.store.PreviousValidators(ctx, t.Site, cy.ID)
			return err
		})
		if err == nil {
			r.prev = prev
		} else {
			c.log.Warn("validators of the last cycle not read: requests are unconditional", "site", t.Site, "err", err)
		}
	}
	if cy.Resumed {
		seen, links, err := c.resumeState(ctx, t.Site, cy)
		if err == nil {
			r.seen = seen
			r.push(item{url: start.String()})
			for _, l := range links {
				r.push(item{url: l})
			}
		}
	} else {
		r.push(item{url: start.String()})
	}
	return r, res
}

// proceed runs the site's crawl until its next request must wait for its
// host (the gap, a Retry-After, a backoff), and then lets a timer take it
// up again: a site waiting for a host costs its state and a timer, not a
// goroutine. When ctx ends the timer's wait is cut short. When the crawl
// ends, proceed ends the cycle and calls r.finish.
func (r *siteRun) proceed(ctx context.Context) {
	status, reason, wait := r.run(ctx)
	if !wait.IsZero() {
		r.c.afterOrDone(ctx, r.c.until(wait), func() { r.c.step(func() { r.proceed(ctx) }) })
		return
	}
	r.end(ctx, status, reason)
}

// step runs f, a site's step, in a goroutine of its own when fewer than
// maxSteps run, and otherwise queues it (without a goroutine) for the
// next step that ends: when the machine cannot keep up, the sites that
// are due wait as a few bytes each, not as goroutines. It does not block.
func (c *Crawler) step(f func()) {
	c.stepsMu.Lock()
	if c.steps < c.maxSteps {
		c.steps++
		c.stepsMu.Unlock()
		go c.runSteps(f)
		return
	}
	c.stepsReady = append(c.stepsReady, f)
	c.stepsMu.Unlock()
}

// runSteps runs f and then the queued steps, until none is queued.
func (c *Crawler) runSteps(f func()) {
	for f != nil {
		f()
		c.stepsMu.Lock()
		f = nil
		if len(c.stepsReady) > 0 {
			f = c.stepsReady[0]
			c.stepsReady[0] = nil
			c.stepsReady = c.stepsReady[1:]
			if len(c.stepsReady) == 0 {
				c.stepsReady = nil // let the backing array go
			}
		} else {
			c.steps--
		}
		c.stepsMu.Unlock()
	}
}

// afterOrDone calls f in a goroutine of its own after d on the crawler's
// clock, or as soon as ctx ends if that is sooner; once either way. On the
// system clock nothing waits meanwhile but a runtime timer; on another
// clock (a test's fake one) a goroutine waits on its timer.
func (c *Crawler) afterOrDone(ctx context.Context, d time.Duration, f func()) {
	var once sync.Once
	call := func() { once.Do(f) }
	stop := context.AfterFunc(ctx, call)
	if _, real := c.clock.(clock.Real); real {
		time.AfterFunc(d, func() {
			stop()
			call()
		})
		return
	}
	t := c.clock.NewTimer(d)
	go func() {
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
		}
		stop()
		call()
	}()
}

// end gives the site's hosts back, records how the cycle ended and
// reports the site's result.
func (r *siteRun) end(ctx context.Context, status, reason string) {
	c, res, cy := r.c, r.res, r.cy
	if status == statusHandedOver {
		r.handedOver(ctx, reason)
		return
	}
	c.runs.Delete(r.site)
	c.noteWork(r, 0)
	if ctx.Err() != nil {
		status, reason = db.CycleStopped, "interrupted"
	}
	// A cycle that sent no page request because no robots.txt answered
	// is not a visit: it ends stopped, and is tried again after a backoff
	// (see openCycle).
	unreachable := status == db.CycleDone && reason != reasonExcluded && cy.Spent == 0 && r.unreachable != ""
	if unreachable {
		status, reason = db.CycleStopped, ReasonUnreachable+r.unreachable
	}
	c.sitesRunning.Add(-1)
	if err := c.endCycle(ctx, r.site, cy, status, reason, r.hosts, r.last); err != nil {
		// (A database given up on was logged once, by the store.)
		c.logDB(err).Log(ctx, slog.LevelError, "cycle end not recorded", "site", r.site, "cycle", cy.ID, "err", err)
		if r.last != nil {
			// The last request's completion, on its own, as any other.
			if err := c.complete(ctx, r.last); err != nil {
				c.logDB(err).Error("request completion not recorded", "site", r.site, "request", r.last.ID, "err", err)
			}
		}
	}
	res.RobotsRequests = r.hosts.robotsSent
	r.hosts.close(ctx)
	c.verdicts.Delete(r.site)
	res.Reason = reason
	switch {
	case unreachable:
		res.Status, res.Reason = SiteNothingFetched, fmt.Sprintf("no page: %s; not counted as a visit, tried again from %s",
			strings.TrimSuffix(ReasonUnreachable, ", not counted as a visit: ")+" at "+r.unreachable,
			unreachableRetry(cy.Started, c.now()).UTC().Format("2006-01-02 15:04:05 UTC"))
	case status == db.CycleDone && reason == reasonExcluded:
		res.Status = SiteExcluded
	case status == db.CycleDone && res.Pages == 0 && res.NotModified == 0 && !cy.Resumed:
		// (A page answered 304 Not Modified was fetched: its stored
		// entry is still right.)
		res.Status, res.Reason = SiteNothingFetched, r.nothingFetched(reason)
	case status == db.CycleDone:
		res.Status = SiteCrawled
	case strings.HasPrefix(reason, reasonError):
		// Stopped by an error of lohibot's own (the database's, say),
		// not by the operator: the site failed.
		res.Status = SiteFailed
	default:
		res.Status = SiteStopped
	}
	r.finish(*res)
}

// heldPage is the link texts found on one page, for the crawler's
// anchorSink.
type heldPage struct {
	from  string
	id    *int64 // the request that fetched from
	seen  time.Time
	links []heldLink
}

// heldLink is a link text found: its target, the target's site ("" for
// the page's own) and the text.
type heldLink struct{ to, toSite, text string }

// push appends it to the frontier and says whether it was new to it.
func (r *siteRun) push(it item) bool {
	if r.seen[it.url] || r.queued[it.url] || len(r.queue) >= maxFrontier {
		return false
	}
	r.queued[it.url] = true
	r.queue = append(r.queue, it)
	return true
}

func (r *siteRun) pushFirst(it item) {
	r.queued[it.url] = true
	r.queue = append([]item{it}, r.queue...)
}

func (r *siteRun) leave(host, reason string) {
	if _, ok := r.left[host]; !ok {
		r.left[host] = reason
		r.res.HostsLeft++
		r.c.stats.hostsLeft.Add(1)
		r.c.log.Info("host left for this cycle", "site", r.site, "host", host, "cycle", r.cy.ID, "reason", reason)
	}
}

// run crawls the frontier until it is empty, the budget is spent, the
// site is excluded or ctx ends, and returns the cycle's status and reason;
// or, when the next request must wait for its host, it returns when that
// is (the URL is kept in r.cur for the next run).
func (r *siteRun) run(ctx context.Context) (string, string, time.Time) {
	for r.cur != nil || len(r.queue) > 0 {
		if ctx.Err() != nil {
			return db.CycleStopped, "interrupted", time.Time{}
		}
		if to, ok := r.mayHandOver(); ok && r.handOver(ctx, to) {
			return statusHandedOver, to, time.Time{}
		}
		if r.cur == nil {
			it := r.queue[0]
			r.queue = r.queue[1:]
			if r.seen[it.url] {
				continue
			}
			u, err := url.Parse(it.url)
			if err != nil || u.User != nil {
				continue // links and redirects with credentials are refused earlier
			}
			host := u.Hostname()
			if _, gone := r.left[host]; gone {
				continue
			}
			r.cur = &pending{it: it, u: u, hs: r.hosts.get(host)}
		}
		status, reason, stop, wait := r.fetchPage(ctx, r.cur)
		if !wait.IsZero() {
			return "", "", wait
		}
		r.cur = nil
		if stop {
			return status, reason, time.Time{}
		}
		if len(r.left) > 0 && r.allLeft() {
			return db.CycleDone, "every host left, " + r.leftReasons(), time.Time{}
		}
	}
	if len(r.left) > 0 {
		return db.CycleDone, "nothing left to fetch; left " + r.leftReasons(), time.Time{}
	}
	return db.CycleDone, "nothing left to fetch", time.Time{}
}

// nothingFetched is the reason of a cycle that ended with no page: why
// the hosts were left, or else what the cycle ended on.
func (r *siteRun) nothingFetched(reason string) string {
	switch {
	case len(r.left) > 0:
		return "no page: left " + r.leftReasons()
	case r.res.RobotsRefused > 0:
		return fmt.Sprintf("no page: robots.txt disallows %d of the URLs found, and no other answered with an HTML page", r.res.RobotsRefused)
	case reason == reasonBudgetSpent:
		return "no page: the budget was spent on answers that were not HTML pages"
	default:
		return "no page: no HTML page answered"
	}
}

func (r *siteRun) allLeft() bool {
	for _, it := range r.queue {
		if u, err := url.Parse(it.url); err == nil {
			if _, gone := r.left[u.Hostname()]; !gone {
				return false
			}
		}
	}
	return true
}

// leftReasons says which hosts were left and why, one clause per host
// ("www.example.com: login required, HTTP 401"), in host order.
func (r *siteRun) leftReasons() string {
	hosts := make([]string, 0, len(r.left))
	for h := range r.left {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	for i, h := range hosts {
		hosts[i] = h + ": " + r.left[h]
	}
	return strings.Join(hosts, "; ")
}

// statusHandedOver is run's status for a site handed over to another
// crawler of the fleet (its reason: the holder it went to); the cycle
// goes on there.
const statusHandedOver = "handed-over"

// Reasons a cycle ends before its frontier is empty.
const (
	reasonExcluded    = "excluded while crawling"
	reasonBudgetSpent = "budget spent"
	// reasonError starts the reason of a cycle stopped by an error.
	reasonError = "error: "
)

// stopFor maps the errors that end a cycle to its status and reason.
func stopFor(ctx context.Context, err error) (string, string) {
	switch {
	case ctx.Err() != nil:
		return db.CycleStopped, "interrupted"
	case errors.Is(err, ErrExcluded):
		return db.CycleDone, reasonExcluded
	case errors.Is(err, ErrBudgetSpent):
		return db.CycleDone, reasonBudgetSpent
	case errors.Is(err, ErrLeaseLost):
		return db.CycleStopped, "host lease lost to another crawler"
	default:
		return db.CycleStopped, reasonError + err.Error()
	}
}

// fetchPage fetches one URL, with its retries, and handles the answer. It
// reports stop when the cycle must end; or, when the host is not due yet,
// it sends nothing and returns when it will be (p keeps the attempt
// reached, for the next call).
func (r *siteRun) fetchPage(ctx context.Context, p *pending) (string, string, bool, time.Time) {
	c := r.c
	hs, u, it := p.hs, p.u, p.it
	origin := originOf(u)
	for ; ; p.attempt++ {
		attempt := p.attempt
		// Every slot reserved already (spent only grows, so the database
		// would refuse): the cycle ends now rather than after one more gap,
		// and before a robots.txt it would not use.
		if r.cy.Spent >= r.cy.Budget {
			return db.CycleDone, reasonBudgetSpent, true, time.Time{}
		}
		// A robots.txt snapshot younger than 24 hours, before every page
		// request.
		rb, err := c.robotsFor(ctx, &r.cy.ID, r.site, origin, r.hosts)
		if err != nil {
			s, why := stopFor(ctx, err)
			return s, why, true, time.Time{}
		}
		if rb.Outcome == db.RobotsDisallowAll && rb.Status != http.StatusUnauthorized && rb.Status != http.StatusForbidden {
			why := "robots.txt unreachable, so nothing is allowed"
			if cause, ok := strings.CutPrefix(rb.Error, "unreachable: "); ok && rb.Status == 0 {
				// No answer at all: the cause is the network's (or ours).
				why = "robots.txt unreachable (" + cause + "), so nothing is allowed"
				if r.unreachable == "" {
					r.unreachable = hs.host + ": " + cause
				}
			}
			r.leave(hs.host, why)
		}
		hs.gap = max(r.hosts.baseGap(), rb.crawlDelay())
		dec := rb.decide(robotstxt.ProductToken, u.String())
		if !dec.Allowed {
			r.seen[it.url] = true
			r.cy.noteRefused(db.RobotsRefusal{CycleID: r.cy.ID, Site: r.site, URL: it.url, RobotsRule: dec.Rule,
				RobotsLine: dec.Line, RefusedAt: c.now()}, rb.SnapshotID)
			r.res.RobotsRefused++
			c.stats.robotsRefused.Add(1)
			c.log.Debug("disallowed by robots.txt", "url", it.url, "rule", dec.Rule, "line", dec.Line)
			return "", "", false, time.Time{}
		}
		sid := rb.SnapshotID
		row := &reqRow{CycleID: &r.cy.ID, Site: r.site, Host: hs.host, Origin: origin, URL: it.url, Purpose: db.PurposePage,
			Attempt: attempt, RedirectOf: it.redirectOf, SnapshotID: &sid, Rule: dec.Rule, Line: dec.Line, Cond: r.prev[it.url], Budget: r.cy.Budget}
		res, wait, err := c.exchangeDue(ctx, hs, row)
		if !wait.IsZero() {
			return "", "", false, wait
		}
		if err != nil {
			s, why := stopFor(ctx, err)
			return s, why, true, time.Time{}
		}
		r.seen[it.url] = true
		r.res.Requests++
		r.cy.Spent = max(r.cy.Spent, row.Slot)
		c.noteWork(r, r.cy.Budget-r.cy.Spent)
		retry, err := r.handle(ctx, hs, u, it, res)
		if err != nil {
			s, why := stopFor(ctx, err)
			return s, why, true, time.Time{}
		}
		if ctx.Err() != nil {
			return db.CycleStopped, "interrupted", true, time.Time{}
		}
		if !retry || attempt >= MaxRetries {
			return "", "", false, time.Time{}
		}
	}
}

// handle completes a page request and acts on the answer. It reports
// whether the URL should be tried again.
func (r *siteRun) handle(ctx context.Context, hs *hostState, u *url.URL, it item, res *exchangeResult) (bool, error) {
	c := r.c
	resp := res.resp
	k := res.completion()
	retry := false
	countFailure := func(why string) {
		hs.failures++
		r.res.Errors++
		c.stats.errors.Add(1)
		if hs.failures >= MaxConsecutiveFailures {
			r.leave(hs.host, fmt.Sprintf("%d consecutive 5xx answers or timeouts, the last %s", hs.failures, why))
		} else {
			retry = true
		}
	}
	switch st := resp.Status; {
	case resp.Err != nil:
		k.Outcome = outcomeError(resp)
		switch {
		case resp.Refused:
			r.res.Errors++
			c.stats.errors.Add(1)
			r.leave(hs.host, "address refused, "+strings.TrimPrefix(k.Error, "crawler: "))
		case k.Outcome == db.OutcomeInterrupted:
		default:
			countFailure(k.Outcome)
		}
	case isChallenge(resp):
		k.Outcome = "challenge"
		r.leave(hs.host, fmt.Sprintf("bot protection challenge, HTTP %d", st))
	case st == http.StatusUnauthorized || st == http.StatusProxyAuthRequired:
		k.Outcome = "auth"
		r.leave(hs.host, fmt.Sprintf("login required, HTTP %d", st))
	case st == http.StatusForbidden:
		k.Outcome = "forbidden"
		r.leave(hs.host, "forbidden, HTTP 403")
	case st == http.StatusTooManyRequests || st >= 500:
		k.Outcome = "retry"
		ra := k.RetryAfter
		if nb, ok := retryafter.NotBefore(ra, res.completedAt); ok && (st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable) {
			if wait := nb.Sub(res.completedAt); wait > MaxRetryAfter {
				k.Outcome = "retry-after-too-long"
				r.leave(hs.host, fmt.Sprintf("Retry-After %q asks for %s, beyond the 1 hour cap", ra, wait.Round(1e9)))
				break
			}
		}
		if st >= 500 {
			countFailure(fmt.Sprintf("status %d", st))
		} else {
			retry = true
		}
		switch {
		case retry && res.row.Attempt >= MaxRetries:
			retry = false
			k.Outcome = "retries-exhausted"
		case !retry:
			k.Outcome = "server-error"
		}
	case st == http.StatusNotModified:
		// The page is as it was last cycle: its index entry stays, and
		// its same-site links (as stored then) are followed again.
		hs.failures = 0
		k.Outcome = "not-modified"
		r.res.NotModified++
		var links []string
		err := c.retry(ctx, func() (err error) {
			links, err = c.store.SameSiteLinks(ctx, u.String(), r.site)
			return err
		})
		if err != nil {
			c.log.Warn("links of an unchanged page not read", "url", u.String(), "err", err)
		}
		for _, l := range links {
			if lu, err := url.Parse(l); err == nil && !loginPath.MatchString(lu.EscapedPath()) {
				r.push(item{url: l})
			}
		}
	case st >= 300 && st < 400:
		hs.failures = 0
		k.Outcome = "redirect"
		loc, why := c.nextHop(resp, u, r.site)
		switch {
		case why == "" && it.hops+1 > MaxRedirects:
			why = "more than 5 redirects"
		case why == "" && r.seen[loc]:
			why = "redirect loop"
		case why == "":
			why = c.refusedHost(ctx, loc)
		}
		if why != "" {
			k.Error = "redirect not followed: " + why
			c.log.Info("redirect not followed", "url", it.url, "reason", why)
		} else {
			id := res.row.ID
			r.pushFirst(item{url: loc, redirectOf: &id, hops: it.hops + 1})
		}
	case st >= 200 && st < 300:
		hs.failures = 0
		r.page(u, res, k)
	default: // other 4xx, 1xx
		hs.failures = 0
		k.Outcome = "not-found"
		if st != http.StatusNotFound && st != http.StatusGone {
			k.Outcome = "client-error"
		}
		k.Unindex = u.String()
	}
	k.Refused = r.cy.takeRefused()
	if r.cy.Spent >= r.cy.Budget {
		// The cycle's last request: nothing follows it but the cycle's
		// end (fetchPage ends the cycle before anything else once every
		// slot is reserved), so its completion is written with the end,
		// in one write (endCycle). At the end of a crawl every site ends
		// in the same second or two, and the writer is the crawl's limit
		// there: one write a site rather than two, and one wait for the
		// writer on the way out rather than two.
		c.settle(hs, res, k)
		r.last = k
		return retry, nil
	}
	if err := c.finish(ctx, hs, res, k); err != nil {
		return false, err
	}
	return retry, nil
}

// refusedHost says why a redirect target's host is refused before any
// request ("" when it may be tried): every IPv4 address it resolves to is
// refused. The dialer checks again at connect time.
func (c *Crawler) refusedHost(ctx context.Context, loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return "unparsable URL"
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		if err := CheckAddr(ip, c.opts.AllowPrivate); err != nil {
			return err.Error()
		}
		return ""
	}
	ips, err := c.lookups.lookup(ctx, u.Hostname())
	if err != nil || len(ips) == 0 {
		return "" // let the request find out (and log) why
	}
	var last error
	for _, ip := range ips {
		if last = CheckAddr(ip, c.opts.AllowPrivate); last == nil {
			return ""
		}
	}
	return last.Error()
}

// page handles a 2xx answer: what the index keeps, and the links to follow.
func (r *siteRun) page(u *url.URL, res *exchangeResult, k *completion) {
	c := r.c
	resp := res.resp
	if !resp.HTML {
		k.Outcome = "not-html"
		return
	}
	c.stats.pages.Add(1)
	r.res.Pages++
	p, err := extract.ParseBytes(resp.Body, resp.Header.Get("Content-Type"), u, nil)
	if err != nil {
		k.Outcome = "unparsable"
		k.Error = err.Error()
		return
	}
	noindex, nofollow := extract.RobotsTag(resp.Header.Values("X-Robots-Tag"), robotstxt.ProductToken)
	noindex = noindex || p.NoIndex
	nofollow = nofollow || p.NoFollow
	k.Outcome = "ok"
	us := u.String()
	if noindex {
		k.Outcome = "noindex"
		k.Unindex = us
		c.noindex.Add(us, struct{}{})
	} else {
		k.Page = &db.Page{URL: us, Site: r.site, Title: p.Title, Description: p.Description,
			H1: strings.Join(p.H1, "\n"), H2: strings.Join(p.H2, "\n"), H3: strings.Join(p.H3, "\n"),
			Status: resp.Status, FetchedAt: res.completedAt}
	}
	if noindex {
		c.anchors.unindexed(us)
	}
	if nofollow {
		return
	}
	id := res.row.ID
	held := heldPage{from: us, id: &id, seen: res.completedAt, links: make([]heldLink, 0, len(p.Links))}
	defer func() { c.anchors.add(r.site, held) }()
	var linked []linkedSite // other sites', for discovery
	if c.disc != nil {
		linked = make([]linkedSite, 0, len(p.Links))
	}
	defer func() { c.disc.note(r.site, linked) }()
	for _, l := range p.Links {
		if l.Nofollow {
			continue
		}
		lu := l.Parsed
		if lu == nil {
			var err error
			if lu, err = url.Parse(l.URL); err != nil {
				continue
			}
		}
		toSite, err := c.sites.of(l.URL, lu)
		if err != nil {
			continue
		}
		if isNoindex := c.noindex.Contains(l.URL); !noindex && !isNoindex && l.Text != "" {
			hl := heldLink{to: l.URL, text: l.Text}
			if toSite != r.site {
				hl.toSite = toSite
			}
			held.links = append(held.links, hl)
		}
		if toSite != r.site {
			linked = c.disc.linked(linked, toSite, lu)
			continue // other sites' links feed their anchor text, and discovery
		}
		if loginPath.MatchString(lu.EscapedPath()) {
			c.log.Debug("login link not followed", "url", l.URL)
			continue
		}
		if r.push(item{url: l.URL}) {
			k.Found = append(k.Found, l.URL)
		}
	}
}
