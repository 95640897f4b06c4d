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
