package db

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// SiteCycles returns the crawl cycles of site, oldest first. It does I/O.
func (q queries) SiteCycles(ctx context.Context, site string) ([]CrawlCycle, error) {
	var out []CrawlCycle
	if err := q.with(ctx).Where("site = ?", site).Order("started_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read cycles: %w", err)
	}
	return out, nil
}

// LastCycle reads the newest crawl cycle of site (its ID, Status,
// StartedAt, FinishedAt, Budget, Spent, DelayMS and Reason), or returns an
// error wrapping ErrNotFound when the site has none. It runs in a
// crawler's write transaction.
func LastCycle(ctx context.Context, tx WriteTx, site string) (*CrawlCycle, error) {
	cy := &CrawlCycle{Site: site}
	var ended bool
	var finished time.Time
	err := tx.QueryRow(ctx, `SELECT id, status, started_at, budget, spent, delay_ms, reason, finished_at IS NOT NULL,
		COALESCE(finished_at, started_at) FROM crawl_cycles WHERE site = ? ORDER BY id DESC LIMIT 1`, site).
		Scan(&cy.ID, &cy.Status, &cy.StartedAt, &cy.Budget, &cy.Spent, &cy.DelayMS, &cy.Reason, &ended, &finished)
	if noRows(err) {
		return nil, notFound(err, "crawl cycle of "+site)
	}
	if ended {
		cy.FinishedAt = &finished
	}
	return cy, err
}

// InsertCycle starts a cycle of site (status running, nothing spent) and
// returns its id. It runs in a crawler's write transaction.
func InsertCycle(ctx context.Context, tx WriteTx, site, node string, startedAt time.Time, budget int, delayMS int64) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO crawl_cycles (site, node, started_at, status, budget, spent, delay_ms, reason)
		VALUES (?, ?, ?, ?, ?, 0, ?, '') RETURNING id`, site, node, startedAt, CycleRunning, budget, delayMS).Scan(&id)
	return id, err
}

// SetCycleNode records node as the crawler of cycle id. It runs in a
// crawler's write transaction.
func SetCycleNode(ctx context.Context, tx WriteTx, id int64, node string) error {
	_, err := tx.Exec(ctx, `UPDATE crawl_cycles SET node = ? WHERE id = ?`, node, id)
	return err
}

// ResumeCycle sets the stopped cycle id running again under node. It runs
// in a crawler's write transaction.
func ResumeCycle(ctx context.Context, tx WriteTx, id int64, node string) error {
	_, err := tx.Exec(ctx, `UPDATE crawl_cycles SET status = ?, node = ?, finished_at = NULL WHERE id = ? AND status = ?`,
		CycleRunning, node, id, CycleStopped)
	return err
}

// ReserveBudgetSlot takes the next budget slot of the running cycle id and
// returns it (1..budget), or ok false when the cycle has none left or is
// not running. It runs in a crawler's write transaction.
func ReserveBudgetSlot(ctx context.Context, tx WriteTx, id int64) (slot int, ok bool, err error) {
	err = tx.QueryRow(ctx, `UPDATE crawl_cycles SET spent = spent + 1 WHERE id = ? AND status = ? AND spent < budget RETURNING spent`,
		id, CycleRunning).Scan(&slot)
	if noRows(err) {
		return 0, false, nil
	}
	return slot, err == nil, err
}

// AddCycleLinks records that the running cycle id's pages link to urls, URLs
// of its site new to the cycle: a crawler that takes the cycle over after a
// crash resumes from them (CycleLinksFound). It runs in a crawler's write
// transaction.
func AddCycleLinks(ctx context.Context, tx WriteTx, id int64, urls []string) error {
	if len(urls) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE crawl_cycles SET links_found = links_found || ? WHERE id = ?`,
		strings.Join(urls, "\n")+"\n", id)
	return err
}

