package crawler

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/retryafter"
	"github.com/lohisoft/lohibot/policy"
)

// hostState is what this process knows of one host while it uses it. One
// user (a site's crawl, or FetchRobots) holds it at a time: see hostState
// and leaveHost.
type hostState struct {
	host  string
	users int        // users holding or waiting for it; guarded by Crawler.hostsMu
	mu    sync.Mutex // held by the current user, from hostState to leaveHost

	// The fields below belong to the current user.
	leased bool
	// leaseUntil is (no later than) the expiry of the host's lease as
	// this crawler last wrote it: begin renews the lease only when less
	// than leaseRenewBelow is left (see begin).
	leaseUntil time.Time
	nextAt     time.Time // the next request may start at nextAt
	// after is the end of the host's last request as the log tells it,
	// when a takeover closed it (abandon): the next request starts no
	// earlier than the gap in force after it (dueAt), a gap that may be
	// longer than the one next_at was worked out with (a cycle's --delay,
	// a robots.txt Crawl-delay read since).
	after    time.Time
	gap      time.Duration // the gap in force: the delay, or robots.txt's Crawl-delay
	failures int           // consecutive 5xx answers and timeouts
	// due is when the next request may start on the clock that is never
	// set (clock.Clock.Mono), after this process's last request to the
	// host: nextAt as it was set then. It keeps the gap whole when the
	// system's clock is set forward meanwhile (see untilDue).
	due time.Duration
	// slotAt is when this process's last request to the host took its
	// request slot (clock.Clock.Mono), if slotSet: the start of the
	// host's period the crawler's pace measures.
	slotAt  time.Duration
	slotSet bool
}

// hostState returns host's state, waiting until no other user of this
// process holds it; give it back with leaveHost.
func (c *Crawler) hostState(host string) *hostState {
	c.hostsMu.Lock()
	hs := c.hosts[host]
	if hs == nil {
		hs = &hostState{host: host}
		c.hosts[host] = hs
	}
	hs.users++
	c.hostsMu.Unlock()
	hs.mu.Lock()
	hs.gap = c.opts.Delay
	hs.failures = 0
	return hs
}

// leaveHost releases the host's lease (keeping next_at for whoever comes
// next) and lets the next user of this process have it.
func (c *Crawler) leaveHost(ctx context.Context, hs *hostState) {
	if hs.leased {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := c.release(rctx, hs.host, hs.nextAt); err != nil {
			c.logDB(err).Warn("lease release failed", "host", hs.host, "err", err)
		}
		cancel()
		hs.leased = false
	}
	hs.mu.Unlock()
	// The last user forgets the host: what the next one needs (next_at)
	// is in its lease row.
	c.hostsMu.Lock()
	if hs.users--; hs.users == 0 {
		delete(c.hosts, hs.host)
	}
	c.hostsMu.Unlock()
}

// hostSet is the hosts one user (a site's crawl, or FetchRobots) holds.
type hostSet struct {
	c       *Crawler
	m       map[string]*hostState
	origins map[string]bool // origins whose robots.txt this user put in the crawler's cache
	delay   time.Duration   // the least gap for these hosts (a cycle's delay); 0: the crawler's --delay
	// robotsSent counts the robots.txt requests this user sent.
	robotsSent int
	// ended are the times a takeover closed hosts' rows at (noteEnded).
	ended takeover
}

func (c *Crawler) newHostSet(delay time.Duration) *hostSet {
	return &hostSet{c: c, m: map[string]*hostState{}, origins: map[string]bool{}, delay: delay}
}

// get returns host's state, taking it on first use.
func (s *hostSet) get(host string) *hostState {
	if hs, ok := s.m[host]; ok {
		return hs
	}
	hs := s.c.hostState(host)
	hs.gap = max(hs.gap, s.delay)
	if t := s.ended[host]; t.After(hs.after) {
		hs.after = t
	}
	s.m[host] = hs
	return hs
}

// setDelay sets the least gap for the set's hosts, those held already
// included.
func (s *hostSet) setDelay(d time.Duration) {
	s.delay = d
	for _, hs := range s.m {
		hs.gap = max(hs.gap, d)
	}
}

// noteEnded has the set's hosts keep their gap after the times a takeover
// closed their rows at (hostState.after): those it holds now, and the
// others when it takes them.
func (s *hostSet) noteEnded(ended takeover) {
	for host, t := range ended {
		if s.ended == nil {
			s.ended = takeover{}
		}
		s.ended.note(host, t)
		if hs, ok := s.m[host]; ok && t.After(hs.after) {
			hs.after = t
		}
	}
}

