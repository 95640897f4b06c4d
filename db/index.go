package db

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"gorm.io/gorm"
)

// IndexPurge counts the index entries PurgeIndex deleted.
type IndexPurge struct {
	Pages   int64 `json:"pages"`
	Anchors int64 `json:"link_texts"`
}

// PurgeIndex deletes everything the index keeps of site: its pages and the
// link texts pointing to it. It runs on tx, the caller's transaction (from
// Store.DB.Transaction), so the purge commits or rolls back with the change
// that asked for it. The request log, robots.txt snapshots and emails are
// evidence and stay. It does I/O.
func PurgeIndex(ctx context.Context, tx *gorm.DB, site string) (IndexPurge, error) {
	var n IndexPurge
	res := tx.WithContext(ctx).Exec("DELETE FROM pages WHERE site = ?", site)
	if res.Error != nil {
		return n, fmt.Errorf("db: purge pages: %w", res.Error)
	}
	n.Pages = res.RowsAffected
	res = tx.WithContext(ctx).Exec("DELETE FROM anchors WHERE to_site = ?", site)
	if res.Error != nil {
		return n, fmt.Errorf("db: purge link texts: %w", res.Error)
	}
	n.Anchors = res.RowsAffected
	return n, nil
}

// IndexCount counts the index entries of site: its pages and the link texts
// pointing to it. It does I/O.
func (s *Store) IndexCount(ctx context.Context, site string) (IndexPurge, error) {
	var n IndexPurge
	err := s.pool.QueryRowContext(ctx, s.rebind(`SELECT (SELECT count(*) FROM pages WHERE site = ?), (SELECT count(*) FROM anchors WHERE to_site = ?)`),
		site, site).Scan(&n.Pages, &n.Anchors)
	if err != nil {
		return n, fmt.Errorf("db: count index: %w", err)
	}
	return n, nil
}

// IndexEntry is one page of the index as search reads it.
type IndexEntry struct {
	URL, Site, Title, Description string
	H1, H2, H3                    string // one heading per line
}

// MaxSearchCandidates bounds how many pages SearchIndex returns.
const MaxSearchCandidates = 1000

// SearchIndex returns the indexed pages, in index order and at most
// MaxSearchCandidates, whose title, description, h1 to h3 or inbound link
// texts contain every term (lowercase; compared case-insensitively as
// substrings). Pages of excluded sites are left out. It does I/O.
func (s *Store) SearchIndex(ctx context.Context, terms []string) ([]IndexEntry, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	var (
		where []string
		args  []any
	)
	for _, t := range terms {
		pat := "%" + likeEscape(t) + "%"
		where = append(where, `(lower(p.title) LIKE ? ESCAPE '\' OR lower(p.description) LIKE ? ESCAPE '\' OR lower(p.h1) LIKE ? ESCAPE '\'
			OR lower(p.h2) LIKE ? ESCAPE '\' OR lower(p.h3) LIKE ? ESCAPE '\'
			OR EXISTS (SELECT 1 FROM anchors a WHERE a.to_url = p.url AND lower(a.anchor_text) LIKE ? ESCAPE '\'))`)
		for i := 0; i < 6; i++ {
			args = append(args, pat)
		}
	}
	q := `SELECT p.url, p.site, p.title, p.description, p.h1, p.h2, p.h3 FROM pages p
		LEFT JOIN exclusions e ON e.site = p.site WHERE e.site IS NULL AND ` + strings.Join(where, " AND ") +
		fmt.Sprintf(` ORDER BY p.id LIMIT %d`, MaxSearchCandidates)
	rows, err := s.pool.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("db: search index: %w", err)
	}
	defer rows.Close()
	var out []IndexEntry
	for rows.Next() {
		var e IndexEntry
		if err := rows.Scan(&e.URL, &e.Site, &e.Title, &e.Description, &e.H1, &e.H2, &e.H3); err != nil {
			return nil, fmt.Errorf("db: search index: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: search index: %w", err)
	}
	return out, nil
}

