package db

import (
	"context"
	"time"
)

// Leases (host_leases): a crawler holds a host's lease (or a site's cycle
// lease, key "cycle:SITE") while it sends requests there. These run in the
// crawler's write transactions (WriteTx); LeaseExpiry (crawllist.go) reads
// a lease outside them.

// InsertLease creates the lease key held by holder until expires, with
// next_at nextAt, and reports whether it did (false: the row exists).
func InsertLease(ctx context.Context, tx WriteTx, key, holder string, expires, nextAt time.Time) (bool, error) {
	n, err := tx.Exec(ctx, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES (?, ?, ?, ?) ON CONFLICT (host) DO NOTHING`,
		key, holder, expires, nextAt)
	return n == 1, err
}

// ReadLease reads the lease key.
func ReadLease(ctx context.Context, tx WriteTx, key string) (HostLease, error) {
	l := HostLease{Host: key}
	err := tx.QueryRow(ctx, `SELECT holder, expires_at, next_at FROM host_leases WHERE host = ?`, key).
		Scan(&l.Holder, &l.ExpiresAt, &l.NextAt)
	return l, err
}

// RenewLease moves the expiry of the lease key to expires if holder holds
// it, and reports whether it does.
func RenewLease(ctx context.Context, tx WriteTx, key, holder string, expires time.Time) (bool, error) {
	n, err := tx.Exec(ctx, `UPDATE host_leases SET expires_at = ? WHERE host = ? AND holder = ?`, expires, key, holder)
	return n == 1, err
}

// ClaimLease gives the lease key, held by no one, to holder until expires,
// and reports whether it did.
func ClaimLease(ctx context.Context, tx WriteTx, key, holder string, expires time.Time) (bool, error) {
	n, err := tx.Exec(ctx, `UPDATE host_leases SET holder = ?, expires_at = ? WHERE host = ? AND holder = ''`, holder, expires, key)
	return n == 1, err
}

// TakeOverLease gives the lease key to holder until expires with next_at
// nextAt, if it is still held by from and expired before now, and reports
// whether it did.
func TakeOverLease(ctx context.Context, tx WriteTx, key, holder string, expires, nextAt time.Time, from string, now time.Time) (bool, error) {
	n, err := tx.Exec(ctx, `UPDATE host_leases SET holder = ?, expires_at = ?, next_at = ? WHERE host = ? AND holder = ? AND expires_at < ?`,
		holder, expires, nextAt, key, from, now)
	return n == 1, err
}

// ReleaseLease gives the lease key back if holder holds it, expiring it at
// now; next_at becomes nextAt unless that is zero.
func ReleaseLease(ctx context.Context, tx WriteTx, key, holder string, now, nextAt time.Time) error {
	q, args := releaseLeaseSQL(key, holder, now, nextAt)
	_, err := tx.Exec(ctx, q, args...)
	return err
}

// releaseLeaseSQL is ReleaseLease's statement (? placeholders) and its
// arguments.
func releaseLeaseSQL(key, holder string, now, nextAt time.Time) (string, []any) {
	if nextAt.IsZero() {
		return `UPDATE host_leases SET holder = '', expires_at = ? WHERE host = ? AND holder = ?`, []any{now, key, holder}
	}
	return `UPDATE host_leases SET holder = '', expires_at = ?, next_at = ? WHERE host = ? AND holder = ?`,
		[]any{now, nextAt, key, holder}
}

// DelayLease sets the next_at of the lease key, if holder holds it, to
// nextAt and its expiry to expires.
func DelayLease(ctx context.Context, tx WriteTx, key, holder string, nextAt, expires time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE host_leases SET next_at = ?, expires_at = ? WHERE host = ? AND holder = ?`,
		nextAt, expires, key, holder)
	return err
}

// RenewLeases moves the expiry of every lease holder holds to expires. On
// PostgreSQL, rows another transaction has locked are passed over (a
// crawler's write group that holds one renews it itself), so the renewal
// never waits for, nor deadlocks with, a group.
func RenewLeases(ctx context.Context, tx WriteTx, holder string, expires time.Time) error {
	q := `UPDATE host_leases SET expires_at = ? WHERE holder = ?`
	if tx.Dialect() == Postgres {
		q = `UPDATE host_leases SET expires_at = ? WHERE host IN
			(SELECT host FROM host_leases WHERE holder = ? FOR UPDATE SKIP LOCKED)`
	}
	_, err := tx.Exec(ctx, q, expires, holder)
	return err
}

// ReleaseLeases gives back every lease holder holds, expiring them at now.
func ReleaseLeases(ctx context.Context, tx WriteTx, holder string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE host_leases SET holder = '', expires_at = ? WHERE holder = ?`, now, holder)
	return err
}

// PutLease gives the lease key to holder until expires, whoever held it:
// for a key only its holder's crawler writes (a crawler's request for a
// site another holds: crawler's "want:SITE").
func PutLease(ctx context.Context, tx WriteTx, key, holder string, expires, nextAt time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at`,
		key, holder, expires, nextAt)
	return err
}

// TakeLease gives the lease key back, expiring it at now, if holder holds
// it unexpired, and reports whether it did: the one transaction that
// takes it answers a request made by that lease exactly once.
func TakeLease(ctx context.Context, tx WriteTx, key, holder string, now time.Time) (bool, error) {
	n, err := tx.Exec(ctx, `UPDATE host_leases SET holder = '', expires_at = ? WHERE host = ? AND holder = ? AND expires_at > ?`,
		now, key, holder, now)
	return n == 1, err
}

// GiveLease passes the lease key from holder from to holder to, until
// expires, and reports whether from held it.
func GiveLease(ctx context.Context, tx WriteTx, key, from, to string, expires time.Time) (bool, error) {
	n, err := tx.Exec(ctx, `UPDATE host_leases SET holder = ?, expires_at = ? WHERE host = ? AND holder = ?`, to, expires, key, from)
	return n == 1, err
}
