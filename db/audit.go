package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The request log as the audit (audit) reads it: one streaming pass
// over every request joined to its crawl cycle, and the lookups it makes to
// cite a request or to read the context before its window.

// AuditRequest is one request of the log joined to its crawl cycle, with the
// columns the audit's rules need. Zero values stand for NULL where a flag
// says so.
type AuditRequest struct {
	ID          int64
	CycleID     int64 // 0: none
	Site        string
	Origin      string // as logged
	URL         string
	Purpose     string
	Redirect    bool // redirect_of is set
	Status      int
	HasStatus   bool
	Outcome     string
	SentAt      time.Time // UTC
	CompletedAt time.Time // UTC
	Completed   bool      // completed_at is set
	RetryAfter  string
	SnapshotID  int64 // 0: none

	// HasCycle is false when the request names no cycle, or one that does
	// not exist; the Cycle fields are then zero.
	HasCycle      bool
	CycleDelay    time.Duration
	CycleBudget   int
	CycleStarted  time.Time // UTC
	CycleFinished time.Time // UTC
	CycleEnded    bool      // finished_at is set
}

// auditSelect is the SELECT list and FROM clause the audit reads requests
// with through the pool, joined to their cycle: the request before a
// window (LastRequestToHost), and the stream where no fast-path connection
// can be opened (auditfast.go reads an SQLite file's stream). On SQLite
// every field is packed into one text column separated by unitSep: the
// pure-Go driver pays dearly per column (a lock, a type lookup and a
// conversion each), and one column reads a million rows about twice as
// fast as sixteen. PostgreSQL gets plain columns.
func (s *Store) auditSelect() string {
	if s.Dialect == Postgres {
		return `SELECT r.id, r.cycle_id, r.redirect_of, r.status, r.robots_snapshot_id,
			c.delay_ms, c.budget, c.started_at, c.finished_at,
			r.site, r.origin, r.purpose, r.outcome, r.sent_at, r.completed_at, r.retry_after, r.url
			FROM requests r LEFT JOIN crawl_cycles c ON c.id = r.cycle_id`
	}
	fields := []string{"r.id", "r.cycle_id", "r.redirect_of", "r.status", "r.robots_snapshot_id",
		"c.delay_ms", "c.budget", "c.started_at", "c.finished_at",
		"r.site", "r.origin", "r.purpose", "r.outcome", "r.sent_at", "r.completed_at",
		"replace(r.retry_after, char(31), ' ')", "r.url"}
	for i, f := range fields {
		fields[i] = "COALESCE(" + f + ", '')"
	}
	return "SELECT " + strings.Join(fields, " || char(31) || ") +
		" FROM requests r LEFT JOIN crawl_cycles c ON c.id = r.cycle_id"
}

// unitSep separates the fields of a packed SQLite row (ASCII US, char(31)).
const unitSep = '\x1f'

// auditScanner reads rows of auditSelect, reusing its scan targets.
type auditScanner struct {
	packed bool
	buf    string

	// The PostgreSQL columns.
	id                                      int64
	cycleID, redirectOf, status, snapshotID sql.NullInt64
	delay, budget                           sql.NullInt64
	started, finished                       textTime
	site, origin, purpose, outcome          string
	sentAt, completedAt                     textTime
	retryAfter, u                           string
}

func (s *Store) newAuditScanner() *auditScanner {
	return &auditScanner{packed: s.Dialect != Postgres}
}

// scan reads the current row of rows into r.
func (sc *auditScanner) scan(rows interface{ Scan(...any) error }, r *AuditRequest) error {
	if sc.packed {
		if err := rows.Scan(&sc.buf); err != nil {
			return err
		}
		return unpackAudit(sc.buf, r)
	}
	if err := rows.Scan(&sc.id, &sc.cycleID, &sc.redirectOf, &sc.status, &sc.snapshotID,
		&sc.delay, &sc.budget, &sc.started, &sc.finished,
		&sc.site, &sc.origin, &sc.purpose, &sc.outcome, &sc.sentAt, &sc.completedAt, &sc.retryAfter, &sc.u); err != nil {
		return err
	}
	*r = AuditRequest{
		ID: sc.id, CycleID: sc.cycleID.Int64, Site: sc.site, Origin: sc.origin, URL: sc.u,
		Purpose: sc.purpose, Redirect: sc.redirectOf.Valid, Status: int(sc.status.Int64), HasStatus: sc.status.Valid,
		Outcome: sc.outcome, SentAt: sc.sentAt.t, CompletedAt: sc.completedAt.t, Completed: sc.completedAt.valid,
		RetryAfter: sc.retryAfter, SnapshotID: sc.snapshotID.Int64,
		HasCycle: sc.delay.Valid, CycleDelay: time.Duration(sc.delay.Int64) * time.Millisecond, CycleBudget: int(sc.budget.Int64),
		CycleStarted: sc.started.t, CycleFinished: sc.finished.t, CycleEnded: sc.finished.valid,
	}
	return nil
}

