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
// StartedAt, Budget, Spent and DelayMS), or returns an error wrapping
// ErrNotFound when the site has none. It runs in a crawler's write
// transaction.
func LastCycle(ctx context.Context, tx WriteTx, site string) (*CrawlCycle, error) {
	cy := &CrawlCycle{Site: site}
	err := tx.QueryRow(ctx, `SELECT id, status, started_at, budget, spent, delay_ms FROM crawl_cycles
		WHERE site = ? ORDER BY id DESC LIMIT 1`, site).Scan(&cy.ID, &cy.Status, &cy.StartedAt, &cy.Budget, &cy.Spent, &cy.DelayMS)
	if noRows(err) {
		return nil, notFound(err, "crawl cycle of "+site)
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
	err := s.SQL.QueryRowContext(ctx, s.rebind(`SELECT links_found FROM crawl_cycles WHERE id = ?`), cycle).Scan(&found)
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

// CycleStart is what StartCycleLeased needs to start a site's cycle.
type CycleStart struct {
	Site     string
	LeaseKey string // the site's cycle lease (the crawler's "cycle:SITE")
	Holder   string // the crawler taking it
	Node     string // the cycle's crawler node
	// Host is the start URL's host, leased with the cycle when free; ""
	// for none.
	Host    string
	Now     time.Time // the cycle's start, and a new lease's next_at
	Expires time.Time // when the leases taken expire unless renewed
	// Cutoff is Now less the recrawl interval: a site whose last cycle
	// started after it was visited recently.
	Cutoff  time.Time
	Budget  int
	DelayMS int64
}

// CycleStarted is what StartCycleLeased did.
type CycleStarted struct {
	CycleID    int64     // the cycle it started, or 0 when it did nothing
	HadCycle   bool      // the site had a cycle before
	HostLeased bool      // it took the host's lease (a new one, or one given back)
	HostNext   time.Time // when HostLeased: the lease's next_at
}

// startCycleSQL is StartCycleLeased's statement (PostgreSQL). When the
// site is due (its last cycle neither running nor recent) and no one
// holds its cycle lease, it takes the lease and starts a cycle, and takes
// the start host's lease when no one holds that. A cycle lease someone
// holds is found by a read first: the conflict of an INSERT would lock
// its row, which makes the statement a write that waits for its commit's
// flush (a fleet's second crawler meets half the crawl list so), and
// hides the row from its holder's renewal (db.RenewLeases skips locked
// rows).
const startCycleSQL = `WITH last AS (
	SELECT status, started_at FROM crawl_cycles WHERE site = ?::text ORDER BY id DESC LIMIT 1
), lease AS (
	INSERT INTO host_leases (host, holder, expires_at, next_at) SELECT ?::text, ?::text, ?::timestamptz, ?::timestamptz
	WHERE NOT EXISTS (SELECT 1 FROM last WHERE status = ?::text OR started_at > ?::timestamptz)
	AND NOT EXISTS (SELECT 1 FROM host_leases WHERE host = ?::text AND holder <> '')
	ON CONFLICT (host) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at WHERE host_leases.holder = ''
	RETURNING 1
), ins AS (
	INSERT INTO crawl_cycles (site, node, started_at, status, budget, spent, delay_ms, reason)
	SELECT ?::text, ?::text, ?::timestamptz, ?::text, ?::integer, 0, ?::bigint, ''
	WHERE EXISTS (SELECT 1 FROM lease)
	RETURNING id
), host AS (
	INSERT INTO host_leases (host, holder, expires_at, next_at)
	SELECT ?::text, ?::text, ?::timestamptz, ?::timestamptz WHERE EXISTS (SELECT 1 FROM ins) AND ?::text <> ''
	ON CONFLICT (host) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at WHERE host_leases.holder = ''
	RETURNING next_at
)
SELECT COALESCE((SELECT id FROM ins), 0), EXISTS (SELECT 1 FROM last), EXISTS (SELECT 1 FROM host), (SELECT next_at FROM host)`

// StartCycleLeased starts the cycle of a site that is due, with its lease
// and its start host's, in one statement on PostgreSQL (a round trip and a
// commit, where the transaction of takeLease and openCycle costs six round
// trips). It does only what needs no judgement: when the site's last cycle
// is running or started after q.Cutoff, or someone holds its lease (even
// one a stopped crawler left to expire), it does nothing, and leaves the
// site to that transaction; it takes the host's lease only when no one
// holds it. tx is committed on its own (Store.AutoCommit).
func StartCycleLeased(ctx context.Context, tx WriteTx, q CycleStart) (CycleStarted, error) {
	var (
		r    CycleStarted
		next *time.Time
	)
	err := tx.QueryRow(ctx, startCycleSQL,
		q.Site,
		q.LeaseKey, q.Holder, q.Expires, q.Now, CycleRunning, q.Cutoff, q.LeaseKey,
		q.Site, q.Node, q.Now, CycleRunning, q.Budget, q.DelayMS,
		q.Host, q.Holder, q.Expires, q.Now, q.Host,
	).Scan(&r.CycleID, &r.HadCycle, &r.HostLeased, &next)
	if err != nil {
		return CycleStarted{}, fmt.Errorf("db: start cycle of %s: %w", q.Site, err)
	}
	if next != nil {
		r.HostNext = *next
	}
	return r, nil
}
