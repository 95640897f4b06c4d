package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db/lite"

	"gorm.io/gorm"
)

// Tamper-evident records (docs/audit-integrity.md).
//
// The rows of the evidence tables are sealed in blocks, the way Certificate
// Transparency seals a log: a sealer writes, every few seconds, at the end of
// each crawl cycle and when a process stops, one block over the rows that
// became final since the last block. A block holds the running hash of the
// hashes of its rows (in table order, then id order), the previous block's
// hash and, per table, the high-water id it has seen and the ids below it that
// were not final yet (a request in flight, a message waiting for review):
// those are sealed by a later block once final. Writers never touch the chain:
// the hot write path of a fleet stays free of any shared row, and only the
// sealer, one at a time (an advisory lock on PostgreSQL, the write lock on
// SQLite), appends to it.

// sealTable is one sealed table: its canonical columns (id first), the SQL
// condition under which a row is final, and the column that says when the
// row was written.
type sealTable struct {
	name  string
	cols  []string
	ready string
	stamp string
	// order, when set, is a column that grows with id as rows are written
	// (strictly when strict), on the engines orderOn allows ("" for both):
	// a row out of that order was inserted or renumbered.
	order   string
	strict  bool
	orderOn Dialect
}

// sealTables are the sealed tables, in the order a block hashes them
// (alphabetical). Their column lists are part of the seal format: a column
// added later is not covered by it.
var sealTables = []sealTable{
	{"mail_messages", []string{"id", "message_id", "received_at", "sent_date", "from_addr", "subject", "intent",
		"domains", "lang", "auth", "auth_domain", "outcome", "review_status", "review_reason", "reviewed_by",
		"reviewed_at", "source", "size", "sha256", "raw", "reasons"}, "review_status <> 'pending'", "received_at", "", false, ""},
	{"policy_events", []string{"id", "version", "happened_at", "kind", "site", "actor", "reason", "evidence",
		"source", "detail", "purged_pages", "purged_anchors"}, "1 = 1", "happened_at", "version", true, ""},
	{"requests", []string{"id", "cycle_id", "budget_slot", "site", "host", "origin", "url", "method", "purpose",
		"node", "attempt", "redirect_of", "robots_snapshot_id", "robots_rule", "robots_line", "policy_check",
		"delay_ms", "sent_at", "completed_at", "status", "bytes", "duration_ms", "retry_after", "retry_not_before",
		"outcome", "error", "sig_keyid", "sig_created", "sig_expires", "etag", "last_modified"}, "completed_at IS NOT NULL", "sent_at", "", false, ""},
	{"robots_snapshots", []string{"id", "origin", "fetched_at", "status", "final_url", "body", "sha256",
		"outcome", "error", "request_id"}, "1 = 1", "fetched_at", "", false, ""},
}

// SealedTables returns the names of the sealed tables.
func SealedTables() []string {
	out := make([]string, len(sealTables))
	for i, t := range sealTables {
		out[i] = t.name
	}
	return out
}

// BackdateSlack is how much older than the chain head an unsealed row may
// say it is before the integrity check calls it backdated: a row is written
// at most this long after the time it records (a request's sent_at, a
// snapshot's fetched_at), so a genuine row that missed the last block never
// looks older than the head by more.
const BackdateSlack = 5 * time.Minute

// SealBlock is one block of the seal chain.
type SealBlock struct {
	ID       int64
	SealedAt time.Time
	PrevHash string // "" for the first block
	Root     string // hex running hash of the rows it seals
	Rows     int64  // how many rows it seals
	State    string // per table: the high-water id and the ids below it not yet final
	Hash     string // hex sha256 of all of the above
}

// tableState is one table's part of a block's State.
type tableState struct {
	hw      int64
	pending []int64 // ascending
}

