package crawler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
)

// cycle is the crawl cycle a site's crawl spends its budget in.
type cycle struct {
	ID      int64
	Resumed bool // an interrupted cycle taken up again (its budget keeps counting)
	First   bool // the site's first cycle: no earlier one has validators
	// Delay is the least gap between requests to one host in this cycle:
	// the --delay recorded when the cycle started, or this crawler's
	// --delay if larger. A resumed cycle never goes faster than it started,
	// so its recorded delay stays true for all its requests.
	Delay time.Duration
	// Budget is the cycle's budget and Spent the slots reserved when it was
	// taken up; the database stays the authority on both.
	Budget, Spent int
	// Started is when the cycle started (a resumed one: its first start).
	Started time.Time
	// ended are the hosts whose rows the cycle lease's takeover closed,
	// and when (see abandon): the site's hosts keep their gap after it.
	ended takeover
	// refused are the URLs robots.txt refused that are not recorded yet:
	// written with the site's next completion or the cycle's end, up to
	// db.MaxRobotsRefusals per cycle (refusedN counts those taken).
	refused  []db.RobotsRefusal
	refusedN int
}

// noteRefused holds f, a URL robots.txt refused by the rule of snapshot
// sid (0: none stored), for the record (cycle.refused).
func (cy *cycle) noteRefused(f db.RobotsRefusal, sid int64) {
	if cy.refusedN >= db.MaxRobotsRefusals {
		return
	}
	cy.refusedN++
	if sid != 0 {
		f.RobotsSnapshotID = &sid
	}
	cy.refused = append(cy.refused, f)
}

// takeRefused returns the refusals held and holds none.
func (cy *cycle) takeRefused() []db.RobotsRefusal {
	out := cy.refused
	cy.refused = nil
	return out
}

// ReasonUnreachable begins the reason of a cycle that sent no page request
// because no robots.txt answer came at all (a DNS error, a connection
// refused, a timeout): the network's failure or ours, not a visit. Such a
// cycle ends stopped, so the site is not left for the recrawl interval;
// it is taken up again after a backoff (unreachableRetry).
const ReasonUnreachable = "robots.txt unreachable, not counted as a visit: "

// unreachableRetry is when a site whose cycle failed at failed, with
// ReasonUnreachable, is tried again: after as long again as the cycle has
// been failing since it started, at least RobotsRetry and at most a day. A
// backoff in minutes that doubles with each failed try (10, 20, 40 min...),
// and never the recrawl interval.
func unreachableRetry(started, failed time.Time) time.Time {
	return failed.Add(min(max(failed.Sub(started), RobotsRetry), 24*time.Hour))
}

// errSkip says why a site gets no cycle now.
type errSkip struct{ reason string }

func (e *errSkip) Error() string { return e.reason }

// cycleKey is the lease key guarding a site's cycles.
func cycleKey(site string) string { return "cycle:" + site }

