package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// VerifySiteSeals is VerifySeals for the records of some sites (audit
// SITE, report SITE): its cost grows with the sites' rows and the blocks
// that sealed them, not with the size of the database. It checks:
//
//   - each row of the sites in the sealed tables (their requests and
//     policy events, the robots.txt snapshots of the origins their requests
//     went to): a sealed row against the hash it was sealed with; an
//     unsealed one against the chain head (inserted below the head's
//     high-water id without being awaited, or backdated);
//   - every block that sealed one of those rows: its root from its seal
//     rows, and each row it sealed, whatever the site, still there (the
//     content of other sites' rows is theirs to check);
//   - the chain from the first of those blocks to the head: each block's
//     hash recomputed and linked to the one before, so the head's hash (the
//     one a report shows) still vouches for every row checked.
//
// What it cannot see from the sites' rows is left to VerifySeals (audit
// integrity): a sealed row of the sites deleted together with every other
// row of the sites in its block, the blocks before the first that sealed
// a row of the sites, the order of rows across sites, and mail. It calls
// emit for each problem, chain first, then table by table in id order, and
// stops at the first error emit returns. It only reads and does I/O; memory
// grows with the sites' rows. Report.Rows counts the sites' sealed rows.
func (s *Store) VerifySiteSeals(ctx context.Context, sites []string, emit func(SealProblem) error) (*SealReport, error) {
	rep := &SealReport{}
	head, err := lastBlock(s.gdb.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("db: verify seals: %w", err)
	}
	rep.Head = head
	var headState map[string]tableState
	if head != nil {
		if headState, err = decodeState(head.State); err != nil {
			headState = nil // the chain walk reports the unreadable state
		}
	}

	// The sites' rows, sealed or not, table by table; the blocks that
	// sealed them.
	type rowProblem struct {
		table string
		p     SealProblem
	}
	var problems []rowProblem
	covering := map[int64]bool{}
	for _, t := range sealTables {
		where, args := s.siteRowsWhere(t, sites)
		if where == "" {
			continue
		}
		q := s.rebind("SELECT t.id, t." + t.stamp + ", sr.block_id, sr.hash, " + s.sealSelect(t, "t.") + " FROM " + t.name +
			" t LEFT JOIN seal_rows sr ON sr.tbl = ? AND sr.row_id = t.id WHERE " + where + " ORDER BY t.id")
		rows, err := s.pool.QueryContext(ctx, q, append([]any{t.name}, args...)...)
		if err != nil {
			return nil, fmt.Errorf("db: verify %s: %w", t.name, err)
		}
		hs := headState[t.name]
		vals := make([]any, s.sealWidth(t)+4)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("db: verify %s: %w", t.name, err)
			}
			id, _ := asInt(vals[0])
			raw := vals[1]
			if b, ok := asInt(vals[2]); ok && vals[2] != nil {
				covering[b] = true
				rep.Rows++
				sealed := fmt.Sprint(vals[3])
				if bs, ok := vals[3].([]byte); ok {
					sealed = string(bs)
				}
				if h := s.siteRowHash(t, vals[4:]); h != sealed {
					problems = append(problems, rowProblem{t.name, SealProblem{Check: SealChanged, Table: t.name, RowID: id, BlockID: b,
						Evidence: fmt.Sprintf("%s row %d was changed after block %d sealed it: its content hashed to %s, now to %s", t.name, id, b, sealed, h)}})
				}
				continue
			}
			rep.Unsealed++
			if head == nil {
				continue
			}
			_, awaited := slices.BinarySearch(hs.pending, id)
			stamp := anyTime(raw)
			switch {
			case id <= hs.hw && !awaited:
				b, err := s.firstCover(ctx, t.name, id)
				if err != nil {
					rows.Close()
					return nil, err
				}
				problems = append(problems, rowProblem{t.name, SealProblem{Check: SealInserted, Table: t.name, RowID: id, BlockID: b,
					Evidence: fmt.Sprintf("%s row %d is not sealed, yet block %d saw every row up to id %d and did not await it: it was inserted after sealing", t.name, id, b, hs.hw)}})
			case id > hs.hw && stamp.Valid && stamp.Time.Before(head.SealedAt.Add(-BackdateSlack)):
				problems = append(problems, rowProblem{t.name, SealProblem{Check: SealBackdated, Table: t.name, RowID: id,
					Evidence: fmt.Sprintf("%s row %d is newer than the chain head (block %d, sealed %s) but says %s %s: it was written after sealing and backdated",
						t.name, id, head.ID, head.SealedAt.UTC().Format(time.RFC3339), t.stamp, stamp.Time.UTC().Format(time.RFC3339))}})
			}
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return nil, fmt.Errorf("db: verify %s: %w", t.name, err)
		}
		rows.Close()
	}

	// The chain from the first covering block to the head.
	ids := make([]int64, 0, len(covering))
	for b := range covering {
		ids = append(ids, b)
	}
	slices.Sort(ids)
	if len(ids) > 0 {
		if err := s.verifyChainFrom(ctx, ids[0], rep, emit); err != nil {
			return nil, err
		}
	}
	// The covering blocks' roots, and every row they sealed.
	byTable := map[string][]SealProblem{}
	for _, b := range ids {
		if err := s.verifyBlockRows(ctx, b, rep, func(p SealProblem) error {
			if p.Table == "" {
				return emit(p)
			}
			byTable[p.Table] = append(byTable[p.Table], p)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for _, p := range problems {
		byTable[p.table] = append(byTable[p.table], p.p)
	}
	for _, t := range sealTables {
		ps := byTable[t.name]
		slices.SortStableFunc(ps, func(a, b SealProblem) int { return cmpInt(a.RowID, b.RowID) })
		for _, p := range ps {
			if err := emit(p); err != nil {
				return nil, err
			}
		}
	}
	return rep, nil
}

// siteRowsWhere returns the condition (on alias t) that selects the rows of
// sites in the sealed table t, and its arguments; "" for a table whose rows
// name no site.
func (s *Store) siteRowsWhere(t sealTable, sites []string) (string, []any) {
	ph := strings.TrimSuffix(strings.Repeat("?, ", len(sites)), ", ")
	args := make([]any, len(sites))
	for i, site := range sites {
		args[i] = site
	}
	switch t.name {
	case "requests", "policy_events":
		return "t.site IN (" + ph + ")", args
	case "robots_snapshots":
		return "t.origin IN (SELECT DISTINCT r.origin FROM requests r WHERE r.site IN (" + ph + "))", args
	}
	return "", nil
}

// firstCover returns the first block whose high-water id for table reaches
// id (0 when none does), reading the chain from the start: only for a row
// found inserted, which is rare.
func (s *Store) firstCover(ctx context.Context, table string, id int64) (int64, error) {
	rows, err := s.pool.QueryContext(ctx, `SELECT id, state FROM seal_blocks ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("db: verify seals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			b     int64
			state string
		)
		if err := rows.Scan(&b, &state); err != nil {
			return 0, fmt.Errorf("db: verify seals: %w", err)
		}
		if st, err := decodeState(state); err == nil && st[table].hw >= id {
			return b, nil
		}
	}
	return 0, rows.Err()
}

// verifyChainFrom checks the blocks from block from to the head: each one
// follows the one before (from's predecessor included), links to its hash,
// and still has its own hash.
func (s *Store) verifyChainFrom(ctx context.Context, from int64, rep *SealReport, emit func(SealProblem) error) error {
	chain := func(b int64, format string, args ...any) error {
		return emit(SealProblem{Check: SealChain, BlockID: b, Evidence: fmt.Sprintf(format, args...)})
	}
	rows, err := s.gdb.WithContext(ctx).Raw(`SELECT id, sealed_at, prev_hash, root, row_count AS rows, state, hash FROM seal_blocks
		WHERE id >= ? ORDER BY id`, from-1).Rows()
	if err != nil {
		return fmt.Errorf("db: verify seals: %w", err)
	}
	defer rows.Close()
	var prev *SealBlock
	for rows.Next() {
		var b SealBlock
		if err := s.gdb.ScanRows(rows, &b); err != nil {
			return fmt.Errorf("db: verify seals: %w", err)
		}
		if b.ID < from {
			prev = &b // the predecessor: its hash is what from links to
			continue
		}
		rep.Blocks++
		prevID, prevHash := b.ID-1, ""
		if prev != nil {
			prevID, prevHash = prev.ID, prev.Hash
		}
		switch {
		case b.ID != prevID+1 || (prev == nil && b.ID != 1):
			if err := chain(b.ID, "seal block %d follows block %d: blocks %d to %d are missing", b.ID, prevID, prevID+1, b.ID-1); err != nil {
				return err
			}
		case b.PrevHash != prevHash:
			if err := chain(b.ID, "seal block %d links to previous hash %s, but block %d has hash %s", b.ID, b.PrevHash, prevID, prevHash); err != nil {
				return err
			}
		}
		if h := blockHash(&b); h != b.Hash {
			if err := chain(b.ID, "seal block %d no longer has its hash: stored %s, its content hashes to %s", b.ID, b.Hash, h); err != nil {
				return err
			}
		}
		if _, err := decodeState(b.State); err != nil {
			if err := chain(b.ID, "seal block %d has an unreadable state: %v", b.ID, err); err != nil {
				return err
			}
		}
		prev = &b
	}
	return rows.Err()
}

// verifyBlockRows checks one block's root against its seal rows, and that
// every row it sealed is still there (the content of the sites' rows is
// checked as they are read).
func (s *Store) verifyBlockRows(ctx context.Context, id int64, rep *SealReport, emit func(SealProblem) error) error {
	var want []SealBlock
	if err := s.gdb.WithContext(ctx).Raw(`SELECT id, sealed_at, prev_hash, root, row_count AS rows, state, hash FROM seal_blocks WHERE id = ?`, id).
		Scan(&want).Error; err != nil {
		return fmt.Errorf("db: verify seals: %w", err)
	}
	if len(want) == 0 {
		return emit(SealProblem{Check: SealChain, BlockID: id, Evidence: fmt.Sprintf("seal rows name block %d, which is not in the chain", id)})
	}
	b := want[0]
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT tbl, row_id, hash FROM seal_rows WHERE block_id = ? ORDER BY tbl, row_id`), id)
	if err != nil {
		return fmt.Errorf("db: verify seals: %w", err)
	}
	root := newRoot()
	for rows.Next() {
		var (
			tbl, h string
			rid    int64
		)
		if err := rows.Scan(&tbl, &rid, &h); err != nil {
			rows.Close()
			return fmt.Errorf("db: verify seals: %w", err)
		}
		root.add(tbl, rid, h)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return fmt.Errorf("db: verify seals: %w", err)
	}
	rows.Close()
	if r := root.sum(); r != b.Root || root.n != b.Rows {
		if err := emit(SealProblem{Check: SealChain, BlockID: id,
			Evidence: fmt.Sprintf("seal block %d sealed %d rows with root %s; its seal rows now number %d with root %s", id, b.Rows, b.Root, root.n, r)}); err != nil {
			return err
		}
	}
	// Rows of the block, whatever their site, that are gone: a site's
	// sealed row deleted no longer shows among the site's rows.
	for _, t := range sealTables {
		q := s.rebind("SELECT s.row_id FROM seal_rows s LEFT JOIN " + t.name + " t ON t.id = s.row_id WHERE s.block_id = ? AND s.tbl = ? AND t.id IS NULL ORDER BY s.row_id")
		rows, err := s.pool.QueryContext(ctx, q, id, t.name)
		if err != nil {
			return fmt.Errorf("db: verify %s: %w", t.name, err)
		}
		for rows.Next() {
			var rid int64
			if err := rows.Scan(&rid); err != nil {
				rows.Close()
				return fmt.Errorf("db: verify %s: %w", t.name, err)
			}
			if err := emit(SealProblem{Check: SealDeleted, Table: t.name, RowID: rid, BlockID: id,
				Evidence: fmt.Sprintf("%s row %d was sealed in block %d and has been deleted since", t.name, rid, id)}); err != nil {
				rows.Close()
				return err
			}
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return fmt.Errorf("db: verify %s: %w", t.name, err)
		}
		rows.Close()
	}
	return nil
}

// siteRowHash is contentHash as hex text: the one place VerifySiteSeals
// depends on how a row is hashed.
func (s *Store) siteRowHash(t sealTable, vals []any) string {
	return string(s.contentHash(newRowHasher(), t, vals))
}