// encodeState renders the per-table state canonically: one line per table,
// "name hw pending,pending".
func encodeState(st map[string]tableState) string {
	var b strings.Builder
	for _, t := range sealTables {
		s := st[t.name]
		b.WriteString(t.name)
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(s.hw, 10))
		b.WriteByte(' ')
		for i, id := range s.pending {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(id, 10))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func decodeState(s string) (map[string]tableState, error) {
	out := map[string]tableState{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 3 {
			return nil, fmt.Errorf("db: bad seal state line %q", line)
		}
		hw, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("db: bad seal state line %q", line)
		}
		ts := tableState{hw: hw}
		if f[2] != "" {
			for _, p := range strings.Split(f[2], ",") {
				id, err := strconv.ParseInt(p, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("db: bad seal state line %q", line)
				}
				ts.pending = append(ts.pending, id)
			}
		}
		out[f[0]] = ts
	}
	return out, nil
}

// blockHash is the hash of a block's content.
func blockHash(b *SealBlock) string {
	h := sha256.New()
	fmt.Fprintf(h, "lohibot seal v1\nid %d\nsealed_at %s\nprev %s\nroot %s\nrows %d\n%s",
		b.ID, b.SealedAt.UTC().Format(time.RFC3339Nano), b.PrevHash, b.Root, b.Rows, b.State)
	return hex.EncodeToString(h.Sum(nil))
}

// rootHash is a running hash over a block's rows, in table order then id
// order.
type rootHash struct {
	h   hash.Hash
	n   int64
	buf []byte // reused for each row's line
}

func newRoot() *rootHash { return &rootHash{h: sha256.New()} }

// reset starts the hash of another block.
func (r *rootHash) reset() {
	r.h.Reset()
	r.n = 0
}

// add hashes the line "table id rowHash\n".
func (r *rootHash) add(table string, id int64, rowHash string) {
	b := append(r.buf[:0], table...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ' ')
	b = append(b, rowHash...)
	b = append(b, '\n')
	r.h.Write(b)
	r.buf = b
	r.n++
}

// addBytes is add with the table and hash as bytes; it does not keep them.
func (r *rootHash) addBytes(table []byte, id int64, rowHash []byte) {
	b := append(r.buf[:0], table...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ' ')
	b = append(b, rowHash...)
	b = append(b, '\n')
	r.h.Write(b)
	r.buf = b
	r.n++
}

func (r *rootHash) sum() string { return hex.EncodeToString(r.h.Sum(nil)) }

// rowHasher hashes rows' canonical content (rowHash, contentHash) with one
// hash and buffer reused from row to row. It is not safe for concurrent use.
type rowHasher struct {
	h       hash.Hash
	buf     []byte // what is written next
	scratch []byte // a value's rendering
	sum     [sha256.Size]byte
	hex     [2 * sha256.Size]byte
}

func newRowHasher() *rowHasher { return &rowHasher{h: sha256.New()} }

// rowHash hashes a row's canonical content: the table name, then each
// column's name, kind and value (times in UTC RFC 3339 with nanoseconds,
// integers in decimal, text and bytes as they are), each length-prefixed.
// It returns the hex hash in a buffer that the next call overwrites.
func (rh *rowHasher) rowHash(table string, cols []string, vals []any) []byte {
	rh.h.Reset()
	// put writes one tagged, length-prefixed item.
	put := func(tag byte, b []byte) {
		rh.buf = append(rh.buf[:0], tag)
		rh.buf = binary.BigEndian.AppendUint64(rh.buf, uint64(len(b)))
		rh.buf = append(rh.buf, b...)
		rh.h.Write(rh.buf)
	}
	putString := func(tag byte, s string) {
		rh.buf = append(rh.buf[:0], tag)
		rh.buf = binary.BigEndian.AppendUint64(rh.buf, uint64(len(s)))
		rh.buf = append(rh.buf, s...)
		rh.h.Write(rh.buf)
	}
	putString('T', table)
	for i, c := range cols {
		putString('c', c)
		sc := rh.scratch[:0]
		switch v := vals[i].(type) {
		case nil:
			put('n', nil)
		case int64:
			sc = strconv.AppendInt(sc, v, 10)
			put('i', sc)
		case int32:
			sc = strconv.AppendInt(sc, int64(v), 10)
			put('i', sc)
		case int:
			sc = strconv.AppendInt(sc, int64(v), 10)
			put('i', sc)
		case float64:
			if v == float64(int64(v)) {
				sc = strconv.AppendInt(sc, int64(v), 10)
				put('i', sc)
			} else {
				sc = strconv.AppendFloat(sc, v, 'g', -1, 64)
				put('f', sc)
			}
		case bool:
			if v {
				putString('i', "1")
			} else {
				putString('i', "0")
			}
		case time.Time:
			sc = v.UTC().AppendFormat(sc, time.RFC3339Nano)
			put('t', sc)
		case string:
			putString('x', v)
		case []byte:
			put('x', v)
		default:
			putString('x', fmt.Sprint(v))
		}
		rh.scratch = sc
	}
	return rh.hexSum()
}