// startCycle takes the site's cycle lease and starts a cycle: a new one
// when the last cycle started more than RecrawlAfter ago, or the last one
// again when it was interrupted (stopped, or running under a crawler whose
// lease expired) before spending its budget. It returns *errSkip when the
// site was visited recently or another crawler is on it; a fleet's crawler
// (ListAll on a shared engine) watches such a site until its cycle ends
// instead, and takes it up when it is handed over (handover.go). waiting, when not
// nil, is called before it waits for another crawler's lease. The lease of
// first (the start URL's host, held by the caller in this process) is
// taken in the same transaction when no other crawler holds it: one write
// fewer before the site's first request (db.Writer.Refusable). Where
// starts are batched (db.Traits.Batched), a site that is due and whose
// lease no one holds, the usual case, starts in one statement instead:
// startCycleLeased.
func (c *Crawler) startCycle(ctx context.Context, site string, waiting func(), first *hostState) (*cycle, error) {
	ended := takeover{} // the hosts whose rows a takeover closed, and when
	// A busy lease is watched (a read every second or so): when its
	// holder renews it, that crawler is alive and on the site, and when it
	// releases it, the site was just crawled (openCycle then says so);
	// when it expires unrenewed, its holder died (kill -9, a lost machine)
	// and its cycle is taken over. Either way a fleet's second crawler
	// learns within one heartbeat that a site is taken, not a lease TTL;
	// where every request renews its host's lease
	// (db.Traits.LeaseEveryRequest), within about a gap, from the start
	// host's lease.
	var (
		firstBusy time.Time
		cy        *cycle
		busy      time.Time
		hostSeen  time.Time // the start host's lease as first seen held by the site's holder
		// A fleet's crawler watches the site to its cycle's end, and asks
		// for it once it has gone through the list (handover.go).
		fleet   = c.fleetWatch.Load()
		ask     = asking{c: c, site: site}
		watched string // the holder of the site's lease, as last read
	)
	defer ask.withdraw(ctx)
	// Where starts are batched, a site that is due starts in a batch of sites
	// starting at once, in one statement (startCycleLeased). When another
	// crawler of the fleet holds its lease, a read shared with the other
	// sites starting (leaseExpiry) says so, rather than a transaction that
	// fails to take it.
	if c.traits.Batched {
		if cy := c.startCycleLeased(ctx, site, first); cy != nil {
			return cy, nil
		}
		if exp, held, err := c.leaseExpiry(ctx, cycleKey(site)); err == nil && held && exp.After(c.now()) {
			busy = exp
		}
	}
	for {
		if busy.IsZero() {
			// The cycle is opened in the lease's own transaction: one
			// write fewer before a site's first request, and a site
			// visited recently leaves its lease as it was.
			var (
				hostGot  bool
				hostNext time.Time
				err      error
			)
			asked := c.now()
			_, busy, err = c.acquire(ctx, cycleKey(site), 0, ended, func(tx db.WriteTx) (err error) {
				hostGot = false
				if cy, err = c.openCycle(ctx, tx, site, ended); err != nil || first == nil || first.leased {
					return err
				}
				hostGot, hostNext, _, err = c.takeLease(ctx, tx, first.host, c.opts.Delay, asked, asked.Add(c.opts.LeaseTTL), ended)
				return err
			})
			if err != nil {
				return nil, err
			}
			if busy.IsZero() {
				if hostGot {
					first.leased, first.leaseUntil = true, asked.Add(c.opts.LeaseTTL)
					if hostNext.After(first.nextAt) {
						first.nextAt = hostNext
					}
				}
				break
			}
		}
		if !fleet && !firstBusy.IsZero() && busy.After(firstBusy) {
			return nil, &errSkip{"another crawler is on it"}
		}
		if firstBusy.IsZero() {
			firstBusy = busy
		}
		if waiting != nil {
			waiting()
		}
		for {
			// Every watcher of the crawler wakes on the second (on the
			// quarter second once a fleet's crawler has gone through the
			// list, to take a site handed over soon), so that their reads
			// go to the database together (leaseReads).
			tick := time.Second
			if fleet && c.listDone.Load() {
				tick = watchEvery
			}
			wait := min(c.until(busy)+50*time.Millisecond, c.untilNext(tick))
			if err := c.sleep(ctx, wait); err != nil {
				return nil, err
			}
			// Where each request renews its host's lease: when the
			// holder of the site's lease has renewed the start host's
			// since this crawler first looked, it is alive and on the
			// site. That takes about a gap, where the site lease's renewal
			// takes up to a heartbeat (a third of --lease-ttl): watched
			// that long, the sites another crawler took all woke at its
			// end, each to run a lease transaction that rolled back, as
			// that crawler's last sites ended (in the fleet benchmark,
			// 1,000 sites at 1 s: up to 0.04 rollbacks per request, and
			// up to 0.9 s from the last request to the crawlers' exit).
			// Both leases are read in the same query.
			keys := []string{cycleKey(site)}
			if fleet && watched != "" {
				// Whether the site's crawler shows it is saturated
				// (handover.go).
				keys = append(keys, busyKey(watched))
			} else if !fleet && c.traits.LeaseEveryRequest && first != nil {
				keys = append(keys, first.host)
			}
			leases, err := c.leaseReads.getAll(ctx, keys...)
			if err != nil {
				return nil, fmt.Errorf("crawler: %w", err)
			}
			l, held := leases[cycleKey(site)]
			if held && l.Holder == c.holder {
				ask.granted()
				break // handed over to this crawler: take it up
			}
			if !fleet && held && l.ExpiresAt.After(firstBusy) {
				return nil, &errSkip{"another crawler is on it"}
			}
			if fleet && held && l.Holder == "" {
				// Given back: its cycle ended, most often. A cycle
				// done is skipped on a read rather than on a
				// transaction that would roll back.
				if skip := c.endedElsewhere(ctx, site); skip != nil {
					return nil, skip
				}
			}
			if !held || !l.ExpiresAt.After(c.now()) {
				break // released, or expired: try again
			}
			if fleet {
				b, ok := leases[busyKey(watched)]
				saturated := ok && watched == l.Holder && b.Holder == l.Holder && b.ExpiresAt.After(c.now())
				busy, watched = l.ExpiresAt, l.Holder
				ask.poll(ctx, saturated)
				continue
			}
			if len(keys) == 2 {
				h, ok := leases[first.host]
				switch {
				case !ok || h.Holder != l.Holder || h.Holder == "":
				case hostSeen.IsZero():
					hostSeen = h.ExpiresAt
				case h.ExpiresAt.After(hostSeen):
					return nil, &errSkip{"another crawler is on it"}
				}
			}
		}
		busy = time.Time{}
	}
	if len(ended) > 0 {
		cy.ended = ended
	}
	return cy, nil
}