// baseGap is the least gap between two requests to one host of the set.
func (s *hostSet) baseGap() time.Duration { return max(s.c.opts.Delay, s.delay) }

// close gives every host back, and drops the robots.txt of its origins
// from the crawler's cache (an origin belongs to one site, and a site is
// crawled by one user at a time; the snapshot stays in the database).
func (s *hostSet) close(ctx context.Context) {
	for _, hs := range s.m {
		s.c.leaveHost(ctx, hs)
		s.c.lookups.forget(hs.host)
	}
	s.m = nil
	s.c.robotsMu.Lock()
	for o := range s.origins {
		delete(s.c.robots, o)
	}
	s.c.robotsMu.Unlock()
	s.origins = nil
}

// exchangeResult is one request as sent and answered.
type exchangeResult struct {
	row         *reqRow
	resp        *response
	completedAt time.Time     // on the wall clock, as the database keeps it
	completed   time.Duration // on the clock that is never set (Mono), read just after
}

// completion starts the row's completion from the response.
func (r *exchangeResult) completion() *completion {
	k := &completion{ID: r.row.ID, CycleID: r.row.CycleID, Host: r.row.Host, CompletedAt: r.completedAt, Status: r.resp.Status,
		Bytes: r.resp.Bytes, Duration: r.resp.Duration, Stamp: r.resp.Stamp}
	if r.resp.Header != nil {
		k.RetryAfter = r.resp.Header.Get("Retry-After")
		if r.row.Purpose == db.PurposePage {
			k.Validators = db.Validators{ETag: clipHeader(r.resp.Header.Get("ETag")), LastModified: clipHeader(r.resp.Header.Get("Last-Modified"))}
		}
	}
	if r.resp.Status == http.StatusNotModified && k.Validators == (db.Validators{}) {
		k.Validators = r.row.Cond // still the version the page was last fetched in
	}
	if r.resp.Err != nil {
		k.Error = errText(r.resp.Err)
	} else if r.resp.Truncated {
		k.Error = "body truncated at the size limit"
	}
	return k
}

// exchange sends one request to hs's host: it takes the host's lease,
// waits for the gap, writes the log row (gate, budget) and sends. The
// caller must complete the row with finish. It returns ErrExcluded,
// ErrBudgetSpent, ErrLeaseLost or ctx's error when nothing was sent.
func (c *Crawler) exchange(ctx context.Context, hs *hostState, row *reqRow) (*exchangeResult, error) {
	for {
		res, wait, err := c.exchangeDue(ctx, hs, row)
		if wait.IsZero() {
			return res, err
		}
		if err := c.sleep(ctx, c.until(wait)); err != nil {
			return nil, err
		}
	}
}

