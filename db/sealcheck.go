package db

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Checks of VerifySeals.
const (
	SealChanged   = "changed"   // a sealed row's content no longer has its sealed hash
	SealDeleted   = "deleted"   // a sealed row (or one awaiting its seal) is gone
	SealInserted  = "inserted"  // a row appeared below a block's high-water id without being sealed or awaited
	SealBackdated = "backdated" // an unsealed row claims to be older than the chain head allows
	SealChain     = "chain"     // a block is missing, out of order, or no longer has its hash or root
	SealReordered = "reordered" // a row's version (or time) does not follow the row before it in id order
)

// SealProblem is one way the records differ from what was sealed.
type SealProblem struct {
	Check string
	Table string // the sealed table ("" for a chain problem)
	RowID int64  // the row (0 for a chain problem)
	// BlockID is the block that sealed the row, or the broken block; for an
	// inserted row, the first block whose high-water id covers it; 0 for a
	// backdated row.
	BlockID  int64
	Evidence string
}

// SealReport sums up VerifySeals.
type SealReport struct {
	Blocks   int64      // blocks checked
	Rows     int64      // sealed rows checked
	Unsealed int64      // rows not sealed yet (in flight, awaiting review, or newer than the head)
	Head     *SealBlock // the last block, nil when nothing is sealed
}

// VerifySeals recomputes the whole chain: every block's hash and link, every
// block's root from the row hashes it sealed, and every sealed row's hash
// from its current content; and it looks for rows that appeared where the
// chain says there were none. It calls emit for each problem, in the order
// chain, then table by table in id order, and stops at the first error emit
// returns. It only reads, does I/O, and streams: memory grows only with the
// runs of unsealed ids (at most one span of 16 bytes per spanMerge sealed
// rows), not with the rows. On an SQLite file it reads through read-only
// fast-path connections (sealscan.go).
func (s *Store) VerifySeals(ctx context.Context, emit func(SealProblem) error) (*SealReport, error) {
	rep := &SealReport{}
	blocks, err := s.verifyChain(ctx, rep, emit)
	if err != nil {
		return nil, err
	}
	if len(blocks) > 0 {
		rep.Head = blocks[len(blocks)-1]
	}
	// The tables are checked in the background while the roots are
	// recomputed here (they read different rows: on two cores this takes
	// about as long as the longer of the two); their problems wait in a
	// bounded channel and are emitted after the roots', in their order.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		problems = make(chan SealProblem, 256)
		done     = make(chan struct{})
		trep     SealReport // the tables' counts, written by the goroutine
		terr     error
	)
	go func() {
		defer close(done)
		defer close(problems)
		send := func(p SealProblem) error {
			select {
			case problems <- p:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		for _, t := range sealTables {
			if terr = s.verifyTable(ctx, t, blocks, &trep, send); terr != nil {
				return
			}
		}
	}()
	stop := func() {
		cancel()
		for range problems {
		}
		<-done
	}
	if err := s.verifyRoots(ctx, blocks, emit); err != nil {
		stop()
		return nil, err
	}
	for p := range problems {
		if err := emit(p); err != nil {
			stop()
			return nil, err
		}
	}
	<-done
	if terr != nil {
		return nil, terr
	}
	rep.Rows, rep.Unsealed = trep.Rows, trep.Unsealed
	return rep, nil
}

// verifyChain checks the blocks' hashes and links, and returns them in
// order.
func (s *Store) verifyChain(ctx context.Context, rep *SealReport, emit func(SealProblem) error) ([]*SealBlock, error) {
	var blocks []*SealBlock
	if err := s.gdb.WithContext(ctx).Raw(`SELECT id, sealed_at, prev_hash, root, row_count AS rows, state, hash FROM seal_blocks ORDER BY id`).
		Scan(&blocks).Error; err != nil {
		return nil, fmt.Errorf("db: verify seals: %w", err)
	}
	chain := func(b int64, format string, args ...any) error {
		return emit(SealProblem{Check: SealChain, BlockID: b, Evidence: fmt.Sprintf(format, args...)})
	}
	prevHash := ""
	var prevID int64
	for _, b := range blocks {
		rep.Blocks++
		if b.ID != prevID+1 {
			if err := chain(b.ID, "seal block %d follows block %d: blocks %d to %d are missing", b.ID, prevID, prevID+1, b.ID-1); err != nil {
				return nil, err
			}
		}
		if b.PrevHash != prevHash {
			if err := chain(b.ID, "seal block %d links to previous hash %s, but block %d has hash %s", b.ID, b.PrevHash, prevID, prevHash); err != nil {
				return nil, err
			}
		}
		if h := blockHash(b); h != b.Hash {
			if err := chain(b.ID, "seal block %d no longer has its hash: stored %s, its content hashes to %s", b.ID, b.Hash, h); err != nil {
				return nil, err
			}
		}
		if _, err := decodeState(b.State); err != nil {
			if err := chain(b.ID, "seal block %d has an unreadable state: %v", b.ID, err); err != nil {
				return nil, err
			}
		}
		prevHash, prevID = b.Hash, b.ID
	}
	return blocks, nil
}

// verifyRoots checks each block's root against the row hashes it sealed, in
// table then id order.
func (s *Store) verifyRoots(ctx context.Context, blocks []*SealBlock, emit func(SealProblem) error) error {
	chain := func(b int64, format string, args ...any) error {
		return emit(SealProblem{Check: SealChain, BlockID: b, Evidence: fmt.Sprintf(format, args...)})
	}
	byID := make(map[int64]*SealBlock, len(blocks))
	var head int64
	for _, b := range blocks {
		byID[b.ID] = b
		head = max(head, b.ID)
	}
	var (
		cur  int64 = -1
		root *rootHash
	)
	seen := map[int64]bool{}
	// later are the blocks past the head that seal rows name: a sealer
	// running beside the check may have added them since the chain was
	// read; those still missing at the end are reported.
	later := map[int64]bool{}
	finish := func() error {
		if cur < 0 {
			return nil
		}
		seen[cur] = true
		b := byID[cur]
		if b == nil && cur > head {
			later[cur] = true
			return nil
		}
		if b == nil {
			return chain(cur, "seal rows name block %d, which is not in the chain", cur)
		}
		if r := root.sum(); r != b.Root || root.n != b.Rows {
			return chain(cur, "seal block %d sealed %d rows with root %s; its seal rows now number %d with root %s", cur, b.Rows, b.Root, root.n, r)
		}
		return nil
	}
	root = newRoot()
	if err := s.sealRows(ctx, func(bid int64, tbl []byte, id int64, h []byte) error {
		if bid != cur {
			if err := finish(); err != nil {
				return err
			}
			cur = bid
			root.reset()
		}
		root.addBytes(tbl, id, h)
		return nil
	}); err != nil {
		return err
	}
	if err := finish(); err != nil {
		return err
	}
	for _, b := range blocks {
		if !seen[b.ID] && b.Rows != 0 {
			if err := chain(b.ID, "seal block %d sealed %d rows; none of its seal rows is left", b.ID, b.Rows); err != nil {
				return err
			}
		}
	}
	if len(later) == 0 {
		return nil
	}
	added, err := s.blockIDsAfter(ctx, head)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(later)) {
		if !added[id] {
			if err := chain(id, "seal rows name block %d, which is not in the chain", id); err != nil {
				return err
			}
		}
	}
	return nil
}

