package db

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lohisoft/lohibot/db/lite"
)

// The audit's request stream on an SQLite file, through a read-only
// fast-path connection (package lite): each value is taken as the driver
// reads it, with no scan step, the few distinct sites, origins, purposes
// and outcomes are kept as one string each, and times are parsed from
// their text by parseFixed, so that a row costs a string per text column
// instead of a packed text, its split and its conversions.

// auditColumns is the SELECT list and FROM clause of the fast stream: the
// columns of auditSelect, one each. A time column is read through unary +,
// which keeps its value but not its declared type, so the driver hands
// over its text and rowReader.time parses it (parseFixed, far cheaper than
// the driver's walk through its layouts).
const auditColumns = `SELECT r.id, r.cycle_id, r.redirect_of, r.status, r.robots_snapshot_id,
	c.delay_ms, c.budget, +c.started_at, +c.finished_at,
	r.site, r.origin, r.purpose, r.outcome, +r.sent_at, +r.completed_at, r.retry_after, r.url
	FROM requests r LEFT JOIN crawl_cycles c ON c.id = r.cycle_id`

// auditRequestsFast is AuditRequests on the fast-path connection rd: q is
// auditColumns with its conditions, args their arguments.
func auditRequestsFast(ctx context.Context, rd *lite.Conn, q string, args []any, fn func(*AuditRequest) error) error {
	rows, err := rd.Query(q, args...)
	if err != nil {
		return fmt.Errorf("db: read requests: %w", err)
	}
	defer rows.Close()
	var (
		r    AuditRequest
		prev AuditRequest // the row before, for its cycle's fields
		rr   = rowReader{rows: rows}
		tab  [4]internTable // site, origin, purpose, outcome
	)
	for n := 1; rows.Next(); n++ {
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r = AuditRequest{}
		r.ID, _ = rr.int(0)
		var hasCycleID bool
		r.CycleID, hasCycleID = rr.int(1)
		_, r.Redirect = rr.int(2)
		status, hasStatus := rr.int(3)
		r.Status, r.HasStatus = int(status), hasStatus
		r.SnapshotID, _ = rr.int(4)
		if hasCycleID && n > 1 && r.CycleID == prev.CycleID && prev.HasCycle {
			// The same cycle as the row before (a cycle's requests come
			// together): the same joined fields, not read again.
			r.HasCycle, r.CycleDelay, r.CycleBudget = true, prev.CycleDelay, prev.CycleBudget
			r.CycleStarted, r.CycleFinished, r.CycleEnded = prev.CycleStarted, prev.CycleFinished, prev.CycleEnded
		} else {
			delay, hasCycle := rr.int(5)
			budget, _ := rr.int(6)
			r.HasCycle = hasCycle
			r.CycleDelay = time.Duration(delay) * time.Millisecond
			r.CycleBudget = int(budget)
			r.CycleStarted, _ = rr.time(7)
			r.CycleFinished, r.CycleEnded = rr.time(8)
		}
		r.Site = tab[0].get(rows.String(9))
		r.Origin = tab[1].get(rows.String(10))
		r.Purpose = tab[2].get(rows.String(11))
		r.Outcome = tab[3].get(rows.String(12))
		r.SentAt, _ = rr.time(13)
		r.CompletedAt, r.Completed = rr.time(14)
		r.RetryAfter = rows.String(15)
		r.URL = rows.String(16)
		if rr.err != nil {
			return fmt.Errorf("db: read requests: %w", rr.err)
		}
		prev = r
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: read requests: %w", err)
	}
	return nil
}

// rowReader reads the numbers and times of a fast-path row as the packed
// stream does (unpackAudit): NULL is not valid, an integer is itself, any
// other value must be the text of one; its first error sticks.
type rowReader struct {
	rows *lite.Rows
	what string // what a row is, for errors ("": a request row)
	// sqlFloats reads a REAL as database/sql converts a float64 to an
	// integer (through its shortest decimal), not as SQLite's text.
	sqlFloats bool
	err       error
}

// int reads column i as an integer; ok is false for NULL.
func (rr *rowReader) int(i int) (int64, bool) {
	switch rr.rows.Type(i) {
	case lite.Null:
		return 0, false
	case lite.Integer:
		return rr.rows.Int64(i), true
	}
	b := rr.rows.String(i)
	if rr.sqlFloats && rr.rows.Type(i) == lite.Float {
		b = strconv.FormatFloat(rr.rows.Float64(i), 'g', -1, 64)
	}
	if len(b) == 0 || rr.err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(b, 10, 64)
	if err != nil {
		what := rr.what
		if what == "" {
			what = "request row"
		}
		rr.err = fmt.Errorf("malformed number %q in %s", b, what)
		return 0, false
	}
	return n, true
}

