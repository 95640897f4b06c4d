package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/translog/leaf"

	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/net/publicsuffix"
)

// The transparency log's storage (docs/audit-integrity.md).
//
// Every evidence row becomes one leaf of an append-only Merkle tree (RFC
// 6962 hashing, golang.org/x/mod/sumdb/tlog) once it is final, in the order
// rows became final. Writers never touch the log: a sequencer (AppendLog,
// run by the background sealer of each process that writes evidence)
// appends, one at a time per database (an advisory lock on PostgreSQL, the
// write lock on SQLite), the rows that became final since its last turn.
//
// log_leaves says which row each leaf is and holds its salt; log_hashes
// holds the tree's stored hashes (tlog.StoredHashIndex); log_cursor says,
// per table, the highest id the sequencer looked at and the ids below it
// that were not final then (a request in flight, a message in review).

// logTable is an evidence table of the log: its columns with their kinds
// (id apart), the SQL condition under which a row is final, the column
// saying when it became final, and how a row names its site.
type logTable struct {
	name  string
	cols  []logCol
	ready string
	stamp string
	site  string // the column naming the site ("origin": the site of that origin)
}

type logCol struct {
	name string
	kind leaf.Kind
}

func cols(kind leaf.Kind, names ...string) []logCol {
	out := make([]logCol, len(names))
	for i, n := range names {
		out[i] = logCol{n, kind}
	}
	return out
}

func join(parts ...[]logCol) []logCol { return slices.Concat(parts...) }

var (
	kInt  = leaf.Int
	kText = leaf.Text
	kTime = leaf.Time
	kByte = leaf.Bytes
)

// logTables are the evidence tables, in the order a sequencer's turn reads
// them. Their column lists are part of the leaf format (leaf.Version).
var logTables = []logTable{
	{name: "mail_messages", cols: join(cols(kText, "message_id"), cols(kTime, "received_at", "sent_date"),
		cols(kText, "from_addr", "subject", "intent", "domains", "lang", "auth", "auth_domain", "outcome", "review_status",
			"review_reason", "reviewed_by"), cols(kTime, "reviewed_at"), cols(kText, "source"), cols(kInt, "size"),
		cols(kText, "sha256"), cols(kByte, "raw"), cols(kText, "reasons")),
		ready: "review_status <> 'pending'", stamp: "COALESCE(reviewed_at, received_at)", site: "domains"},
	{name: "policy_events", cols: join(cols(kInt, "version"), cols(kTime, "happened_at"),
		cols(kText, "kind", "site", "actor", "reason", "evidence", "source", "detail"), cols(kInt, "purged_pages", "purged_anchors")),
		ready: "1 = 1", stamp: "happened_at", site: "site"},
	{name: "requests", cols: join(cols(kInt, "cycle_id", "budget_slot"), cols(kText, "site", "host", "origin", "url", "method", "purpose", "node"),
		cols(kInt, "attempt", "redirect_of", "robots_snapshot_id"), cols(kText, "robots_rule"), cols(kInt, "robots_line"),
		cols(kText, "policy_check"), cols(kInt, "delay_ms"), cols(kTime, "sent_at", "completed_at"), cols(kInt, "status", "bytes", "duration_ms"),
		cols(kText, "retry_after"), cols(kTime, "retry_not_before"), cols(kText, "outcome", "error", "sig_keyid"),
		cols(kTime, "sig_created", "sig_expires"), cols(kText, "etag", "last_modified")),
		ready: "completed_at IS NOT NULL", stamp: "completed_at", site: "site"},
	{name: "robots_snapshots", cols: join(cols(kText, "origin"), cols(kTime, "fetched_at"), cols(kInt, "status"),
		cols(kText, "final_url"), cols(kByte, "body"), cols(kText, "sha256", "outcome", "error"), cols(kInt, "request_id")),
		ready: "1 = 1", stamp: "fetched_at", site: "origin"},
}

