package db

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// The checks of the log's integrity (docs/audit-integrity.md).
const (
	// LogChanged: a row's content is not what its leaf committed to
	// (edited, renumbered, or moved to another leaf).
	LogChanged = "changed"
	// LogDeleted: a row the log holds, or one it waits for (in flight, in
	// review), is gone.
	LogDeleted = "deleted"
	// LogInserted: a final row the log should hold but does not (written
	// behind the sequencer's back), or a leaf naming a row id the
	// database never assigns.
	LogInserted = "inserted"
	// LogReordered: a row's leaf is at another index than the one the
	// log gave it.
	LogReordered = "reordered"
	// LogTree: the stored hashes are not the Merkle tree of the leaves,
	// or the leaves are not numbered 0, 1, 2...
	LogTree = "tree"
)

// LogProblem is one finding of VerifyLog.
type LogProblem struct {
	Check    string // LogChanged, LogDeleted, LogInserted, LogReordered, LogTree
	Table    string // "" for the tree itself
	RowID    int64
	Index    int64 // the leaf involved, or -1
	Evidence string
}

// LogReport sums up VerifyLog.
type LogReport struct {
	Size     int64     // leaves in the log
	Root     tlog.Hash // the root of the tree recomputed from the rows
	Unlogged int64     // rows not in the log yet: not final, or final since the sequencer's last turn
	// Hashes reads the stored hashes of the tree recomputed from the rows
	// (not the stored table's): tlog.TreeHash(n, Hashes) is the root the
	// rows give at any size n <= Size.
	Hashes tlog.HashReader
}

// VerifyLog recomputes every leaf from its row and the Merkle tree from the
// leaves, and calls emit for every row edited, deleted, inserted or
// reordered (naming its table and id) and for stored hashes that are not
// the tree's. It stops at the first error emit returns, returning it. It
// does I/O: a read of every evidence row and of the log.
func (s *Store) VerifyLog(ctx context.Context, emit func(LogProblem) error) (*LogReport, error) {
	rep, err := s.verifyLog(ctx, emit)
	if err != nil {
		return nil, fmt.Errorf("db: verify the log: %w", err)
	}
	return rep, nil
}

type leafRef struct {
	tbl  string
	id   int64
	salt []byte
}

