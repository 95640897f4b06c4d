package crawler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/robotstxt"
)

// robotsEntry is the robots.txt in force for one origin.
type robotsEntry struct {
	Origin     string
	SnapshotID int64
	FetchedAt  time.Time
	Status     int
	Outcome    string // db.RobotsParsed, RobotsAllowAll, RobotsDisallowAll
	FinalURL   string
	Error      string
	Bytes      int
	Sha256     string
	rules      *robotstxt.Robots // for RobotsParsed
	validUntil time.Time
}

// decide answers for target (an absolute URL) under this snapshot.
func (e *robotsEntry) decide(agent, target string) robotstxt.Decision {
	switch e.Outcome {
	case db.RobotsParsed:
		return e.rules.Decide(agent, target)
	case db.RobotsAllowAll:
		return robotstxt.AllowAll()
	default:
		return robotstxt.DisallowAll()
	}
}

// crawlDelay is the Crawl-delay asked for us, capped at MaxCrawlDelay.
func (e *robotsEntry) crawlDelay() time.Duration {
	if e.Outcome != db.RobotsParsed {
		return 0
	}
	d, ok := e.rules.CrawlDelay(robotstxt.ProductToken)
	if !ok || d < 0 {
		return 0
	}
	return min(d, MaxCrawlDelay)
}

// fresh reports whether the entry may still serve at now.
func (e *robotsEntry) fresh(now time.Time) bool {
	return now.Before(e.validUntil) && now.Sub(e.FetchedAt) < SnapshotMaxAge
}

// validity is how long a snapshot with this status and outcome serves:
// 24 hours for a real answer (2xx, 4xx including 401 and 403), RobotsRetry
// for an unreachable robots.txt (429, 5xx, network errors), which is tried
// again later.
func validity(status int) time.Duration {
	if status >= 200 && status < 500 && status != http.StatusTooManyRequests {
		return SnapshotMaxAge
	}
	return RobotsRetry
}

// outcomeOf maps a final robots.txt status to its outcome (RFC 9309 2.3.1,
// with 401 and 403 as disallow all: the bot never goes past a login).
func outcomeOf(status int) string {
	switch {
	case status >= 200 && status < 300:
		return db.RobotsParsed
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return db.RobotsDisallowAll
	case status == http.StatusTooManyRequests:
		return db.RobotsDisallowAll
	case status >= 400 && status < 500:
		return db.RobotsAllowAll
	default: // 3xx left over, 5xx, no answer
		return db.RobotsDisallowAll
	}
}

// originOf returns scheme://host:port of u, with the default port written.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + u.Hostname() + ":" + port
}

// robotsFor returns the robots.txt in force for origin: from memory, from
// the newest usable snapshot in the database, or fetched now (through the
// same politeness, gate and log as pages). cycleID may be nil.
func (c *Crawler) robotsFor(ctx context.Context, cycleID *int64, site, origin string, hosts *hostSet) (*robotsEntry, error) {
	now := c.clock.Now()
	if hosts != nil {
		hosts.origins[origin] = true
	}
	c.robotsMu.Lock()
	e := c.robots[origin]
	c.robotsMu.Unlock()
	if e != nil && e.fresh(now) {
		return e, nil
	}
	e, err := c.loadSnapshot(ctx, origin)
	if err != nil {
		return nil, err
	}
	if e == nil || !e.fresh(now) {
		e, err = c.fetchRobots(ctx, cycleID, site, origin, hosts)
		if err != nil {
			return nil, err
		}
	}
	c.robotsMu.Lock()
	c.robots[origin] = e
	c.robotsMu.Unlock()
	return e, nil
}