// time reads column i as a time in UTC; ok is false for NULL or empty
// text.
func (rr *rowReader) time(i int) (time.Time, bool) {
	if rr.rows.Type(i) == lite.Null {
		return time.Time{}, false
	}
	if t, ok := rr.rows.Time(i); ok {
		return t.UTC(), true
	}
	b := rr.rows.String(i)
	if len(b) == 0 || rr.err != nil {
		return time.Time{}, false
	}
	if t, ok := parseFixed(b); ok {
		return t, true
	}
	var d textTime
	if err := d.parse(b); err != nil {
		rr.err = err
		return time.Time{}, false
	}
	return d.t, d.valid
}

// internTable keeps the strings one column of the stream has read, so
// that a value read again is not allocated again. It holds at most
// internMax strings; past that it keeps only the last one read.
type internTable struct {
	last string
	m    map[string]string
}

// internMax bounds an internTable.
const internMax = 1024

// get returns s, or the same string as before if it was read before.
func (t *internTable) get(s string) string {
	if s == "" {
		return ""
	}
	if s == t.last {
		return t.last
	}
	if v, ok := t.m[s]; ok {
		t.last = v
		return v
	}
	if t.m == nil {
		t.m = make(map[string]string)
	}
	if len(t.m) < internMax {
		t.m[s] = s
	}
	t.last = s
	return s
}

// AuditReader reads what the audit's rules look up while the request log
// streams (robots.txt snapshots and their bodies), for one goroutine: on an
// SQLite file through a read-only fast-path connection of its own (the
// driver costs about 13 µs a row of snapshot metadata), else through the
// pool. Close must be called.
type AuditReader struct {
	s *Store
	c *lite.Conn // nil: the pool
}

// OpenAuditReader opens an AuditReader. It does I/O.
func (s *Store) OpenAuditReader(ctx context.Context) (*AuditReader, error) {
	c, err := s.openReader(ctx)
	if err != nil {
		return nil, err
	}
	return &AuditReader{s: s, c: c}, nil
}

// Close closes the reader's connection, if it has one of its own.
func (r *AuditReader) Close() {
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
}

// RobotsSnapshotInfos is Store.RobotsSnapshotInfos through the reader.
func (r *AuditReader) RobotsSnapshotInfos(ctx context.Context, origins []string, fn func(RobotsSnapshotInfo) error) error {
	if r.c == nil {
		return r.s.RobotsSnapshotInfos(ctx, origins, fn)
	}
	return inChunks(origins, robotsChunk, func(args []any) error {
		return r.snapshotInfos(ctx, robotsInfoSelect+"("+placeholders(len(args))+")", args, fn)
	})
}

func (r *AuditReader) snapshotInfos(ctx context.Context, q string, args []any, fn func(RobotsSnapshotInfo) error) error {
	rows, err := r.c.Query(q, args...)
	if err != nil {
		return fmt.Errorf("db: read robots.txt snapshots: %w", err)
	}
	defer rows.Close()
	rr := rowReader{rows: rows, what: "robots.txt snapshot row", sqlFloats: true}
	for rows.Next() {
		var sn RobotsSnapshotInfo
		sn.ID, _ = rr.int(0)
		sn.Origin = rows.String(1)
		var ok bool
		if sn.FetchedAt, ok = rr.time(2); !ok && rr.err == nil {
			rr.err = fmt.Errorf("db: cannot read %q as a time", rows.Bytes(2))
		}
		status, _ := rr.int(3)
		sn.Status = int(status)
		sn.Outcome, sn.Sha256, sn.Error = rows.String(4), rows.String(5), rows.String(6)
		sn.RequestID, _ = rr.int(7)
		sn.Size, _ = rr.int(8)
		if rr.err != nil {
			return fmt.Errorf("db: read robots.txt snapshots: %w", rr.err)
		}
		if err := fn(sn); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: read robots.txt snapshots: %w", err)
	}
	return ctx.Err()
}

// RobotsBodies is Store.RobotsBodies through the reader; each body fn gets
// is its own copy.
func (r *AuditReader) RobotsBodies(ctx context.Context, ids []int64, fn func(id int64, body []byte) error) error {
	if r.c == nil {
		return r.s.RobotsBodies(ctx, ids, fn)
	}
	err := inChunks(ids, bodiesChunk, func(args []any) error {
		rows, err := r.c.Query("SELECT id, body FROM robots_snapshots WHERE id IN ("+placeholders(len(args))+")", args...)
		if err != nil {
			return fmt.Errorf("db: read robots.txt bodies: %w", err)
		}
		for rows.Next() {
			var body []byte
			switch rows.Type(1) {
			case lite.Null:
			case lite.Blob:
				body = bytes.Clone(rows.BlobBytes(1))
			case lite.Float: // as database/sql renders a float64 into []byte
				body = strconv.AppendFloat(nil, rows.Float64(1), 'g', -1, 64)
			default:
				body = bytes.Clone(rows.Bytes(1))
			}
			if body == nil && rows.Type(1) != lite.Null {
				body = []byte{}
			}
			if err := fn(rows.Int64(0), body); err != nil {
				rows.Close()
				return err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("db: read robots.txt bodies: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return ctx.Err()
}