// sqliteRow hashes a row's content as SQLite reads it with sealSelect: the
// text of its SQL literals. It returns the hex hash in a buffer that the
// next call overwrites.
func (rh *rowHasher) sqliteRow(table string, content any) []byte {
	rh.h.Reset()
	rh.buf = append(append(append(rh.buf[:0], "lohibot row v1 sqlite\x00"...), table...), 0)
	switch v := content.(type) {
	case string:
		rh.buf = append(rh.buf, v...)
	case []byte:
		rh.buf = append(rh.buf, v...)
	}
	rh.h.Write(rh.buf)
	return rh.hexSum()
}

func (rh *rowHasher) hexSum() []byte {
	rh.h.Sum(rh.sum[:0])
	hex.Encode(rh.hex[:], rh.sum[:])
	return rh.hex[:]
}

// rowHash hashes a row's canonical content (see rowHasher.rowHash).
func rowHash(table string, cols []string, vals []any) string {
	return string(newRowHasher().rowHash(table, cols, vals))
}

// ErrSealBusy is returned by Seal when another sealer holds the chain or a
// writer held a table too long; the next Seal picks up where it left.
var ErrSealBusy = errors.New("db: seal: busy")

// highWaters returns, per sealed table, the largest id that no
// transaction still in progress can go below: on SQLite, whose writers
// commit one at a time, the largest committed id; on PostgreSQL, the
// largest committed id once every transaction that was writing to the
// table when it was read has ended (identity values are taken in one
// order and committed in another: a writer still open may hold a smaller
// id). Those writers are found in pg_locks (an INSERT holds the table's
// RowExclusiveLock, taken before its identity value, until its
// transaction ends) and waited for without a lock of its own, so writers
// that start meanwhile never wait for the sealer (a SHARE lock made every
// new writer queue behind it while it waited: 124 ms a time on a busy
// crawl). The tables are read together, and their writers waited for at
// once: table by table, the four reads, four lookups of writers and their
// polls at 5 ms took a seal 5-40 ms at the end of a fleet's crawl, while
// it held the sealers' lock. It returns ErrSealBusy when the writers do
// not all end within sealWaitWriters.
func (s *Store) highWaters(ctx context.Context) (map[string]int64, error) {
	var q strings.Builder
	q.WriteString("SELECT ")
	for i, t := range sealTables {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(SELECT MAX(id) FROM " + t.name + ")")
	}
	vals := make([]sql.NullInt64, len(sealTables))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := s.pool.QueryRowContext(ctx, q.String()).Scan(dest...); err != nil {
		return nil, err
	}
	hws := make(map[string]int64, len(sealTables))
	for i, t := range sealTables {
		hws[t.name] = vals[i].Int64
	}
	if s.Dialect != Postgres {
		return hws, nil
	}
	tables := SealedTables()
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
	deadline := time.Now().Add(sealWaitWriters)
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
			return nil, fmt.Errorf("%w: %d transactions writing the sealed tables for over %v", ErrSealBusy, left, sealWaitWriters)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(sealPollWriters):
		}
	}
	return hws, nil
}