// chainTable is the leaf of an upgraded database's first index: the head
// of the seal chain the log replaced, which it commits to.
var chainTable = logTable{name: "seal_blocks", cols: join(cols(kTime, "sealed_at"), cols(kText, "prev_hash", "root"),
	cols(kInt, "row_count"), cols(kText, "state", "hash"))}

// LogTables returns the names of the evidence tables.
func LogTables() []string {
	out := make([]string, len(logTables))
	for i, t := range logTables {
		out[i] = t.name
	}
	return out
}

func logTableNamed(name string) *logTable {
	for i := range logTables {
		if logTables[i].name == name {
			return &logTables[i]
		}
	}
	if name == chainTable.name {
		return &chainTable
	}
	return nil
}

// selectList is the columns a row's leaf is computed from, after id, ready
// and stamp.
func (t *logTable) selectList(alias string) string {
	var b strings.Builder
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(alias + c.name)
	}
	return b.String()
}

// record builds the leaf content of the row id of t from its column
// values as the driver read them (in t.cols order). A value of another
// type than its column's (a text written into an integer column of SQLite,
// say) is kept as what it is, so no edit is lost in the conversion.
func (t *logTable) record(id int64, salt []byte, vals []any) *leaf.Record {
	r := &leaf.Record{Table: t.name, ID: id, Salt: salt, Fields: make([]leaf.Field, len(t.cols))}
	for i, c := range t.cols {
		f := leaf.Field{Name: c.name}
		switch v := vals[i].(type) {
		case nil:
			f.Kind = leaf.Null
		case int64:
			f.Kind, f.Int = leaf.Int, v
		case int32:
			f.Kind, f.Int = leaf.Int, int64(v)
		case int:
			f.Kind, f.Int = leaf.Int, int64(v)
		case bool:
			f.Kind = leaf.Int
			if v {
				f.Int = 1
			}
		case float64:
			f.Kind, f.Bytes = leaf.Text, strconv.AppendFloat(nil, v, 'g', -1, 64)
		case time.Time:
			f.Kind, f.Time = leaf.Time, v.UTC()
		case string:
			f.Kind, f.Bytes = leaf.Text, []byte(v)
		case []byte:
			f.Kind, f.Bytes = leaf.Text, slices.Clone(v)
		default:
			f.Kind, f.Bytes = leaf.Text, fmt.Append(nil, v)
		}
		switch {
		case c.kind == leaf.Time && f.Kind == leaf.Text:
			// SQLite's text of a timestamp.
			var tt textTime
			if err := tt.Scan(string(f.Bytes)); err == nil && tt.valid {
				f.Kind, f.Time, f.Bytes = leaf.Time, tt.t, nil
			}
		case c.kind == leaf.Bytes && f.Kind == leaf.Text:
			f.Kind = leaf.Bytes
		}
		r.Fields[i] = f
	}
	switch t.site {
	case "":
	case "origin":
		if f, ok := r.Field("origin"); ok {
			r.Site = originSite(string(f.Bytes))
		}
	default:
		if f, ok := r.Field(t.site); ok {
			r.Site = string(f.Bytes)
		}
	}
	return r
}

// originSite is the site (registrable domain) of a robots.txt origin, or
// its host when it has none.
func originSite(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	h := strings.ToLower(u.Hostname())
	if s, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return s
	}
	return h
}

// logRow is an evidence row read for the log.
type logRow struct {
	table *logTable
	id    int64
	ready bool
	stamp time.Time
	vals  []any
}

