package db

import (
	"context"
	"fmt"
	"time"
)

// Ping checks that the database answers a query. It does I/O.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.pool.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// LastRequestID returns the highest id in the request log, 0 when it is
// empty. It does I/O.
func (s *Store) LastRequestID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM requests`).Scan(&id); err != nil {
		return 0, fmt.Errorf("db: last request: %w", err)
	}
	return id, nil
}

// RequestCount is how many requests of a cycle had one purpose and status.
type RequestCount struct {
	Purpose string
	Status  int // 0 for a request without a response
	N       int
}

// RequestCounts counts the requests of cycle logged after the request with
// id afterID, by purpose and status. It does I/O.
func (s *Store) RequestCounts(ctx context.Context, cycle, afterID int64) ([]RequestCount, error) {
	q := `SELECT purpose, COALESCE(status, 0), COUNT(*) FROM requests WHERE cycle_id = ? AND id > ? GROUP BY purpose, COALESCE(status, 0)`
	rows, err := s.pool.QueryContext(ctx, s.rebind(q), cycle, afterID)
	if err != nil {
		return nil, fmt.Errorf("db: count requests: %w", err)
	}
	defer rows.Close()
	var out []RequestCount
	for rows.Next() {
		var c RequestCount
		if err := rows.Scan(&c.Purpose, &c.Status, &c.N); err != nil {
			return nil, fmt.Errorf("db: count requests: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: count requests: %w", err)
	}
	return out, nil
}

// SiteRequests returns the request log of site, in the order the requests
// were sent. It does I/O.
func (q queries) SiteRequests(ctx context.Context, site string) ([]Request, error) {
	var out []Request
	if err := q.with(ctx).Where("site = ?", site).Order("sent_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read requests: %w", err)
	}
	return out, nil
}

// RequestOrigins returns the distinct origins the requests to site went
// to, in no particular order. It does I/O.
func (q queries) RequestOrigins(ctx context.Context, site string) ([]string, error) {
	var out []string
	if err := q.with(ctx).Model(&Request{}).Where("site = ?", site).Distinct("origin").Pluck("origin", &out).Error; err != nil {
		return nil, fmt.Errorf("db: read request origins: %w", err)
	}
	return out, nil
}

// CyclePageURLs returns the URLs of the page requests of cycle that were
// answered, in no particular order: a withdrawn request (never sent), an
// interrupted one (sent, its answer never read) and an abandoned one (its
// answer never recorded) are left out, so a resumed cycle asks for their
// URLs again, within its budget. It does I/O.
func (s *Store) CyclePageURLs(ctx context.Context, cycle int64) ([]string, error) {
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT url FROM requests WHERE cycle_id = ? AND purpose = ? AND COALESCE(outcome, '') NOT IN (?, ?, ?)`),
		cycle, PurposePage, OutcomeWithdrawn, OutcomeInterrupted, OutcomeAbandoned)
	if err != nil {
		return nil, fmt.Errorf("db: read requests of cycle %d: %w", cycle, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("db: read requests of cycle %d: %w", cycle, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// InsertRequest writes the log row of a request about to be sent (method
// GET) and sets r.ID. It runs in a crawler's write transaction.
func InsertRequest(ctx context.Context, tx WriteTx, r *Request) error {
	if err := checkRequest(r); err != nil {
		return err
	}
	return tx.QueryRow(ctx, `INSERT INTO requests (cycle_id, budget_slot, site, host, origin, url, method, purpose, node, attempt,
		redirect_of, robots_snapshot_id, robots_rule, robots_line, policy_check, delay_ms, sent_at)
		VALUES (?, ?, ?, ?, ?, ?, 'GET', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.CycleID, r.BudgetSlot, r.Site, r.Host, r.Origin, r.URL, r.Purpose, r.Node, r.Attempt,
		r.RedirectOf, r.RobotsSnapshotID, r.RobotsRule, r.RobotsLine, r.PolicyCheck, r.DelayMS, r.SentAt).Scan(&r.ID)
}

// WithdrawRequest completes the request id, logged and never sent, as
// withdrawn at at, saying why (see OutcomeWithdrawn), unless it was
// completed. A request never sent is never counted: when it holds its
// cycle's last budget slot, the slot is given back (the cycle's spent goes
// down by one and the row keeps no slot), so the cycle still gets its whole
// budget of requests that reached the site. (Not deleted: the sealer may
// have seen it pending, and a pending row that disappears is reported as
// deleted; the sealer seals only completed rows, so the row is sealed as
// withdrawn.) It runs in a crawler's write transaction.
func WithdrawRequest(ctx context.Context, tx WriteTx, id int64, at time.Time, why string) error {
	var cycle, slot int64 // 0: none
	err := tx.QueryRow(ctx, `UPDATE requests SET completed_at = ?, status = NULL, bytes = 0, duration_ms = 0, retry_after = '',
		retry_not_before = NULL, outcome = ?, error = ? WHERE id = ? AND completed_at IS NULL
		RETURNING COALESCE(cycle_id, 0), COALESCE(budget_slot, 0)`,
		at, OutcomeWithdrawn, why, id).Scan(&cycle, &slot)
	if noRows(err) {
		return nil // completed already
	}
	if err != nil || cycle == 0 || slot == 0 {
		return err
	}
	n, err := tx.Exec(ctx, `UPDATE crawl_cycles SET spent = spent - 1 WHERE id = ? AND spent = ?`, cycle, slot)
	if err != nil || n == 0 {
		return err // a later slot is taken: this one stays spent
	}
	_, err = tx.Exec(ctx, `UPDATE requests SET budget_slot = NULL WHERE id = ?`, id)
	return err
}

// WithdrawLost finds the row a reservation of q left, if it landed although
// its connection was lost as it committed (the same host, node, URL,
// attempt and sent_at, not completed), withdraws it as WithdrawRequest
// does, and reports whether there was one. One request is in flight per
// host, so no other row has those. It runs in a crawler's write
// transaction.
func WithdrawLost(ctx context.Context, tx WriteTx, q *Request, at time.Time, why string) (bool, error) {
	var id int64
	err := tx.QueryRow(ctx, `SELECT id FROM requests WHERE host = ? AND sent_at = ? AND node = ? AND url = ? AND attempt = ?
		AND purpose = ? AND completed_at IS NULL`, q.Host, q.SentAt, q.Node, q.URL, q.Attempt, q.Purpose).Scan(&id)
	if noRows(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, WithdrawRequest(ctx, tx, id, at, why)
}

// CompleteRequest writes the outcome of the request r.ID (r's fields from
// CompletedAt on), unless it is completed already. It runs in a crawler's
// write transaction.
func CompleteRequest(ctx context.Context, tx WriteTx, r *Request) error {
	if err := checkRequest(r); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE requests SET completed_at = ?, status = ?, bytes = ?, duration_ms = ?, retry_after = ?,
		retry_not_before = ?, outcome = ?, error = ?, sig_keyid = ?, sig_created = ?, sig_expires = ?, etag = ?, last_modified = ?
		WHERE id = ? AND completed_at IS NULL`,
		r.CompletedAt, r.Status, r.Bytes, r.DurationMS, r.RetryAfter, r.RetryNotBefore, r.Outcome, r.Error,
		r.SigKeyID, r.SigCreated, r.SigExpires, r.ETag, r.LastModified, r.ID)
	return err
}

// AbandonHostRequests closes the requests to host sent at or before
// expiredAt and never completed, with outcome, error why and completed_at
// expiredAt, and returns how many. It runs in a crawler's write
// transaction.
func AbandonHostRequests(ctx context.Context, tx WriteTx, host, outcome, why string, expiredAt time.Time) (int64, error) {
	if err := checkText("requests", "outcome", outcome, "error", why); err != nil {
		return 0, err
	}
	return tx.Exec(ctx, `UPDATE requests SET outcome = ?, error = ?, completed_at = ?
		WHERE host = ? AND completed_at IS NULL AND sent_at <= ?`,
		outcome, why, expiredAt, host, expiredAt)
}

// AbandonSiteRequests closes the requests of site sent at or before
// expiredAt and never completed, with outcome and error why; each is
// completed at its host's lease expiry when holder still holds that lease,
// else at expiredAt. It returns how many it closed and runs in a crawler's
// write transaction.
func AbandonSiteRequests(ctx context.Context, tx WriteTx, site, holder, outcome, why string, expiredAt time.Time) (int64, error) {
	if err := checkText("requests", "outcome", outcome, "error", why); err != nil {
		return 0, err
	}
	return tx.Exec(ctx, `UPDATE requests SET outcome = ?, error = ?,
		completed_at = COALESCE((SELECT h.expires_at FROM host_leases h WHERE h.host = requests.host AND h.holder = ?), ?)
		WHERE site = ? AND completed_at IS NULL AND sent_at <= ?`,
		outcome, why, holder, expiredAt, site, expiredAt)
}

// SentRequest is a request of the log as a webmaster's log is matched
// against it: its id, URL and sending time.
type SentRequest struct {
	ID     int64
	URL    string
	SentAt time.Time
}

// RequestsSent calls fn for every request sent at a time in [from, to]
// (withdrawn ones were not sent), in any order, streaming (one query on the
// sent_at index). It stops at fn's
// first error and returns it. It does I/O.
func (s *Store) RequestsSent(ctx context.Context, from, to time.Time, fn func(SentRequest) error) error {
	rows, err := s.gdb.WithContext(ctx).Model(&Request{}).
		Select("id", "url", "sent_at").
		Where("sent_at >= ? AND sent_at <= ? AND outcome <> ?", from.UTC(), to.UTC(), OutcomeWithdrawn).
		Rows()
	if err != nil {
		return fmt.Errorf("db: request log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r SentRequest
		if err := rows.Scan(&r.ID, &r.URL, &r.SentAt); err != nil {
			return fmt.Errorf("db: request log: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: request log: %w", err)
	}
	return nil
}
