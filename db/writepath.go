package db

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// The crawler's two writes per request, each one statement on PostgreSQL:
// the reservation before the request is sent (ReserveRequest) and the
// completion after (FinishRequest). On PostgreSQL each is a data-modifying
// CTE: one round trip and one executor start instead of four or five, and a
// reservation's refusal is a result, not a partial write to undo, so the
// crawler's group commit needs no savepoint for it. On SQLite, which has no
// data-modifying CTEs and runs in process, they are the statements of
// leases.go, cycles.go, requests.go and index.go, one after another.

// Reservation is a request's reservation, written before the request is
// sent: the policy version is checked (under a share lock on PostgreSQL, so
// that no policy change commits before the transaction does), the host lease
// is checked and renewed, a page request takes the next budget slot of its
// cycle, and the request's log row is written.
type Reservation struct {
	// Request is the log row to write; ReserveRequest fills its ID and, for
	// a budgeted request, its BudgetSlot. Its Host is the lease checked.
	Request *Request
	// Version is the policy version the gate's answer was given at.
	Version int64
	// Holder must hold the lease of Request.Host, whose expiry becomes
	// LeaseExpires.
	Holder       string
	LeaseExpires time.Time
	// Renew says the lease is renewed (and so checked): on SQLite, a
	// crawler that knows it holds the lease for long enough leaves it as
	// it is. PostgreSQL's statement always renews it.
	Renew bool
	// Budgeted says the request takes a budget slot of Request.CycleID (a
	// page request); with a nil CycleID there is none to take.
	Budgeted bool
}

// Refusal says why ReserveRequest did not reserve.
type Refusal int

// The answers of ReserveRequest.
const (
	// Reserved means the request was reserved: nothing refused it.
	Reserved Refusal = iota
	// RefusedStale means the policy version is no longer the one given.
	RefusedStale
	// RefusedLease means the holder does not hold the host lease.
	RefusedLease
	// RefusedBudget means the cycle has no budget slot left, or is not
	// running.
	RefusedBudget
)

// ReserveRequest writes the reservation r in a crawler's write transaction
// and returns Reserved, or why it was refused. The checks come in the order
// of the constants: a stale version is reported before a lost lease, a lost
// lease before a spent budget. On PostgreSQL it is one statement, and a
// refusal writes nothing. On SQLite a refusal may leave the lease renewed:
// the caller undoes it (the crawler's SQLite writer runs the group again
// without a caller refused after it wrote).
func ReserveRequest(ctx context.Context, tx WriteTx, r *Reservation) (Refusal, error) {
	if err := checkRequest(r.Request); err != nil {
		return 0, err
	}
	if tx.Dialect() == Postgres {
		return reservePG(ctx, tx, r)
	}
	v, err := PolicyVersionForWrite(ctx, tx)
	if err != nil {
		return 0, err
	}
	if v != r.Version {
		return RefusedStale, nil
	}
	q := r.Request
	if r.Renew {
		held, err := RenewLease(ctx, tx, q.Host, r.Holder, r.LeaseExpires)
		if err != nil {
			return 0, err
		}
		if !held {
			return RefusedLease, nil
		}
	}
	q.BudgetSlot = nil
	if r.Budgeted {
		if q.CycleID == nil {
			return RefusedBudget, nil
		}
		slot, ok, err := ReserveBudgetSlot(ctx, tx, *q.CycleID)
		if err != nil {
			return 0, err
		}
		if !ok {
			return RefusedBudget, nil
		}
		q.BudgetSlot = &slot
	}
	return Reserved, InsertRequest(ctx, tx, q)
}

