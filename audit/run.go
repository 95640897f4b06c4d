package audit

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
)

// Run audits the records in store and calls emit for every violation found,
// site by site in the order the database sorts site names; within a site,
// request-level violations come in the order the requests were sent, then the
// budget and storage violations of the site. Storage violations of the
// schema itself come first, with an empty Site. Run stops at the first error
// emit returns and returns it.
//
// Run only reads. It streams the request log with one query and keeps state
// for one site at a time (its hosts, origins, cycles and exclusions), so
// memory stays bounded however long the log is. The signatures rule, which
// reads the log apart, and the integrity rule, which reads the evidence
// tables and the transparency log, run alongside on goroutines of their own; their violations are
// still reported after the stream's, signatures then integrity. Run does
// I/O and blocks until the whole log is read or ctx ends.
func Run(ctx context.Context, store *db.Store, opts *Options, emit func(Violation) error) (*Summary, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Checkpoint != nil {
		o.Rules = []string{RuleIntegrity}
	}
	rules, err := parseRules(o.Rules)
	if err != nil {
		return nil, err
	}
	a := &auditor{store: store, rules: rules, opts: o, log: o.Logger, emit: emit,
		origins: make(map[string]*originState), authorities: make(map[string]authority), snaps: store}
	for _, r := range Rules() {
		if rules.has(r) {
			a.summary.Rules = append(a.summary.Rules, RuleSummary{Rule: r})
		}
	}
	if err := a.run(ctx); err != nil {
		return nil, err
	}
	return &a.summary, nil
}

// auditor is one run of the audit.
type auditor struct {
	store   *db.Store
	rules   ruleSet
	opts    Options
	log     *slog.Logger
	emit    func(Violation) error
	summary Summary

	// excludedSites holds every site that has ever been excluded: only for
	// those are the policy events read.
	excludedSites map[string]bool

	site *siteState // the site being audited
	rows int64      // requests read

	// origins holds the robots.txt snapshots of the origins of the site
	// being checked and of the requests read ahead.
	origins map[string]*originState
	// authorities caches the parsed scheme and authority of URLs.
	authorities map[string]authority
	// noindex holds noindex URLs waiting to be checked against the index.
	noindex []noindexURL
	// snaps reads robots.txt snapshots while the stream runs.
	snaps snapshotReader
}

// snapshotReader reads robots.txt snapshots: a *db.AuditReader while the
// stream runs, else the store.
type snapshotReader interface {
	RobotsSnapshotInfos(ctx context.Context, origins []string, fn func(db.RobotsSnapshotInfo) error) error
	RobotsBodies(ctx context.Context, ids []int64, fn func(id int64, body []byte) error) error
}

func (a *auditor) count(rule string, checked, violations int64) {
	for i := range a.summary.Rules {
		if a.summary.Rules[i].Rule == rule {
			a.summary.Rules[i].Checked += checked
			a.summary.Rules[i].Violations += violations
		}
	}
}

// report counts and emits one violation.
func (a *auditor) report(v Violation) error {
	a.count(v.Rule, 0, 1)
	if a.emit == nil {
		return nil
	}
	return a.emit(v)
}

func (a *auditor) run(ctx context.Context) error {
	start := time.Now()
	var integrity *integrityRun
	if a.rules.integrity {
		var err error
		if integrity, err = a.startIntegrity(ctx); err != nil {
			return err
		}
		defer integrity.stop()
	}
	var signatures *backgroundRun
	if a.rules.signatures {
		signatures = a.startSignatures(ctx)
		defer signatures.stop()
	}
	if a.rules.storage {
		if err := a.checkSchema(ctx); err != nil {
			return err
		}
	}
	if a.rules.exclusions {
		if err := a.loadExcludedSites(ctx); err != nil {
			return err
		}
	}
	if a.rules.robots || a.rules.budget || a.rules.politeness || a.rules.exclusions || a.rules.storage {
		if err := a.stream(ctx); err != nil {
			return err
		}
	}
	if signatures != nil {
		if err := a.finishSignatures(signatures); err != nil {
			return err
		}
	}
	if integrity != nil {
		if err := a.finishIntegrity(integrity); err != nil {
			return err
		}
	}
	a.summary.Requests = a.rows
	a.log.Debug("audit done", "requests", a.rows, "elapsed", time.Since(start))
	return nil
}

