package crawler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// The handover of a started site between crawlers of a fleet.
//
// A crawler of a fleet's `crawl --all` (ListAll on a shared engine)
// watches each site another crawler is on until its cycle ends. A crawler
// whose request slots hold its sites back (pace.saturated) shows it (a
// lease row busyKey(holder)) and reads the requests for its sites
// (grantLoop). A crawler that has gone through the list and has room for
// a site at its full pace (its own slots not holding its sites back) asks
// for a site of a crawler that shows it is saturated: a lease row
// wantKey(site), withdrawn after wantFor unanswered. The site asked for
// passes at its next gap, between two requests, once its last request's
// row is complete: one transaction takes the request (once:
// db.TakeLease), gives the site's cycle lease to the crawler that asked
// (db.GiveLease) and gives back the site's host leases with their
// next_at. The crawler that asked finds the cycle lease its own, resumes
// the cycle (its budget keeps counting in crawl_cycles) and takes the
// hosts' leases, so that its first request keeps the gap after the
// other's last. No request is ever in flight for the site while it
// passes; the reservation of every request checks the host lease and
// takes the cycle's next budget slot, and each request row names the node
// that sent it.

// wantKey is the lease key by which a crawler asks for a site another
// crawler of the fleet is on: a key that can never be a host name.
func wantKey(site string) string { return "want:" + site }

// busyKey is the lease key a crawler holds while its request slots hold
// its sites back (pace.saturated): only its sites are asked for, so that
// crawlers at their full pace are not asked in vain.
func busyKey(holder string) string { return "busy:" + holder }

const (
	// wantFor is how long a request for a site stands unanswered before
	// it is withdrawn, so that the room it holds goes to another site.
	wantFor = 2 * time.Second
	// wantAgain is how long after withdrawing it a watcher may ask again.
	wantAgain = 3 * time.Second
	// grantEvery is how often a saturated crawler reads the requests for
	// its sites.
	grantEvery = 250 * time.Millisecond
	// watchEvery is how often a crawler that has gone through the list
	// reads the leases of the sites it watches.
	watchEvery = 250 * time.Millisecond
)

// errNotWanted says a handover found the request for the site withdrawn:
// the site stays with its crawler.
var errNotWanted = errors.New("crawler: site no longer asked for")

// grantLoop, while ctx lasts, holds busyKey while this crawler is
// saturated, and then has the requests other crawlers make for its sites
// read every grantEvery.
func (c *Crawler) grantLoop(ctx context.Context) {
	defer close(c.grantDone)
	t := c.clock.NewTicker(grantEvery)
	defer t.Stop()
	shown := false // busyKey held
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		sat := c.pace.saturated()
		if sat != shown {
			now := c.now()
			err := c.w.LeaseStmt(ctx, func(tx db.WriteTx) error {
				if sat {
					return db.PutLease(ctx, tx, busyKey(c.holder), c.holder, now.Add(c.opts.LeaseTTL), now)
				}
				return db.ReleaseLease(ctx, tx, busyKey(c.holder), c.holder, now, time.Time{})
			})
			if err == nil {
				shown = sat
			} else if ctx.Err() == nil {
				c.log.Warn("saturation not shown to the fleet", "err", err)
			}
		}
		if sat {
			if err := c.readWants(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("requests for sites not read", "err", err)
			}
		}
	}
}

// readWants marks each site under way that another crawler asked for
// (siteRun.wanted) with the holder that asked.
func (c *Crawler) readWants(ctx context.Context) error {
	runs := map[string]*siteRun{}
	var keys []string
	c.runs.Range(func(k, v any) bool {
		key := wantKey(k.(string))
		runs[key] = v.(*siteRun)
		keys = append(keys, key)
		return true
	})
	if len(keys) == 0 {
		return nil
	}
	ls, err := c.store.Leases(ctx, keys)
	if err != nil {
		return err
	}
	now := c.now()
	for key, l := range ls {
		if l.Holder != "" && l.Holder != c.holder && l.ExpiresAt.After(now) {
			h := l.Holder
			runs[key].wanted.Store(&h)
		}
	}
	return nil
}

// handOverLeast is the fewest budget slots a site has left when it is
// handed over: the crawler that takes it reads the cycle's state again,
// a pause worth a few requests sent sooner, not one or two.
const handOverLeast = 4

// mayHandOver says the site may pass to another crawler now, at its gap:
// another asked for it, no request of it is under way (r.cur: a URL's
// retries stay with the crawler that began it), the next URL is no
// redirect's hop (a hop is not in the cycle's recorded links), and at
// least handOverLeast budget slots are left.
func (r *siteRun) mayHandOver() (string, bool) {
	to := r.wanted.Swap(nil)
	if to == nil || r.cur != nil || len(r.queue) == 0 || r.queue[0].redirectOf != nil || r.cy.Budget-r.cy.Spent < handOverLeast {
		return "", false
	}
	return *to, true
}