// endedElsewhere returns the skip of a site whose last cycle, started
// less than RecrawlAfter ago, is done (another crawler of the fleet
// crawled it), read outside any transaction; nil when it is not, or the
// read failed (the lease's transaction then judges: openCycle).
func (c *Crawler) endedElsewhere(ctx context.Context, site string) *errSkip {
	cy, err := db.LastCycle(ctx, c.store.AutoCommit(), site)
	if err != nil || cy.Status != db.CycleDone || c.now().Sub(cy.StartedAt) >= c.opts.RecrawlAfter {
		return nil
	}
	return &errSkip{fmt.Sprintf("crawled by another crawler of the fleet, in cycle %d", cy.ID)}
}

// Batched starts (db.Traits.Batched: startCycleLeased).
const (
	// startBatch bounds the sites started in one statement.
	startBatch = 128
	// startBatches bounds the batches running at once (each holds one of
	// the writer's lease turns while it runs: db.Writer.Turn). At a crawl's start they may
	// take every turn: the lease of a host a site reaches later then waits
	// for a batch to end (tens of milliseconds).
	startBatches = 2
)

// cycleStarts batches the starts of due sites (db.Traits.Batched): a site
// starting joins the next batch, and up to startBatches batches run at
// once, each one statement (db.Store.StartCyclesLeased). Thousands of
// sites starting at once each ran a statement of their own, a round trip
// and a commit (with its WAL flush) each: 1,000 sites' starts lasted 2 s
// on a 2-core machine, more with a fleet's second crawler, which runs
// them for the sites the first took as well. The first sites start alone
// (a batch runs as soon as a turn is free), the next ones together.
type cycleStarts struct {
	mu      sync.Mutex
	pending []*cycleStartReq
	running int // batches running (runStarts)
}

// cycleStartReq is one site's start in a batch of cycleStarts; done is
// closed once it ran.
type cycleStartReq struct {
	site db.CycleSite
	done chan struct{}
	r    db.CycleStarted
	exp  time.Time // the leases' expiry, when taken
	err  error
}