// scanLogRows reads the rows of t matching where (on the alias-free
// columns), in id order, at most limit of them (0: all), and calls fn.
func (s *Store) scanLogRows(ctx context.Context, t *logTable, where string, args []any, limit int64, fn func(*logRow) error) error {
	// On an SQLite file, through the fast-path reader: database/sql's
	// conversions and locks per value made the integrity check of a
	// million requests several times slower.
	rd, err := s.openReader(ctx)
	if err != nil {
		return err
	}
	if rd != nil {
		defer rd.Close()
		return scanLogRowsFast(ctx, rd, t, where, args, limit, fn)
	}
	q := t.scanQuery(where, limit, false)
	rows, err := s.pool.QueryContext(ctx, rebind(s.Dialect, q), args...)
	if err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	defer rows.Close()
	dest := make([]any, len(t.cols)+3)
	var (
		id  int64
		rdy int64
		st  textTime
	)
	dest[0], dest[1], dest[2] = &id, &rdy, &st
	for rows.Next() {
		vals := make([]any, len(t.cols))
		for i := range vals {
			dest[i+3] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("read %s: %w", t.name, err)
		}
		if err := fn(&logRow{table: t, id: id, ready: rdy == 1, stamp: st.t, vals: vals}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	return nil
}

// LogSize returns the number of leaves of the log. It does I/O.
func (s *Store) LogSize(ctx context.Context) (int64, error) {
	n, err := logSize(ctx, s.pool, s.Dialect)
	if err != nil {
		return 0, fmt.Errorf("db: log size: %w", err)
	}
	return n, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func logSize(ctx context.Context, q queryRower, _ Dialect) (int64, error) {
	var last int64
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(idx), -1) FROM log_leaves").Scan(&last); err != nil {
		return 0, err
	}
	return last + 1, nil
}

// LogHashes returns a tlog.HashReader over the log's stored hashes. Its
// ReadHashes does I/O with ctx.
func (s *Store) LogHashes(ctx context.Context) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		return s.readHashes(ctx, indexes)
	})
}

// readHashes reads the stored hashes at indexes, in their order.
func (s *Store) readHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	got := make(map[int64]tlog.Hash, len(indexes))
	err := inChunks(indexes, 500, func(args []any) error {
		rows, err := s.pool.QueryContext(ctx, rebind(s.Dialect, "SELECT id, hash FROM log_hashes WHERE id IN ("+placeholders(len(args))+")"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id int64
				h  []byte
			)
			if err := rows.Scan(&id, &h); err != nil {
				return err
			}
			if len(h) != tlog.HashSize {
				return fmt.Errorf("stored hash %d is %d bytes", id, len(h))
			}
			got[id] = tlog.Hash(h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("db: read log hashes: %w", err)
	}
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		h, ok := got[x]
		if !ok {
			return nil, fmt.Errorf("db: read log hashes: stored hash %d is missing", x)
		}
		out[i] = h
	}
	return out, nil
}

// LogLeaf is one leaf of the log: which row it is, and its data.
type LogLeaf struct {
	Index int64
	Table string
	RowID int64
	Data  []byte // the leaf data (translog/leaf); nil when the row is gone
}

// LeafIndex returns the index of the leaf of the row id of table, or
// ErrNotFound while it has none (not final yet, or not appended yet). It
// does I/O.
func (s *Store) LeafIndex(ctx context.Context, table string, id int64) (int64, error) {
	var idx int64
	err := s.pool.QueryRowContext(ctx, rebind(s.Dialect, "SELECT idx FROM log_leaves WHERE tbl = ? AND row_id = ?"), table, id).Scan(&idx)
	if noRows(err) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("db: leaf index: %w", err)
	}
	return idx, nil
}