// handOver passes the site's cycle to the crawler to, which asked for it
// (wantKey), in one transaction: it takes that crawler's request (and
// fails if it was withdrawn), gives it the cycle's lease, gives back the
// hosts' leases with their next_at (its pages' link texts are the anchor
// sink's, written apart). It reports whether the site passed; if not,
// this crawler goes on with it.
func (r *siteRun) handOver(ctx context.Context, to string) bool {
	c := r.c
	err := c.w.Lease(ctx, func(tx db.WriteTx) error {
		now := c.now()
		ok, err := db.TakeLease(ctx, tx, wantKey(r.site), to, now)
		if err != nil || !ok {
			return errors.Join(err, errNotWanted)
		}
		if ok, err := db.GiveLease(ctx, tx, cycleKey(r.site), c.holder, to, now.Add(c.opts.LeaseTTL)); err != nil || !ok {
			return errors.Join(err, ErrLeaseLost)
		}
		for _, hs := range r.hosts.m {
			if hs.leased {
				if err := db.ReleaseLease(ctx, tx, hs.host, c.holder, now, hs.nextAt.UTC().Truncate(time.Microsecond)); err != nil {
					return fmt.Errorf("lease %s: %w", hs.host, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		if !errors.Is(err, errNotWanted) {
			c.log.Warn("site not handed over", "site", r.site, "to", to, "err", err)
		}
		return false
	}
	for _, hs := range r.hosts.m {
		hs.leased = false // given back
	}
	c.log.Info("site handed over", "site", r.site, "cycle", r.cy.ID, "to", to, "spent", r.cy.Spent)
	return true
}

// handedOver reports the result of a site handed over (handOver): its
// cycle goes on under another crawler.
func (r *siteRun) handedOver(ctx context.Context, to string) {
	c, res := r.c, r.res
	c.sitesRunning.Add(-1)
	c.runs.Delete(r.site)
	c.noteWork(r, 0)
	res.RobotsRequests = r.hosts.robotsSent
	r.hosts.close(ctx)
	c.verdicts.Delete(r.site)
	res.Status = SiteSkipped
	res.Reason = fmt.Sprintf("handed over at a gap to %s, which goes on with cycle %d (%d of %d page requests spent)",
		to, r.cy.ID, r.cy.Spent, r.cy.Budget)
	r.finish(*res)
}

// asking is a watcher's request for a site another crawler of the fleet
// is on (wantKey).
type asking struct {
	c    *Crawler
	site string
	at   time.Time // when asked; zero while not asking
	next time.Time // not asking again before then
}

// poll asks for the site when this crawler has gone through the list and
// has room for one more site at its full pace, and the site's crawler is
// saturated (busy: it holds busyKey); it withdraws a request that stood
// wantFor unanswered.
func (a *asking) poll(ctx context.Context, busy bool) {
	c := a.c
	now := c.now()
	switch {
	case !a.at.IsZero():
		if now.Sub(a.at) >= wantFor {
			a.withdraw(ctx)
			a.next = now.Add(wantAgain)
		}
	case !busy || now.Before(a.next) || !c.listDone.Load():
	default:
		// Room at the crawler's full pace (sites, not the work hasRoom
		// also counts): a crawler whose sites wait for its slots asks for
		// none, so that two crawlers never trade sites back and forth.
		if c.atWork()+int(c.wants.Add(1)) > c.SiteCapacity() || c.pace.saturated() {
			c.wants.Add(-1)
			return
		}
		err := c.w.LeaseStmt(ctx, func(tx db.WriteTx) error {
			return db.PutLease(ctx, tx, wantKey(a.site), c.holder, now.Add(c.opts.LeaseTTL), now)
		})
		if err != nil {
			c.wants.Add(-1)
			a.next = now.Add(wantAgain)
			return
		}
		a.at = now
	}
}

// withdraw gives the request back, if one stands.
func (a *asking) withdraw(ctx context.Context) {
	if a.at.IsZero() {
		return
	}
	a.at = time.Time{}
	a.c.wants.Add(-1)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.c.release(rctx, wantKey(a.site), time.Time{}); err != nil {
		a.c.log.Warn("request for a site not withdrawn", "site", a.site, "err", err)
	}
}

// granted forgets the request, answered: the other crawler took it.
func (a *asking) granted() {
	if !a.at.IsZero() {
		a.at = time.Time{}
		a.c.wants.Add(-1)
	}
}