// loadSnapshot reads the newest snapshot of origin, or nil. On an engine
// whose reads are worth batching (db.Traits.Batched) it is read with the
// origins other sites ask for at the same time (Crawler.robotsReads):
// sites starting at once each read their start origin's snapshot, and
// those reads would take the pool's connections from the writer and the
// policy gate's reads.
func (c *Crawler) loadSnapshot(ctx context.Context, origin string) (*robotsEntry, error) {
	var (
		sn  *db.RobotsSnapshot
		err error
	)
	if c.traits.Batched {
		var found bool
		if sn, found, err = c.robotsReads.get(ctx, origin); err == nil && !found {
			return nil, nil
		}
	} else {
		err = c.retry(ctx, func() (err error) {
			sn, err = c.store.LatestRobotsSnapshot(ctx, origin)
			if errors.Is(err, db.ErrNotFound) {
				return nil
			}
			return err
		})
		if sn == nil && err == nil {
			return nil, nil
		}
		if errors.Is(err, db.ErrNotFound) {
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("crawler: robots snapshot: %w", err)
	}
	body := sn.Body
	e := robotsEntry{SnapshotID: sn.ID, FetchedAt: sn.FetchedAt, Status: sn.Status, Outcome: sn.Outcome,
		FinalURL: sn.FinalURL, Sha256: sn.Sha256, Error: sn.Error}
	e.Origin = origin
	e.FetchedAt = e.FetchedAt.UTC()
	e.Bytes = len(body)
	e.validUntil = e.FetchedAt.Add(validity(e.Status))
	if e.Outcome == db.RobotsParsed {
		e.rules = robotstxt.Parse(body)
	}
	return &e, nil
}

// RobotsResult is what FetchRobots saw.
type RobotsResult struct {
	Origin     string
	SnapshotID int64
	FetchedAt  time.Time
	Status     int // the final status, 0 when no answer
	Outcome    string
	FinalURL   string
	Error      string
	Bytes      int
	Sha256     string
	CrawlDelay time.Duration // capped at MaxCrawlDelay; 0 when none
	// Decision is the answer for the URL FetchRobots was given.
	Decision robotstxt.Decision
}

// FetchRobots fetches the robots.txt of rawURL's origin now, exactly as the
// crawler would (gate, lease, gap, request log), stores the snapshot, and
// says what it means for rawURL. It returns ErrExcluded when the site is
// excluded; nothing is sent then.
func (c *Crawler) FetchRobots(ctx context.Context, rawURL string) (*RobotsResult, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("crawler: %q is not an http(s) URL: %w", rawURL, policy.ErrBadSite)
	}
	site, err := policy.SiteOf(rawURL)
	if err != nil {
		return nil, err
	}
	host, err := policy.HostOf(u.Hostname())
	if err != nil {
		return nil, err
	}
	if p := u.Port(); p != "" {
		u.Host = host + ":" + p
	} else {
		u.Host = host
	}
	v, err := c.askGate(ctx, site)
	if err != nil {
		return nil, err
	}
	if v.Excluded {
		return nil, fmt.Errorf("%w: %s", ErrExcluded, site)
	}
	hosts := c.newHostSet(0)
	defer hosts.close(ctx)
	origin := originOf(u)
	e, err := c.fetchRobots(ctx, nil, site, origin, hosts)
	if err != nil {
		return nil, err
	}
	hosts.origins[origin] = true // bounded cache: forgotten when hosts close
	c.robotsMu.Lock()
	c.robots[origin] = e
	c.robotsMu.Unlock()
	return &RobotsResult{
		Origin: e.Origin, SnapshotID: e.SnapshotID, FetchedAt: e.FetchedAt, Status: e.Status, Outcome: e.Outcome,
		FinalURL: e.FinalURL, Error: e.Error, Bytes: e.Bytes, Sha256: e.Sha256, CrawlDelay: e.crawlDelay(),
		Decision: e.decide(robotstxt.ProductToken, u.String()),
	}, nil
}