// CycleLinksFound returns the URLs AddCycleLinks recorded for cycle, in the
// order found. It does I/O.
func (s *Store) CycleLinksFound(ctx context.Context, cycle int64) ([]string, error) {
	var found string
	err := s.pool.QueryRowContext(ctx, s.rebind(`SELECT links_found FROM crawl_cycles WHERE id = ?`), cycle).Scan(&found)
	if err != nil {
		return nil, fmt.Errorf("db: read links of cycle %d: %w", cycle, err)
	}
	return strings.Fields(found), nil
}

// EndCycle records that the running cycle id of site ended with status
// and reason at now, and when the site's recrawl interval started
// (SiteDueSinceSQL). It runs in a crawler's write transaction.
func EndCycle(ctx context.Context, tx WriteTx, id int64, site, status, reason string, now time.Time) error {
	_, err := tx.Exec(ctx, endCycleSQL(status), status, now, reason, id, CycleRunning)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, SiteDueSinceSQL, id, Epoch, site)
	return err
}

// endCycleSQL is EndCycle's first statement (? placeholders): its
// arguments are status, now, reason, the cycle's id and CycleRunning.
func endCycleSQL(status string) string {
	if status == CycleStopped {
		// A stopped cycle is resumed later: it keeps its links_found.
		return `UPDATE crawl_cycles SET status = ?, finished_at = ?, reason = ? WHERE id = ? AND status = ?`
	}
	return `UPDATE crawl_cycles SET status = ?, finished_at = ?, reason = ?, links_found = '' WHERE id = ? AND status = ?`
}

// CycleStarts is a batch of StartCyclesLeased: the sites to start, and
// what their cycles and leases share.
type CycleStarts struct {
	Holder string // the crawler taking the leases
	Node   string // the cycles' crawler node
	// Now is the cycles' start, and a new lease's next_at.
	Now time.Time
	// Expires is when the leases taken expire unless renewed.
	Expires time.Time
	// Cutoff is Now less the recrawl interval: a site whose last cycle
	// started after it was visited recently.
	Cutoff  time.Time
	Budget  int
	DelayMS int64
	Sites   []CycleSite
}

// CycleSite is one site of CycleStarts.
type CycleSite struct {
	Site     string
	LeaseKey string // the site's cycle lease (the crawler's "cycle:SITE")
	// Host is the start URL's host, leased with the cycle when free; ""
	// for none.
	Host string
}

// CycleStarted is what StartCyclesLeased did for one site.
type CycleStarted struct {
	CycleID    int64     // the cycle it started, or 0 when it did nothing
	HadCycle   bool      // the site had a cycle before
	HostLeased bool      // it took the host's lease (a new one, or one given back)
	HostNext   time.Time // when HostLeased: the lease's next_at
}

// startCyclesSQL is StartCyclesLeased's statement (PostgreSQL). For each
// site of the batch ($1 sites, $2 their cycle leases, $3 their start
// hosts) that is due (its last cycle neither running nor recent) and
// whose cycle lease no one holds, it takes the lease and starts a cycle,
// and takes the start host's lease when no one holds that; it returns a
// row per site, in the batch's order.
//
// A cycle lease someone holds is found by a read first: the conflict of
// an INSERT would lock its row, which makes the statement a write that
// waits for its commit's flush (a fleet's second crawler meets half the
// crawl list so), and hides the row from its holder's renewal
// (db.RenewLeases skips locked rows). The leases are inserted in the
// order of their keys, cycle leases first: two crawlers' batches that
// meet on the same new leases wait for each other in one order, never in
// a cycle (a deadlock).
const startCyclesSQL = `WITH q AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS q(site, lease_key, host, i)
), last AS (
	SELECT q.i, l.status, l.started_at FROM q CROSS JOIN LATERAL (
		SELECT status, started_at FROM crawl_cycles WHERE crawl_cycles.site = q.site ORDER BY id DESC LIMIT 1) l
), due AS (
	SELECT q.* FROM q
	WHERE NOT EXISTS (SELECT 1 FROM last WHERE last.i = q.i AND (last.status = $4::text OR last.started_at > $5::timestamptz))
	AND NOT EXISTS (SELECT 1 FROM host_leases WHERE host_leases.host = q.lease_key AND host_leases.holder <> '')
), lease AS (
	INSERT INTO host_leases (host, holder, expires_at, next_at)
	SELECT lease_key, $6::text, $7::timestamptz, $8::timestamptz FROM due ORDER BY lease_key
	ON CONFLICT (host) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at WHERE host_leases.holder = ''
	RETURNING host
), ins AS (
	INSERT INTO crawl_cycles (site, node, started_at, status, budget, spent, delay_ms, reason)
	SELECT due.site, $9::text, $8::timestamptz, $4::text, $10::integer, 0, $11::bigint, '' FROM due JOIN lease ON lease.host = due.lease_key
	ORDER BY due.i
	RETURNING id, site
), host AS (
	INSERT INTO host_leases (host, holder, expires_at, next_at)
	SELECT due.host, $6::text, $7::timestamptz, $8::timestamptz FROM due JOIN ins ON ins.site = due.site WHERE due.host <> ''
	ORDER BY due.host
	ON CONFLICT (host) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at WHERE host_leases.holder = ''
	RETURNING host, next_at
)
SELECT q.i, COALESCE(ins.id, 0), EXISTS (SELECT 1 FROM last WHERE last.i = q.i), host.next_at
FROM q LEFT JOIN ins ON ins.site = q.site LEFT JOIN host ON ins.id IS NOT NULL AND host.host = q.host
ORDER BY q.i`

