package audit

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
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
// memory stays bounded however long the log is. It does I/O and blocks until
// the whole log is read or ctx ends.
func Run(ctx context.Context, store *db.Store, opts *Options, emit func(Violation) error) (*Summary, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Head != "" {
		o.Rules = []string{RuleIntegrity}
	}
	rules, err := parseRules(o.Rules)
	if err != nil {
		return nil, err
	}
	a := &auditor{store: store, rules: rules, opts: o, log: o.Logger, emit: emit,
		origins: make(map[string]*originState), authorities: make(map[string]authority)}
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

	st   statements
	site *siteState // the site being audited
	rows int64      // requests read

	// origins holds the robots.txt snapshots of the origins of the site
	// being checked and of the requests read ahead.
	origins map[string]*originState
	// authorities caches the parsed scheme and authority of URLs.
	authorities map[string]authority
	// noindex holds noindex URLs waiting to be checked against the index.
	noindex []noindexURL
}

// statements are the queries the stream runs over and over, prepared once.
type statements struct {
	body   *sql.Stmt // a snapshot's body
	events *sql.Stmt // the exclusion events of a site
}

func (a *auditor) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		q    string
	}{
		{&a.st.body, "SELECT body FROM robots_snapshots WHERE id = ?"},
		{&a.st.events, `SELECT version, happened_at, kind, actor, evidence, source FROM policy_events
			WHERE site = ? AND kind IN (?, ?) ORDER BY version`},
	} {
		st, err := a.store.SQL.PrepareContext(ctx, a.rebind(p.q))
		if err != nil {
			return fmt.Errorf("audit: prepare: %w", err)
		}
		*p.stmt = st
	}
	return nil
}

func (a *auditor) closeStatements() {
	for _, st := range []*sql.Stmt{a.st.body, a.st.events} {
		if st != nil {
			st.Close()
		}
	}
}

// rebind turns ? placeholders into the engine's spelling.
func (a *auditor) rebind(q string) string {
	if a.store.Dialect != db.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
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
	if err := a.prepare(ctx); err != nil {
		return err
	}
	defer a.closeStatements()
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
	if a.rules.signatures {
		if err := a.checkSignatures(ctx); err != nil {
			return err
		}
	}
	if a.rules.integrity {
		if err := a.checkIntegrity(ctx); err != nil {
			return err
		}
	}
	a.summary.Requests = a.rows
	a.log.Debug("audit done", "requests", a.rows, "elapsed", time.Since(start))
	return nil
}

// requestSelect is the SELECT list and FROM clause the stream reads every
// request with, joined to its cycle. On SQLite every field is packed into one
// text column separated by unitSep: the pure-Go driver pays dearly per
// column (a lock, a type lookup and a conversion each), and one column reads
// a million rows about twice as fast as sixteen. PostgreSQL gets plain
// columns.
func (a *auditor) requestSelect() string {
	if a.store.Dialect == db.Postgres {
		return `SELECT r.id, r.cycle_id, r.redirect_of, r.status, r.robots_snapshot_id,
			c.delay_ms, c.budget, c.started_at, c.finished_at,
			r.site, r.origin, r.purpose, r.outcome, r.sent_at, r.completed_at, r.retry_after, r.url
			FROM requests r LEFT JOIN crawl_cycles c ON c.id = r.cycle_id`
	}
	fields := []string{"r.id", "r.cycle_id", "r.redirect_of", "r.status", "r.robots_snapshot_id",
		"c.delay_ms", "c.budget", "c.started_at", "c.finished_at",
		"r.site", "r.origin", "r.purpose", "r.outcome", "r.sent_at", "r.completed_at",
		"replace(r.retry_after, char(31), ' ')", "r.url"}
	for i, f := range fields {
		fields[i] = "COALESCE(" + f + ", '')"
	}
	return "SELECT " + strings.Join(fields, " || char(31) || ") +
		" FROM requests r LEFT JOIN crawl_cycles c ON c.id = r.cycle_id"
}

