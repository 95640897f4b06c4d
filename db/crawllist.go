package db

import (
	"context"
	"fmt"
	"time"
)

// The crawl list at scale: the queries that walk the sites table by an
// index, a page at a time, so that their cost and memory do not grow with
// the length of the list.

// Epoch is sites.due_since of a site that is due whatever the recrawl
// interval: never crawled, or its last cycle left open.
var Epoch = time.Unix(0, 0).UTC()

// ListedSite is a site of the crawl list, with whether it is excluded.
type ListedSite struct {
	Site
	Excluded bool
}

// SitesAfter returns up to limit sites of the crawl list whose names sort
// after after ("" for the first page), by name, each with whether it is
// excluded. It reads one index range.
func (s *Store) SitesAfter(ctx context.Context, after string, limit int) ([]ListedSite, error) {
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT s.id, s.name, s.start_url, s.added_at, s.added_by,
		EXISTS (SELECT 1 FROM exclusions e WHERE e.site = s.name)
		FROM sites s WHERE s.name > ? ORDER BY s.name LIMIT ?`), after, limit)
	if err != nil {
		return nil, fmt.Errorf("db: sites: %w", err)
	}
	defer rows.Close()
	var out []ListedSite
	for rows.Next() {
		var l ListedSite
		if err := rows.Scan(&l.ID, &l.Name, &l.StartURL, &l.AddedAt, &l.AddedBy, &l.Excluded); err != nil {
			return nil, fmt.Errorf("db: sites: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: sites: %w", err)
	}
	return out, nil
}

// SiteNameAt returns the name of the site at offset n (from 0) of the crawl
// list in name order, or "" past its end. It does I/O.
func (s *Store) SiteNameAt(ctx context.Context, n int64) (string, error) {
	var name string
	err := s.pool.QueryRowContext(ctx, s.rebind(`SELECT name FROM sites ORDER BY name LIMIT 1 OFFSET ?`), n).Scan(&name)
	if noRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("db: sites: %w", err)
	}
	return name, nil
}

// DueQuery asks DueSites for one page of due sites.
type DueQuery struct {
	// Cutoff is now less the recrawl interval: a site whose last finished
	// cycle started at Cutoff or before is due.
	Cutoff time.Time
	// Now is the time leases are judged at.
	Now time.Time
	// LeasePrefix is prefixed to a site's name to form its cycle lease key
	// in host_leases (crawler's "cycle:").
	LeasePrefix string
	// AfterDue and AfterName continue from the last site of the previous
	// page; the zero values start from the first.
	AfterDue  time.Time
	AfterName string
	// Limit is the page size.
	Limit int
}

// DueSite is a site that is due, as DueSites returns it.
type DueSite struct {
	Name     string
	StartURL string
	DueSince time.Time
}

// DueSites returns one page of the sites of the crawl list that are due: not
// excluded, not under a live cycle lease (another crawler, or this one, is
// on it), and never crawled, left open (running or stopped with budget
// left) or last started at q.Cutoff or before. They come in the order of
// sites.due_since (never-crawled and open ones first), then name, from one
// range of the index sites_due. The crawler checks all of this again under
// its lease; this only keeps it from being handed sites it would skip.
func (s *Store) DueSites(ctx context.Context, q DueQuery) ([]DueSite, error) {
	after := q.AfterDue
	if after.IsZero() {
		after = Epoch.Add(-time.Second)
	}
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT s.name, s.start_url, s.due_since FROM sites s
		WHERE s.due_since <= ? AND (s.due_since, s.name) > (?, ?)
		AND NOT EXISTS (SELECT 1 FROM exclusions e WHERE e.site = s.name)
		AND NOT EXISTS (SELECT 1 FROM host_leases l WHERE l.host = CAST(? AS TEXT) || s.name AND l.expires_at > ?)
		ORDER BY s.due_since, s.name LIMIT ?`),
		q.Cutoff.UTC(), after.UTC(), q.AfterName, q.LeasePrefix, q.Now.UTC(), q.Limit)
	if err != nil {
		return nil, fmt.Errorf("db: due sites: %w", err)
	}
	defer rows.Close()
	var out []DueSite
	for rows.Next() {
		var d DueSite
		if err := rows.Scan(&d.Name, &d.StartURL, &d.DueSince); err != nil {
			return nil, fmt.Errorf("db: due sites: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: due sites: %w", err)
	}
	return out, nil
}

// SiteDueSinceSQL is the statement that records, when a cycle ends, when
// its site's recrawl interval started (sites.due_since): the cycle's start
// when it is done or its budget spent, else the epoch (it is to be taken up
// again). Parameters: the cycle id, the epoch, the site. It runs in the
// transaction that ends the cycle (the crawler's writer).
const SiteDueSinceSQL = `UPDATE sites SET due_since = COALESCE((SELECT CASE WHEN c.status = 'done' OR c.spent >= c.budget
	THEN c.started_at END FROM crawl_cycles c WHERE c.id = ?), ?) WHERE name = ?`

