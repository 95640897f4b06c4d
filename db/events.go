package db

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// LockPolicy takes the policy write lock at the start of a transaction
// that changes the policy, before it reads what it is about to change, so
// that two writers never both find a site unexcluded and both exclude it.
// On PostgreSQL it locks the policy_state row; SQLite transactions begin
// IMMEDIATE, holding the database's write lock already. It does I/O.
func (tx *Tx) LockPolicy(ctx context.Context) error {
	if tx.dialect != Postgres {
		return nil
	}
	var version int64
	if err := tx.with(ctx).Raw("SELECT version FROM policy_state WHERE id = 1 FOR UPDATE").Scan(&version).Error; err != nil {
		return fmt.Errorf("db: lock policy: %w", err)
	}
	return nil
}

// MaxReserveAhead bounds how long before its time a crawler reserves a
// request (logs it, with sent_at at that time): the crawler's reservation
// is then written while it waits out the host's gap, not after. On
// PostgreSQL a crawler reserves this far ahead while it has request slots
// to spare (crawler: reserveAhead). It covers the slow tail of a
// reservation's group commit: with 50 ms, in the fleet benchmark (1,000
// sites at 1 s, two crawlers on two cores) up to one reservation in
// fifteen came back more than 5 ms after its request's time, and the
// request went that late.
const MaxReserveAhead = 150 * time.Millisecond