// row is one request of the log, as read and as re-derived.
type row struct {
	id          int64
	cycleID     int64 // 0: none
	site        string
	origin      string // as logged
	url         string
	purpose     string
	redirect    bool
	status      int
	hasStatus   bool
	outcome     string
	sentAt      time.Time
	completedAt time.Time
	completed   bool
	retryAfter  string
	snapshotID  int64 // 0: none

	// The request's cycle (see cycleInfo); hasCycle is false when the
	// request names none or a cycle that does not exist.
	hasCycle bool
	cycle    cycleInfo

	// Re-derived from the URL.
	dhost   string // lowercase host name
	dorigin string // scheme://host:port, port always written
	isPage  bool

	seq int64 // the row's position in the stream, from 1
}

// rowOf copies a request as the db reads it into a row, and derives its
// host, origin and purpose from its URL, caching parsed authorities in cache.
func rowOf(q *db.AuditRequest, cache map[string]authority) row {
	r := row{
		id: q.ID, cycleID: q.CycleID, site: q.Site, origin: q.Origin, url: q.URL, purpose: q.Purpose,
		redirect: q.Redirect, status: q.Status, hasStatus: q.HasStatus, outcome: q.Outcome,
		sentAt: q.SentAt, completedAt: q.CompletedAt, completed: q.Completed, retryAfter: q.RetryAfter,
		snapshotID: q.SnapshotID, hasCycle: q.HasCycle,
		cycle: cycleInfo{delay: q.CycleDelay, budget: q.CycleBudget, started: q.CycleStarted,
			finished: q.CycleFinished, ended: q.CycleEnded},
	}
	r.derive(cache)
	return r
}

// cycleInfo is what the rules need of a crawl cycle.
type cycleInfo struct {
	delay    time.Duration
	budget   int
	started  time.Time
	finished time.Time
	ended    bool // finished is set
}

// ref returns the request as violations cite it.
func (r *row) ref() RequestRef {
	ref := RequestRef{ID: r.id, URL: r.url, Purpose: r.purpose, SentAt: r.sentAt, Outcome: r.outcome}
	if r.completed {
		t := r.completedAt
		ref.CompletedAt = &t
	}
	if r.hasStatus {
		s := r.status
		ref.Status = &s
	}
	return ref
}

// refs returns the request alone, as a violation's Requests.
func (r *row) refs() []RequestRef { return []RequestRef{r.ref()} }

// end is when the request stopped holding its host: its completion, else the
// end of its cycle, else never (ok false).
func (r *row) end() (time.Time, bool) {
	switch {
	case r.completed:
		return r.completedAt, true
	case r.hasCycle && r.cycle.ended:
		return r.cycle.finished, true
	}
	return time.Time{}, false
}

// authority is what derive works out of a URL's scheme and authority.
type authority struct {
	host   string // lowercase host name
	origin string // scheme://host:port, port always written
}

// maxAuthorities bounds the cache of parsed authorities.
const maxAuthorities = 10000

// derive works out host, origin and purpose from the URL itself, falling
// back to the logged origin only when the URL does not parse. Parsed
// authorities are cached in cache.
func (r *row) derive(cache map[string]authority) {
	pathQuery := ""
	if i := strings.Index(r.url, "://"); i > 0 {
		end := i + 3 + strings.IndexAny(r.url[i+3:], "/?#")
		if end < i+3 {
			end = len(r.url)
		}
		prefix := r.url[:end]
		au, ok := cache[prefix]
		if !ok {
			if u, err := url.Parse(prefix); err == nil && u.Host != "" {
				host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
				au = authority{host: host, origin: canonicalOrigin(strings.ToLower(u.Scheme), host, u.Port())}
				ok = true
				if len(cache) >= maxAuthorities {
					clear(cache)
				}
				cache[prefix] = au
			}
		}
		if ok {
			r.dhost, r.dorigin = au.host, au.origin
			pathQuery = r.url[end:]
			if j := strings.IndexByte(pathQuery, '#'); j >= 0 {
				pathQuery = pathQuery[:j]
			}
		}
	}
	if r.dorigin == "" {
		r.dorigin = r.origin
		if u, err := url.Parse(r.origin); err == nil {
			r.dhost = strings.ToLower(u.Hostname())
		}
	}
	robotsFetch := r.purpose == db.PurposeRobots && (pathQuery == "/robots.txt" || r.redirect)
	r.isPage = !robotsFetch
}