// LogLeafAt returns the leaf at index, its data recomputed from its row.
// It does I/O.
func (s *Store) LogLeafAt(ctx context.Context, index int64) (*LogLeaf, error) {
	var (
		tbl  string
		id   int64
		salt []byte
	)
	err := s.pool.QueryRowContext(ctx, rebind(s.Dialect, "SELECT tbl, row_id, salt FROM log_leaves WHERE idx = ?"), index).Scan(&tbl, &id, &salt)
	if noRows(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: log leaf: %w", err)
	}
	l := &LogLeaf{Index: index, Table: tbl, RowID: id}
	t := logTableNamed(tbl)
	if t == nil {
		return l, nil
	}
	err = s.scanLogRows(ctx, t, "id = ?", []any{id}, 0, func(r *logRow) error {
		l.Data = t.record(r.id, salt, r.vals).Marshal()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("db: log leaf: %w", err)
	}
	return l, nil
}

// SiteLeaves returns the leaves below size of every record of site: its
// requests, the robots.txt snapshots of the origins it was crawled at, the
// policy events naming it and the mail naming it, in leaf order. It does
// I/O.
func (s *Store) SiteLeaves(ctx context.Context, site string, size int64) ([]LogLeaf, error) {
	var out []LogLeaf
	add := func(t *logTable, where string, args ...any) error {
		q := "SELECT l.idx, l.salt, x.id, CASE WHEN 1 = 1 THEN 1 ELSE 0 END, " + t.stamp + ", " + t.selectList("x.") +
			" FROM " + t.name + " x JOIN log_leaves l ON l.tbl = '" + t.name + "' AND l.row_id = x.id WHERE l.idx < ? AND (" + where + ")"
		rows, err := s.pool.QueryContext(ctx, rebind(s.Dialect, q), append([]any{size}, args...)...)
		if err != nil {
			return fmt.Errorf("read %s: %w", t.name, err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				idx, id, one int64
				salt         []byte
				st           textTime
			)
			vals := make([]any, len(t.cols))
			dest := []any{&idx, &salt, &id, &one, &st}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				return fmt.Errorf("read %s: %w", t.name, err)
			}
			r := t.record(id, salt, vals)
			if t.name == "mail_messages" && !slices.Contains(strings.Fields(r.Site), site) {
				continue
			}
			out = append(out, LogLeaf{Index: idx, Table: t.name, RowID: id, Data: r.Marshal()})
		}
		return rows.Err()
	}
	like := "%" + strings.NewReplacer("%", "", "_", "").Replace(site) + "%"
	for _, step := range []struct {
		t     string
		where string
		args  []any
	}{
		{"requests", "x.site = ?", []any{site}},
		{"policy_events", "x.site = ?", []any{site}},
		{"mail_messages", "x.domains LIKE ?", []any{like}},
		{"robots_snapshots", "x.origin IN (SELECT DISTINCT origin FROM requests WHERE site = ?)", []any{site}},
	} {
		if err := add(logTableNamed(step.t), step.where, step.args...); err != nil {
			return nil, fmt.Errorf("db: site leaves: %w", err)
		}
	}
	slices.SortFunc(out, func(a, b LogLeaf) int { return cmpInt(a.Index, b.Index) })
	return out, nil
}

// RecordLogKey records a verifier key (sumdb/note form) the log's
// checkpoints are signed with, so the integrity check can verify a
// checkpoint signed with it. It does I/O.
func (s *Store) RecordLogKey(ctx context.Context, vkey string) error {
	_, err := s.pool.ExecContext(ctx, rebind(s.Dialect, "INSERT INTO log_keys (vkey, recorded_at) VALUES (?, ?) ON CONFLICT (vkey) DO NOTHING"), vkey, Now())
	if err != nil {
		return fmt.Errorf("db: record log key: %w", err)
	}
	return nil
}