// startCycleLeased starts the site's cycle, in a batch of
// sites starting at once (cycleStarts), when no one holds its lease and
// its last cycle is neither running nor recent (a site's first cycle, and
// its next once it is due): it returns the cycle, having leased first's
// host with it when no one held that either. Otherwise, or when the
// batch failed, it returns a nil cycle, and the site's start is left to
// startCycle's transaction, which judges every case.
func (c *Crawler) startCycleLeased(ctx context.Context, site string, first *hostState) *cycle {
	q := &cycleStartReq{site: db.CycleSite{Site: site, LeaseKey: cycleKey(site)}, done: make(chan struct{})}
	if first != nil && !first.leased {
		q.site.Host = first.host
	}
	cs := &c.starts
	cs.mu.Lock()
	cs.pending = append(cs.pending, q)
	if cs.running < startBatches {
		cs.running++
		go c.runStarts()
	}
	cs.mu.Unlock()
	// Waited for whatever ctx says: once in a batch, the start may have
	// been committed, and its cycle is the caller's to end.
	<-q.done
	if q.err != nil {
		if ctx.Err() == nil {
			c.log.Debug("batched start failed: starting alone", "site", site, "err", q.err)
		}
		return nil
	}
	if q.r.CycleID == 0 {
		return nil
	}
	if q.r.HostLeased {
		first.leased, first.leaseUntil = true, q.exp
		if q.r.HostNext.After(first.nextAt) {
			first.nextAt = q.r.HostNext
		}
	}
	// (The batch's leases expire LeaseTTL after its cycles' start.)
	return &cycle{ID: q.r.CycleID, First: !q.r.HadCycle, Delay: c.opts.Delay, Budget: Budget, Started: q.exp.Add(-c.opts.LeaseTTL)}
}

// runStarts runs batches of the starts pending until none is.
func (c *Crawler) runStarts() {
	cs := &c.starts
	for {
		cs.mu.Lock()
		batch := takeStarts(&cs.pending, startBatch)
		if len(batch) == 0 {
			cs.running--
			cs.mu.Unlock()
			return
		}
		cs.mu.Unlock()
		c.runStartBatch(batch)
	}
}

// takeStarts takes up to n starts from pending, in order, for a batch: a
// site, or a start host, already in the batch waits for the next one (the
// statement leases each row once).
func takeStarts(pending *[]*cycleStartReq, n int) []*cycleStartReq {
	var (
		batch []*cycleStartReq
		left  = (*pending)[:0]
		in    = map[string]bool{}
	)
	for _, q := range *pending {
		dup := in[q.site.LeaseKey] || (q.site.Host != "" && in["host:"+q.site.Host])
		if len(batch) == n || dup {
			left = append(left, q)
			continue
		}
		in[q.site.LeaseKey] = true
		if q.site.Host != "" {
			in["host:"+q.site.Host] = true
		}
		batch = append(batch, q)
	}
	clear((*pending)[len(left):])
	*pending = left
	return batch
}

// runStartBatch runs one batch of starts and answers its sites.
func (c *Crawler) runStartBatch(batch []*cycleStartReq) {
	// (Shared by callers whose contexts differ: bounded by its own.)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := db.CycleStarts{Holder: c.holder, Node: c.opts.Node, Budget: Budget, DelayMS: c.opts.Delay.Milliseconds(),
		Sites: make([]db.CycleSite, len(batch))}
	for i, q := range batch {
		b.Sites[i] = q.site
	}
	var rs []db.CycleStarted
	release, err := c.w.Turn(ctx)
	if err == nil {
		b.Now = c.now()
		b.Expires, b.Cutoff = b.Now.Add(c.opts.LeaseTTL), b.Now.Add(-c.opts.RecrawlAfter)
		rs, err = c.store.StartCyclesLeased(ctx, b)
		release()
	}
	for i, q := range batch {
		if err != nil {
			q.err = err
		} else {
			q.r, q.exp = rs[i], b.Expires
		}
		close(q.done)
	}
}

// untilNext is the time until the next whole multiple of d on the
// crawler's clock.
func (c *Crawler) untilNext(d time.Duration) time.Duration {
	now := c.clock.Now()
	return now.Truncate(d).Add(d).Sub(now)
}

// leaseExpiry returns when the lease key expires, and whether there is one
// (db.Store.LeaseExpiry), read with the keys other callers ask for at the
// same time (Crawler.leaseReads). A crawler of a fleet that finds half the
// crawl list taken watches half the list: read one by one, those leases
// were most of the database's transactions (about 400 reads a second per
// crawler at 1,000 sites).
func (c *Crawler) leaseExpiry(ctx context.Context, key string) (time.Time, bool, error) {
	l, held, err := c.leaseReads.get(ctx, key)
	return l.ExpiresAt, held, err
}