// blockIDsAfter returns the ids of the seal blocks after id.
func (s *Store) blockIDsAfter(ctx context.Context, id int64) (map[int64]bool, error) {
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT id FROM seal_blocks WHERE id > ?`), id)
	if err != nil {
		return nil, fmt.Errorf("db: verify seals: %w", err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var b int64
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("db: verify seals: %w", err)
		}
		out[b] = true
	}
	return out, rows.Err()
}

// verifyTable checks the sealed rows of one table against their content, and
// its unsealed rows against what the chain says was there.
func (s *Store) verifyTable(ctx context.Context, t sealTable, blocks []*SealBlock, rep *SealReport, emit func(SealProblem) error) error {
	// The order column, if this engine keeps it in id order.
	orderIdx := -1
	if t.order != "" && (t.orderOn == "" || t.orderOn == s.Dialect) {
		orderIdx = slices.Index(t.cols, t.order)
	}
	var (
		lastOrder   int64
		lastOrderID int64 // 0: no sealed row seen yet
	)
	orderKey := func(v any) (int64, bool) {
		if n, ok := asInt(v); ok && t.order == "version" {
			return n, true
		}
		if tm := anyTime(v); tm.Valid {
			return tm.Time.UnixNano(), true
		}
		return 0, false
	}
	outOfOrder := func(k int64) bool {
		return lastOrderID != 0 && (k < lastOrder || (t.strict && k == lastOrder))
	}
	// Sealed rows: still there, with the same content. The ids they skip
	// are gathered in spans, where the unsealed rows are looked for next.
	orderSel := "NULL"
	if orderIdx >= 0 {
		orderSel = "t." + t.order
	}
	var sp spans
	err := s.sealedRows(ctx, t, orderSel, func(r *sealedRow) error {
		rep.Rows++
		sp.sealed(r.id)
		var p *SealProblem
		if !r.present {
			p = &SealProblem{Check: SealDeleted, Table: t.name, RowID: r.id, BlockID: r.bid,
				Evidence: fmt.Sprintf("%s row %d was sealed in block %d and has been deleted since", t.name, r.id, r.bid)}
		} else if h, err := r.hash(); err != nil {
			return fmt.Errorf("db: verify %s: %w", t.name, err)
		} else if !bytes.Equal(h, r.sealed) {
			p = &SealProblem{Check: SealChanged, Table: t.name, RowID: r.id, BlockID: r.bid,
				Evidence: fmt.Sprintf("%s row %d was changed after block %d sealed it: its content hashed to %s, now to %s", t.name, r.id, r.bid, r.sealed, h)}
		}
		if p == nil && orderIdx >= 0 {
			if k, ok := orderKey(r.ord); ok {
				if outOfOrder(k) {
					p = &SealProblem{Check: SealReordered, Table: t.name, RowID: r.id, BlockID: r.bid,
						Evidence: fmt.Sprintf("%s row %d has a %s before that of row %d, which has a smaller id: rows were inserted or renumbered out of order", t.name, r.id, t.order, lastOrderID)}
				}
				if lastOrderID == 0 || k > lastOrder {
					lastOrder = k
				}
				lastOrderID = r.id
			}
		}
		if p != nil {
			return emit(*p)
		}
		return nil
	})
	if err != nil {
		return err
	}

	// Unsealed rows: awaited by the head, or newer than it.
	var (
		headState tableState
		headAt    time.Time
	)
	if len(blocks) > 0 {
		head := blocks[len(blocks)-1]
		st, err := decodeState(head.State)
		if err == nil {
			headState = st[t.name]
		}
		headAt = head.SealedAt
	}
	// firstCover is the first block whose high-water id reaches id.
	firstCover := func(id int64) int64 {
		for _, b := range blocks {
			if st, err := decodeState(b.State); err == nil && st[t.name].hw >= id {
				return b.ID
			}
		}
		return 0
	}
	// The unsealed rows lie in the spans of ids the sealed rows skipped:
	// reading those (and, within a span that also holds sealed rows, the
	// ids seal_rows lacks) reads only the unsealed rows, not the table.
	q := s.rebind("SELECT t.id, t." + t.stamp + ", " + orderSel + " FROM " + t.name +
		" t WHERE t.id BETWEEN ? AND ? AND NOT EXISTS (SELECT 1 FROM seal_rows s WHERE s.tbl = ? AND s.row_id = t.id) ORDER BY t.id")
	present := map[int64]bool{}
	for _, span := range sp.done() {
		if err := s.unsealedRows(ctx, q, t, span, func(id int64, raw, ord any) error {
			rep.Unsealed++
			stamp := anyTime(raw)
			_, awaited := slices.BinarySearch(headState.pending, id)
			if awaited {
				present[id] = true
			}
			var p *SealProblem
			switch {
			case len(blocks) == 0:
			case id <= headState.hw && !awaited:
				b := firstCover(id)
				p = &SealProblem{Check: SealInserted, Table: t.name, RowID: id, BlockID: b,
					Evidence: fmt.Sprintf("%s row %d is not sealed, yet block %d saw every row up to id %d and did not await it: it was inserted after sealing", t.name, id, b, headState.hw)}
			case id > headState.hw && orderIdx >= 0 && func() bool { k, ok := orderKey(ord); return ok && outOfOrder(k) }():
				p = &SealProblem{Check: SealInserted, Table: t.name, RowID: id,
					Evidence: fmt.Sprintf("%s row %d is not sealed yet and has a %s before that of sealed row %d, which has a smaller id: it was inserted among the sealed rows", t.name, id, t.order, lastOrderID)}
			case id > headState.hw && stamp.Valid && stamp.Time.Before(headAt.Add(-BackdateSlack)):
				p = &SealProblem{Check: SealBackdated, Table: t.name, RowID: id,
					Evidence: fmt.Sprintf("%s row %d is newer than the chain head (block %d, sealed %s) but says %s %s: it was written after sealing and backdated",
						t.name, id, blocks[len(blocks)-1].ID, headAt.UTC().Format(time.RFC3339), t.stamp, stamp.Time.UTC().Format(time.RFC3339))}
			}
			if p != nil {
				return emit(*p)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	for _, id := range headState.pending {
		if present[id] {
			continue
		}
		// Awaited but not among the unsealed rows: gone (a row sealed
		// meanwhile by a later block would not be awaited by the head).
		var n int64
		if err := s.pool.QueryRowContext(ctx, s.rebind("SELECT COUNT(*) FROM "+t.name+" WHERE id = ?"), id).Scan(&n); err != nil {
			return fmt.Errorf("db: verify %s: %w", t.name, err)
		}
		if n == 0 {
			if err := emit(SealProblem{Check: SealDeleted, Table: t.name, RowID: id, BlockID: blocks[len(blocks)-1].ID,
				Evidence: fmt.Sprintf("%s row %d was awaited by block %d (not final yet) and has been deleted", t.name, id, blocks[len(blocks)-1].ID)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// anyTime reads a time column scanned into any: a time.Time, or text as
// SQLite may return it.
func anyTime(v any) sql.NullTime {
	switch x := v.(type) {
	case time.Time:
		return sql.NullTime{Time: x, Valid: true}
	case []byte:
		return anyTime(string(x))
	case string:
		s := strings.TrimSuffix(x, "Z")
		for _, f := range []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02T15:04:05.999999999-07:00",
			"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
			if t, err := time.ParseInLocation(f, s, time.UTC); err == nil {
				return sql.NullTime{Time: t, Valid: true}
			}
		}
	}
	return sql.NullTime{}
}

// verifySelect is the select list verifyTable reads a sealed row's content
// with. On SQLite it is each column's raw value (as +c, an expression
// without a declared type, so that the driver leaves stored times as their
// text), from which verifyHash writes the text of sealSelect (the quote()
// of each column, joined by commas) in Go: SQLite builds that text at
// about 15 µs a row of requests, the driver reads the values in about half
// that. PostgreSQL: as sealSelect.
func (s *Store) verifySelect(t sealTable, alias string) string {
	if s.Dialect == Postgres {
		return s.sealSelect(t, alias)
	}
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		cols[i] = "+" + alias + c
	}
	return strings.Join(cols, ", ")
}

// verifyHash returns the content hash of row id of t, whose values vals
// were read with verifySelect, in a buffer rh's next call overwrites. On
// SQLite a REAL value, whose literal only SQLite writes exactly, makes it
// read the row's sealSelect text instead. It does I/O only then.
func (s *Store) verifyHash(ctx context.Context, rh *rowHasher, t sealTable, id int64, vals []any) ([]byte, error) {
	if s.Dialect == Postgres {
		return rh.rowHash(t.name, t.cols, vals), nil
	}
	if h, ok := rh.sqliteValues(t.name, vals); ok {
		return h, nil
	}
	return s.sqliteRowHash(ctx, rh, t, id)
}

// sqliteRowHash returns the content hash of row id of t on SQLite, from the
// text of its sealSelect, in a buffer rh's next call overwrites. It does
// I/O.
func (s *Store) sqliteRowHash(ctx context.Context, rh *rowHasher, t sealTable, id int64) ([]byte, error) {
	var content string
	if err := s.pool.QueryRowContext(ctx, "SELECT "+s.sealSelect(t, "")+" FROM "+t.name+" WHERE id = ?", id).Scan(&content); err != nil {
		return nil, err
	}
	return rh.sqliteRow(t.name, content), nil
}

// sqliteValues hashes a row's content from its SQLite values as the driver
// returns them, writing the text sealSelect would read: SQLite's quote() of
// each value, joined by commas. ok is false when a value is a REAL (or of a
// type the driver does not return), whose text it leaves to SQLite.
func (rh *rowHasher) sqliteValues(table string, vals []any) (hash []byte, ok bool) {
	b := append(append(append(rh.buf[:0], "lohibot row v1 sqlite\x00"...), table...), 0)
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendQuoted(b, v); !ok {
			rh.buf = b
			return nil, false
		}
	}
	rh.buf = b
	rh.h.Reset()
	rh.h.Write(b)
	return rh.hexSum(), true
}

// appendQuoted appends SQLite's quote() of v, a value as the driver returns
// it: NULL; an INTEGER in decimal; TEXT (up to its first NUL, as quote()'s
// %Q reads it) in single quotes, each quote doubled; a BLOB as X'…' in
// upper-case hex. ok is false for a REAL or anything else.
func appendQuoted(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case string:
		return appendQuotedText(b, x), true
	case []byte:
		return appendQuotedBlob(b, x), true
	}
	return b, false
}
