package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// upgradeLog starts the log of a database upgraded from the seal chain:
// its first leaf commits to the chain's last block, then come the rows the
// chain sealed, in the order it sealed them (block, then table, then id),
// and the tables' cursors start where the chain's last block left them.
// The rows no block sealed are appended by AppendLog, which runs last. A
// database without a chain gets all its rows from AppendLog.
func (s *Store) upgradeLog(ctx context.Context) error {
	n, err := s.LogSize(ctx)
	if err != nil || n > 0 {
		return err
	}
	var (
		headID int64
		state  string
	)
	err = s.pool.QueryRowContext(ctx, "SELECT id, state FROM seal_blocks ORDER BY id DESC LIMIT 1").Scan(&headID, &state)
	if noRows(err) {
		_, err = s.AppendLog(ctx)
		return err
	}
	if err != nil {
		return fmt.Errorf("db: upgrade the log: %w", err)
	}
	next, err := decodeChainState(state)
	if err != nil {
		return fmt.Errorf("db: upgrade the log: %w", err)
	}
	// The chain's head, then its rows, a write of at most maxAppend leaves
	// at a time; the cursors go with the last.
	var entries []appendEntry
	err = s.scanLogRows(ctx, &chainTable, "id = ?", []any{headID}, 0, func(r *logRow) error {
		e := appendEntry{t: &chainTable, id: r.id}
		e.data = encodeNew(&chainTable, r, &e)
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("db: upgrade the log: %w", err)
	}
	type sealed struct {
		tbl string
		id  int64
	}
	var order []sealed
	rows, err := s.pool.QueryContext(ctx, "SELECT tbl, row_id FROM seal_rows ORDER BY block_id, tbl, row_id")
	if err != nil {
		return fmt.Errorf("db: upgrade the log: %w", err)
	}
	for rows.Next() {
		var x sealed
		if err := rows.Scan(&x.tbl, &x.id); err != nil {
			rows.Close()
			return fmt.Errorf("db: upgrade the log: %w", err)
		}
		order = append(order, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: upgrade the log: %w", err)
	}
	flush := func(last bool) error {
		byTable := map[string][]int64{}
		for _, e := range entries {
			if e.data == nil {
				byTable[e.t.name] = append(byTable[e.t.name], e.id)
			}
		}
		data := map[sealed]appendEntry{}
		for tbl, ids := range byTable {
			t := logTableNamed(tbl)
			if err := inChunks(ids, 500, func(args []any) error {
				return s.scanLogRows(ctx, t, "id IN ("+placeholders(len(args))+")", args, 0, func(r *logRow) error {
					e := appendEntry{t: t, id: r.id}
					e.data = encodeNew(t, r, &e)
					data[sealed{tbl, r.id}] = e
					return nil
				})
			}); err != nil {
				return err
			}
		}
		kept := entries[:0]
		for _, e := range entries {
			if e.data == nil {
				var ok bool
				if e, ok = data[sealed{e.t.name, e.id}]; !ok {
					continue // gone since it was sealed: nothing to commit to
				}
			}
			kept = append(kept, e)
		}
		n, err := s.LogSize(ctx)
		if err != nil {
			return err
		}
		hashes, err := s.storedHashesFor(ctx, n, kept)
		if err != nil {
			return err
		}
		curs := map[string]cursor(nil)
		if last {
			curs = next
		}
		err = s.writeLog(ctx, func(tx WriteTx) error {
			return writeAppend(ctx, tx, n, kept, hashes, curs)
		})
		entries = entries[:0]
		return err
	}
	for _, x := range order {
		t := logTableNamed(x.tbl)
		if t == nil || t == &chainTable {
			continue
		}
		entries = append(entries, appendEntry{t: t, id: x.id})
		if len(entries) == maxAppend {
			if err := flush(false); err != nil {
				return fmt.Errorf("db: upgrade the log: %w", err)
			}
		}
	}
	if err := flush(true); err != nil {
		return fmt.Errorf("db: upgrade the log: %w", err)
	}
	if _, err := s.AppendLog(ctx); err != nil {
		return err
	}
	return nil
}

// decodeChainState reads a seal block's per-table state, one line per
// table: "name hw pending,pending".
func decodeChainState(s string) (map[string]cursor, error) {
	out := map[string]cursor{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 3 {
			return nil, fmt.Errorf("bad seal state line %q", line)
		}
		hw, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad seal state line %q", line)
		}
		p, err := decodePending(f[2])
		if err != nil {
			return nil, fmt.Errorf("bad seal state line %q: %w", line, err)
		}
		out[f[0]] = cursor{hw: hw, pending: p}
	}
	return out, nil
}
