package crawler

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// OutcomeAbandoned is the outcome of a request whose crawler died (kill -9,
// a lost machine) before it was answered (db.OutcomeAbandoned). Its
// completed_at is the time the dead crawler's lease expired: no crawler
// could send the host another request before then, so the request counts
// as in flight until that time, and no longer (the politeness audit reads
// it so).
const OutcomeAbandoned = db.OutcomeAbandoned

// abandon closes, inside the transaction that took over the lease key from
// the dead holder whose lease expired at expiredAt, the request rows that
// holder left unanswered: for a host lease, the host's open rows; for a
// cycle lease ("cycle:SITE"), the site's open rows, each closed at its
// host's lease expiry when the dead holder still held that lease, else at
// expiredAt. Only rows sent before the lease expired are closed: a row
// sent later came from a crawler that was still alive.
//
// With holder "" (a cycle found running under a lease given back, or a
// stopped cycle taken up again), the site's open rows are closed each at its host lease's release when that
// lease was given back too, else at expiredAt (now).
//
// A row closed so is in flight until its completed_at, as the log tells
// it: the host's next request must keep the gap after that time, not after
// the request's real end (a minute earlier, say). ended (when not nil) is
// given each host whose rows were closed and when; the taker holds back
// the host's next request until the gap in force has passed after it
// (hostState.after). A host whose lease the dead holder had given back
// keeps its next_at no earlier than that time plus Options.Delay for any
// other taker; one still held gets it when its lease is taken over.
func (c *Crawler) abandon(ctx context.Context, tx db.WriteTx, key, holder string, expiredAt time.Time, ended takeover) error {
	why := "not answered: the crawler " + holder + " that sent it stopped; closed when its lease expired"
	if holder == "" {
		why = "not answered: the crawler that sent it stopped; closed when its cycle was taken up again"
	}
	var (
		n   int64
		err error
	)
	if site, ok := strings.CutPrefix(key, "cycle:"); ok {
		var hosts []db.AbandonedHost
		if hosts, err = db.OpenRequestHosts(ctx, tx, site, holder, expiredAt); err != nil {
			return fmt.Errorf("close abandoned requests: %w", err)
		}
		for _, h := range hosts {
			ended.note(h.Host, h.CloseAt)
			if !h.Held || holder == "" {
				next := h.CloseAt.Add(c.opts.Delay).UTC().Truncate(time.Microsecond)
				if err := db.RaiseLeaseNext(ctx, tx, h.Host, next); err != nil {
					return fmt.Errorf("close abandoned requests: %w", err)
				}
			}
		}
		n, err = db.AbandonSiteRequests(ctx, tx, site, holder, OutcomeAbandoned, why, expiredAt)
	} else {
		n, err = db.AbandonHostRequests(ctx, tx, key, OutcomeAbandoned, why, expiredAt)
		if n > 0 {
			ended.note(key, expiredAt)
		}
	}
	if err != nil {
		return fmt.Errorf("close abandoned requests: %w", err)
	}
	if n > 0 {
		c.log.Info("requests of a crawler that stopped closed as abandoned", "lease", key, "from", holder,
			"requests", n, "expired_at", expiredAt.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// takeover is what a lease taken over from a crawler that stopped closed:
// for each host, the time its rows left open were closed at (their
// completed_at). A nil takeover notes nothing.
type takeover map[string]time.Time

// note records that host's open rows were closed at t.
func (e takeover) note(host string, t time.Time) {
	if e != nil && t.After(e[host]) {
		e[host] = t
	}
}