// reserveSQL is ReserveRequest's statement on PostgreSQL (built from
// reserveTemplate). Each part is
// guarded by the results of the ones before it (every part of a
// data-modifying CTE runs): held locks the lease row if the holder holds it
// and the policy version is the gate's; slot takes a budget slot if held
// found the lease; lease renews it if held found it and, for a budgeted
// request, slot found a slot; req writes the log row if lease renewed it.
// Locking the lease row first (FOR UPDATE re-reads a row changed since the
// statement began) means no other transaction can take the lease between
// the slot and the renewal: a refusal writes nothing.
const reserveTemplate = `WITH pv AS (SELECT version FROM policy_state WHERE id = 1{{LOCK}}),
held AS (SELECT 1 FROM host_leases WHERE host = $1::text AND holder = $2::text AND (SELECT version FROM pv) = $3::bigint FOR UPDATE),
slot AS (UPDATE crawl_cycles SET spent = spent + 1
	WHERE $4::boolean AND id = $5::bigint AND status = $6::text AND spent < budget AND EXISTS (SELECT 1 FROM held)
	RETURNING spent),
lease AS (UPDATE host_leases SET expires_at = $7::timestamptz
	WHERE host = $1::text AND holder = $2::text AND EXISTS (SELECT 1 FROM held) AND (NOT $4::boolean OR EXISTS (SELECT 1 FROM slot))
	RETURNING 1),
req AS (INSERT INTO requests (cycle_id, budget_slot, site, host, origin, url, method, purpose, node, attempt,
		redirect_of, robots_snapshot_id, robots_rule, robots_line, policy_check, delay_ms, sent_at)
	SELECT $5::bigint, (SELECT spent FROM slot), $8::text, $1::text, $9::text, $10::text, 'GET', $11::text, $12::text, $13::integer,
		$14::bigint, $15::bigint, $16::text, $17::integer, $18::text, $19::bigint, $20::timestamptz
	WHERE EXISTS (SELECT 1 FROM lease)
	RETURNING id)
SELECT (SELECT version FROM pv), EXISTS (SELECT 1 FROM held), (SELECT spent FROM slot), (SELECT id FROM req)`

// reserveSQL and reserveLockedSQL are reserveTemplate with pv reading
// the policy version under a share lock, and without one: reserveLockedSQL
// is only for a transaction that holds the lock already (Pipeline.Reserve,
// after policyLockSQL), where every statement's snapshot is taken after
// the lock was: it sees any policy change committed before, and none can
// commit until the transaction ends.
var (
	reserveSQL       = strings.Replace(reserveTemplate, "{{LOCK}}", " FOR SHARE", 1)
	reserveLockedSQL = strings.Replace(reserveTemplate, "{{LOCK}}", "", 1)
)

// policyLockSQL share-locks the policy version until the transaction ends.
const policyLockSQL = `SELECT version FROM policy_state WHERE id = 1 FOR SHARE`

func reservePG(ctx context.Context, tx WriteTx, r *Reservation) (Refusal, error) {
	return scanReservation(tx.QueryRow(ctx, reserveSQL, reserveArgs(r)...), r)
}

// reserveArgs returns the arguments of reserveSQL for r.
func reserveArgs(r *Reservation) []any {
	q := r.Request
	return []any{q.Host, r.Holder, r.Version, r.Budgeted, q.CycleID, CycleRunning, r.LeaseExpires,
		q.Site, q.Origin, q.URL, q.Purpose, q.Node, q.Attempt, q.RedirectOf, q.RobotsSnapshotID, q.RobotsRule, q.RobotsLine,
		q.PolicyCheck, q.DelayMS, q.SentAt}
}

// scanReservation reads reserveSQL's row for r: why it refused, or the
// request's ID and budget slot.
func scanReservation(row Row, r *Reservation) (Refusal, error) {
	var (
		version int64
		held    bool
		slot    *int
		id      *int64
	)
	switch err := row.Scan(&version, &held, &slot, &id); {
	case err != nil:
		return 0, err
	case version != r.Version:
		return RefusedStale, nil
	case !held:
		return RefusedLease, nil
	case id == nil:
		return RefusedBudget, nil
	}
	r.Request.ID, r.Request.BudgetSlot = *id, slot
	return Reserved, nil
}

// Completion is what is written after a request: its outcome, and what
// the response changes beside it.
type Completion struct {
	// Request holds the outcome: its ID and its fields from CompletedAt on
	// (see CompleteRequest).
	Request *Request
	// Lease, when set, moves the next_at and expiry of a host lease
	// (DelayLease).
	Lease *LeaseDelay
	// Page, when set, is stored in the index (UpsertPage).
	Page *Page
	// Found, when not empty, are recorded as links found by cycle CycleID
	// (AddCycleLinks).
	CycleID int64
	Found   []string
}

// LeaseDelay is a change of a host lease's next_at and expiry, made if
// Holder holds it.
type LeaseDelay struct {
	Host, Holder    string
	NextAt, Expires time.Time
}

