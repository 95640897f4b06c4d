package db

import (
	"context"
	"errors"
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
	// Hashes reads the stored hashes of the tree the rows give (the
	// stored table, read with VerifyLog's ctx, when every leaf and stored
	// hash was found to be that tree's; else the tree recomputed from the
	// rows, in memory): tlog.TreeHash(n, Hashes) is the root the rows give
	// at any size n <= Size.
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

// leafSet is the log's leaves as VerifyLog holds them: a few bytes each
// (a million leaves are about 25 MB), the salts in one arena.
type leafSet struct {
	tables []string // table names, by the number tbl holds
	tbl    []uint8
	rowID  []int64
	salts  []byte
	saltAt []int64 // leaf i's salt is salts[saltAt[i]:saltAt[i+1]]
}

func (ls *leafSet) add(tbl string, id int64, salt []byte) {
	t := slices.Index(ls.tables, tbl)
	if t < 0 {
		t = len(ls.tables)
		ls.tables = append(ls.tables, tbl)
	}
	if len(ls.saltAt) == 0 {
		ls.saltAt = append(ls.saltAt, 0)
	}
	ls.tbl = append(ls.tbl, uint8(t))
	ls.rowID = append(ls.rowID, id)
	ls.salts = append(ls.salts, salt...)
	ls.saltAt = append(ls.saltAt, int64(len(ls.salts)))
}

func (ls *leafSet) table(i int64) string { return ls.tables[ls.tbl[i]] }
func (ls *leafSet) salt(i int64) []byte  { return ls.salts[ls.saltAt[i]:ls.saltAt[i+1]] }

// of returns the indexes of table's leaves, in row id order.
func (ls *leafSet) of(table string) []int64 {
	t := slices.Index(ls.tables, table)
	if t < 0 {
		return nil
	}
	var out []int64
	for i, x := range ls.tbl {
		if int(x) == t {
			out = append(out, int64(i))
		}
	}
	slices.SortStableFunc(out, func(a, b int64) int { return cmpInt(ls.rowID[a], ls.rowID[b]) })
	return out
}

func (s *Store) verifyLog(ctx context.Context, emit func(LogProblem) error) (*LogReport, error) {
	// The cursors first: a row appended after they were read is then one
	// they do not cover yet (unlogged), never one they went past.
	curs, err := s.readCursors(ctx)
	if err != nil {
		return nil, err
	}
	// The leaves, in index order.
	var ls leafSet
	gap := false
	err = s.readTable(ctx, "SELECT idx, tbl, row_id, salt FROM log_leaves ORDER BY idx", nil, func(idx int64, tbl string, id int64, salt []byte) bool {
		if idx != int64(len(ls.tbl)) || len(ls.tables) == 255 {
			gap = true
			return false
		}
		ls.add(tbl, id, salt)
		return true
	})
	if err != nil {
		return nil, err
	}
	n := int64(len(ls.tbl))
	if gap {
		// The rest cannot be placed in the tree: checked up to here.
		if err := emit(LogProblem{Check: LogTree, Index: n,
			Evidence: fmt.Sprintf("the log's leaves are not numbered in a row: leaf %d is missing", n)}); err != nil {
			return nil, err
		}
	}
	rep := &LogReport{Size: n}

	// The stored hashes of those leaves (an append since adds more), read
	// once in order: each leaf's own is kept, and every one is checked
	// against the tree of those leaf hashes as it comes, from one hash per
	// level (the left subtrees not yet paired), so that the tree is never
	// held whole.
	var (
		leafHashes = make([]tlog.Hash, 0, n)
		want       = tlog.StoredHashCount(n)
		read       int64
		tc         = treeCheck{bad: -1}
	)
	err = s.readTable(ctx, "SELECT id, '', 0, hash FROM log_hashes WHERE id < ? ORDER BY id", []any{want},
		func(id int64, _ string, _ int64, h []byte) bool {
			if id != read || len(h) != tlog.HashSize {
				return false
			}
			read++
			if leaf, ok := tc.next(tlog.Hash(h)); ok {
				leafHashes = append(leafHashes, leaf)
			}
			return true
		})
	if err != nil {
		return nil, err
	}
	if read != want {
		// Without the leaves' stored hashes nothing can be compared: a
		// leaf's missing hash is reported as the tree's.
		rep.Hashes = tlog.HashReaderFunc(func([]int64) ([]tlog.Hash, error) {
			return nil, errors.New("the log's stored hashes are incomplete")
		})
		return rep, emit(LogProblem{Check: LogTree, Index: -1, Evidence: fmt.Sprintf("the log holds %d stored hashes where its %d leaves make %d",
			read, n, want)})
	}
	leafHash := func(i int64) tlog.Hash { return leafHashes[i] }

	// Each leaf recomputed from its row (a merge of the table's rows and
	// its leaves, both in id order), and compared with its stored hash.
	var (
		buf      []byte
		problems []LogProblem
		wrong    = map[int64]tlog.Hash{} // leaf -> its recomputed hash, where it differs (zero: no row)
		byHash   map[tlog.Hash]int64     // stored leaf hash -> index, built on the first mismatch
	)
	mismatch := func(i int64, h tlog.Hash, t string, id int64) {
		wrong[i] = h
		p := LogProblem{Check: LogChanged, Table: t, RowID: id, Index: i,
			Evidence: fmt.Sprintf("%s row %d is not what leaf %d of the log committed to: it was changed after it became final", t, id, i)}
		if byHash == nil {
			byHash = make(map[tlog.Hash]int64, n)
			for j := range n {
				byHash[leafHash(j)] = j
			}
		}
		if j, ok := byHash[h]; ok {
			p.Check = LogReordered
			p.Evidence = fmt.Sprintf("%s row %d is leaf %d of the log, where it was leaf %d: the log was reordered", t, id, i, j)
		}
		problems = append(problems, p)
	}
	for _, t := range append([]*logTable{&chainTable}, tablePtrs()...) {
		order := ls.of(t.name)
		if t == &chainTable && len(order) == 0 {
			continue
		}
		c := curs[t.name]
		pending := map[int64]bool{} // the rows the log waits for
		for _, id := range c.pending {
			pending[id] = true
		}
		seen := map[int64]bool{} // those of them found
		k := 0                   // the next of order
		gone := func(upTo int64) {
			for ; k < len(order) && ls.rowID[order[k]] < upTo; k++ {
				i := order[k]
				wrong[i] = tlog.Hash{}
				problems = append(problems, LogProblem{Check: LogDeleted, Table: t.name, RowID: ls.rowID[i], Index: i,
					Evidence: fmt.Sprintf("%s row %d, leaf %d of the log, is gone", t.name, ls.rowID[i], i)})
			}
		}
		err := s.scanLogRows(ctx, t, "1 = 1", nil, 0, func(r *logRow) error {
			gone(r.id)
			if pending[r.id] {
				seen[r.id] = true
			}
			if k == len(order) || ls.rowID[order[k]] != r.id {
				switch {
				case t == &chainTable:
				case r.id > c.hw || pending[r.id]:
					rep.Unlogged++
				default:
					problems = append(problems, LogProblem{Check: LogInserted, Table: t.name, RowID: r.id, Index: -1,
						Evidence: fmt.Sprintf("%s row %d is not in the log, though the sequencer went past it (it logs every final row up to id %d)", t.name, r.id, c.hw)})
				}
				return nil
			}
			for ; k < len(order) && ls.rowID[order[k]] == r.id; k++ {
				i := order[k]
				buf = t.record(r.id, ls.salt(i), r.vals).Append(buf[:0])
				if h := tlog.RecordHash(buf); h != leafHash(i) {
					mismatch(i, h, t.name, r.id)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		gone(1<<63 - 1)
		for _, id := range c.pending {
			if !seen[id] {
				problems = append(problems, LogProblem{Check: LogDeleted, Table: t.name, RowID: id, Index: -1,
					Evidence: fmt.Sprintf("%s row %d, which the log waits for (not final when the sequencer saw it), is gone", t.name, id)})
			}
		}
	}
	for i := range n {
		tbl, id := ls.table(i), ls.rowID[i]
		switch {
		case logTableNamed(tbl) == nil:
			problems = append(problems, LogProblem{Check: LogInserted, Table: tbl, RowID: id, Index: i,
				Evidence: fmt.Sprintf("leaf %d names table %q, which is not an evidence table", i, tbl)})
			wrong[i] = tlog.Hash{}
		case id <= 0 && tbl != chainTable.name:
			problems = append(problems, LogProblem{Check: LogInserted, Table: tbl, RowID: id, Index: i,
				Evidence: fmt.Sprintf("leaf %d names %s row %d, an id the database never assigns", i, tbl, id)})
		}
	}
	for _, p := range problems {
		if err := emit(p); err != nil {
			return nil, err
		}
	}

	// The stored tree against its own leaves (checked as it was read).
	if tc.bad >= 0 {
		if err := emit(LogProblem{Check: LogTree, Index: tc.badLeaf, Evidence: fmt.Sprintf(
			"stored hash %d (leaf %d) is not the hash of the leaves below it: the tree was rewritten", tc.bad, tc.badLeaf)}); err != nil {
			return nil, err
		}
	}

	// The tree the rows give: the stored one when every leaf matched and
	// the stored tree is theirs, else one recomputed with the rows'
	// hashes.
	rep.Hashes = s.LogHashes(ctx)
	if len(wrong) > 0 || tc.bad >= 0 {
		tree := make([]tlog.Hash, 0, want)
		r := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
			out := make([]tlog.Hash, len(indexes))
			for i, x := range indexes {
				out[i] = tree[x]
			}
			return out, nil
		})
		for i := range n {
			h, ok := wrong[i]
			if !ok {
				h = leafHash(i)
			}
			hs, err := tlog.StoredHashesForRecordHash(i, h, r)
			if err != nil {
				return nil, err
			}
			tree = append(tree, hs...)
		}
		rep.Hashes = r
	}
	if rep.Root, err = tlog.TreeHash(n, rep.Hashes); err != nil {
		return nil, err
	}
	return rep, nil
}

// treeCheck checks a log's stored hashes, given in index order, against
// the Merkle tree of the leaf hashes among them (tlog's layout: leaf i's
// hash, then the hash of each subtree leaf i completes). It holds one hash
// per level: the left subtrees still waiting for their right sibling. Its
// zero value is not ready: bad starts at -1.
type treeCheck struct {
	leaf    int64       // the leaf whose hashes come
	pos     int         // of them, the next (0: the leaf's own)
	cur     tlog.Hash   // the hash of the subtree of the last one
	left    []tlog.Hash // by level, the left subtree waiting
	bad     int64       // the first stored hash that is not the tree's (-1: none yet)
	badLeaf int64       // its leaf
}

// next takes the next stored hash and returns it, true, when it is a
// leaf's own.
func (t *treeCheck) next(h tlog.Hash) (tlog.Hash, bool) {
	id := tlog.StoredHashIndex(0, t.leaf) + int64(t.pos)
	var isLeaf bool
	if t.pos == 0 {
		t.cur, isLeaf = h, true
	} else {
		// The subtree at level pos: its left half waited, its right
		// half is the last one.
		t.cur = tlog.NodeHash(t.left[t.pos-1], t.cur)
		if h != t.cur && t.bad < 0 {
			t.bad, t.badLeaf = id, t.leaf
		}
	}
	// Leaf i completes one subtree per trailing one bit of i.
	if t.leaf>>t.pos&1 == 1 {
		t.pos++
		return h, isLeaf
	}
	for len(t.left) <= t.pos {
		t.left = append(t.left, tlog.Hash{})
	}
	t.left[t.pos] = t.cur
	t.leaf, t.pos = t.leaf+1, 0
	return h, isLeaf
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
		rows, err := s.pool.QueryContext(ctx, rebind(s.Dialect, q), step.args...)
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
	rows, err := s.pool.QueryContext(ctx, rebind(s.Dialect, q), args...)
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