// splitPacked splits a packed SQLite row into its len(f) fields, in f. The
// last field (the URL) keeps any separator it holds. The strings share
// packed's memory.
func splitPacked(packed string, f []string) error {
	rest := packed
	for i := range len(f) - 1 {
		j := strings.IndexByte(rest, unitSep)
		if j < 0 {
			return fmt.Errorf("malformed request row %q", packed)
		}
		f[i], rest = rest[:j], rest[j+1:]
	}
	f[len(f)-1] = rest
	return nil
}

// unpackAudit splits a packed SQLite row into r. The strings of r share
// packed's memory.
func unpackAudit(packed string, r *AuditRequest) error {
	var f [17]string
	if err := splitPacked(packed, f[:]); err != nil {
		return err
	}
	var err error
	num := func(s string) (int64, bool) {
		if s == "" || err != nil {
			return 0, false
		}
		n, e := strconv.ParseInt(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("malformed number %q in request row", s)
			return 0, false
		}
		return n, true
	}
	tm := func(s string) (time.Time, bool) {
		if s == "" || err != nil {
			return time.Time{}, false
		}
		var d textTime
		if e := d.parse(s); e != nil {
			err = e
		}
		return d.t, d.valid
	}
	*r = AuditRequest{}
	r.ID, _ = num(f[0])
	r.CycleID, _ = num(f[1])
	_, r.Redirect = num(f[2])
	status, hasStatus := num(f[3])
	r.Status, r.HasStatus = int(status), hasStatus
	r.SnapshotID, _ = num(f[4])
	delay, hasCycle := num(f[5])
	budget, _ := num(f[6])
	r.HasCycle = hasCycle
	r.CycleDelay = time.Duration(delay) * time.Millisecond
	r.CycleBudget = int(budget)
	r.CycleStarted, _ = tm(f[7])
	r.CycleFinished, r.CycleEnded = tm(f[8])
	r.Site, r.Origin, r.Purpose, r.Outcome = f[9], f[10], f[11], f[12]
	r.SentAt, _ = tm(f[13])
	r.CompletedAt, r.Completed = tm(f[14])
	r.RetryAfter, r.URL = f[15], f[16]
	return err
}

// AuditRequests calls fn for every request of the log sent at or after
// since (zero: all) to one of sites (empty: every site), ordered by site,
// sent_at and id, joined to its crawl cycle. The request fn gets is reused:
// fn must copy what it keeps (its strings are its own). It streams with one
// query (memory does not grow with the log), on an SQLite file through a
// read-only fast-path connection of its own (auditfast.go), does I/O, and
// stops at the first error fn returns, returning it. fn may run other
// queries of the Store.
func (s *Store) AuditRequests(ctx context.Context, sites []string, since time.Time, fn func(*AuditRequest) error) error {
	cond, args := auditWhere(sites, since)
	rd, err := s.openReader(ctx)
	if err != nil {
		return err
	}
	if rd != nil {
		defer rd.Close()
		return auditRequestsFast(ctx, rd, auditColumns+cond, args, fn)
	}
	return s.auditRequestsPool(ctx, cond, args, fn)
}

// auditWhere returns the WHERE (sites, since) and ORDER BY clauses of the
// request stream, and their arguments.
func auditWhere(sites []string, since time.Time) (string, []any) {
	where, args := requestWindow("r.", sites, since)
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	return cond + " ORDER BY r.site, r.sent_at, r.id", args
}

// requestWindow returns the conditions that keep the requests of a window,
// on the requests table's columns under prefix ("" or an alias and a dot):
// those to one of sites (empty: every site) sent at or after since (zero:
// any time), and their arguments.
func requestWindow(prefix string, sites []string, since time.Time) ([]string, []any) {
	var (
		where []string
		args  []any
	)
	if len(sites) > 0 {
		where = append(where, prefix+"site IN ("+placeholders(len(sites))+")")
		for _, site := range sites {
			args = append(args, site)
		}
	}
	if !since.IsZero() {
		where = append(where, prefix+"sent_at >= ?")
		args = append(args, since.UTC())
	}
	return where, args
}

// auditRequestsPool is AuditRequests through the connection pool: cond
// is the WHERE and ORDER BY clauses, args their arguments.
func (s *Store) auditRequestsPool(ctx context.Context, cond string, args []any, fn func(*AuditRequest) error) error {
	q := s.auditSelect() + cond
	rows, err := s.pool.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return fmt.Errorf("db: read requests: %w", err)
	}
	defer rows.Close()
	sc := s.newAuditScanner()
	var r AuditRequest
	for rows.Next() {
		if err := sc.scan(rows, &r); err != nil {
			return fmt.Errorf("db: read requests: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: read requests: %w", err)
	}
	return nil
}

