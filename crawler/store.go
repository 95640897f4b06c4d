package crawler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/crawler/botauth"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
)

// Reasons a request is not sent, found inside the reservation transaction.
var (
	// ErrExcluded means the policy gate answered that the site is excluded.
	ErrExcluded = errors.New("crawler: site is excluded")
	// ErrBudgetSpent means the cycle has no budget slot left.
	ErrBudgetSpent = errors.New("crawler: budget spent")
	// ErrLeaseLost means this crawler no longer holds the host's lease.
	ErrLeaseLost = errors.New("crawler: host lease lost")
)

// rebind turns ? placeholders into PostgreSQL's $n when needed.
func (c *Crawler) rebind(q string) string {
	if !c.pg {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// wtx is a write transaction: on PostgreSQL a database/sql transaction
// (statements rebound to $n), on SQLite the writer's own connection inside
// its group transaction (statements prepared once).
type wtx struct {
	c  *Crawler
	tx *sql.Tx   // PostgreSQL
	lc *liteConn // SQLite
}

func (t *wtx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	if t.lc != nil {
		return t.lc.exec(q, args...)
	}
	res, err := t.tx.ExecContext(ctx, t.c.rebind(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// rowScanner is the one row of queryRow.
type rowScanner interface{ Scan(dest ...any) error }

func (t *wtx) queryRow(ctx context.Context, q string, args ...any) rowScanner {
	if t.lc != nil {
		return t.lc.queryRow(q, args...)
	}
	return t.tx.QueryRowContext(ctx, t.c.rebind(q), args...)
}

// logicalError reports whether err is an answer of a transaction's own
// logic (nothing to send, ask again) rather than a database failure.
func logicalError(err error) bool {
	var skip *errSkip
	return errors.Is(err, errStale) || errors.Is(err, ErrBudgetSpent) || errors.Is(err, ErrLeaseLost) ||
		errors.Is(err, ErrExcluded) || errors.As(err, &skip)
}

// withTx runs f in a write transaction: f is handed to a writer goroutine,
// which commits the work of many callers in one transaction (group
// commit): on SQLite the one writer, with prepared statements; on
// PostgreSQL one of pgWriters, each caller in a savepoint (see pgWriter).
// f may run twice (it must only set its results), when another f of its
// group failed.
func (c *Crawler) withTx(ctx context.Context, f func(tx *wtx) error) error {
	w := &writeOp{ctx: ctx, f: f, done: make(chan error, 1)}
	select {
	case c.writes <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.writerDone:
		return errWriterStopped
	}
	return <-w.done
}

// writeOp is one caller's work for the SQLite writer.
type writeOp struct {
	ctx  context.Context
	f    func(tx *wtx) error
	done chan error
}

// maxGroup bounds the callers committed together.
const maxGroup = 256

// openWriter opens the SQLite writer's own connection to the file the
// store uses, and one for its checkpoints.
func (c *Crawler) openWriter(ctx context.Context) (w, ck *liteConn, err error) {
	rows, err := c.store.SQL.QueryContext(ctx, `PRAGMA database_list`)
	if err != nil {
		return nil, nil, fmt.Errorf("crawler: database writer: %w", err)
	}
	defer rows.Close()
	path := ""
	for rows.Next() {
		var (
			seq        int64
			name, file string
		)
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return nil, nil, fmt.Errorf("crawler: database writer: %w", err)
		}
		if name == "main" {
			path = file
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("crawler: database writer: %w", err)
	}
	if path == "" {
		return nil, nil, errors.New("crawler: database writer: the SQLite database is not a file")
	}
	if w, err = openLite(path); err == nil {
		// Checkpoints are the checkpointer's (and, now and then, the
		// writer's own: see writer), never a commit's.
		if _, err = w.exec("PRAGMA wal_autocheckpoint = 0"); err == nil {
			ck, err = openLite(path)
		}
		if err != nil {
			w.close()
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("crawler: database writer: %w", err)
	}
	return w, ck, nil
}

// Checkpoints of the SQLite writer's WAL.
const (
	// checkpointEvery is how often the checkpointer copies committed pages
	// from the WAL into the database file.
	checkpointEvery = 100 * time.Millisecond
	// walRestartFrames is the WAL length (in pages) past which the writer
	// has the WAL started over from its beginning.
	walRestartFrames = 4096
)

// checkpointer copies what the writer committed from the WAL into the
// database file, every checkpointEvery while there is anything new, with
// passive checkpoints on its own connection lc: they never block the
// writer, and their waits for the disk (two fsyncs each) are not the
// writer's, whose requests would wait behind them. It stops (and closes
// lc) when ctx ends.
//
// The WAL starts over from its beginning only when a transaction starts
// with every page of it checkpointed, which a checkpoint running beside a
// busy writer never leaves behind; so once the WAL is walRestartFrames
// long, the checkpointer asks the writer to copy the few pages left itself
// (see writer).
func (c *Crawler) checkpointer(ctx context.Context, lc *liteConn) {
	defer lc.close()
	t := c.clock.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if !c.walDirty.Swap(false) {
			continue
		}
		var busy, frames, copied int64
		if err := lc.queryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
			c.log.Warn("database checkpoint failed", "err", err)
			continue
		}
		if frames >= walRestartFrames {
			c.walLong.Store(true)
		}
	}
}

// writer is the SQLite writer goroutine: it owns the connection lc and
// commits the pending work of all callers in one transaction. It stops
// (and closes lc) when ctx ends.
func (c *Crawler) writer(ctx context.Context, lc *liteConn) {
	defer lc.close()
	t := &wtx{c: c, lc: lc}
	run := func(ops []*writeOp) error {
		if _, err := lc.exec("BEGIN IMMEDIATE"); err != nil {
			return err
		}
		results := make([]error, len(ops))
		for i, op := range ops {
			if err := op.ctx.Err(); err != nil {
				results[i] = err
				continue
			}
			if err := op.f(t); err != nil {
				if !logicalError(err) {
					lc.rollback()
					return err
				}
				results[i] = err
			}
		}
		if _, err := lc.exec("COMMIT"); err != nil {
			lc.rollback()
			return err
		}
		for i, op := range ops {
			op.done <- results[i]
		}
		c.walDirty.Store(true)
		if c.walLong.Swap(false) {
			// Copy what the checkpointer has not yet, so that the next
			// transaction starts the WAL over (unless a reader still
			// uses it: then the checkpointer asks again).
			if _, err := lc.exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
				c.log.Warn("database checkpoint failed", "err", err)
			}
		}
		return nil
	}
	commitGroups(ctx, c.writes, maxGroup, run)
}

// commitGroups takes the callers waiting on writes in groups of at most limit
// (whoever is queued when a group starts: the group grows while the last
// commit is on its way to disk) and commits each group with run, which
// answers every caller of a group it committed. When a group fails as a
// whole, each of its callers is tried alone, so that one caller's failure
// never fails the others. It blocks until ctx ends.
func commitGroups(ctx context.Context, writes <-chan *writeOp, limit int, run func([]*writeOp) error) {
	for {
		var ops []*writeOp
		select {
		case <-ctx.Done():
			return
		case op := <-writes:
			ops = append(ops, op)
		}
	drain:
		for len(ops) < limit {
			select {
			case op := <-writes:
				ops = append(ops, op)
			default:
				break drain
			}
		}
		if err := run(ops); err != nil {
			if len(ops) == 1 {
				ops[0].done <- err
				continue
			}
			for _, op := range ops {
				if err := run([]*writeOp{op}); err != nil {
					op.done <- err
				}
			}
		}
	}
}

// errWriterStopped answers writes after Close.
var errWriterStopped = errors.New("crawler: closed")

// leaseState is a lease row as read.
type leaseState struct {
	holder    string
	expiresAt time.Time
	nextAt    time.Time
}

// acquire tries to take the lease key (a host, or "cycle:SITE") for this
// crawler. It returns the row's next_at when taken, or busyUntil (the
// lease's expiry) when another live crawler holds it. An expired lease of a
// crawler that died is taken over; since that crawler's last request ended
// before the expiry at the latest, next_at moves to the expiry plus gap.
func (c *Crawler) acquire(ctx context.Context, key string, gap time.Duration) (nextAt time.Time, busyUntil time.Time, err error) {
	for attempt := 0; attempt < 10; attempt++ {
		now := c.now()
		exp := now.Add(c.opts.LeaseTTL)
		var (
			got  bool
			busy time.Time
		)
		err = c.withLeaseTx(ctx, func(tx *wtx) error {
			n, err := tx.exec(ctx, `INSERT INTO host_leases (host, holder, expires_at, next_at) VALUES (?, ?, ?, ?) ON CONFLICT (host) DO NOTHING`,
				key, c.holder, exp, now)
			if err != nil {
				return err
			}
			if n == 1 {
				got, nextAt = true, now
				return nil
			}
			var l leaseState
			if err := tx.queryRow(ctx, (`SELECT holder, expires_at, next_at FROM host_leases WHERE host = ?`), key).
				Scan(&l.holder, &l.expiresAt, &l.nextAt); err != nil {
				return err
			}
			switch {
			case l.holder == c.holder:
				n, err = tx.exec(ctx, `UPDATE host_leases SET expires_at = ? WHERE host = ? AND holder = ?`, exp, key, c.holder)
				nextAt = l.nextAt
			case l.holder == "":
				n, err = tx.exec(ctx, `UPDATE host_leases SET holder = ?, expires_at = ? WHERE host = ? AND holder = ''`, c.holder, exp, key)
				nextAt = l.nextAt
			case l.expiresAt.After(now):
				busy = l.expiresAt
				return nil
			default:
				nextAt = l.nextAt
				if t := l.expiresAt.Add(gap); t.After(nextAt) {
					nextAt = t.UTC().Truncate(time.Microsecond)
				}
				c.log.Info("lease taken over from a crawler that stopped renewing it", "lease", key, "from", l.holder, "expired_at", l.expiresAt)
				n, err = tx.exec(ctx, `UPDATE host_leases SET holder = ?, expires_at = ?, next_at = ? WHERE host = ? AND holder = ? AND expires_at < ?`,
					c.holder, exp, nextAt, key, l.holder, now)
				if err == nil && n == 1 {
					err = c.abandon(ctx, tx, key, l.holder, l.expiresAt)
				}
			}
			if err != nil {
				return err
			}
			got = n == 1
			return nil
		})
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("crawler: lease %s: %w", key, err)
		}
		if got {
			return nextAt.UTC(), time.Time{}, nil
		}
		if !busy.IsZero() {
			return time.Time{}, busy, nil
		}
	}
	return time.Time{}, c.clock.Now().Add(time.Second), nil
}

// release gives a lease back, keeping next_at (raised to nextAt when later)
// so that the next holder keeps the gap.
func (c *Crawler) release(ctx context.Context, key string, nextAt time.Time) error {
	return c.withLeaseTx(ctx, func(tx *wtx) error {
		now := c.now()
		if nextAt.IsZero() {
			_, err := tx.exec(ctx, `UPDATE host_leases SET holder = '', expires_at = ? WHERE host = ? AND holder = ?`, now, key, c.holder)
			return err
		}
		_, err := tx.exec(ctx, `UPDATE host_leases SET holder = '', expires_at = ?, next_at = ? WHERE host = ? AND holder = ?`,
			now, nextAt.UTC().Truncate(time.Microsecond), key, c.holder)
		return err
	})
}

// renewAll pushes back the expiry of every lease this crawler holds.
func (c *Crawler) renewAll(ctx context.Context) error {
	return c.withLeaseTx(ctx, func(tx *wtx) error {
		q := `UPDATE host_leases SET expires_at = ? WHERE holder = ?`
		if c.pg {
			// Rows a writer's group has locked are passed over (the
			// completion in that group renews its host's lease itself),
			// so the heartbeat never waits for, nor deadlocks with, a
			// group.
			q = `UPDATE host_leases SET expires_at = ? WHERE host IN
				(SELECT host FROM host_leases WHERE holder = ? FOR UPDATE SKIP LOCKED)`
		}
		_, err := tx.exec(ctx, q, c.now().Add(c.opts.LeaseTTL), c.holder)
		return err
	})
}

// releaseAll gives back every lease this crawler still holds.
func (c *Crawler) releaseAll(ctx context.Context) error {
	return c.withLeaseTx(ctx, func(tx *wtx) error {
		_, err := tx.exec(ctx, `UPDATE host_leases SET holder = '', expires_at = ? WHERE holder = ?`, c.now(), c.holder)
		return err
	})
}

// reqRow is a request about to be sent.
type reqRow struct {
	CycleID    *int64
	Site       string
	Host       string
	Origin     string
	URL        string
	Purpose    string
	Attempt    int
	RedirectOf *int64
	SnapshotID *int64
	Rule       string
	Line       int
	Delay      time.Duration // the gap in force before this request
	Cond       db.Validators // sent as If-None-Match / If-Modified-Since when set

	// Filled by begin.
	ID       int64
	Slot     int
	SentAt   time.Time
	Verdict  policy.Verdict
	Budgeted bool
}

// askGate asks the policy gate about site (the gate reads the policy
// version and applies any change committed since it last looked) and keeps
// the answer for begin.
func (c *Crawler) askGate(ctx context.Context, site string) (policy.Verdict, error) {
	v, err := c.gate.Check(ctx, site)
	if err != nil {
		return policy.Verdict{}, fmt.Errorf("crawler: %w", err)
	}
	c.verdicts.Store(site, v)
	return v, nil
}

// begin is the reservation transaction written before a request is sent: it
// reads the policy version and makes sure the gate's answer for the site was
// given at that very version (else the gate is asked again: a policy change
// committed since), checks and extends this crawler's lease on the host,
// reserves a budget slot for a page request (never given back), and writes
// the request's log row with sent_at. It returns ErrExcluded,
// ErrBudgetSpent or ErrLeaseLost when the request must not be sent.
//
// The gate's last answer for the site is reused while the version read in
// the transaction is the one it was given at: the set of excluded sites is
// the same at the same version, so the answer is exactly what asking again
// would give, without a second read of the version per request.
func (c *Crawler) begin(ctx context.Context, r *reqRow) error {
	versionQ := `SELECT version FROM policy_state WHERE id = 1`
	if c.pg {
		versionQ += ` FOR SHARE`
	}
	for attempt := 0; ; attempt++ {
		var v policy.Verdict
		last, ok := c.verdicts.Load(r.Site)
		if ok && attempt == 0 && !last.(policy.Verdict).Excluded {
			v = last.(policy.Verdict)
		} else {
			var err error
			v, err = c.askGate(ctx, r.Site)
			if err != nil {
				return err
			}
		}
		r.Verdict = v
		if v.Excluded {
			return ErrExcluded
		}
		stale := false
		err := c.withTx(ctx, func(tx *wtx) error {
			var version int64
			if err := tx.queryRow(ctx, versionQ).Scan(&version); err != nil {
				return err
			}
			if version != v.Version {
				stale = true // a policy change committed since the gate answered: ask again
				return errStale
			}
			now := c.now()
			n, err := tx.exec(ctx, `UPDATE host_leases SET expires_at = ? WHERE host = ? AND holder = ?`, now.Add(c.opts.LeaseTTL), r.Host, c.holder)
			if err != nil {
				return err
			}
			if n != 1 {
				return ErrLeaseLost
			}
			var slot *int
			if r.Purpose == db.PurposePage {
				if r.CycleID == nil {
					return ErrBudgetSpent
				}
				var spent int
				err := tx.queryRow(ctx, (`UPDATE crawl_cycles SET spent = spent + 1 WHERE id = ? AND status = ? AND spent < budget RETURNING spent`),
					*r.CycleID, db.CycleRunning).Scan(&spent)
				if errors.Is(err, sql.ErrNoRows) {
					return ErrBudgetSpent
				}
				if err != nil {
					return err
				}
				slot = &spent
				r.Slot = spent
			}
			r.SentAt = now
			return tx.queryRow(ctx, (`INSERT INTO requests (cycle_id, budget_slot, site, host, origin, url, method, purpose, node, attempt,
				redirect_of, robots_snapshot_id, robots_rule, robots_line, policy_check, delay_ms, sent_at)
				VALUES (?, ?, ?, ?, ?, ?, 'GET', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
				r.CycleID, slot, r.Site, r.Host, r.Origin, r.URL, r.Purpose, c.opts.Node, r.Attempt,
				r.RedirectOf, r.SnapshotID, r.Rule, r.Line, v.String(), r.Delay.Milliseconds(), now).Scan(&r.ID)
		})
		if stale && attempt < 20 {
			continue
		}
		if err != nil {
			if errors.Is(err, ErrBudgetSpent) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrExcluded) {
				return err
			}
			return fmt.Errorf("crawler: request log: %w", err)
		}
		c.stats.requests.Add(1)
		return nil
	}
}

var errStale = errors.New("crawler: policy changed")

// completion is what is written after a request.
type completion struct {
	ID             int64
	Host           string
	CompletedAt    time.Time
	Status         int // 0: no response
	Bytes          int64
	Duration       time.Duration
	RetryAfter     string
	RetryNotBefore *time.Time
	Outcome        string
	Error          string
	NextAt         time.Time     // when the next request to the host may start
	Stamp          botauth.Stamp // what the request was signed with (Web Bot Auth)
	Validators     db.Validators // the response's ETag and Last-Modified (page requests)

	Page     *db.Page // stored (upserted) when set
	Unindex  string   // URL removed from the index when set
	Anchors  []db.Anchor
	Snapshot *db.RobotsSnapshot // stored when set; its ID is filled
}

// complete writes the request's outcome, the host's next_at and what the
// response adds to the index, in one transaction. It uses a context that
// survives ctx's cancellation, so an interrupted crawl still completes its
// rows.
func (c *Crawler) complete(ctx context.Context, k *completion) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if len(k.Error) > 500 {
		k.Error = k.Error[:500]
	}
	var status *int
	if k.Status != 0 {
		status = &k.Status
	}
	return c.withTx(ctx, func(tx *wtx) error {
		var sigCreated, sigExpires *time.Time
		if k.Stamp.KeyID != "" {
			sigCreated, sigExpires = &k.Stamp.Created, &k.Stamp.Expires
		}
		if _, err := tx.exec(ctx, `UPDATE requests SET completed_at = ?, status = ?, bytes = ?, duration_ms = ?, retry_after = ?,
			retry_not_before = ?, outcome = ?, error = ?, sig_keyid = ?, sig_created = ?, sig_expires = ?, etag = ?, last_modified = ?
			WHERE id = ? AND completed_at IS NULL`,
			k.CompletedAt, status, k.Bytes, k.Duration.Milliseconds(), k.RetryAfter, k.RetryNotBefore, k.Outcome, k.Error,
			k.Stamp.KeyID, sigCreated, sigExpires, k.Validators.ETag, k.Validators.LastModified, k.ID); err != nil {
			return fmt.Errorf("crawler: complete request: %w", err)
		}
		if !k.NextAt.IsZero() {
			if _, err := tx.exec(ctx, `UPDATE host_leases SET next_at = ?, expires_at = ? WHERE host = ? AND holder = ?`,
				k.NextAt.UTC().Truncate(time.Microsecond), c.now().Add(c.opts.LeaseTTL), k.Host, c.holder); err != nil {
				return fmt.Errorf("crawler: lease: %w", err)
			}
		}
		if s := k.Snapshot; s != nil {
			s.RequestID = &k.ID
			if err := tx.queryRow(ctx, (`INSERT INTO robots_snapshots (origin, fetched_at, status, final_url, body, sha256, outcome, error, request_id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
				s.Origin, s.FetchedAt, s.Status, s.FinalURL, s.Body, s.Sha256, s.Outcome, s.Error, s.RequestID).Scan(&s.ID); err != nil {
				return fmt.Errorf("crawler: robots snapshot: %w", err)
			}
		}
		if p := k.Page; p != nil {
			p.RequestID = &k.ID
			if _, err := tx.exec(ctx, `INSERT INTO pages (url, site, title, description, h1, h2, h3, status, fetched_at, request_id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (url) DO UPDATE SET site = excluded.site, title = excluded.title, description = excluded.description,
				h1 = excluded.h1, h2 = excluded.h2, h3 = excluded.h3, status = excluded.status, fetched_at = excluded.fetched_at,
				request_id = excluded.request_id`,
				p.URL, p.Site, p.Title, p.Description, p.H1, p.H2, p.H3, p.Status, p.FetchedAt, p.RequestID); err != nil {
				return fmt.Errorf("crawler: index page: %w", err)
			}
		}
		if k.Unindex != "" {
			if _, err := tx.exec(ctx, `DELETE FROM pages WHERE url = ?`, k.Unindex); err != nil {
				return fmt.Errorf("crawler: unindex page: %w", err)
			}
			if k.Outcome == "noindex" {
				// Nothing is kept for a noindex page, its inbound link
				// texts included.
				if _, err := tx.exec(ctx, `DELETE FROM anchors WHERE to_url = ?`, k.Unindex); err != nil {
					return fmt.Errorf("crawler: unindex anchors: %w", err)
				}
			}
		}
		for i := 0; i < len(k.Anchors); i += 50 {
			chunk := k.Anchors[i:min(i+50, len(k.Anchors))]
			var b strings.Builder
			b.WriteString(`INSERT INTO anchors (from_url, to_url, to_site, anchor_text, seen_at, request_id) VALUES `)
			args := make([]any, 0, 6*len(chunk))
			for j, a := range chunk {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?, ?, ?, ?)")
				args = append(args, a.FromURL, a.ToURL, a.ToSite, a.AnchorText, a.SeenAt, k.ID)
			}
			b.WriteString(` ON CONFLICT (from_url, to_url, anchor_text) DO UPDATE SET seen_at = excluded.seen_at, request_id = excluded.request_id`)
			if _, err := tx.exec(ctx, b.String(), args...); err != nil {
				return fmt.Errorf("crawler: anchors: %w", err)
			}
		}
		return nil
	})
}