// FinishRequest writes the completion k in a crawler's write transaction:
// one statement on PostgreSQL.
func FinishRequest(ctx context.Context, tx WriteTx, k *Completion) error {
	if err := checkRequest(k.Request); err != nil {
		return err
	}
	if tx.Dialect() == Postgres {
		q, args := finishPG(k)
		_, err := tx.Exec(ctx, q, args...)
		return err
	}
	if err := CompleteRequest(ctx, tx, k.Request); err != nil {
		return err
	}
	if l := k.Lease; l != nil {
		if err := DelayLease(ctx, tx, l.Host, l.Holder, l.NextAt, l.Expires); err != nil {
			return err
		}
	}
	if k.Page != nil {
		if err := UpsertPage(ctx, tx, k.Page); err != nil {
			return err
		}
	}
	return AddCycleLinks(ctx, tx, k.CycleID, k.Found)
}

// finishPG returns FinishRequest's statement on PostgreSQL and its
// arguments: the request's UPDATE, with the other parts k needs as
// data-modifying CTEs beside it (none depends on another).
func finishPG(k *Completion) (string, []any) {
	var (
		args = make([]any, 0, 30)
		form finishForm
	)
	if l := k.Lease; l != nil {
		form |= finishLease
		args = append(args, l.NextAt, l.Expires, l.Host, l.Holder)
	}
	if p := k.Page; p != nil {
		form |= finishPage
		args = append(args, p.URL, p.Site, p.Title, p.Description, p.H1, p.H2, p.H3, p.Status, p.FetchedAt, p.RequestID)
	}
	if len(k.Found) > 0 {
		form |= finishLinks
		args = append(args, strings.Join(k.Found, "\n")+"\n", k.CycleID)
	}
	r := k.Request
	args = append(args, r.CompletedAt, r.Status, r.Bytes, r.DurationMS, r.RetryAfter, r.RetryNotBefore, r.Outcome, r.Error,
		r.SigKeyID, r.SigCreated, r.SigExpires, r.ETag, r.LastModified, r.ID)
	return finishSQL[form], args
}

// finishForm says which parts a completion's statement has beside the
// request's UPDATE.
type finishForm int

const (
	finishLease finishForm = 1 << iota
	finishPage
	finishLinks
	finishForms = 1 << iota
)

// finishSQL holds the statement of each finishForm, built once: its
// placeholders are numbered in the order finishPG appends the arguments.
var finishSQL = func() (out [finishForms]string) {
	for form := range finishForm(finishForms) {
		var b strings.Builder
		n := 0
		ph := func(typ string) string {
			n++
			return "$" + strconv.Itoa(n) + "::" + typ
		}
		if form != 0 {
			b.WriteString("WITH ")
		}
		if form&finishLease != 0 {
			b.WriteString("lease AS (UPDATE host_leases SET next_at = " + ph("timestamptz") + ", expires_at = " + ph("timestamptz") +
				" WHERE host = " + ph("text") + " AND holder = " + ph("text") + "), ")
		}
		if form&finishPage != 0 {
			b.WriteString("page AS (INSERT INTO pages (url, site, title, description, h1, h2, h3, status, fetched_at, request_id) VALUES (" +
				ph("text") + ", " + ph("text") + ", " + ph("text") + ", " + ph("text") + ", " + ph("text") + ", " + ph("text") + ", " +
				ph("text") + ", " + ph("integer") + ", " + ph("timestamptz") + ", " + ph("bigint") + `)
			ON CONFLICT (url) DO UPDATE SET site = excluded.site, title = excluded.title, description = excluded.description,
			h1 = excluded.h1, h2 = excluded.h2, h3 = excluded.h3, status = excluded.status, fetched_at = excluded.fetched_at,
			request_id = excluded.request_id), `)
		}
		if form&finishLinks != 0 {
			b.WriteString("links AS (UPDATE crawl_cycles SET links_found = links_found || " + ph("text") + " WHERE id = " + ph("bigint") + "), ")
		}
		if form != 0 {
			b.WriteString("done AS (")
		}
		b.WriteString("UPDATE requests SET completed_at = " + ph("timestamptz") + ", status = " + ph("integer") +
			", bytes = " + ph("bigint") + ", duration_ms = " + ph("bigint") + ", retry_after = " + ph("text") +
			", retry_not_before = " + ph("timestamptz") + ", outcome = " + ph("text") + ", error = " + ph("text") +
			", sig_keyid = " + ph("text") + ", sig_created = " + ph("timestamptz") + ", sig_expires = " + ph("timestamptz") +
			", etag = " + ph("text") + ", last_modified = " + ph("text") +
			" WHERE id = " + ph("bigint") + " AND completed_at IS NULL")
		if form != 0 {
			b.WriteString(") SELECT 1")
		}
		out[form] = b.String()
	}
	return out
}()