func (s *Store) verifyLog(ctx context.Context, emit func(LogProblem) error) (*LogReport, error) {
	// The cursors first: a row appended after they were read is then one
	// they do not cover yet (unlogged), never one they went past.
	curs, err := s.readCursors(ctx)
	if err != nil {
		return nil, err
	}
	// The leaves, in index order.
	var leaves []leafRef
	where := map[string]map[int64]int64{} // table -> row id -> leaf index
	gap := false
	err = s.readTable(ctx, "SELECT idx, tbl, row_id, salt FROM log_leaves ORDER BY idx", nil, func(idx int64, tbl string, id int64, salt []byte) bool {
		if idx != int64(len(leaves)) {
			gap = true
			return false
		}
		m := where[tbl]
		if m == nil {
			m = map[int64]int64{}
			where[tbl] = m
		}
		m[id] = idx
		leaves = append(leaves, leafRef{tbl: tbl, id: id, salt: salt})
		return true
	})
	if err != nil {
		return nil, err
	}
	if gap {
		// The rest cannot be placed in the tree: checked up to here.
		if err := emit(LogProblem{Check: LogTree, Index: int64(len(leaves)),
			Evidence: fmt.Sprintf("the log's leaves are not numbered in a row: leaf %d is missing", len(leaves))}); err != nil {
			return nil, err
		}
	}
	n := int64(len(leaves))
	rep := &LogReport{Size: n}

	// Each leaf's hash, recomputed from its row.
	computed := make([]tlog.Hash, n)
	seen := make([]bool, n)
	var buf []byte
	var problems []LogProblem
	for _, t := range append([]*logTable{&chainTable}, tablePtrs()...) {
		m := where[t.name]
		if t == &chainTable && len(m) == 0 {
			continue
		}
		c := curs[t.name]
		pending := map[int64]bool{}
		for _, id := range c.pending {
			pending[id] = true
		}
		err := s.scanLogRows(ctx, t, "1 = 1", nil, 0, func(r *logRow) error {
			idx, ok := m[r.id]
			if !ok {
				switch {
				case t == &chainTable:
				case r.id > c.hw || pending[r.id]:
					rep.Unlogged++
				default:
					problems = append(problems, LogProblem{Check: LogInserted, Table: t.name, RowID: r.id, Index: -1,
						Evidence: fmt.Sprintf("%s row %d is not in the log, though the sequencer went past it (it logs every final row up to id %d)", t.name, r.id, c.hw)})
				}
				delete(pending, r.id)
				return nil
			}
			delete(pending, r.id)
			buf = t.record(r.id, leaves[idx].salt, r.vals).Append(buf[:0])
			computed[idx] = tlog.RecordHash(buf)
			seen[idx] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
		for id := range pending {
			problems = append(problems, LogProblem{Check: LogDeleted, Table: t.name, RowID: id, Index: -1,
				Evidence: fmt.Sprintf("%s row %d, which the log waits for (not final when the sequencer saw it), is gone", t.name, id)})
		}
	}
	for _, p := range problems {
		if err := emit(p); err != nil {
			return nil, err
		}
	}

	// The stored hashes (those of the n leaves: an append since adds
	// more).
	stored := make([]tlog.Hash, 0, tlog.StoredHashCount(n))
	err = s.readTable(ctx, "SELECT id, '', 0, hash FROM log_hashes WHERE id < ? ORDER BY id", []any{tlog.StoredHashCount(n)},
		func(id int64, _ string, _ int64, h []byte) bool {
			if id != int64(len(stored)) || len(h) != tlog.HashSize {
				return false
			}
			stored = append(stored, tlog.Hash(h))
			return true
		})
	if err != nil {
		return nil, err
	}
	storedOK := int64(len(stored)) == tlog.StoredHashCount(n)
	if !storedOK {
		if err := emit(LogProblem{Check: LogTree, Index: -1, Evidence: fmt.Sprintf("the log holds %d stored hashes where its %d leaves make %d",
			len(stored), n, tlog.StoredHashCount(n))}); err != nil {
			return nil, err
		}
	}

	// Each leaf against its stored hash, and the tree from the leaves.
	var byHash map[tlog.Hash]int64 // stored leaf hash -> index, built on the first mismatch
	tree := make([]tlog.Hash, 0, tlog.StoredHashCount(n))
	r := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			if x < 0 || x >= int64(len(tree)) {
				return nil, fmt.Errorf("stored hash %d is not computed", x)
			}
			out[i] = tree[x]
		}
		return out, nil
	})
	storedReader := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			if x < 0 || x >= int64(len(stored)) {
				return nil, fmt.Errorf("stored hash %d is missing", x)
			}
			out[i] = stored[x]
		}
		return out, nil
	})
	treeBad := false
	for i := int64(0); i < n; i++ {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		l := leaves[i]
		var p *LogProblem
		switch {
		case l.id <= 0 && l.tbl != chainTable.name:
			p = &LogProblem{Check: LogInserted, Table: l.tbl, RowID: l.id, Index: i,
				Evidence: fmt.Sprintf("leaf %d names %s row %d, an id the database never assigns", i, l.tbl, l.id)}
		case logTableNamed(l.tbl) == nil:
			p = &LogProblem{Check: LogInserted, Table: l.tbl, RowID: l.id, Index: i,
				Evidence: fmt.Sprintf("leaf %d names table %q, which is not an evidence table", i, l.tbl)}
		case !seen[i]:
			p = &LogProblem{Check: LogDeleted, Table: l.tbl, RowID: l.id, Index: i,
				Evidence: fmt.Sprintf("%s row %d, leaf %d of the log, is gone", l.tbl, l.id, i)}
		case storedOK && computed[i] != stored[tlog.StoredHashIndex(0, i)]:
			p = &LogProblem{Check: LogChanged, Table: l.tbl, RowID: l.id, Index: i,
				Evidence: fmt.Sprintf("%s row %d is not what leaf %d of the log committed to: it was changed after it became final", l.tbl, l.id, i)}
			if byHash == nil {
				byHash = make(map[tlog.Hash]int64, n)
				for j := int64(0); j < n; j++ {
					byHash[stored[tlog.StoredHashIndex(0, j)]] = j
				}
			}
			if j, ok := byHash[computed[i]]; ok {
				p.Check = LogReordered
				p.Evidence = fmt.Sprintf("%s row %d is leaf %d of the log, where it was leaf %d: the log was reordered", l.tbl, l.id, i, j)
			}
		}
		if p != nil {
			if err := emit(*p); err != nil {
				return nil, err
			}
		}
		hs, err := tlog.StoredHashesForRecordHash(i, computed[i], r)
		if err != nil {
			return nil, err
		}
		tree = append(tree, hs...)
		if storedOK && !treeBad {
			// The stored tree against its own leaves: a leaf's change
			// is reported above, a rewritten tree here.
			base := tlog.StoredHashIndex(0, i)
			ss, err := tlog.StoredHashesForRecordHash(i, stored[base], storedReader)
			if err != nil {
				return nil, err
			}
			for j, h := range ss {
				if stored[base+int64(j)] != h {
					treeBad = true
					if err := emit(LogProblem{Check: LogTree, Index: i, Evidence: fmt.Sprintf(
						"stored hash %d (leaf %d) is not the hash of the leaves below it: the tree was rewritten", base+int64(j), i)}); err != nil {
						return nil, err
					}
					break
				}
			}
		}
	}
	rep.Hashes = r
	if rep.Root, err = tlog.TreeHash(n, r); err != nil {
		return nil, err
	}
	return rep, nil
}

