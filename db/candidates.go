package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Candidate statuses. CandidateExcluded is never stored: a candidate is
// excluded while its site has an exclusion.
const (
	CandidateWaiting  = "waiting"  // not on the crawl list
	CandidateAdded    = "added"    // on the crawl list (added by discovery or by hand)
	CandidateExcluded = "excluded" // excluded: never added, never requested
)

// Candidate is a site found through links from crawled pages.
type Candidate struct {
	Site string
	// StartURL is the root of the origin of the first link to the site
	// recorded: where its crawl starts once it is added.
	StartURL string
	// LinkedFrom is the number of distinct sites found linking to it.
	LinkedFrom int64
	FirstSeen  time.Time
	LastSeen   time.Time
	Status     string
	// AddedAt is when discovery added it to the crawl list (nil when it
	// did not).
	AddedAt *time.Time
}

// CandidateLinks is what a crawler found of one candidate since its last
// write: the sites whose pages link to it, and where its crawl would start.
type CandidateLinks struct {
	Site     string
	StartURL string
	From     []string
}

// candidatePairsPerStatement bounds the (candidate, linking site) pairs
// one statement of RecordCandidatesIn writes: each statement reads its
// rows from one parameter (a JSON array on SQLite, arrays on PostgreSQL),
// so its text, and the statement prepared for it, is always the same.
const candidatePairsPerStatement = 2000

// RecordCandidates is RecordCandidatesIn in a transaction of its own. It
// does I/O.
func (s *Store) RecordCandidates(ctx context.Context, links []CandidateLinks, seen time.Time) error {
	tx, err := s.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("db: record candidates: %w", err)
	}
	if err := RecordCandidatesIn(ctx, tx, links, seen); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("db: record candidates: %w", err)
	}
	return nil
}

// RecordCandidatesIn stores what crawlers found of candidates, seen at
// seen, in tx: each candidate is created when new (first and last seen at
// seen) or has its last_seen moved, and its linked_from counts the
// distinct linking sites over every crawler that ever wrote here: a pair
// already stored is not counted again. It runs two statements (SQLite) or
// one (PostgreSQL) per 2,000 pairs, never one per link. It may run again
// in a group that failed: it is idempotent. It does I/O.
func RecordCandidatesIn(ctx context.Context, tx WriteTx, links []CandidateLinks, seen time.Time) error {
	links = slices.Clone(links)
	// One order for every writer: two crawlers of a fleet lock the same
	// rows in the same order and never deadlock.
	slices.SortFunc(links, func(a, b CandidateLinks) int { return strings.Compare(a.Site, b.Site) })
	seen = seen.UTC().Truncate(time.Microsecond)
	for len(links) > 0 {
		n, pairs := 0, 0
		for n < len(links) && (n == 0 || pairs+len(links[n].From) <= candidatePairsPerStatement) {
			pairs += len(links[n].From)
			n++
		}
		if err := recordCandidates(ctx, tx, links[:n], seen); err != nil {
			return fmt.Errorf("db: record candidates: %w", err)
		}
		links = links[n:]
	}
	return nil
}

// maxPairRows is the most candidate pairs one statement inserts on
// SQLite; the statements that insert fewer take a quarter as many, down to
// one.
const maxPairRows = 256

// insertPairsSQL is, by number of rows, the statement that inserts that
// many candidate pairs on SQLite (two parameters a row).
var insertPairsSQL = func() map[int]string {
	m := map[int]string{}
	for n := maxPairRows; n > 0; n /= 4 {
		var b strings.Builder
		b.WriteString(`INSERT INTO candidate_links (site, from_site) VALUES `)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?)")
		}
		b.WriteString(` ON CONFLICT DO NOTHING`)
		m[n] = b.String()
	}
	return m
}()

// recordCandidates is RecordCandidatesIn for one chunk.
func recordCandidates(ctx context.Context, tx WriteTx, links []CandidateLinks, seen time.Time) error {
	var pairSites, pairFrom, sites, starts []string
	for _, l := range links {
		from := slices.Clone(l.From)
		slices.Sort(from)
		for _, f := range slices.Compact(from) {
			pairSites, pairFrom = append(pairSites, l.Site), append(pairFrom, f)
		}
		sites, starts = append(sites, l.Site), append(starts, l.StartURL)
	}
	if tx.Dialect() == Postgres {
		// Exact under concurrency: linked_from grows by the pairs this
		// statement inserted (RETURNING yields only those), and the
		// increment applies to the row as the last committer left it.
		_, err := tx.Exec(ctx, `WITH v AS (SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS v (site, from_site)),
			c AS (SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS c (site, start_url)),
			ins AS (INSERT INTO candidate_links (site, from_site) SELECT site, from_site FROM v ON CONFLICT DO NOTHING RETURNING site),
			n AS (SELECT site, count(*) AS k FROM ins GROUP BY site)
			INSERT INTO candidates (site, start_url, linked_from, first_seen, last_seen, status)
			SELECT c.site, c.start_url, COALESCE(n.k, 0), CAST(? AS TIMESTAMPTZ), CAST(? AS TIMESTAMPTZ), 'waiting'
			FROM c LEFT JOIN n ON n.site = c.site ORDER BY c.site
			ON CONFLICT (site) DO UPDATE SET linked_from = candidates.linked_from + excluded.linked_from, last_seen = excluded.last_seen`,
			pairSites, pairFrom, sites, starts, seen, seen)
		return err
	}
	// SQLite: the transaction holds the database's one write lock, so the
	// count read back is exact. The pairs go in as rows of a statement's
	// VALUES, the largest statements first (each prepared once).
	for len(pairSites) > 0 {
		n := maxPairRows
		for n > len(pairSites) {
			n /= 4
		}
		args := make([]any, 0, 2*n)
		for i := range n {
			args = append(args, pairSites[i], pairFrom[i])
		}
		if _, err := tx.Exec(ctx, insertPairsSQL[n], args...); err != nil {
			return err
		}
		pairSites, pairFrom = pairSites[n:], pairFrom[n:]
	}
	_, err := tx.Exec(ctx, `INSERT INTO candidates (site, start_url, linked_from, first_seen, last_seen, status)
		SELECT s, u, (SELECT count(*) FROM candidate_links l WHERE l.site = s), ?, ?, 'waiting'
		FROM (SELECT json_extract(value, '$[0]') AS s, json_extract(value, '$[1]') AS u FROM json_each(?)) WHERE true
		ON CONFLICT (site) DO UPDATE SET linked_from = excluded.linked_from, last_seen = excluded.last_seen`,
		seen, seen, pairsJSON(sites, starts))
	return err
}