// CountSites returns how many sites the crawl list holds.
func (s *Store) CountSites(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRowContext(ctx, `SELECT COUNT(*) FROM sites`).Scan(&n); err != nil {
		return 0, fmt.Errorf("db: count sites: %w", err)
	}
	return n, nil
}

// Validators are what a page response said about its version: its ETag
// and Last-Modified headers, as received.
type Validators struct {
	ETag, LastModified string
}

// PreviousValidators returns, per URL, the validators of the page requests
// of site's last cycle before cycle that were answered 200 with an HTML
// page or 304 (by the indexes crawl_cycles_site_id and requests_cycle).
func (s *Store) PreviousValidators(ctx context.Context, site string, cycle int64) (map[string]Validators, error) {
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT r.url, r.etag, r.last_modified FROM requests r
		WHERE r.cycle_id = (SELECT MAX(c.id) FROM crawl_cycles c WHERE c.site = ? AND c.id < ?)
		AND r.purpose = 'page' AND r.status IN (200, 304) AND r.outcome IN ('ok', 'noindex', 'not-modified')
		AND (r.etag <> '' OR r.last_modified <> '') ORDER BY r.id`), site, cycle)
	if err != nil {
		return nil, fmt.Errorf("db: validators: %w", err)
	}
	defer rows.Close()
	out := map[string]Validators{}
	for rows.Next() {
		var u string
		var v Validators
		if err := rows.Scan(&u, &v.ETag, &v.LastModified); err != nil {
			return nil, fmt.Errorf("db: validators: %w", err)
		}
		out[u] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: validators: %w", err)
	}
	return out, nil
}

// SameSiteLinks returns the same-site links stored from the page at url
// (anchors.to_site = site), in the order they were stored: what a crawl
// follows from a page that answered 304 Not Modified.
func (s *Store) SameSiteLinks(ctx context.Context, url, site string) ([]string, error) {
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT to_url FROM anchors WHERE from_url = ? AND to_site = ? ORDER BY id`), url, site)
	if err != nil {
		return nil, fmt.Errorf("db: links: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("db: links: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: links: %w", err)
	}
	return out, nil
}

// Leases returns the leases keys in host_leases, each with its holder
// ("" once given back) and when it expires; a key without a lease is not
// in the map. It reads them five hundred at a time, outside any
// transaction.
func (s *Store) Leases(ctx context.Context, keys []string) (map[string]HostLease, error) {
	out := make(map[string]HostLease, len(keys))
	err := inChunks(keys, 500, func(args []any) error {
		rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT host, holder, expires_at FROM host_leases WHERE host IN (`+placeholders(len(args))+`)`), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l HostLease
			if err := rows.Scan(&l.Host, &l.Holder, &l.ExpiresAt); err != nil {
				return err
			}
			out[l.Host] = l
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("db: leases: %w", err)
	}
	return out, nil
}

// LeaseExpiry returns when the lease key in host_leases expires, and
// whether there is one (Leases for one key).
func (s *Store) LeaseExpiry(ctx context.Context, key string) (time.Time, bool, error) {
	ls, err := s.Leases(ctx, []string{key})
	if err != nil {
		return time.Time{}, false, err
	}
	l, held := ls[key]
	return l.ExpiresAt, held, nil
}

// claimBlocksSQL is ClaimBlocks' statement. It commits without waiting
// for its WAL flush (synchronous_commit off for its own transaction): a
// claim lost in a crash of the server only makes two crawlers meet on a
// block. The rows are taken in the order of their keys: two crawlers
// claiming the same blocks wait for each other in one order, never in a
// cycle.
const claimBlocksSQL = `INSERT INTO host_leases (host, holder, expires_at, next_at)
SELECT k, $2::text, $3::timestamptz, $4::timestamptz
FROM unnest($1::text[]) AS k, (SELECT set_config('synchronous_commit', 'off', true)) AS async
ORDER BY k
ON CONFLICT (host) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
WHERE host_leases.holder = '' OR host_leases.holder = EXCLUDED.holder OR host_leases.expires_at <= EXCLUDED.next_at
RETURNING host`

// ClaimBlocks gives holder each lease of keys until expires unless another
// holder holds it after now, and returns the keys holder holds. It is how
// crawlers of a fleet share out the crawl list's blocks as they start
// (crawler.Crawler.ListAll): a hint, not a guard, which each site's own
// cycle lease remains. PostgreSQL only.
func (s *Store) ClaimBlocks(ctx context.Context, keys []string, holder string, now, expires time.Time) (map[string]bool, error) {
	if s.Dialect != Postgres {
		return nil, fmt.Errorf("db: claim blocks: PostgreSQL only")
	}
	rows, err := s.pool.QueryContext(ctx, claimBlocksSQL, keys, holder, expires, now)
	if err != nil {
		return nil, fmt.Errorf("db: claim blocks: %w", err)
	}
	defer rows.Close()
	out := make(map[string]bool, len(keys))
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("db: claim blocks: %w", err)
		}
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: claim blocks: %w", err)
	}
	return out, nil
}