// exchangeDue is exchange without the wait for the gap: when the host is
// not due yet, it sends nothing and returns when it will be (the host's
// lease is held meanwhile).
func (c *Crawler) exchangeDue(ctx context.Context, hs *hostState, row *reqRow) (*exchangeResult, time.Time, error) {
	if err := c.leaseHost(ctx, hs); err != nil {
		return nil, time.Time{}, err
	}
	// The request is reserved a moment before the host is due (see
	// reserveAhead), and sent when it is.
	ahead := c.reserveAhead(hs.gap)
	if wait := c.untilDue(hs); wait > ahead {
		// (The clock's reading carries the system's monotonic one, which
		// the caller's until measures from.)
		return nil, c.clock.Now().Add(wait - ahead), nil
	}
	// The host is (nearly) due: take a request slot (waiting for its gap,
	// above, held none).
	asked := c.clock.Mono()
	select {
	case c.inFlight <- struct{}{}:
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
	took := c.clock.Mono()
	if row.Purpose != db.PurposeRobots {
		c.pace.noteWait(took - asked)
	}
	var period time.Duration
	if hs.slotSet {
		period = took - hs.slotAt
	}
	hs.slotAt, hs.slotSet = took, true
	defer func() {
		<-c.inFlight
		if row.Purpose != db.PurposeRobots {
			c.pace.note(c.clock.Mono()-took, period, hs.gap)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	row.Delay, row.At = hs.gap, hs.dueAt()
	if d := c.untilDue(hs); d > 0 {
		// Logged as sent when it will be: after the gap on the clock that
		// is never set, when the wall clock was set forward during it.
		if at := c.clock.Now().Add(d).UTC().Truncate(time.Microsecond); at.After(row.At) {
			row.At = at
		}
	}
	reserving := time.Now()
	if err := c.begin(ctx, hs, row); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			hs.leased = false
		}
		return nil, time.Time{}, err
	}
	c.noteReserve(time.Since(reserving))
	if wait := max(c.until(row.SentAt), c.untilDue(hs)); wait > 0 {
		// Reserved ahead of its time: sent at that time, if its site was
		// not excluded meanwhile (confirm: db.Writer.Confirm).
		if err := c.sleep(ctx, wait); err != nil {
			c.withdraw(ctx, row)
			return nil, time.Time{}, err
		}
		if err := c.confirm(ctx, row); err != nil {
			return nil, time.Time{}, err
		}
	}
	// The connection is kept for the host's next request only across a
	// short gap (see maxKeepAliveGap), and not after the cycle's last
	// request: closed as each site ends, the connections are not left
	// for Close to close all at once when the crawl ends (at the end of
	// BenchmarkCrawlFleet, 1,000 of them took it 11-46 ms).
	// A request interrupted before it left the machine is withdrawn: it
	// never reached the site, so it is not counted against the budget
	// (its slot is given back) and a resumed cycle sends it again.
	if err := ctx.Err(); err != nil {
		c.withdraw(ctx, row)
		c.stats.requests.Add(-1)
		return nil, time.Time{}, err
	}
	resp := c.fetch(ctx, row.URL, row.Purpose == db.PurposeRobots, row.Cond, hs.gap <= c.keepAliveGap && !row.lastOfCycle())
	if resp.NotSent {
		c.withdraw(ctx, row)
		c.stats.requests.Add(-1)
		return nil, time.Time{}, ctx.Err()
	}
	res := &exchangeResult{row: row, resp: resp, completedAt: c.now()}
	res.completed = c.clock.Mono()
	if res.completedAt.Before(row.SentAt) {
		// The clock was set back during the request: it is logged as
		// completed no earlier than it was sent, and the host's next
		// request waits until the wall clock is past both (untilDue), so
		// that the host's requests stay in order in the log.
		res.completedAt = row.SentAt
	}
	return res, time.Time{}, nil
}

// untilDue is the time until the host is due: until its next_at on the
// wall clock (what the log records, and what another crawler of the fleet
// may have set), and at least until the gap after this process's last
// request to it has passed on the clock that is never set. Were the gap
// measured on the wall clock alone, setting the system's clock forward
// during a gap (NTP stepping it, say) would cut the gap short by as much,
// as a web server sees it; set back, the wait is longer instead, so that
// the log's times stay in order.
func (c *Crawler) untilDue(hs *hostState) time.Duration {
	return max(c.until(hs.dueAt()), hs.due-c.clock.Mono())
}

// dueAt is when the host's next request may start on the wall clock: its
// next_at, and no earlier than the gap in force after the end of a request
// a takeover closed (after).
func (hs *hostState) dueAt() time.Time {
	if at := hs.after.Add(hs.gap); !hs.after.IsZero() && at.After(hs.nextAt) {
		return at
	}
	return hs.nextAt
}

// leaseHost takes hs's lease unless this user holds it already, waiting
// while another crawler of the fleet holds it.
func (c *Crawler) leaseHost(ctx context.Context, hs *hostState) error {
	for !hs.leased {
		asked := c.now()
		ended := takeover{}
		next, busy, err := c.acquire(ctx, hs.host, c.opts.Delay, ended, nil)
		if err != nil {
			return err
		}
		if busy.IsZero() {
			if t := ended[hs.host]; t.After(hs.after) {
				hs.after = t
			}
			hs.leased, hs.leaseUntil = true, asked.Add(c.opts.LeaseTTL)
			if next.After(hs.nextAt) {
				hs.nextAt = next
			}
			return nil
		}
		// Another crawler of the fleet holds the host: wait for it.
		wait := min(c.until(busy), 2*time.Second) + time.Duration(rand.Int64N(int64(200*time.Millisecond)))
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
	return nil
}

// finish completes the request's row with k, after working out when the
// next request to the host may start (the gap, Retry-After, or a backoff)
// unless k.NextAt is set already.
func (c *Crawler) finish(ctx context.Context, hs *hostState, res *exchangeResult, k *completion) error {
	c.settle(hs, res, k)
	return c.complete(ctx, k)
}

// settle is finish without the write: it works out when the next request
// to the host may start, unless k.NextAt is set already, and fills in k's
// outcome.
func (c *Crawler) settle(hs *hostState, res *exchangeResult, k *completion) {
	if k.NextAt.IsZero() {
		k.NextAt = c.schedule(hs, res, k)
	}
	hs.nextAt = k.NextAt
	hs.due = res.completed + k.NextAt.Sub(res.completedAt)
	if k.Outcome == "" {
		k.Outcome = "ok"
	}
}

// schedule says when the next request to the host may start after res:
// the gap in force after the end of the request; for 429 and 503 with
// Retry-After, exactly the time it asks for (if later); for 429 and 5xx
// without it, and timeouts, an exponential backoff from the gap, with
// jitter. It fills k.RetryNotBefore.
func (c *Crawler) schedule(hs *hostState, res *exchangeResult, k *completion) time.Time {
	end := res.completedAt
	gapFrom := end
	if res.resp.Unread {
		// The server learns that its answer was cut short only when its
		// next write fails: its request ends a moment after ours.
		gapFrom = end.Add(unreadGrace(hs.gap))
	}
	next := gapFrom.Add(hs.gap)
	st := res.resp.Status
	if st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable {
		if nb, ok := retryafter.NotBefore(k.RetryAfter, end); ok {
			nb = nb.UTC().Truncate(time.Microsecond)
			if nb.Before(end) {
				nb = end
			}
			k.RetryNotBefore = &nb
			if nb.After(next) {
				next = nb
			}
			return next
		}
	}
	if st == http.StatusTooManyRequests || st >= 500 || res.resp.Timeout {
		// (At least twice the gap: more than the grace an unread answer
		// gets.)
		next = end.Add(backoff(hs.gap, res.row.Attempt+1))
	}
	return next
}

// unreadGrace is how much later than the crawler a server is taken to end
// a request whose answer the crawler did not read to its end (closing the
// connection): a tenth of the gap, at least 50 ms and at most 1 s.
func unreadGrace(gap time.Duration) time.Duration {
	return min(max(gap/10, 50*time.Millisecond), time.Second)
}

// clipHeader bounds a stored validator (an ETag or a date is short; a
// longer one is not kept, so it is never sent back clipped).
func clipHeader(v string) string {
	if len(v) > 256 {
		return ""
	}
	return v
}

// backoff is gap × 2^n plus up to half as much again at random, at most
// 10 minutes (but never less than gap).
func backoff(gap time.Duration, n int) time.Duration {
	d := gap
	for i := 0; i < n && d < 10*time.Minute; i++ {
		d *= 2
	}
	d += time.Duration(rand.Int64N(int64(d/2) + 1))
	return max(min(d, 10*time.Minute), gap)
}

// nextHop resolves a redirect's Location against from and says why it is
// not followed ("" when it may be): a hop must stay on the site and use
// http or https, without credentials.
func (c *Crawler) nextHop(resp *response, from *url.URL, site string) (string, string) {
	loc := ""
	if resp.Header != nil {
		loc = strings.TrimSpace(resp.Header.Get("Location"))
	}
	if loc == "" {
		return "", "no Location header"
	}
	u, err := from.Parse(loc)
	if err != nil {
		return "", "unparsable Location"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "not an http(s) URL: " + u.Scheme
	}
	if u.User != nil {
		return "", "URL with credentials"
	}
	s, err := policy.SiteOf(u.String())
	if err != nil {
		return "", "not a site: " + u.Hostname()
	}
	if s != site {
		return "", "another site: " + s
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), ""
}

// challengeMarkers are fragments of bot-protection pages (lowercase).
var challengeMarkers = []string{
	"captcha", "g-recaptcha", "h-captcha", "hcaptcha", "turnstile", "cf-chl", "challenge-platform",
	"just a moment...", "checking your browser", "verify you are human", "are you a robot",
	"enable javascript and cookies to continue", "ddos protection by", "_incapsula_", "px-captcha",
}

// isChallenge recognises a bot-protection challenge: a cf-mitigated:
// challenge header, or a 403, 429 or 503 whose page is a captcha or a
// JavaScript challenge.
func isChallenge(r *response) bool {
	if r.Header != nil && strings.EqualFold(strings.TrimSpace(r.Header.Get("cf-mitigated")), "challenge") {
		return true
	}
	if r.Status != http.StatusForbidden && r.Status != http.StatusServiceUnavailable && r.Status != http.StatusTooManyRequests {
		return false
	}
	body := strings.ToLower(string(r.Body))
	for _, m := range challengeMarkers {
		if strings.Contains(body, m) {
			return true
		}
	}
	return false
}

// errText is an error as logged: no page text ever reaches it.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// outcomeError names the outcome of a request that got no answer.
func outcomeError(r *response) string {
	switch {
	case r.Refused:
		return "refused"
	case r.Timeout:
		return "timeout"
	case errors.Is(r.Err, context.Canceled):
		return db.OutcomeInterrupted
	default:
		return "error"
	}
}