// LogKeys returns the verifier keys recorded with RecordLogKey. It does
// I/O.
func (s *Store) LogKeys(ctx context.Context) ([]string, error) {
	rows, err := s.pool.QueryContext(ctx, "SELECT vkey FROM log_keys ORDER BY recorded_at, vkey")
	if err != nil {
		return nil, fmt.Errorf("db: log keys: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("db: log keys: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// SaveCheckpoint keeps the signed checkpoint of the log's first size
// leaves; a later one of the same size replaces it. It does I/O.
func (s *Store) SaveCheckpoint(ctx context.Context, size int64, signed []byte) error {
	_, err := s.pool.ExecContext(ctx, rebind(s.Dialect, "INSERT INTO log_checkpoints (size, signed, made_at) VALUES (?, ?, ?) "+
		"ON CONFLICT (size) DO UPDATE SET signed = excluded.signed, made_at = excluded.made_at"), size, string(signed), Now())
	if err != nil {
		return fmt.Errorf("db: save checkpoint: %w", err)
	}
	return nil
}

// LatestCheckpoint returns the signed checkpoint of the largest tree kept
// by SaveCheckpoint, or ErrNotFound when none was. It does I/O.
func (s *Store) LatestCheckpoint(ctx context.Context) ([]byte, error) {
	var signed string
	err := s.pool.QueryRowContext(ctx, "SELECT signed FROM log_checkpoints ORDER BY size DESC LIMIT 1").Scan(&signed)
	if noRows(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: latest checkpoint: %w", err)
	}
	return []byte(signed), nil
}

// ---- the sequencer ----

// ErrLogBusy is returned by AppendLog when another sequencer holds the log
// or a writer held a table too long; the next AppendLog picks up where it
// left.
var ErrLogBusy = errors.New("db: log: busy")

// errLogMoved says another sequencer appended between a plan and its write.
var errLogMoved = errors.New("db: log: the log moved")

// maxAppend bounds the leaves one write appends (see AppendLog).
const maxAppend = 1000

// AppendLog appends to the log every evidence row that became final since
// the last append, and returns the log's size. The rows of one write are
// ordered by when they became final (then table, then id); a backlog is
// appended in writes of at most maxAppend leaves, each in a transaction of
// its own, so a crawl's writer on SQLite never waits long for the write
// lock. Only one AppendLog runs at a time per database, across processes.
// It is safe for concurrent use.
func (s *Store) AppendLog(ctx context.Context) (int64, error) {
	n, _, err := s.appendLog(ctx, true)
	return n, err
}

// appendLog is AppendLog. With wait false, on PostgreSQL, it appends only
// if no other sequencer runs: otherwise it returns at once with ran false.
func (s *Store) appendLog(ctx context.Context, wait bool) (size int64, ran bool, err error) {
	if s.Dialect == Postgres {
		unlock, err := s.lockSequencers(ctx, wait)
		if err != nil {
			return 0, false, fmt.Errorf("db: log: %w", err)
		}
		if unlock == nil {
			return 0, false, nil
		}
		defer unlock()
	}
	for {
		var more bool
		for attempt := 0; ; attempt++ {
			size, more, err = s.appendOnce(ctx)
			if errors.Is(err, errLogMoved) && attempt < 5 {
				continue
			}
			if errors.Is(err, errLogMoved) {
				err = ErrLogBusy
			}
			break
		}
		if err != nil || !more {
			return size, true, err
		}
	}
}

// sequencersLock is the session advisory lock a sequencer holds on
// PostgreSQL.
const sequencersLock = 7726314

// lockSequencers takes the sequencers' lock on a connection of its own,
// held until the func it returns gives it back. Without wait, it returns
// a nil func and no error when another holds the lock.
func (s *Store) lockSequencers(ctx context.Context, wait bool) (func(), error) {
	conn, err := s.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if wait {
		_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", sequencersLock)
	} else {
		var got bool
		if err = conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", sequencersLock).Scan(&got); err == nil && !got {
			conn.Close()
			return nil, nil
		}
	}
	if err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // (the lock may be granted yet)
		conn.Close()
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", sequencersLock); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}

// cursor is a table's place in the log: the highest id looked at, and the
// ids below it that were not final then (ascending).
type cursor struct {
	hw      int64
	pending []int64
}

func (c cursor) encode() string {
	parts := make([]string, len(c.pending))
	for i, id := range c.pending {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func decodePending(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var out []int64
	for _, p := range strings.Split(s, ",") {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad pending id %q", p)
		}
		out = append(out, id)
	}
	return out, nil
}

// readCursors reads every table's cursor.
func (s *Store) readCursors(ctx context.Context) (map[string]cursor, error) {
	rows, err := s.pool.QueryContext(ctx, "SELECT tbl, hw, pending FROM log_cursor")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]cursor{}
	for rows.Next() {
		var (
			tbl, pending string
			c            cursor
		)
		if err := rows.Scan(&tbl, &c.hw, &pending); err != nil {
			return nil, err
		}
		if c.pending, err = decodePending(pending); err != nil {
			return nil, fmt.Errorf("log_cursor %s: %w", tbl, err)
		}
		out[tbl] = c
	}
	return out, rows.Err()
}

// appendEntry is a row planned for a leaf.
type appendEntry struct {
	t     *logTable
	id    int64
	stamp time.Time
	data  []byte
	salt  []byte
}

// appendOnce plans and writes one append of at most maxAppend leaves.
func (s *Store) appendOnce(ctx context.Context) (size int64, more bool, err error) {
	hws, err := s.highWaters(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("db: log: %w", err)
	}
	curs, err := s.readCursors(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("db: log: %w", err)
	}
	n, err := logSize(ctx, s.pool, s.Dialect)
	if err != nil {
		return 0, false, fmt.Errorf("db: log: %w", err)
	}
	var entries []appendEntry
	next := map[string]cursor{}
	changed := false
	room := int64(maxAppend)
	for i := range logTables {
		t := &logTables[i]
		old := curs[t.name]
		nc := cursor{hw: max(old.hw, hws[t.name])}
		found := map[int64]bool{}
		var above, last int64
		visit := func(r *logRow) error {
			if r.id > old.hw {
				above, last = above+1, r.id
			}
			found[r.id] = true
			if r.ready {
				entries = append(entries, appendEntry{t: t, id: r.id, stamp: r.stamp, data: nil, salt: nil})
				entries[len(entries)-1].data = encodeNew(t, r, &entries[len(entries)-1])
			} else {
				nc.pending = append(nc.pending, r.id)
			}
			return nil
		}
		if err := inChunks(old.pending, 500, func(ids []any) error {
			return s.scanLogRows(ctx, t, "id IN ("+placeholders(len(ids))+")", ids, 0, visit)
		}); err != nil {
			return 0, false, fmt.Errorf("db: log: %w", err)
		}
		for _, id := range old.pending {
			if !found[id] {
				nc.pending = append(nc.pending, id) // gone before it was final: the audit says so
			}
		}
		switch {
		case nc.hw > old.hw && room <= 0:
			nc.hw, more = old.hw, true
		case nc.hw > old.hw:
			if err := s.scanLogRows(ctx, t, "id > ? AND id <= ?", []any{old.hw, nc.hw}, room, visit); err != nil {
				return 0, false, fmt.Errorf("db: log: %w", err)
			}
			if above == room {
				nc.hw, more = last, true
			}
			room -= above
		}
		slices.Sort(nc.pending)
		nc.pending = slices.Compact(nc.pending)
		next[t.name] = nc
		if nc.hw != old.hw || !slices.Equal(nc.pending, old.pending) {
			changed = true
		}
	}
	if !changed && len(entries) == 0 {
		return n, false, nil
	}
	slices.SortStableFunc(entries, func(a, b appendEntry) int {
		if c := a.stamp.Compare(b.stamp); c != 0 {
			return c
		}
		if a.t != b.t {
			return strings.Compare(a.t.name, b.t.name)
		}
		return cmpInt(a.id, b.id)
	})
	hashes, err := s.storedHashesFor(ctx, n, entries)
	if err != nil {
		return 0, false, fmt.Errorf("db: log: %w", err)
	}
	err = s.writeLog(ctx, func(tx WriteTx) error {
		return writeAppend(ctx, tx, n, entries, hashes, next)
	})
	if errors.Is(err, errLogMoved) {
		return 0, false, err
	}
	if err != nil {
		return 0, false, fmt.Errorf("db: log: %w", err)
	}
	return n + int64(len(entries)), more, nil
}

// encodeNew gives e a fresh salt and returns the leaf data of r.
func encodeNew(t *logTable, r *logRow, e *appendEntry) []byte {
	e.salt = make([]byte, leaf.SaltSize)
	rand.Read(e.salt)
	return t.record(r.id, e.salt, r.vals).Marshal()
}

// storedHash is one stored hash to write.
type storedHash struct {
	index int64
	hash  tlog.Hash
}

// storedHashesFor computes the stored hashes that appending entries to a
// log of n leaves adds, reading the ones it needs from the table in one
// query: which they are depends on n alone (the tree's right edge), so a
// first pass with placeholder hashes finds them.
func (s *Store) storedHashesFor(ctx context.Context, n int64, entries []appendEntry) ([]storedHash, error) {
	old := tlog.StoredHashCount(n) // indexes below are in the table
	var need []int64
	if _, err := storedHashesOver(n, entries, func(x int64) (tlog.Hash, error) {
		need = append(need, x)
		return tlog.Hash{}, nil
	}); err != nil {
		return nil, err
	}
	slices.Sort(need)
	need = slices.Compact(need)
	got, err := s.readHashes(ctx, need)
	if err != nil {
		return nil, err
	}
	known := make(map[int64]tlog.Hash, len(need))
	for i, x := range need {
		known[x] = got[i]
	}
	return storedHashesOver(n, entries, func(x int64) (tlog.Hash, error) {
		h, ok := known[x]
		if !ok || x >= old {
			return tlog.Hash{}, fmt.Errorf("stored hash %d was not read", x)
		}
		return h, nil
	})
}

// storedHashesOver computes the stored hashes of entries appended to a log
// of n leaves, reading the log's own with read.
func storedHashesOver(n int64, entries []appendEntry, read func(int64) (tlog.Hash, error)) ([]storedHash, error) {
	old := tlog.StoredHashCount(n)
	var out []storedHash
	r := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		hs := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			if x >= old {
				hs[i] = out[x-old].hash
				continue
			}
			h, err := read(x)
			if err != nil {
				return nil, err
			}
			hs[i] = h
		}
		return hs, nil
	})
	for i, e := range entries {
		hs, err := tlog.StoredHashes(n+int64(i), e.data, r)
		if err != nil {
			return nil, err
		}
		base := tlog.StoredHashIndex(0, n+int64(i))
		for j, h := range hs {
			out = append(out, storedHash{base + int64(j), h})
		}
	}
	return out, nil
}