// openCycle starts the site's cycle in tx, which has just taken the
// site's lease (see startCycle), and returns it, or *errSkip when the site
// was visited recently. A cycle found running lost its crawler, and a
// stopped one taken up again may have lost its: the rows either left open
// are closed as abandoned before the cycle goes on (ended is abandon's).
func (c *Crawler) openCycle(ctx context.Context, tx db.WriteTx, site string, ended takeover) (*cycle, error) {
	var (
		id            int64
		status        string
		started       time.Time
		budget, spent int
		delayMS       int64
		lastReason    string
		finished      time.Time
	)
	last, err := db.LastCycle(ctx, tx, site)
	if err == nil {
		id, status, started, budget, spent, delayMS = last.ID, last.Status, last.StartedAt, last.Budget, last.Spent, last.DelayMS
		lastReason = last.Reason
		if last.FinishedAt != nil {
			finished = *last.FinishedAt
		}
	}
	resumedDelay := max(c.opts.Delay, time.Duration(delayMS)*time.Millisecond)
	now := c.now()
	recent := err == nil && now.Sub(started) < c.opts.RecrawlAfter
	switch {
	case err != nil && !errors.Is(err, db.ErrNotFound):
		return nil, err
	case err == nil && status == db.CycleRunning:
		// We hold the site's lease, so its last holder is gone. It may
		// have given the lease back without ending the cycle (its disk
		// full: the end failed, the release did not), leaving rows open
		// that no takeover closed (a takeover of an expired lease closed
		// its holder's already): closed now, each at its host lease's
		// release when given back, else now.
		if err := c.abandon(ctx, tx, cycleKey(site), "", now, ended); err != nil {
			return nil, err
		}
		if err := db.SetCycleNode(ctx, tx, id, c.opts.Node); err != nil {
			return nil, err
		}
		return &cycle{ID: id, Resumed: true, Delay: resumedDelay, Budget: budget, Spent: spent, Started: started}, nil
	case recent && status == db.CycleStopped && spent == 0 && strings.HasPrefix(lastReason, ReasonUnreachable) &&
		now.Before(unreachableRetry(started, finished)):
		return nil, &errSkip{fmt.Sprintf("%s at %s (%s); tried again from %s", strings.TrimSuffix(ReasonUnreachable, ": "),
			finished.UTC().Format("2006-01-02 15:04:05 UTC"), strings.TrimPrefix(lastReason, ReasonUnreachable),
			unreachableRetry(started, finished).UTC().Format("2006-01-02 15:04:05 UTC"))}
	case recent && status == db.CycleStopped && spent < budget:
		// A stopped cycle may have rows open too: its crawler recorded
		// the end and gave its leases back although a request's
		// completion failed (its disk full). Resumed, the cycle's end no
		// longer bounds them, so they are closed now, as for a cycle
		// found running under a lease given back.
		if err := c.abandon(ctx, tx, cycleKey(site), "", now, ended); err != nil {
			return nil, err
		}
		if err := db.ResumeCycle(ctx, tx, id, c.opts.Node); err != nil {
			return nil, err
		}
		return &cycle{ID: id, Resumed: true, Delay: resumedDelay, Budget: budget, Spent: spent, Started: started}, nil
	case recent:
		return nil, &errSkip{fmt.Sprintf("visited %s in cycle %d, less than --recrawl-after %s ago; it may be visited again from %s",
			human.Time(started), id, days(c.opts.RecrawlAfter),
			human.Time(started.Add(c.opts.RecrawlAfter)))}
	}
	first := errors.Is(err, db.ErrNotFound) // the site has no cycle yet
	id, err = db.InsertCycle(ctx, tx, site, c.opts.Node, now, Budget, c.opts.Delay.Milliseconds())
	if err != nil {
		return nil, err
	}
	return &cycle{ID: id, First: first, Delay: c.opts.Delay, Budget: Budget, Started: now}, nil
}