// canonicalOrigin spells an origin as scheme://host:port, port always
// written.
func canonicalOrigin(scheme, host, port string) string {
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}

// originSpellings returns the ways the crawler may have written an origin in
// robots_snapshots: with and without the default port, and as logged.
func originSpellings(canonical, logged string) []string {
	out := []string{canonical}
	if s, ok := strings.CutSuffix(canonical, ":443"); ok && strings.HasPrefix(s, "https://") {
		out = append(out, s)
	}
	if s, ok := strings.CutSuffix(canonical, ":80"); ok && strings.HasPrefix(s, "http://") {
		out = append(out, s)
	}
	if logged != "" && !slices.Contains(out, logged) {
		out = append(out, logged)
	}
	return out
}

// Limits of the stream's read-ahead: it reads up to lookaheadRows requests,
// or fewer once they name lookaheadOrigins origins, then
// fetches what they need (robots.txt snapshots and bodies) in a few batched
// queries, then checks them. Each query costs the SQLite driver a fresh
// prepare, so batching saves most of the time; the limits bound memory.
const (
	lookaheadRows    = 1024
	lookaheadOrigins = 64
	// prefetchBodyBytes bounds the robots.txt bodies read ahead at once.
	prefetchBodyBytes = 16 << 20
	// noindexBatch is how many noindex URLs are checked against the index
	// in one query.
	noindexBatch = 200
)