// writeLog runs f in a write transaction: on SQLite, the crawler's writer
// when one is set (SealVia), else a connection of its own; on PostgreSQL,
// one of the pool's.
func (s *Store) writeLog(ctx context.Context, f func(tx WriteTx) error) error {
	if w := s.sealVia.Load(); w != nil && s.Dialect != Postgres {
		if err := w.write(ctx, f); err == nil || errors.Is(err, errLogMoved) {
			return err
		}
		// (The writer failed or stopped: the append is written here.)
	}
	if fc, err := s.openSealWriter(ctx); err != nil {
		return err
	} else if fc != nil {
		defer fc.Close()
		if err := fc.Begin(); err != nil {
			return err
		}
		err := f(fc)
		if err == nil {
			err = fc.Commit()
		}
		fc.Rollback() // (after Commit, nothing to do)
		return err
	}
	tx, err := s.BeginWrite(ctx)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// writeAppend writes, in tx, the leaves of entries from index n, the
// stored hashes they add and the tables' cursors (a nil next leaves them
// as they are), after checking that the log still has n leaves.
func writeAppend(ctx context.Context, tx WriteTx, n int64, entries []appendEntry, hashes []storedHash, next map[string]cursor) error {
	var last int64
	if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(idx), -1) FROM log_leaves").Scan(&last); err != nil {
		return err
	}
	if last+1 != n {
		return errLogMoved
	}
	const chunk = 200
	for i := 0; i < len(entries); i += chunk {
		part := entries[i:min(i+chunk, len(entries))]
		args := make([]any, 0, 4*len(part))
		for j, e := range part {
			args = append(args, n+int64(i+j), e.t.name, e.id, e.salt)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO log_leaves (idx, tbl, row_id, salt) VALUES "+rowsOf(len(part), 4), args...); err != nil {
			return err
		}
	}
	for i := 0; i < len(hashes); i += chunk {
		part := hashes[i:min(i+chunk, len(hashes))]
		args := make([]any, 0, 2*len(part))
		for _, h := range part {
			args = append(args, h.index, h.hash[:])
		}
		if _, err := tx.Exec(ctx, "INSERT INTO log_hashes (id, hash) VALUES "+rowsOf(len(part), 2), args...); err != nil {
			return err
		}
	}
	for _, t := range logTables {
		if next == nil {
			break
		}
		c := next[t.name]
		if _, err := tx.Exec(ctx, `INSERT INTO log_cursor (tbl, hw, pending) VALUES (?, ?, ?)
			ON CONFLICT (tbl) DO UPDATE SET hw = excluded.hw, pending = excluded.pending`, t.name, c.hw, c.encode()); err != nil {
			return err
		}
	}
	return nil
}