// sealPollWriters is how often highWaters looks whether the writers it
// waits for have ended.
const sealPollWriters = 2 * time.Millisecond

// sealWaitWriters bounds how long highWaters waits for the sealed tables'
// writers.
const sealWaitWriters = 500 * time.Millisecond

// sealEntry is one row a block seals.
type sealEntry struct {
	id   int64
	hash string
}

// Seal appends blocks to the chain over the rows that became final since
// the last block, and returns the last one; it returns nil and no error
// when there is nothing new to seal. A block takes at most maxSealRows
// rows above the last block's high-water marks (and the rows below them
// that became final since), so a backlog is sealed in several blocks, each
// written in a transaction of its own. Only one
// Seal runs at a time per database, across processes. It does I/O and
// blocks while another sealer or writer holds the chain; it is safe for
// concurrent use.
//
// It reads and hashes the rows outside its write transactions (sealPlan),
// then writes each block in a short one that first checks no other sealer
// appended a block meanwhile (else it plans again). On SQLite a write
// transaction holds the database's one write lock: reading and hashing
// thousands of rows inside it held up every request of a running crawl
// for up to half a second per seal, and so did writing one block over
// the 10,000 rows of a crawl's five seconds (see maxSealRows and SealVia).
// On PostgreSQL, a Seal holds a lock of the sealers (lockSealers) while it
// reads and writes: the sealer of each crawler of a fleet otherwise read
// and hashed the same rows, and all but one found the chain moved.
func (s *Store) Seal(ctx context.Context) (*SealBlock, error) {
	b, _, err := s.seal(ctx, true)
	return b, err
}

// seal is Seal. With wait false, on PostgreSQL, it seals only if no other
// Seal runs at the time: otherwise it returns at once, with ran false and
// nothing sealed.
func (s *Store) seal(ctx context.Context, wait bool) (last *SealBlock, ran bool, err error) {
	if s.Dialect == Postgres {
		unlock, err := s.lockSealers(ctx, wait)
		if err != nil {
			return nil, false, fmt.Errorf("db: seal: %w", err)
		}
		if unlock == nil {
			return nil, false, nil
		}
		defer unlock()
	}
	for {
		b, more, err := s.sealBlock(ctx)
		if err != nil {
			return nil, true, err
		}
		if b != nil {
			last = b
		}
		if !more {
			return last, true, nil
		}
	}
}

// sealersLock is the session advisory lock a Seal holds on PostgreSQL
// (lockSealers), beside the transaction's lock that orders the blocks'
// writes (7726313).
const sealersLock = 7726314