// stream reads the request log on a goroutine of its own, a batch of rows
// at a time, while this goroutine checks the batch read before: reading
// (SQLite stepping, decoding, parsing URLs) and checking cost about the same,
// so on two cores they take about as long as the longer of the two. Two
// batches' buffers go back and forth, so memory stays bounded.
func (a *auditor) stream(ctx context.Context) error {
	rd, err := a.store.OpenAuditReader(ctx)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer rd.Close()
	a.snaps = rd
	defer func() { a.snaps = a.store }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		batches = make(chan []row, 1) // read, waiting to be checked
		free    = make(chan []row, 2) // checked, to be filled again
		done    = make(chan struct{}) // closed when readErr and rows are set
		readErr error
		rows    int64
	)
	for range 2 {
		free <- make([]row, 0, lookaheadRows)
	}
	go func() {
		defer close(done)
		defer close(batches)
		var buf []row
		// The reader's own cache of parsed authorities (a.authorities is
		// the checker's).
		cache := make(map[string]authority)
		origins := make(map[string]bool, lookaheadOrigins)
		send := func() error {
			select {
			case batches <- buf:
				buf = nil
				clear(origins)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		readErr = a.store.AuditRequests(ctx, a.opts.Sites, a.opts.Since, func(q *db.AuditRequest) error {
			if buf == nil {
				select {
				case buf = <-free:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			r := rowOf(q, cache)
			rows++
			r.seq = rows
			origins[r.dorigin] = true
			buf = append(buf, r)
			if len(buf) < lookaheadRows && len(origins) < lookaheadOrigins {
				return nil
			}
			return send()
		})
		if readErr == nil && len(buf) > 0 {
			readErr = send()
		}
	}()
	var checkErr error // from checkBatch, returned as it is
	for buf := range batches {
		if checkErr == nil {
			if checkErr = a.checkBatch(ctx, buf); checkErr != nil {
				cancel()
			}
		}
		free <- buf[:0]
	}
	<-done
	if checkErr != nil {
		return checkErr
	}
	if readErr != nil {
		return fmt.Errorf("audit: %w", readErr)
	}
	a.rows = rows
	if err := a.finishSite(ctx); err != nil {
		return err
	}
	return a.flushNoindex(ctx)
}

// checkBatch checks a batch of rows read ahead: it fetches what they need
// (robots.txt snapshots and bodies) in a few batched queries, then applies
// the rules row by row.
func (a *auditor) checkBatch(ctx context.Context, buf []row) error {
	if err := a.prefetch(ctx, buf); err != nil {
		return err
	}
	for i := range buf {
		r := &buf[i]
		if a.site == nil || a.site.name != r.site {
			if err := a.finishSite(ctx); err != nil {
				return err
			}
			a.site = newSiteState(r.site)
			a.summary.Sites++
			a.pruneOrigins(r.seq)
		}
		if err := a.check(ctx, r); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(buf) > 0 {
		a.log.Debug("audit progress", "requests", buf[len(buf)-1].seq)
	}
	return nil
}

// siteState is what the stream keeps while it reads one site's requests.
type siteState struct {
	name   string
	hosts  map[string]*hostState
	cycles map[int64]*cycleCount
	// siteOf caches the re-derived site of each host.
	siteOf map[string]string
	// exclusions caches the exclusion intervals of re-derived sites.
	exclusions map[string][]interval
	// noindex holds the URLs whose last page fetch was marked noindex.
	noindex map[string]RequestRef
}

func newSiteState(name string) *siteState {
	return &siteState{
		name:       name,
		hosts:      make(map[string]*hostState),
		cycles:     make(map[int64]*cycleCount),
		siteOf:     make(map[string]string),
		exclusions: make(map[string][]interval),
		noindex:    make(map[string]RequestRef),
	}
}

// check applies every request-level rule to one request. A request
// withdrawn (db.OutcomeWithdrawn) was never sent: no rule applies to it,
// and it counts against no budget.
func (a *auditor) check(ctx context.Context, r *row) error {
	s := a.site
	if r.outcome == db.OutcomeWithdrawn {
		return nil
	}
	if a.rules.robots && r.isPage {
		if err := a.checkRobots(ctx, s, r); err != nil {
			return err
		}
	}
	if a.rules.budget && r.isPage {
		if err := a.countBudget(s, r); err != nil {
			return err
		}
	}
	if a.rules.politeness {
		if err := a.checkPoliteness(ctx, s, r); err != nil {
			return err
		}
	}
	if a.rules.exclusions {
		if err := a.checkExclusions(ctx, s, r); err != nil {
			return err
		}
	}
	if a.rules.storage && r.isPage {
		switch r.outcome {
		case "noindex":
			s.noindex[r.url] = r.ref()
		case "ok":
			delete(s.noindex, r.url)
		}
	}
	return nil
}

// finishSite runs the per-site checks of the site just read: budget now,
// storage in batches (see flushNoindex).
func (a *auditor) finishSite(ctx context.Context) error {
	s := a.site
	if s == nil {
		return nil
	}
	a.site = nil
	if a.rules.budget {
		if err := a.finishBudget(ctx, s); err != nil {
			return err
		}
	}
	if a.rules.storage && len(s.noindex) > 0 {
		urls := make([]string, 0, len(s.noindex))
		for u := range s.noindex {
			urls = append(urls, u)
		}
		slices.Sort(urls)
		for _, u := range urls {
			a.noindex = append(a.noindex, noindexURL{site: s.name, url: u, ref: s.noindex[u]})
		}
		if len(a.noindex) >= noindexBatch {
			return a.flushNoindex(ctx)
		}
	}
	return nil
}

// derivedSite is the site a request's host belongs to, re-derived; the
// logged site when the host is not a registrable name (an IP address).
func (s *siteState) derivedSite(r *row) string {
	if site, ok := s.siteOf[r.dhost]; ok {
		return site
	}
	site, err := policy.SiteOfHost(r.dhost)
	if err != nil {
		site = r.site
	}
	s.siteOf[r.dhost] = site
	return site
}

// loadRef reads one request of the log by id, for citing it.
func (a *auditor) loadRef(ctx context.Context, id int64) (RequestRef, bool, error) {
	r, err := a.store.RequestCitation(ctx, id)
	if db.IsNotFound(err) {
		return RequestRef{}, false, nil
	}
	if err != nil {
		return RequestRef{}, false, fmt.Errorf("audit: %w", err)
	}
	return RequestRef{ID: r.ID, URL: r.URL, Purpose: r.Purpose, SentAt: r.SentAt, CompletedAt: r.CompletedAt,
		Status: r.Status, Outcome: r.Outcome}, true, nil
}

// detail reads what the crawler logged of a request's checks, for evidence.
func (a *auditor) detail(ctx context.Context, id int64) (robotsRule, policyCheck string, err error) {
	r, err := a.store.RequestCitation(ctx, id)
	if err != nil {
		return "", "", fmt.Errorf("audit: %w", err)
	}
	return r.RobotsRule, r.PolicyCheck, nil
}