// endCycle records how the cycle ended and gives back the site's lease and
// the leases of hosts (the hosts the cycle still holds), in the same write:
// one write at a site's end rather than one per lease. When last is not
// nil, the completion of the cycle's last request goes first in that write
// (see siteRun.handle). (Lease
// rows are what the crawlers of a fleet contend for, but these are held by
// this crawler, unexpired: another crawler's transactions take only free
// or expired leases, so the group waits on none of them; at most on this
// crawler's heartbeat, a moment.) When the write fails, the leases are
// left held, and the caller's hosts.close gives the hosts' back one by
// one.
func (c *Crawler) endCycle(ctx context.Context, site string, cy *cycle, status, reason string, hosts *hostSet, last *completion) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var (
		lastWrite func(context.Context, db.WriteTx) error
		lastPipe  func(*db.Pipeline)
	)
	if last != nil {
		lastWrite, lastPipe = c.completionWrite(last)
	}
	refused := cy.takeRefused() // the URLs robots.txt refused, not yet written
	write := func(tx db.WriteTx) error {
		if last != nil {
			if err := lastWrite(ctx, tx); err != nil {
				return err
			}
		}
		now := c.now()
		if err := db.EndCycle(ctx, tx, cy.ID, site, status, reason, now); err != nil {
			return err
		}
		if err := db.InsertRobotsRefusals(ctx, tx, refused); err != nil {
			return fmt.Errorf("robots.txt refusals: %w", err)
		}
		for _, hs := range hosts.m {
			if hs.leased {
				if err := db.ReleaseLease(ctx, tx, hs.host, c.holder, now, hs.nextAt.UTC().Truncate(time.Microsecond)); err != nil {
					return fmt.Errorf("lease %s: %w", hs.host, err)
				}
			}
		}
		return db.ReleaseLease(ctx, tx, cycleKey(site), c.holder, now, time.Time{})
	}
	// Its statements need no answer: on an engine that pipelines, they go
	// with the completions of its group.
	pipe := func(p *db.Pipeline) func() error {
		if last != nil {
			lastPipe(p)
		}
		now := c.now()
		p.EndCycle(cy.ID, site, status, reason, now)
		p.RobotsRefusals(refused)
		for _, hs := range hosts.m {
			if hs.leased {
				p.ReleaseLease(hs.host, c.holder, now, hs.nextAt.UTC().Truncate(time.Microsecond))
			}
		}
		p.ReleaseLease(cycleKey(site), c.holder, now, time.Time{})
		return func() error { return nil }
	}
	// The end alone is the crawler's own state; with a completion it is
	// answered as every completion is, once durable.
	end := c.w.End
	if last != nil {
		end = c.w.Complete
	}
	if err := end(ctx, write, pipe); err != nil {
		return fmt.Errorf("crawler: end cycle %d: %w", cy.ID, err)
	}
	c.store.SealSoon() // seal the cycle's records now, if a sealer runs
	for _, hs := range hosts.m {
		hs.leased = false // given back
	}
	return nil
}

// resumeState reads what an interrupted cycle did already: the URLs it
// requested, and the same-site links of the pages it fetched.
func (c *Crawler) resumeState(ctx context.Context, site string, cy *cycle) (seen map[string]bool, links []string, err error) {
	var urls, found, recorded []string
	err = c.retry(ctx, func() (err error) {
		if urls, err = c.store.CyclePageURLs(ctx, cy.ID); err != nil {
			return err
		}
		// The links whose texts were stored, and those recorded as found
		// (the texts a killed crawler had not written are lost: see anchorSink).
		if found, err = c.store.CycleLinksTo(ctx, cy.ID, site); err != nil {
			return err
		}
		recorded, err = c.store.CycleLinksFound(ctx, cy.ID)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("crawler: resume cycle %d: %w", cy.ID, err)
	}
	seen = make(map[string]bool, len(urls))
	for _, u := range urls {
		seen[u] = true
	}
	for _, u := range append(recorded, found...) {
		if !seen[u] {
			links = append(links, u)
		}
	}
	return seen, links, nil
}

// days writes an interval as the --recrawl-after flag takes it: 7d for
// whole days, a Go duration otherwise.
func days(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
