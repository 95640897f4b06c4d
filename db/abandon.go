package db

import (
	"context"
	"time"
)

// AbandonedHost is a host with requests a stopped crawler left open, and
// the time a takeover closes them at (see AbandonSiteRequests).
type AbandonedHost struct {
	Host    string
	CloseAt time.Time
	// Held says the stopped crawler still holds the host's lease: its
	// rows close at that lease's expiry, and whoever takes the lease over
	// keeps the gap after it (next_at).
	Held bool
}

// OpenRequestHosts returns the hosts of site with requests sent at or
// before expiredAt and never completed, in host order, each with the time
// AbandonSiteRequests closes them at: the expiry of the host's lease when
// holder still holds it, else expiredAt. It runs in a crawler's write
// transaction, before AbandonSiteRequests.
func OpenRequestHosts(ctx context.Context, tx WriteTx, site, holder string, expiredAt time.Time) ([]AbandonedHost, error) {
	var out []AbandonedHost
	after := ""
	for {
		var host string
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MIN(host), '') FROM requests WHERE site = ? AND completed_at IS NULL AND sent_at <= ? AND host > ?`,
			site, expiredAt, after).Scan(&host); err != nil {
			return nil, err
		}
		if host == "" {
			return out, nil
		}
		after = host
		h := AbandonedHost{Host: host, CloseAt: expiredAt}
		var exp time.Time
		err := tx.QueryRow(ctx, `SELECT expires_at FROM host_leases WHERE host = ? AND holder = ?`, host, holder).Scan(&exp)
		switch {
		case err == nil:
			h.CloseAt, h.Held = exp, true
		case !noRows(err):
			return nil, err
		}
		out = append(out, h)
	}
}

// RaiseLeaseNext moves the next_at of the lease key to nextAt when it is
// earlier (a lease row that does not exist is left so). It runs in a
// crawler's write transaction.
func RaiseLeaseNext(ctx context.Context, tx WriteTx, key string, nextAt time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE host_leases SET next_at = ? WHERE host = ? AND next_at < ?`, nextAt, key, nextAt)
	return err
}