// lockSealers takes the sealers' lock on a connection of its own, held
// until the func it returns gives it back. With wait, it waits for the
// lock: a Seal waiting for it reads nothing meanwhile, and then plans over
// the chain as the other left it. Without, it returns a nil func and no
// error when another holds the lock.
func (s *Store) lockSealers(ctx context.Context, wait bool) (func(), error) {
	conn, err := s.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if wait {
		_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", sealersLock)
	} else {
		var got bool
		if err = conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", sealersLock).Scan(&got); err == nil && !got {
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
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", sealersLock); err != nil {
			// A connection that may hold the lock yet leaves the pool.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}

// maxSealRows bounds the rows above the high-water marks one block takes
// (see Seal). On SQLite, writing a block holds the database's write lock:
// with a crawl running, a block over 10,000 rows held it (and so the
// crawler's requests) for 0.25-0.8 s; the crawler's writer goes on between
// blocks of 1,000.
const maxSealRows = 1000

// sealBlock appends one block, planning again when another sealer
// appended one meanwhile; more says rows were left for a next block.
func (s *Store) sealBlock(ctx context.Context) (b *SealBlock, more bool, err error) {
	for attempt := 0; ; attempt++ {
		b, more, err = s.sealOnce(ctx)
		if errors.Is(err, errSealMoved) && attempt < 5 {
			continue
		}
		if errors.Is(err, errSealMoved) {
			err = ErrSealBusy
		}
		return b, more, err
	}
}

// errSealMoved says another sealer appended a block between sealOnce's
// plan and its write.
var errSealMoved = errors.New("db: seal: the chain moved")

// sealOnce is one attempt of sealBlock.
func (s *Store) sealOnce(ctx context.Context) (*SealBlock, bool, error) {
	hws, err := s.highWaters(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("db: seal: %w", err)
	}
	b, entries, more, err := s.sealPlan(ctx, s.gdb.WithContext(ctx), hws, maxSealRows)
	if err != nil || b == nil {
		if err != nil {
			err = fmt.Errorf("db: seal: %w", err)
		}
		return nil, false, err
	}
	if w := s.sealVia.Load(); w != nil && s.Dialect != Postgres {
		var moved bool
		err = w.write(ctx, func(tx WriteTx) (err error) {
			moved, err = writeSealBlock(ctx, tx, b, entries)
			return err
		})
		switch {
		case err == nil && moved:
			return nil, false, errSealMoved
		case err == nil:
			return b, more, nil
		}
		// (The writer failed or stopped: the block is written here.)
	}
	if fc, ferr := s.openSealWriter(ctx); ferr != nil {
		return nil, false, fmt.Errorf("db: seal: %w", ferr)
	} else if fc != nil {
		defer fc.Close()
		if err := fc.Begin(); err != nil {
			return nil, false, fmt.Errorf("db: seal: %w", err)
		}
		moved, err := writeSealBlock(ctx, fc, b, entries)
		if err == nil && !moved {
			err = fc.Commit()
		}
		fc.Rollback() // (after Commit, nothing to do)
		switch {
		case err != nil:
			return nil, false, fmt.Errorf("db: seal: %w", err)
		case moved:
			return nil, false, errSealMoved
		}
		return b, more, nil
	}
	err = s.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.Dialect == Postgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(7726313)").Error; err != nil {
				return err
			}
		}
		head, err := lastBlock(tx)
		if err != nil {
			return err
		}
		switch {
		case head == nil && b.ID != 1, head != nil && (head.ID+1 != b.ID || head.Hash != b.PrevHash):
			return errSealMoved
		}
		for _, t := range sealTables {
			es := entries[t.name]
			for i := 0; i < len(es); i += 500 {
				chunk := es[i:min(i+500, len(es))]
				var q strings.Builder
				q.WriteString("INSERT INTO seal_rows (tbl, row_id, block_id, hash) VALUES ")
				args := make([]any, 0, 4*len(chunk))
				for j, e := range chunk {
					if j > 0 {
						q.WriteString(", ")
					}
					q.WriteString("(?, ?, ?, ?)")
					args = append(args, t.name, e.id, b.ID, e.hash)
				}
				if err := tx.Exec(q.String(), args...).Error; err != nil {
					return err
				}
			}
		}
		if err := tx.Exec(`INSERT INTO seal_blocks (id, sealed_at, prev_hash, root, row_count, state, hash) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			b.ID, b.SealedAt, b.PrevHash, b.Root, b.Rows, b.State, b.Hash).Error; err != nil {
			return err
		}
		return nil
	})
	if errors.Is(err, errSealMoved) {
		return nil, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("db: seal: %w", err)
	}
	return b, more, nil
}

// openSealWriter opens the connection a block is written with on SQLite: a
// fast-path connection to the database file, which keeps its statements
// prepared and binds their arguments cheaply. On SQLite the block's write
// transaction holds the database's one write lock, which a running
// crawl's writer waits for: through the driver, writing a block over
// 10,000 rows took 0.25 s on an idle machine, and 0.25-0.8 s during a
// crawl. It returns nil when the store is PostgreSQL or not a file.
func (s *Store) openSealWriter(ctx context.Context) (*FastConn, error) {
	if s.Dialect == Postgres {
		return nil, nil
	}
	path, err := s.SQLiteFile(ctx)
	if err != nil {
		return nil, nil // not a file: the pool writes it
	}
	return OpenFastConn(path, FastOptions{})
}

// writeSealBlock writes block b and its entries in tx, a write
// transaction on SQLite, after checking that the chain's last block is
// still the one b follows; when it is not, it writes nothing and reports
// moved.
func writeSealBlock(ctx context.Context, tx WriteTx, b *SealBlock, entries map[string][]sealEntry) (moved bool, err error) {
	var (
		headID   int64
		headHash string
	)
	err = tx.QueryRow(ctx, `SELECT id, hash FROM seal_blocks ORDER BY id DESC LIMIT 1`).Scan(&headID, &headHash)
	switch {
	case noRows(err):
		if b.ID != 1 {
			return true, nil
		}
	case err != nil:
		return false, err
	case headID+1 != b.ID || headHash != b.PrevHash:
		return true, nil
	}
	for _, t := range sealTables {
		for _, e := range entries[t.name] {
			if _, err := tx.Exec(ctx, `INSERT INTO seal_rows (tbl, row_id, block_id, hash) VALUES (?, ?, ?, ?)`, t.name, e.id, b.ID, e.hash); err != nil {
				return false, err
			}
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO seal_blocks (id, sealed_at, prev_hash, root, row_count, state, hash) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		b.ID, b.SealedAt, b.PrevHash, b.Root, b.Rows, b.State, b.Hash)
	return false, err
}

// sealWriter is who writes the blocks of Seal (see SealVia).
type sealWriter struct {
	write func(ctx context.Context, f func(tx WriteTx) error) error
}

// SealVia has Seal write its blocks on SQLite with write, which runs f in
// a write transaction and commits it (a crawler's writer, which commits
// the work of many callers together), until the returned func is called.
// On SQLite a block's write holds the database's one write lock; written
// by a sealer of its own, with thousands of goroutines of a crawl taking
// the CPU from it, a block over 1,000 rows held the lock (and every
// request of the crawl) for 30-200 ms, where the writer writes it in its
// turn. The last call wins; the returned func undoes only its own call.
func (s *Store) SealVia(write func(ctx context.Context, f func(tx WriteTx) error) error) (undo func()) {
	w := &sealWriter{write: write}
	s.sealVia.Store(w)
	return func() { s.sealVia.CompareAndSwap(w, nil) }
}

// sealPlan reads, with q and outside any write transaction, the chain's
// last block and the rows of each sealed table that became final since
// (up to hws, the tables' high-water ids, and at most limit rows above
// the last block's marks in all, in the order of sealTables), and returns
// the next block (hashed) and the entries it seals per table, or a nil
// block when there is nothing new to seal; more says limit left rows for a
// next block. Seal writes them
// after checking that the last block is still the one read here.
func (s *Store) sealPlan(ctx context.Context, q *gorm.DB, hws map[string]int64, limit int64) (b *SealBlock, entries map[string][]sealEntry, more bool, err error) {
	prev, err := lastBlock(q)
	if err != nil {
		return nil, nil, false, err
	}
	prevState := map[string]tableState{}
	if prev != nil {
		if prevState, err = decodeState(prev.State); err != nil {
			return nil, nil, false, err
		}
	}
	// On SQLite the rows are read through a fast-path reader and hashed
	// from their values in place, as the integrity check does (the
	// driver's path built each row's text in SQLite and cost a seal of
	// 10,000 requests half a second of CPU).
	rd, err := s.openReader(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	if rd != nil {
		defer rd.Close()
	}
	scan := func(t sealTable, where string, args []any, limit int64, visit func(ready bool, id int64, h string)) error {
		if rd != nil {
			return s.scanSealRowsFast(ctx, rd, t, where, args, limit, visit)
		}
		return s.scanSealRows(q, t, where, args, limit, visit)
	}
	state := map[string]tableState{}
	entries = map[string][]sealEntry{}
	changed := false
	room := limit // rows above the high-water marks this block may still take
	for _, t := range sealTables {
		ps := prevState[t.name]
		ns := tableState{hw: max(ps.hw, hws[t.name])}
		found := map[int64]bool{}
		var (
			above int64 // rows read above ps.hw
			last  int64 // the last one's id
		)
		visit := func(ready bool, id int64, h string) {
			if id > ps.hw {
				above, last = above+1, id
			}
			found[id] = true
			if ready {
				entries[t.name] = append(entries[t.name], sealEntry{id, h})
			} else {
				ns.pending = append(ns.pending, id)
			}
		}
		if err := inChunks(ps.pending, 500, func(ids []any) error {
			return scan(t, "id IN ("+placeholders(len(ids))+")", ids, 0, visit)
		}); err != nil {
			return nil, nil, false, err
		}
		for _, id := range ps.pending {
			if !found[id] {
				ns.pending = append(ns.pending, id) // gone before it was sealed: the audit says so
			}
		}
		switch {
		case ns.hw > ps.hw && room <= 0:
			ns.hw, more = ps.hw, true // for the next block
		case ns.hw > ps.hw:
			if err := scan(t, "id > ? AND id <= ?", []any{ps.hw, ns.hw}, room, visit); err != nil {
				return nil, nil, false, err
			}
			if above == room {
				// The rest, if any, for the next block.
				ns.hw, more = last, true
			}
			room -= above
		}
		slices.Sort(ns.pending)
		ns.pending = slices.Compact(ns.pending)
		slices.SortFunc(entries[t.name], func(a, b sealEntry) int { return cmpInt(a.id, b.id) })
		state[t.name] = ns
		if ns.hw != ps.hw || !slices.Equal(ns.pending, ps.pending) || len(entries[t.name]) > 0 {
			changed = true
		}
	}
	if !changed {
		return nil, nil, false, nil
	}
	b = &SealBlock{ID: 1, SealedAt: Now(), State: encodeState(state)}
	if prev != nil {
		b.ID, b.PrevHash = prev.ID+1, prev.Hash
		if !b.SealedAt.After(prev.SealedAt) {
			b.SealedAt = prev.SealedAt.Add(time.Microsecond)
		}
	}
	root := newRoot()
	for _, t := range sealTables {
		for _, e := range entries[t.name] {
			root.add(t.name, e.id, e.hash)
		}
	}
	b.Root, b.Rows = root.sum(), root.n
	b.Hash = blockHash(b)
	return b, entries, more, nil
}

// limitClause is the LIMIT clause of at most n rows, or "" for n <= 0.
func limitClause(n int64) string {
	if n <= 0 {
		return ""
	}
	return " LIMIT " + strconv.FormatInt(n, 10)
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

// sealSelect is the select list a sealed table's row content is read with
// for hashing: on PostgreSQL its columns; on SQLite one text, the SQL
// literal of each column (quote()) joined by commas, which the pure-Go
// driver reads many times faster than the columns one by one, and which
// tells every value and storage class apart just as well.
func (s *Store) sealSelect(t sealTable, alias string) string {
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		cols[i] = alias + c
		if s.Dialect != Postgres {
			cols[i] = "quote(" + cols[i] + ")"
		}
	}
	if s.Dialect != Postgres {
		return strings.Join(cols, " || ',' || ")
	}
	return strings.Join(cols, ", ")
}

// sealWidth is how many values sealSelect yields.
func (s *Store) sealWidth(t sealTable) int {
	if s.Dialect != Postgres {
		return 1
	}
	return len(t.cols)
}

// contentHash hashes a row's content as read with sealSelect, with rh. It
// returns the hex hash in a buffer that rh's next call overwrites.
func (s *Store) contentHash(rh *rowHasher, t sealTable, vals []any) []byte {
	if s.Dialect == Postgres {
		return rh.rowHash(t.name, t.cols, vals)
	}
	return rh.sqliteRow(t.name, vals[0])
}

// scanSealRows reads the rows of t matching where, in id order, and calls
// visit with whether each is final, its id and its hash.
func (s *Store) scanSealRows(tx *gorm.DB, t sealTable, where string, args []any, limit int64, visit func(ready bool, id int64, h string)) error {
	q := "SELECT CASE WHEN " + t.ready + " THEN 1 ELSE 0 END, id, " + s.sealSelect(t, "") +
		" FROM " + t.name + " WHERE " + where + " ORDER BY id" + limitClause(limit)
	rows, err := tx.Raw(q, args...).Rows()
	if err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	defer rows.Close()
	vals := make([]any, s.sealWidth(t)+2)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rh := newRowHasher()
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s: %w", t.name, err)
		}
		id, _ := asInt(vals[1])
		ready, _ := asInt(vals[0])
		visit(ready == 1, id, string(s.contentHash(rh, t, vals[2:])))
	}
	return rows.Err()
}

// scanSealRowsFast is scanSealRows on SQLite's fast-path reader rd, with
// where's placeholders one per arg: each row is hashed from its values in
// place (the text sealSelect would read, see rowHasher.sqliteColumns), or
// from sealSelect's text for a row holding a REAL.
func (s *Store) scanSealRowsFast(ctx context.Context, rd *lite.Conn, t sealTable, where string, args []any, limit int64, visit func(ready bool, id int64, h string)) error {
	q := "SELECT CASE WHEN " + t.ready + " THEN 1 ELSE 0 END, id, " + s.verifySelect(t, "") +
		" FROM " + t.name + " WHERE " + where + " ORDER BY id" + limitClause(limit)
	rows, err := rd.Query(q, args...)
	if err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	defer rows.Close()
	rh := newRowHasher()
	for n := 1; rows.Next(); n++ {
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		id, ready := rows.Int64(1), rows.Int64(0) == 1
		h, ok := rh.sqliteColumns(t.name, rows, 2, len(t.cols))
		if !ok {
			if h, err = s.sqliteRowHash(ctx, rh, t, id); err != nil {
				return fmt.Errorf("read %s: %w", t.name, err)
			}
		}
		visit(ready, id, string(h))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	return nil
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case float64:
		return int64(x), true
	case []byte:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// lastBlock returns the chain's last block, or nil when there is none.
func lastBlock(tx *gorm.DB) (*SealBlock, error) {
	var b []SealBlock
	err := tx.Raw(`SELECT id, sealed_at, prev_hash, root, row_count AS rows, state, hash FROM seal_blocks ORDER BY id DESC LIMIT 1`).Scan(&b).Error
	if err != nil || len(b) == 0 {
		return nil, err
	}
	return &b[0], nil
}

// SealHead returns the chain's last block, or ErrNotFound when nothing has
// been sealed yet. It does I/O.
func (s *Store) SealHead(ctx context.Context) (*SealBlock, error) {
	b, err := lastBlock(s.gdb.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("db: seal head: %w", err)
	}
	if b == nil {
		return nil, ErrNotFound
	}
	return b, nil
}

// SealBlockByHash returns the block whose hash is h (hex, any case), or
// ErrNotFound. It does I/O.
func (s *Store) SealBlockByHash(ctx context.Context, h string) (*SealBlock, error) {
	var b []SealBlock
	err := s.gdb.WithContext(ctx).Raw(`SELECT id, sealed_at, prev_hash, root, row_count AS rows, state, hash FROM seal_blocks WHERE hash = ?`,
		strings.ToLower(strings.TrimSpace(h))).Scan(&b).Error
	if err != nil {
		return nil, fmt.Errorf("db: seal block: %w", err)
	}
	if len(b) == 0 {
		return nil, ErrNotFound
	}
	return &b[0], nil
}

// SealedColumns returns the columns of table that its seal covers, id
// first, or nil for a table that is not sealed.
func SealedColumns(table string) []string {
	for _, t := range sealTables {
		if t.name == table {
			return slices.Clone(t.cols)
		}
	}
	return nil
}