// fetchRobots GETs origin/robots.txt, following up to MaxRedirects hops
// within the site (each hop a logged request of its own), and stores the
// snapshot with the final hop's completion. The hosts it uses are taken
// from hosts.
func (c *Crawler) fetchRobots(ctx context.Context, cycleID *int64, site, origin string, hosts *hostSet) (*robotsEntry, error) {
	target := origin + "/robots.txt"
	originHost := ""
	if ou, err := url.Parse(origin); err == nil {
		originHost = ou.Hostname()
	}
	var redirectOf *int64
	for hop := 0; ; hop++ {
		tu, _ := url.Parse(target)
		cur := hosts.get(tu.Hostname())
		row := &reqRow{CycleID: cycleID, Site: site, Host: cur.host, Origin: originOf(tu), URL: target,
			Purpose: db.PurposeRobots, RedirectOf: redirectOf, Rule: robotstxt.ReasonRobotsTxt}
		res, err := c.exchange(ctx, cur, row)
		if err != nil {
			return nil, err
		}
		hosts.robotsSent++
		now := res.completedAt
		snap := &db.RobotsSnapshot{Origin: origin, FetchedAt: now, Status: res.resp.Status, FinalURL: target}
		k := res.completion()
		final := true
		var next string
		switch {
		case res.resp.Err != nil:
			snap.Outcome = db.RobotsDisallowAll
			snap.Error = "unreachable: " + errText(res.resp.Err)
			k.Outcome = outcomeError(res.resp)
		case res.resp.Status >= 300 && res.resp.Status < 400:
			k.Outcome = "redirect"
			loc, why := c.nextHop(res.resp, tu, site)
			switch {
			case why != "":
				snap.Outcome = db.RobotsDisallowAll
				snap.Error = "redirect not followed: " + why
			case hop+1 > MaxRedirects:
				// RFC 9309 2.3.1.2: more than five redirects may be taken
				// as unavailable.
				snap.Outcome = db.RobotsAllowAll
				snap.Error = "more than 5 redirects"
			default:
				final, next = false, loc
			}
		default:
			snap.Outcome = outcomeOf(res.resp.Status)
			k.Outcome = "ok"
			if res.resp.Status >= 400 {
				k.Outcome = "unavailable"
				if snap.Outcome == db.RobotsDisallowAll {
					k.Outcome = "unreachable"
				}
			}
			if res.resp.Truncated {
				snap.Error = "body longer than 500 KiB: the first 500 KiB are used"
			}
		}
		if k.Outcome == db.OutcomeInterrupted {
			// Cut short by this crawl's own stop, not by the site: no
			// snapshot is kept (an unreachable one would leave the site
			// for RobotsRetry), and the next crawl fetches it again.
			if err := c.finish(ctx, cur, res, k); err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, context.Canceled
		}
		if snap.Outcome == db.RobotsParsed {
			snap.Body = res.resp.Body
		}
		sum := sha256.Sum256(snap.Body)
		snap.Sha256 = hex.EncodeToString(sum[:])
		var rules *robotstxt.Robots
		if final {
			k.Snapshot = snap
			if snap.Outcome == db.RobotsParsed {
				rules = robotstxt.Parse(snap.Body)
				// The Crawl-delay applies from this very request on: the
				// gap after it is scheduled (and shared with the fleet)
				// with the delay the file asks for.
				if d, ok := rules.CrawlDelay(robotstxt.ProductToken); ok && d > 0 && cur.host == originHost {
					cur.gap = max(cur.gap, min(d, MaxCrawlDelay))
				}
			}
		}
		if err := c.finish(ctx, cur, res, k); err != nil {
			return nil, err
		}
		if !final {
			id := row.ID
			redirectOf = &id
			target = next
			continue
		}
		e := &robotsEntry{Origin: origin, SnapshotID: snap.ID, FetchedAt: snap.FetchedAt, Status: snap.Status,
			Outcome: snap.Outcome, FinalURL: snap.FinalURL, Error: snap.Error, Bytes: len(snap.Body), Sha256: snap.Sha256,
			validUntil: snap.FetchedAt.Add(validity(snap.Status))}
		if res.resp.Err != nil {
			e.validUntil = snap.FetchedAt.Add(RobotsRetry)
		}
		e.rules = rules
		c.log.Info("robots.txt fetched", "origin", origin, "status", snap.Status, "outcome", snap.Outcome, "snapshot", snap.ID)
		return e, nil
	}
}