// unitSep separates the fields of a packed SQLite row (ASCII US, char(31)).
const unitSep = "\x1f"

// rowScanner reads rows of requestSelect into a row.
type rowScanner struct {
	packed bool
	buf    string
	cols   scanner
	cache  map[string]authority
}

func (a *auditor) newRowScanner() *rowScanner {
	return &rowScanner{packed: a.store.Dialect != db.Postgres, cache: a.authorities}
}

// scan reads the current row of rows.
func (rs *rowScanner) scan(rows interface{ Scan(...any) error }) (row, error) {
	if !rs.packed {
		if err := rows.Scan(rs.cols.dest()...); err != nil {
			return row{}, err
		}
		r := rs.cols.row()
		r.derive(rs.cache)
		return r, nil
	}
	if err := rows.Scan(&rs.buf); err != nil {
		return row{}, err
	}
	r, err := unpack(rs.buf)
	if err != nil {
		return row{}, err
	}
	r.derive(rs.cache)
	return r, nil
}

// unpack splits a packed SQLite row.
func unpack(packed string) (row, error) {
	var f [17]string
	rest := packed
	for i := range len(f) - 1 {
		j := strings.IndexByte(rest, unitSep[0])
		if j < 0 {
			return row{}, fmt.Errorf("audit: malformed request row %q", packed)
		}
		f[i], rest = rest[:j], rest[j+1:]
	}
	f[len(f)-1] = rest // the URL, last, keeps any separator it holds
	var (
		r   row
		err error
	)
	num := func(s string) (int64, bool) {
		if s == "" || err != nil {
			return 0, false
		}
		n, e := strconv.ParseInt(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("audit: malformed number %q in request row", s)
			return 0, false
		}
		return n, true
	}
	tm := func(s string) (time.Time, bool) {
		if s == "" || err != nil {
			return time.Time{}, false
		}
		var d dbTime
		if e := d.parse(s); e != nil {
			err = e
		}
		return d.t, d.valid
	}
	r.id, _ = num(f[0])
	r.cycleID, _ = num(f[1])
	_, r.redirect = num(f[2])
	status, hasStatus := num(f[3])
	r.status, r.hasStatus = int(status), hasStatus
	r.snapshotID, _ = num(f[4])
	delay, hasCycle := num(f[5])
	budget, _ := num(f[6])
	r.hasCycle = hasCycle
	r.cycle.delay = time.Duration(delay) * time.Millisecond
	r.cycle.budget = int(budget)
	r.cycle.started, _ = tm(f[7])
	r.cycle.finished, r.cycle.ended = tm(f[8])
	r.site, r.origin, r.purpose, r.outcome = f[9], f[10], f[11], f[12]
	r.sentAt, _ = tm(f[13])
	r.completedAt, r.completed = tm(f[14])
	r.retryAfter, r.url = f[15], f[16]
	if err != nil {
		return row{}, err
	}
	return r, nil
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

// scanner holds the scan targets of one PostgreSQL row, reused across rows.
type scanner struct {
	id                                      int64
	cycleID, redirectOf, status, snapshotID sql.NullInt64
	delay, budget                           sql.NullInt64
	started, finished                       dbTime
	site, origin, purpose, outcome          string
	sentAt, completedAt                     dbTime
	retryAfter, u                           string
}

func (s *scanner) dest() []any {
	return []any{&s.id, &s.cycleID, &s.redirectOf, &s.status, &s.snapshotID,
		&s.delay, &s.budget, &s.started, &s.finished,
		&s.site, &s.origin, &s.purpose, &s.outcome, &s.sentAt, &s.completedAt, &s.retryAfter, &s.u}
}

func (s *scanner) row() row {
	r := row{
		id: s.id, cycleID: s.cycleID.Int64, site: s.site, origin: s.origin, url: s.u,
		purpose: s.purpose, redirect: s.redirectOf.Valid, status: int(s.status.Int64), hasStatus: s.status.Valid,
		outcome: s.outcome, sentAt: s.sentAt.t, completedAt: s.completedAt.t, completed: s.completedAt.valid,
		retryAfter: s.retryAfter, snapshotID: s.snapshotID.Int64,
		hasCycle: s.delay.Valid,
		cycle: cycleInfo{delay: time.Duration(s.delay.Int64) * time.Millisecond, budget: int(s.budget.Int64),
			started: s.started.t, finished: s.finished.t, ended: s.finished.valid},
	}
	return r
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
// or fewer once they name lookaheadOrigins origins it has not seen, then
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

func (a *auditor) stream(ctx context.Context) error {
	var (
		where []string
		args  []any
	)
	if len(a.opts.Sites) > 0 {
		ph := strings.TrimSuffix(strings.Repeat("?, ", len(a.opts.Sites)), ", ")
		where = append(where, "r.site IN ("+ph+")")
		for _, s := range a.opts.Sites {
			args = append(args, s)
		}
	}
	if !a.opts.Since.IsZero() {
		where = append(where, "r.sent_at >= ?")
		args = append(args, a.opts.Since.UTC())
	}
	q := a.requestSelect()
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY r.site, r.sent_at, r.id"
	rows, err := a.store.SQL.QueryContext(ctx, a.rebind(q), args...)
	if err != nil {
		return fmt.Errorf("audit: read requests: %w", err)
	}
	defer rows.Close()
	rs := a.newRowScanner()
	buf := make([]row, 0, lookaheadRows)
	newOrigins := make(map[string]bool, lookaheadOrigins)
	more := true
	for more {
		// Read ahead.
		buf = buf[:0]
		clear(newOrigins)
		for len(buf) < lookaheadRows && len(newOrigins) < lookaheadOrigins {
			if more = rows.Next(); !more {
				break
			}
			r, err := rs.scan(rows)
			if err != nil {
				return fmt.Errorf("audit: read requests: %w", err)
			}
			a.rows++
			r.seq = a.rows
			if _, ok := a.origins[r.dorigin]; !ok {
				newOrigins[r.dorigin] = true
			}
			buf = append(buf, r)
		}
		if err := a.prefetch(ctx, buf); err != nil {
			return err
		}
		// Check.
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
		a.log.Debug("audit progress", "requests", a.rows)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("audit: read requests: %w", err)
	}
	if err := a.finishSite(ctx); err != nil {
		return err
	}
	return a.flushNoindex(ctx)
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

// check applies every request-level rule to one request.
func (a *auditor) check(ctx context.Context, r *row) error {
	s := a.site
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
	q := a.rebind(`SELECT id, url, purpose, sent_at, completed_at, status, outcome FROM requests WHERE id = ?`)
	var (
		ref         RequestRef
		completedAt sql.NullTime
		status      sql.NullInt64
	)
	err := a.store.SQL.QueryRowContext(ctx, q, id).Scan(&ref.ID, &ref.URL, &ref.Purpose, &ref.SentAt, &completedAt, &status, &ref.Outcome)
	if err == sql.ErrNoRows {
		return ref, false, nil
	}
	if err != nil {
		return ref, false, fmt.Errorf("audit: read request %d: %w", id, err)
	}
	ref.SentAt = ref.SentAt.UTC()
	if completedAt.Valid {
		t := completedAt.Time.UTC()
		ref.CompletedAt = &t
	}
	if status.Valid {
		n := int(status.Int64)
		ref.Status = &n
	}
	return ref, true, nil
}

// detail reads what the crawler logged of a request's checks, for evidence.
func (a *auditor) detail(ctx context.Context, id int64) (robotsRule, policyCheck string, err error) {
	err = a.store.SQL.QueryRowContext(ctx, a.rebind("SELECT robots_rule, policy_check FROM requests WHERE id = ?"), id).Scan(&robotsRule, &policyCheck)
	if err != nil {
		return "", "", fmt.Errorf("audit: read request %d: %w", id, err)
	}
	return robotsRule, policyCheck, nil
}