func tablePtrs() []*logTable {
	out := make([]*logTable, len(logTables))
	for i := range logTables {
		out[i] = &logTables[i]
	}
	return out
}

// VerifySiteLog is VerifyLog for the records of some sites: each of their
// rows in the log is recomputed and checked against its stored leaf, and
// that leaf against the stored tree's root (an inclusion proof), and each
// of their final rows not in the log is checked against the sequencer's
// place. It reads the sites' rows and O(log n) stored hashes per row, not
// the whole log: a deleted row, which names no site any more, is found by
// VerifyLog. The report's Hashes is the stored tree's. It does I/O.
func (s *Store) VerifySiteLog(ctx context.Context, sites []string, emit func(LogProblem) error) (*LogReport, error) {
	rep, err := s.verifySiteLog(ctx, sites, emit)
	if err != nil {
		return nil, fmt.Errorf("db: verify the log: %w", err)
	}
	return rep, nil
}

func (s *Store) verifySiteLog(ctx context.Context, sites []string, emit func(LogProblem) error) (*LogReport, error) {
	n, err := s.LogSize(ctx)
	if err != nil {
		return nil, err
	}
	stored := s.LogHashes(ctx)
	rep := &LogReport{Size: n, Hashes: stored}
	if rep.Root, err = tlog.TreeHash(n, stored); err != nil {
		return nil, err
	}
	curs, err := s.readCursors(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{} // table/id: a row of two of the sites is checked once
	for _, site := range sites {
		err := s.siteRows(ctx, site, func(t *logTable, id int64, idx int64, salt []byte, vals []any) error {
			key := t.name + "/" + fmt.Sprint(id)
			if seen[key] {
				return nil
			}
			seen[key] = true
			if idx < 0 {
				c := curs[t.name]
				if id > c.hw || slices.Contains(c.pending, id) {
					rep.Unlogged++
					return nil
				}
				return emit(LogProblem{Check: LogInserted, Table: t.name, RowID: id, Index: -1,
					Evidence: fmt.Sprintf("%s row %d is not in the log, though the sequencer went past it (it logs every final row up to id %d)", t.name, id, c.hw)})
			}
			h := tlog.RecordHash(t.record(id, salt, vals).Marshal())
			got, err := stored.ReadHashes([]int64{tlog.StoredHashIndex(0, idx)})
			if err != nil {
				return err
			}
			if got[0] != h {
				return emit(LogProblem{Check: LogChanged, Table: t.name, RowID: id, Index: idx,
					Evidence: fmt.Sprintf("%s row %d is not what leaf %d of the log committed to: it was changed after it became final", t.name, id, idx)})
			}
			p, err := tlog.ProveRecord(n, idx, stored)
			if err == nil {
				err = tlog.CheckRecord(p, n, rep.Root, idx, h)
			}
			if err != nil {
				return emit(LogProblem{Check: LogTree, Index: idx,
					Evidence: fmt.Sprintf("leaf %d (%s row %d) is not in the stored tree of %d leaves: %v", idx, t.name, id, n, err)})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// siteRows calls fn for every final row of site in the evidence tables
// (as SiteLeaves finds them), with its leaf index and salt, or idx -1 when
// it has no leaf.
func (s *Store) siteRows(ctx context.Context, site string, fn func(t *logTable, id, idx int64, salt []byte, vals []any) error) error {
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
		t := logTableNamed(step.t)
		q := "SELECT COALESCE(l.idx, -1), l.salt, x.id, " + t.selectList("x.") + " FROM " + t.name + " x LEFT JOIN log_leaves l ON l.tbl = '" +
			t.name + "' AND l.row_id = x.id WHERE (" + t.ready + ") AND (" + step.where + ")"
		rows, err := s.SQL.QueryContext(ctx, rebind(s.Dialect, q), step.args...)
		if err != nil {
			return fmt.Errorf("read %s: %w", t.name, err)
		}
		err = func() error {
			defer rows.Close()
			for rows.Next() {
				var (
					idx, id int64
					salt    []byte
				)
				vals := make([]any, len(t.cols))
				dest := []any{&idx, &salt, &id}
				for i := range vals {
					dest = append(dest, &vals[i])
				}
				if err := rows.Scan(dest...); err != nil {
					return fmt.Errorf("read %s: %w", t.name, err)
				}
				if t.site == "domains" && !slices.Contains(strings.Fields(textOf(vals[slices.IndexFunc(t.cols, isDomains)])), site) {
					continue // a LIKE match of another site's name
				}
				if err := fn(t, id, idx, salt, vals); err != nil {
					return err
				}
			}
			return rows.Err()
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

func isDomains(c logCol) bool { return c.name == "domains" }

// textOf returns a text value as the driver read it.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// readTable runs q, whose rows are (integer, text, integer, blob), and
// calls fn with each until it returns false: on an SQLite file through the
// fast-path reader, else through the pool.
func (s *Store) readTable(ctx context.Context, q string, args []any, fn func(a int64, b string, c int64, d []byte) bool) error {
	rd, err := s.openReader(ctx)
	if err != nil {
		return err
	}
	if rd != nil {
		defer rd.Close()
		rows, err := rd.Query(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for n := 1; rows.Next(); n++ {
			if n%ctxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if !fn(rows.Int64(0), rows.String(1), rows.Int64(2), append([]byte{}, rows.BlobBytes(3)...)) {
				return nil
			}
		}
		return rows.Err()
	}
	rows, err := s.SQL.QueryContext(ctx, rebind(s.Dialect, q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			a, c int64
			b    string
			d    []byte
		)
		if err := rows.Scan(&a, &b, &c, &d); err != nil {
			return err
		}
		if !fn(a, b, c, d) {
			return nil
		}
	}
	return rows.Err()
}