// StartCyclesLeased starts the cycles of the sites of b that are due,
// each with its lease and its start host's, in one statement on
// PostgreSQL, committed on its own: a round trip and a commit for the
// batch, where the transaction of takeLease and openCycle costs six round
// trips a site. It does only what needs no judgement: when a site's last
// cycle is running or started after b.Cutoff, or someone holds its lease
// (even one a stopped crawler left to expire), it does nothing for that
// site, and leaves it to that transaction; it takes a host's lease only
// when no one holds it. It returns what it did for each site, in b's
// order. The sites of a batch must be distinct; a host named by two is
// leased (if at all) with the first.
func (s *Store) StartCyclesLeased(ctx context.Context, b CycleStarts) ([]CycleStarted, error) {
	if s.Dialect != Postgres {
		return nil, fmt.Errorf("db: start cycles: PostgreSQL only")
	}
	sites := make([]string, len(b.Sites))
	keys := make([]string, len(b.Sites))
	hosts := make([]string, len(b.Sites))
	seen := make(map[string]bool, 2*len(b.Sites))
	for i, c := range b.Sites {
		if seen["s:"+c.Site] || seen["k:"+c.LeaseKey] {
			return nil, fmt.Errorf("db: start cycles: %s twice in a batch", c.Site)
		}
		seen["s:"+c.Site], seen["k:"+c.LeaseKey] = true, true
		sites[i], keys[i] = c.Site, c.LeaseKey
		if c.Host != "" && !seen["h:"+c.Host] {
			seen["h:"+c.Host] = true
			hosts[i] = c.Host
		}
	}
	out := make([]CycleStarted, len(b.Sites))
	rows, err := s.pool.QueryContext(ctx, startCyclesSQL, sites, keys, hosts,
		CycleRunning, b.Cutoff, b.Holder, b.Expires, b.Now, b.Node, b.Budget, b.DelayMS)
	if err != nil {
		return nil, fmt.Errorf("db: start cycles: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			i    int
			r    CycleStarted
			next *time.Time
		)
		if err := rows.Scan(&i, &r.CycleID, &r.HadCycle, &next); err != nil {
			return nil, fmt.Errorf("db: start cycles: %w", err)
		}
		if i < 1 || i > len(out) {
			return nil, fmt.Errorf("db: start cycles: row %d of %d", i, len(out))
		}
		if next != nil {
			r.HostLeased, r.HostNext = true, *next
		}
		out[i-1] = r
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: start cycles: %w", err)
	}
	if n != len(out) {
		return nil, fmt.Errorf("db: start cycles: %d rows for %d sites", n, len(out))
	}
	return out, nil
}