// LastRequestToHost returns the last request sent before before to one of
// hosts (the host column as logged), joined to its cycle, or an error
// wrapping ErrNotFound when there is none. It does I/O.
func (s *Store) LastRequestToHost(ctx context.Context, hosts []string, before time.Time) (*AuditRequest, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("db: last request before %s: %w", before.UTC().Format(time.RFC3339), ErrNotFound)
	}
	q := s.auditSelect() + " WHERE r.host IN (" + placeholders(len(hosts)) + ") AND r.sent_at < ? ORDER BY r.sent_at DESC, r.id DESC LIMIT 1"
	args := make([]any, 0, len(hosts)+1)
	for _, h := range hosts {
		args = append(args, h)
	}
	args = append(args, before.UTC())
	r := &AuditRequest{}
	err := s.newAuditScanner().scan(s.pool.QueryRowContext(ctx, s.rebind(q), args...), r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("db: last request to %s before %s: %w", hosts[0], before.UTC().Format(time.RFC3339), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("db: last request to %s: %w", hosts[0], err)
	}
	return r, nil
}

// CycleRequests calls fn for every request of cycle logged under site, in
// the order they were sent, with the fields a citation needs (ID, URL,
// Purpose, Redirect, SentAt, CompletedAt, Status, Outcome, Origin; the
// cycle fields are left zero). The request fn gets is reused. It does I/O
// and stops at the first error fn returns, returning it.
func (s *Store) CycleRequests(ctx context.Context, site string, cycle int64, fn func(*AuditRequest) error) error {
	q := s.rebind(`SELECT id, url, purpose, redirect_of, sent_at, completed_at, status, outcome, origin
		FROM requests WHERE cycle_id = ? AND site = ? ORDER BY sent_at, id`)
	rows, err := s.pool.QueryContext(ctx, q, cycle, site)
	if err != nil {
		return fmt.Errorf("db: read cycle %d: %w", cycle, err)
	}
	defer rows.Close()
	var (
		redirectOf, status sql.NullInt64
		sent, completed    textTime
	)
	r := &AuditRequest{}
	for rows.Next() {
		*r = AuditRequest{Site: site, CycleID: cycle}
		if err := rows.Scan(&r.ID, &r.URL, &r.Purpose, &redirectOf, &sent, &completed, &status, &r.Outcome, &r.Origin); err != nil {
			return fmt.Errorf("db: read cycle %d: %w", cycle, err)
		}
		r.Redirect = redirectOf.Valid
		r.SentAt = sent.t
		r.Completed, r.CompletedAt = completed.valid, completed.t
		r.HasStatus, r.Status = status.Valid, int(status.Int64)
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: read cycle %d: %w", cycle, err)
	}
	return nil
}

// RequestCitation returns request id with the fields the audit cites it and
// its checks by: ID, URL, Purpose, SentAt, CompletedAt, Status, Outcome,
// RobotsRule and PolicyCheck (times in UTC). It returns an error wrapping
// ErrNotFound when there is no such request. It does I/O.
func (s *Store) RequestCitation(ctx context.Context, id int64) (*Request, error) {
	var (
		r           Request
		completedAt sql.NullTime
		status      sql.NullInt64
	)
	err := s.pool.QueryRowContext(ctx, s.rebind(`SELECT id, url, purpose, sent_at, completed_at, status, outcome, robots_rule, policy_check
		FROM requests WHERE id = ?`), id).
		Scan(&r.ID, &r.URL, &r.Purpose, &r.SentAt, &completedAt, &status, &r.Outcome, &r.RobotsRule, &r.PolicyCheck)
	if err != nil {
		return nil, notFound(err, "request "+strconv.FormatInt(id, 10))
	}
	r.SentAt = r.SentAt.UTC()
	if completedAt.Valid {
		t := completedAt.Time.UTC()
		r.CompletedAt = &t
	}
	if status.Valid {
		n := int(status.Int64)
		r.Status = &n
	}
	return &r, nil
}

// placeholders returns n comma-separated ? placeholders.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// inChunks calls fn with xs as query arguments, at most n at a time, in
// order, and stops at the first error fn returns, returning it.
func inChunks[T any](xs []T, n int, fn func(args []any) error) error {
	for len(xs) > 0 {
		chunk := xs[:min(len(xs), n)]
		xs = xs[len(chunk):]
		args := make([]any, len(chunk))
		for i, x := range chunk {
			args[i] = x
		}
		if err := fn(args); err != nil {
			return err
		}
	}
	return nil
}