// AnchorTexts returns the link texts stored for each of urls, by URL. It
// does I/O.
func (s *Store) AnchorTexts(ctx context.Context, urls []string) (map[string][]string, error) {
	out := map[string][]string{}
	for i := 0; i < len(urls); i += 100 {
		chunk := urls[i:min(i+100, len(urls))]
		ph := make([]string, len(chunk))
		args := make([]any, len(chunk))
		for j, u := range chunk {
			ph[j], args[j] = "?", u
		}
		rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT to_url, anchor_text FROM anchors WHERE to_url IN (`+strings.Join(ph, ", ")+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("db: link texts: %w", err)
		}
		for rows.Next() {
			var u, t string
			if err := rows.Scan(&u, &t); err != nil {
				rows.Close()
				return nil, fmt.Errorf("db: link texts: %w", err)
			}
			out[u] = append(out[u], t)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("db: link texts: %w", err)
		}
	}
	return out, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// SitePages returns the indexed pages of site, by URL. It does I/O.
func (q queries) SitePages(ctx context.Context, site string) ([]Page, error) {
	var out []Page
	if err := q.with(ctx).Where("site = ?", site).Order("url").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read pages: %w", err)
	}
	return out, nil
}

// AnchorsTo returns the link texts pointing to site, by target URL, source
// URL and text. It does I/O.
func (q queries) AnchorsTo(ctx context.Context, site string) ([]Anchor, error) {
	var out []Anchor
	if err := q.with(ctx).Where("to_site = ?", site).Order("to_url, from_url, anchor_text").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read link texts: %w", err)
	}
	return out, nil
}

// CycleLinksTo returns the targets of the links to site found in the pages
// cycle fetched, in the order they were stored (repeats included). It
// does I/O.
func (s *Store) CycleLinksTo(ctx context.Context, cycle int64, site string) ([]string, error) {
	rows, err := s.pool.QueryContext(ctx, s.rebind(`SELECT a.to_url FROM anchors a JOIN requests r ON r.id = a.request_id
		WHERE r.cycle_id = ? AND a.to_site = ? ORDER BY a.id`), cycle, site)
	if err != nil {
		return nil, fmt.Errorf("db: read links of cycle %d: %w", cycle, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("db: read links of cycle %d: %w", cycle, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// UpsertPage stores the index entry p, replacing the one with its URL. It
// runs in a crawler's write transaction.
func UpsertPage(ctx context.Context, tx WriteTx, p *Page) error {
	_, err := tx.Exec(ctx, `INSERT INTO pages (url, site, title, description, h1, h2, h3, status, fetched_at, request_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (url) DO UPDATE SET site = excluded.site, title = excluded.title, description = excluded.description,
		h1 = excluded.h1, h2 = excluded.h2, h3 = excluded.h3, status = excluded.status, fetched_at = excluded.fetched_at,
		request_id = excluded.request_id`,
		p.URL, p.Site, p.Title, p.Description, p.H1, p.H2, p.H3, p.Status, p.FetchedAt, p.RequestID)
	return err
}

// DeletePage removes the index entry of url. It runs in a crawler's write
// transaction.
func DeletePage(ctx context.Context, tx WriteTx, url string) error {
	_, err := tx.Exec(ctx, deletePageSQL, url)
	return err
}

const (
	deletePageSQL      = `DELETE FROM pages WHERE url = ?`
	deleteAnchorsToSQL = `DELETE FROM anchors WHERE to_url = ?`
)

// DeleteAnchorsTo removes the link texts pointing to url. It runs in a
// crawler's write transaction.
func DeleteAnchorsTo(ctx context.Context, tx WriteTx, url string) error {
	_, err := tx.Exec(ctx, deleteAnchorsToSQL, url)
	return err
}

// anchorsPerInsert bounds the rows of one INSERT of UpsertAnchors.
const anchorsPerInsert = 50

// UpsertAnchors stores the link texts anchors, each found in the response
// to its RequestID, replacing the seen_at and request_id of those already
// stored. Of two with the same source, target and text, the later in
// anchors is kept. It runs in a crawler's write transaction.
func UpsertAnchors(ctx context.Context, tx WriteTx, anchors []Anchor) error {
	for q, args := range anchorInserts(anchors) {
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// anchorInserts yields the INSERTs of UpsertAnchors (? placeholders) and
// their arguments, at most anchorsPerInsert rows each.
func anchorInserts(anchors []Anchor) iter.Seq2[string, []any] {
	return func(yield func(string, []any) bool) {
		anchors := lastOfEachLink(anchors)
		for i := 0; i < len(anchors); i += anchorsPerInsert {
			chunk := anchors[i:min(i+anchorsPerInsert, len(anchors))]
			var b strings.Builder
			b.WriteString(`INSERT INTO anchors (from_url, to_url, to_site, anchor_text, seen_at, request_id) VALUES `)
			args := make([]any, 0, 6*len(chunk))
			for j, a := range chunk {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?, ?, ?, ?)")
				args = append(args, a.FromURL, a.ToURL, a.ToSite, a.AnchorText, a.SeenAt, a.RequestID)
			}
			b.WriteString(` ON CONFLICT (from_url, to_url, anchor_text) DO UPDATE SET seen_at = excluded.seen_at, request_id = excluded.request_id`)
			if !yield(b.String(), args) {
				return
			}
		}
	}
}

// anchorsPerStatement bounds the rows of one statement of StoreAnchors
// on SQLite (six parameters each); the rest of a call's rows go one by
// one, so that it prepares two statements only.
const anchorsPerStatement = 100

// StoreAnchors stores the link texts anchors as UpsertAnchors does, in
// statements of many rows, except those pointing to a site with an
// exclusion: the check runs in tx, so an exclusion committed before it is
// seen, and one committed after purges what it stored (on PostgreSQL the
// policy row is share-locked until tx ends, as a reservation does, so no
// exclusion commits in between). On PostgreSQL tx commits without waiting
// for the WAL to reach the disk (synchronous_commit off for tx): link
// texts are index content, which a crash may lose, never evidence; run it
// in a transaction of its own (db.Writer.Index). It does I/O.
func StoreAnchors(ctx context.Context, tx WriteTx, anchors []Anchor) error {
	anchors = lastOfEachLink(anchors)
	if len(anchors) == 0 {
		return nil
	}
	if tx.Dialect() == Postgres {
		if _, err := PolicyVersionForWrite(ctx, tx); err != nil {
			return fmt.Errorf("db: store link texts: %w", err)
		}
		n := len(anchors)
		from, to, site, text := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		seen, req := make([]time.Time, n), make([]*int64, n)
		for i, a := range anchors {
			from[i], to[i], site[i], text[i], seen[i], req[i] = a.FromURL, a.ToURL, a.ToSite, a.AnchorText, a.SeenAt.UTC(), a.RequestID
		}
		_, err := tx.Exec(ctx, `WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true))
			INSERT INTO anchors (from_url, to_url, to_site, anchor_text, seen_at, request_id)
			SELECT v.f, v.t, v.s, v.a, v.seen, v.r
			FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS timestamptz[]), CAST(? AS bigint[])) AS v (f, t, s, a, seen, r)
			WHERE EXISTS (SELECT 1 FROM cfg) AND NOT EXISTS (SELECT 1 FROM exclusions e WHERE e.site = v.s)
			ON CONFLICT (to_url, from_url, anchor_text) DO UPDATE SET seen_at = excluded.seen_at, request_id = excluded.request_id`,
			from, to, site, text, seen, req)
		if err != nil {
			return fmt.Errorf("db: store link texts: %w", err)
		}
		return nil
	}
	for len(anchors) > 0 {
		n := anchorsPerStatement
		if len(anchors) < n {
			n = 1
		}
		if _, err := tx.Exec(ctx, storeAnchorsSQL(n), anchorArgs(anchors[:n])...); err != nil {
			return fmt.Errorf("db: store link texts: %w", err)
		}
		anchors = anchors[n:]
	}
	return nil
}

// storeAnchorsSQL is StoreAnchors' statement of n rows on SQLite.
func storeAnchorsSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO anchors (from_url, to_url, to_site, anchor_text, seen_at, request_id)
		SELECT column1, column2, column3, column4, column5, column6 FROM (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(`) AS v WHERE NOT EXISTS (SELECT 1 FROM exclusions e WHERE e.site = v.column3)
		ON CONFLICT (to_url, from_url, anchor_text) DO UPDATE SET seen_at = excluded.seen_at, request_id = excluded.request_id`)
	return b.String()
}

// anchorArgs are the parameters of anchors' rows, six each.
func anchorArgs(anchors []Anchor) []any {
	args := make([]any, 0, 6*len(anchors))
	for _, a := range anchors {
		args = append(args, a.FromURL, a.ToURL, a.ToSite, a.AnchorText, a.SeenAt, a.RequestID)
	}
	return args
}

// lastOfEachLink returns anchors without the ones a later anchor of the
// same source, target and text replaces (one INSERT cannot upsert a row
// twice on PostgreSQL), in their order. It returns anchors itself when
// there are none such.
func lastOfEachLink(anchors []Anchor) []Anchor {
	if len(anchors) < 2 {
		return anchors // most completions: the site holds its link texts
	}
	type key struct{ from, to, text string }
	last := make(map[key]int, len(anchors))
	for i, a := range anchors {
		last[key{a.FromURL, a.ToURL, a.AnchorText}] = i
	}
	if len(last) == len(anchors) {
		return anchors
	}
	out := make([]Anchor, 0, len(last))
	for i, a := range anchors {
		if last[key{a.FromURL, a.ToURL, a.AnchorText}] == i {
			out = append(out, a)
		}
	}
	return out
}

// IndexHit is what the index keeps for a URL: a page entry, or the link
// texts pointing to it.
type IndexHit struct {
	URL     string
	Anchors bool   // false: a page entry; true: link texts
	PageID  int64  // the page entry's id
	Title   string // the page entry's title
	N       int64  // how many link texts point to URL
}

// IndexHits returns the page entries and link-text counts the index keeps
// for urls, in no particular order: one query per two hundred URLs. It does
// I/O.
func (s *Store) IndexHits(ctx context.Context, urls []string) ([]IndexHit, error) {
	var out []IndexHit
	err := inChunks(urls, 200, func(args []any) error {
		ph := placeholders(len(args))
		// One query for both tables: each query costs the SQLite driver a
		// fresh prepare.
		q := "SELECT 1, id, url, title, 0 FROM pages WHERE url IN (" + ph + ")" +
			" UNION ALL SELECT 2, 0, to_url, '', COUNT(*) FROM anchors WHERE to_url IN (" + ph + ") GROUP BY to_url"
		hits, err := s.indexHits(ctx, s.rebind(q), append(args, args...))
		out = append(out, hits...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Store) indexHits(ctx context.Context, q string, args []any) ([]IndexHit, error) {
	rows, err := s.pool.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("db: read the index: %w", err)
	}
	defer rows.Close()
	var out []IndexHit
	for rows.Next() {
		var (
			h    IndexHit
			kind int
		)
		if err := rows.Scan(&kind, &h.PageID, &h.URL, &h.Title, &h.N); err != nil {
			return nil, fmt.Errorf("db: read the index: %w", err)
		}
		h.Anchors = kind == 2
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: read the index: %w", err)
	}
	return out, nil
}

// TableColumns returns the columns of table in their order, from the
// engine's catalogue, or an error wrapping ErrNotFound when there is no such
// table. It does I/O.
func (s *Store) TableColumns(ctx context.Context, table string) ([]string, error) {
	q := "SELECT name FROM pragma_table_info(?) ORDER BY cid"
	if s.Dialect == Postgres {
		q = `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`
	}
	rows, err := s.pool.QueryContext(ctx, s.rebind(q), table)
	if err != nil {
		return nil, fmt.Errorf("db: read the columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("db: read the columns of %s: %w", table, err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: read the columns of %s: %w", table, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("%w: table %s", ErrNotFound, table)
	}
	return cols, nil
}