// AwaitReservedAhead makes an exclusion of sites, whose transaction holds
// the policy write lock (LockPolicy), take its time only after every
// request to those sites reserved before it is due, so that a request
// logged as sent at a time after the exclusion's never was: one reserved
// before the lock is visible here and is sent at its sent_at, and one
// reserved after waits for the lock and is refused (its gate's version is
// stale). now is the time the exclusion would take without the wait. The
// wait is that of the latest such request, at most MaxReserveAhead (a
// crawler reserves no further ahead); an exclusion of sites with no
// request reserved ahead does not wait. On SQLite the crawler checks
// again at the request's time instead (crawler: confirm, ordered with
// policy changes by the database's one write lock); on PostgreSQL, where
// a fleet's crawlers and the policy write on connections of their own, in
// no one order, the exclusion waits, which is rare, rather than every
// request. It does nothing on SQLite. It does I/O.
func (tx *Tx) AwaitReservedAhead(ctx context.Context, sites []string, now time.Time) error {
	if tx.dialect != Postgres || len(sites) == 0 {
		return nil
	}
	last, err := tx.reservedAhead(ctx, sites, now)
	if err != nil || last.IsZero() {
		return err
	}
	// Past it by a microsecond (sent_at's precision): the exclusion's
	// time, taken after the wait, is then no earlier.
	t := time.NewTimer(min(last.Sub(now)+time.Microsecond, MaxReserveAhead))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reservedAhead returns the latest sent_at after now of the requests to
// sites, the zero time when there is none (on PostgreSQL; requests_site
// serves it, a range of sent_at per site).
func (tx *Tx) reservedAhead(ctx context.Context, sites []string, now time.Time) (time.Time, error) {
	var last sql.NullTime
	if err := tx.queryRow(ctx, "SELECT MAX(sent_at) FROM requests WHERE site = ANY(?) AND sent_at > ?", sites, now).Scan(&last); err != nil {
		return time.Time{}, fmt.Errorf("db: requests reserved ahead: %w", err)
	}
	return last.Time, nil
}

// AppendEvent bumps the policy version and appends ev carrying it (ev's
// Version and ID are set). The UPDATE takes the row lock that orders all
// policy writers, so versions become visible in increasing order. Errors
// are returned as the driver gave them. It does I/O.
func (tx *Tx) AppendEvent(ctx context.Context, ev *PolicyEvent) error {
	if err := checkText("policy_events", "kind", ev.Kind, "site", ev.Site, "actor", ev.Actor, "reason", ev.Reason,
		"evidence", ev.Evidence, "source", ev.Source, "detail", ev.Detail); err != nil {
		return err
	}
	// Raw SQL rather than gorm's Create: this runs for every exclusion, and
	// gorm's reflection cost more than the insert itself (mail import).
	if err := tx.queryRow(ctx, "UPDATE policy_state SET version = version + 1 WHERE id = 1 RETURNING version").Scan(&ev.Version); err != nil {
		return err
	}
	return tx.queryRow(ctx, `INSERT INTO policy_events (version, happened_at, kind, site, actor, reason, evidence, source, detail,
		purged_pages, purged_anchors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		ev.Version, ev.HappenedAt, ev.Kind, ev.Site, ev.Actor, ev.Reason, ev.Evidence, ev.Source, ev.Detail,
		ev.PurgedPages, ev.PurgedAnchors).Scan(&ev.ID)
}

// SiteEvents returns the policy events of site, oldest first. It does I/O.
func (q queries) SiteEvents(ctx context.Context, site string) ([]PolicyEvent, error) {
	var out []PolicyEvent
	if err := q.with(ctx).Where("site = ?", site).Order("version").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read policy events: %w", err)
	}
	return out, nil
}

// EventsByEvidenceKind returns the policy events of kind whose evidence is
// evidence, oldest first. It does I/O.
func (q queries) EventsByEvidenceKind(ctx context.Context, evidence, kind string) ([]PolicyEvent, error) {
	var out []PolicyEvent
	if err := q.with(ctx).Where("evidence = ? AND kind = ?", evidence, kind).Order("version").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read policy events: %w", err)
	}
	return out, nil
}

// ExclusionChange is an exclude or re-include event, as the policy gate
// applies it.
type ExclusionChange struct {
	Kind string // EventExclude or EventReinclude
	Site string
}

// PolicyWatch reads the policy version and the exclusion changes, for a gate
// that checks before every request. On SQLite it holds a prepared
// statement; Close releases it. It is safe for concurrent use.
type PolicyWatch struct {
	pool        *sql.DB
	postgres    bool
	versionStmt *sql.Stmt
	eventsQuery string

	// readVersion is one read of the version (the prepared statement's).
	readVersion func(ctx context.Context) (int64, error)

	mu      sync.Mutex   // guards reading and next
	reading bool         // a read of the version is under way
	next    *versionRead // the read that starts when the one under way ends
}

// versionRead is one read of the policy version, shared by the callers of
// Version that wait for it.
type versionRead struct {
	done    chan struct{} // closed when version and err are set
	version int64
	err     error
}

// NewPolicyWatch prepares the version read. It does I/O.
//
// On PostgreSQL the read is not prepared here: pgx prepares it on each
// connection the first time and keeps it in the connection's statement
// cache, as it does every query. A statement prepared through database/sql
// had to be deallocated on every connection it ran on when the watch was
// closed, a round trip each at the end of a crawl.
func (s *Store) NewPolicyWatch(ctx context.Context) (*PolicyWatch, error) {
	w := &PolicyWatch{pool: s.pool, postgres: s.Dialect == Postgres}
	w.eventsQuery = s.rebind("SELECT kind, site FROM policy_events WHERE version > ? AND version <= ?" +
		" AND kind IN ('" + EventExclude + "', '" + EventReinclude + "') ORDER BY version")
	const query = "SELECT version FROM policy_state WHERE id = 1"
	if w.postgres {
		w.readVersion = func(ctx context.Context) (version int64, err error) {
			err = s.pool.QueryRowContext(ctx, query).Scan(&version)
			return version, err
		}
		return w, nil
	}
	stmt, err := s.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	w.versionStmt = stmt
	w.readVersion = func(ctx context.Context) (version int64, err error) {
		err = stmt.QueryRowContext(ctx).Scan(&version)
		return version, err
	}
	return w, nil
}

// Close releases the prepared statement, if there is one.
func (w *PolicyWatch) Close() error {
	if w.versionStmt == nil {
		return nil
	}
	return w.versionStmt.Close()
}

// Version reads the current policy version: one indexed single-row read,
// begun after the call. Calls made while a read is under way share the
// next one, begun when it ends: when many sites start at once, the
// database sees one read at a time, not one per site, and each caller
// still gets a version read after it asked.
func (w *PolicyWatch) Version(ctx context.Context) (int64, error) {
	w.mu.Lock()
	if w.next == nil {
		w.next = &versionRead{done: make(chan struct{})}
	}
	r := w.next
	if !w.reading {
		w.reading, w.next = true, nil
		w.mu.Unlock()
		go w.read(r)
	} else {
		w.mu.Unlock()
	}
	select {
	case <-r.done:
		return r.version, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// read reads the version for r, and then starts the read the callers
// that came meanwhile wait for, if any.
func (w *PolicyWatch) read(r *versionRead) {
	// (Shared by callers whose contexts differ: bounded by its own.)
	ctx, cancel := context.WithTimeout(context.Background(), versionReadTimeout)
	r.version, r.err = w.readVersion(ctx)
	cancel()
	close(r.done)
	w.mu.Lock()
	next := w.next
	w.next = nil
	w.reading = next != nil
	w.mu.Unlock()
	if next != nil {
		go w.read(next)
	}
}

// versionReadTimeout bounds one read of the policy version.
const versionReadTimeout = 30 * time.Second

// Snapshot reads the policy version and the set of excluded sites at that
// version, in one read-only snapshot. It does I/O.
func (w *PolicyWatch) Snapshot(ctx context.Context) (int64, map[string]struct{}, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if w.postgres {
		// One snapshot for the version and the set (SQLite's read
		// transactions are snapshots already).
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := w.pool.BeginTx(ctx, opts)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	var version int64
	if err := tx.QueryRowContext(ctx, "SELECT version FROM policy_state WHERE id = 1").Scan(&version); err != nil {
		return 0, nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT site FROM exclusions")
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	set := make(map[string]struct{}, 1024)
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return 0, nil, err
		}
		set[s] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	return version, set, nil
}

// Changes returns the exclude and re-include events with versions in
// (after, upto], in version order. It does I/O.
func (w *PolicyWatch) Changes(ctx context.Context, after, upto int64) ([]ExclusionChange, error) {
	rows, err := w.pool.QueryContext(ctx, w.eventsQuery, after, upto)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ExclusionChange
	for rows.Next() {
		var e ExclusionChange
		if err := rows.Scan(&e.Kind, &e.Site); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// PolicyEvent returns the policy event with row id id, or an error
// wrapping ErrNotFound. It does I/O.
func (q queries) PolicyEvent(ctx context.Context, id int64) (*PolicyEvent, error) {
	var ev PolicyEvent
	if err := q.with(ctx).Where("id = ?", id).Take(&ev).Error; err != nil {
		return nil, notFound(err, fmt.Sprintf("policy event %d", id))
	}
	return &ev, nil
}

// PolicyVersionForWrite reads the policy version inside a crawler's write
// transaction; on PostgreSQL the row stays share-locked until it ends, so
// no policy change commits in between.
func PolicyVersionForWrite(ctx context.Context, tx WriteTx) (int64, error) {
	q := `SELECT version FROM policy_state WHERE id = 1`
	if tx.Dialect() == Postgres {
		q += ` FOR SHARE`
	}
	var v int64
	err := tx.QueryRow(ctx, q).Scan(&v)
	return v, err
}

// ExcludedSince reports whether site's last exclusion or re-inclusion
// after policy version was an exclusion: whether a site allowed at version
// is excluded now. It runs in a crawler's write transaction.
func ExcludedSince(ctx context.Context, tx WriteTx, site string, version int64) (bool, error) {
	var kind string
	err := tx.QueryRow(ctx, `SELECT kind FROM policy_events WHERE site = ? AND version > ? AND kind IN (?, ?)
		ORDER BY version DESC LIMIT 1`, site, version, EventExclude, EventReinclude).Scan(&kind)
	if noRows(err) {
		return false, nil
	}
	return kind == EventExclude, err
}

// SitesEverExcluded returns every site that has an exclusion event in the
// policy log, re-included since or not, in no particular order. It does
// I/O.
func (s *Store) SitesEverExcluded(ctx context.Context) ([]string, error) {
	rows, err := s.pool.QueryContext(ctx, s.rebind("SELECT DISTINCT site FROM policy_events WHERE kind = ?"), EventExclude)
	if err != nil {
		return nil, fmt.Errorf("db: read exclusions: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var site string
		if err := rows.Scan(&site); err != nil {
			return nil, fmt.Errorf("db: read exclusions: %w", err)
		}
		out = append(out, site)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: read exclusions: %w", err)
	}
	return out, nil
}