// candidateStatusSQL is a candidate's status as listed: excluded while its
// site has an exclusion, added when discovery added it or it is on the
// crawl list, waiting otherwise.
const candidateStatusSQL = `CASE WHEN EXISTS (SELECT 1 FROM exclusions e WHERE e.site = c.site) THEN 'excluded'
	WHEN c.status = 'added' OR EXISTS (SELECT 1 FROM sites s WHERE s.name = c.site) THEN 'added' ELSE 'waiting' END`

// CandidatesAfter returns up to limit candidates whose sites sort after
// after ("" for the first page), by site, each with its status as listed;
// with status set, only those with that status. It does I/O.
func (s *Store) CandidatesAfter(ctx context.Context, status, after string, limit int) ([]Candidate, error) {
	q := `SELECT site, start_url, linked_from, first_seen, last_seen, st, added_at FROM (
		SELECT c.site, c.start_url, c.linked_from, c.first_seen, c.last_seen, ` + candidateStatusSQL + ` AS st, c.added_at
		FROM candidates c WHERE c.site > ?) x`
	args := []any{after}
	if status != "" {
		q += ` WHERE st = ?`
		args = append(args, status)
	}
	q += ` ORDER BY site LIMIT ?`
	args = append(args, limit)
	rows, err := s.pool.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("db: candidates: %w", err)
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		var c Candidate
		var added sql.NullTime
		if err := rows.Scan(&c.Site, &c.StartURL, &c.LinkedFrom, &c.FirstSeen, &c.LastSeen, &c.Status, &added); err != nil {
			return nil, fmt.Errorf("db: candidates: %w", err)
		}
		if added.Valid {
			t := added.Time
			c.AddedAt = &t
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: candidates: %w", err)
	}
	return out, nil
}

// CandidatesAddedSince counts the candidates discovery added to the crawl
// list at since or later. It does I/O.
func (s *Store) CandidatesAddedSince(ctx context.Context, since time.Time) (int64, error) {
	var n int64
	if err := s.pool.QueryRowContext(ctx, s.rebind(`SELECT count(*) FROM candidates WHERE added_at >= ?`), since.UTC()).Scan(&n); err != nil {
		return 0, fmt.Errorf("db: candidates added: %w", err)
	}
	return n, nil
}

// EligibleCandidates returns up to limit candidates that may join the
// crawl list: waiting, linked from at least minLinks sites, not excluded
// and not listed; the most linked first, then the longest known. Run it in
// the transaction that adds them, after LockPolicy, so that no exclusion
// commits in between. It does I/O.
func (tx *Tx) EligibleCandidates(ctx context.Context, minLinks int64, limit int) ([]Candidate, error) {
	rows, err := tx.query(ctx, `SELECT c.site, c.start_url, c.linked_from, c.first_seen, c.last_seen FROM candidates c
		WHERE c.status = 'waiting' AND c.linked_from >= ?
		AND NOT EXISTS (SELECT 1 FROM exclusions e WHERE e.site = c.site)
		AND NOT EXISTS (SELECT 1 FROM sites s WHERE s.name = c.site)
		ORDER BY c.linked_from DESC, c.first_seen, c.site LIMIT ?`, minLinks, limit)
	if err != nil {
		return nil, fmt.Errorf("db: eligible candidates: %w", err)
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		c := Candidate{Status: CandidateWaiting}
		if err := rows.Scan(&c.Site, &c.StartURL, &c.LinkedFrom, &c.FirstSeen, &c.LastSeen); err != nil {
			return nil, fmt.Errorf("db: eligible candidates: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: eligible candidates: %w", err)
	}
	return out, nil
}

// SetCandidatesAdded marks sites as added to the crawl list by discovery
// at at. It does I/O.
func (tx *Tx) SetCandidatesAdded(ctx context.Context, sites []string, at time.Time) error {
	for chunk := range slices.Chunk(sites, 500) {
		args := []any{at.UTC()}
		for _, s := range chunk {
			args = append(args, s)
		}
		q := `UPDATE candidates SET status = 'added', added_at = ? WHERE site IN (` + placeholders(len(chunk)) + `)`
		if _, err := tx.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("db: mark candidates added: %w", err)
		}
	}
	return nil
}

// exec runs query (with ? placeholders) on the handle through database/sql
// and returns the number of rows changed.
func (q queries) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.g.Statement.ConnPool.ExecContext(ctx, q.rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// query runs query (with ? placeholders) on the handle through
// database/sql.
func (q queries) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.g.Statement.ConnPool.QueryContext(ctx, q.rebind(query), args...)
}