// rowsOf is the VALUES list of n rows of k placeholders.
func rowsOf(n, k int) string {
	one := "(" + placeholders(k) + ")"
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return b.String()
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// highWaters returns, per evidence table, the largest id that no
// transaction still in progress can go below: on SQLite, whose writers
// commit one at a time, the largest committed id; on PostgreSQL, the
// largest committed id once every transaction that was writing to the
// table when it was read has ended (identity values are taken in one
// order and committed in another: a writer still open may hold a smaller
// id). Those writers are found in pg_locks (an INSERT holds the table's
// RowExclusiveLock, taken before its identity value, until its
// transaction ends) and waited for without a lock of its own, so writers
// that start meanwhile never wait for the sequencer (a SHARE lock made every
// new writer queue behind it while it waited: 124 ms a time on a busy
// crawl). The tables are read together, and their writers waited for at
// once: table by table, the four reads, four lookups of writers and their
// polls at 5 ms took a seal 5-40 ms at the end of a fleet's crawl, while
// it held the sequencers' lock. It returns ErrLogBusy when the writers do
// not all end within logWaitWriters.
func (s *Store) highWaters(ctx context.Context) (map[string]int64, error) {
	var q strings.Builder
	q.WriteString("SELECT ")
	for i, t := range logTables {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(SELECT MAX(id) FROM " + t.name + ")")
	}
	vals := make([]sql.NullInt64, len(logTables))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := s.pool.QueryRowContext(ctx, q.String()).Scan(dest...); err != nil {
		return nil, err
	}
	hws := make(map[string]int64, len(logTables))
	for i, t := range logTables {
		hws[t.name] = vals[i].Int64
	}
	if s.Dialect != Postgres {
		return hws, nil
	}
	tables := LogTables()
	var writers []string
	rows, err := s.pool.QueryContext(ctx, `SELECT DISTINCT virtualtransaction FROM pg_locks
		WHERE locktype = 'relation' AND relation = ANY($1::regclass[]) AND mode = 'RowExclusiveLock' AND pid <> pg_backend_pid()`, tables)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var vx string
		if err := rows.Scan(&vx); err != nil {
			rows.Close()
			return nil, err
		}
		writers = append(writers, vx)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(logWaitWriters)
	for len(writers) > 0 {
		var left int
		if err := s.pool.QueryRowContext(ctx, `SELECT COUNT(DISTINCT virtualtransaction) FROM pg_locks
			WHERE locktype = 'relation' AND relation = ANY($1::regclass[]) AND virtualtransaction = ANY($2)`, tables, writers).Scan(&left); err != nil {
			return nil, err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: %d transactions writing the evidence tables for over %v", ErrLogBusy, left, logWaitWriters)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(logPollWriters):
		}
	}
	return hws, nil
}

// logPollWriters is how often highWaters looks whether the writers it
// waits for have ended.
const logPollWriters = 2 * time.Millisecond

// logWaitWriters bounds how long highWaters waits for the evidence tables'
// writers.
const logWaitWriters = 500 * time.Millisecond
