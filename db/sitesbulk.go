package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// EventSitesImport is the kind of the one policy event a bulk import of
// sites records per batch (Site is empty; Detail holds the count, the first
// and last sites and the SHA-256 of the batch's names, one a line).
const EventSitesImport = "sites-import"

// NewSite is a site to put on the crawl list: its name (a site as
// policy.SiteOf returns it) and the URL its crawl starts from.
type NewSite struct {
	Name     string
	StartURL string
}

// SitesAdd says who adds sites in bulk, and how the policy log records it.
type SitesAdd struct {
	Now                   time.Time
	Actor, Source, Reason string
	// EventPerSite records a site-add event per site added (as a site
	// added by hand); otherwise one sites-import event records the batch.
	EventPerSite bool
}

// BulkAdd counts what AddSitesBulk did with its sites.
type BulkAdd struct {
	Added    int `json:"added"`
	Listed   int `json:"already_listed"`
	Excluded int `json:"excluded"`
	// Names are the sites added, in input order.
	Names []string `json:"-"`
}

// AddSitesBulk puts sites on the crawl list, skipping those listed already
// and those excluded (a site named twice counts once, as listed), and
// records them in the policy log as a says. Run it in a transaction that
// holds the policy lock (LockPolicy). It runs four statements whatever the
// number of sites, each reading the batch from one parameter (a JSON
// array on SQLite, arrays on PostgreSQL): parsing and binding thousands of
// placeholders cost more than the inserts. It does I/O.
func (tx *Tx) AddSitesBulk(ctx context.Context, sites []NewSite, a SitesAdd) (BulkAdd, error) {
	var res BulkAdd
	seen := make(map[string]bool, len(sites))
	names := make([]string, 0, len(sites))
	starts := make(map[string]string, len(sites))
	for _, s := range sites {
		if !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
			starts[s.Name] = s.StartURL
		}
	}
	res.Listed = len(sites) - len(names)
	if len(names) == 0 {
		return res, nil
	}
	pg := tx.dialect == Postgres
	from := `(SELECT value AS n FROM json_each(?)) AS j`
	if pg {
		from = `unnest(CAST(? AS text[])) AS j(n)`
	}
	rows, err := tx.query(ctx, `SELECT j.n, EXISTS (SELECT 1 FROM exclusions e WHERE e.site = j.n) FROM `+from+`
		WHERE EXISTS (SELECT 1 FROM exclusions e WHERE e.site = j.n) OR EXISTS (SELECT 1 FROM sites s WHERE s.name = j.n)`,
		tx.arrayArg(names))
	if err != nil {
		return res, fmt.Errorf("db: add sites: %w", err)
	}
	skip := map[string]bool{}
	for rows.Next() {
		var n string
		var excluded bool
		if err := rows.Scan(&n, &excluded); err != nil {
			rows.Close()
			return res, fmt.Errorf("db: add sites: %w", err)
		}
		skip[n] = true
		if excluded {
			res.Excluded++
		} else {
			res.Listed++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("db: add sites: %w", err)
	}
	add := names[:0:0]
	urls := make([]string, 0, len(names))
	for _, n := range names {
		if !skip[n] {
			add = append(add, n)
			urls = append(urls, starts[n])
		}
	}
	if len(add) == 0 {
		return res, nil
	}
	now := a.Now.UTC().Truncate(time.Microsecond)
	var q string
	var args []any
	if pg {
		q = `INSERT INTO sites (name, start_url, added_at, added_by) SELECT n, u, CAST(? AS TIMESTAMPTZ), CAST(? AS TEXT)
			FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS j(n, u)`
		args = []any{now, a.Actor, add, urls}
	} else {
		q = `INSERT INTO sites (name, start_url, added_at, added_by)
			SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?, ? FROM json_each(?)`
		args = []any{now, a.Actor, pairsJSON(add, urls)}
	}
	if _, err := tx.exec(ctx, q, args...); err != nil {
		return res, fmt.Errorf("db: add sites: %w", err)
	}
	if err := tx.sitesAddEvents(ctx, add, urls, now, a); err != nil {
		return res, fmt.Errorf("db: add sites: policy events: %w", err)
	}
	res.Added, res.Names = len(add), add
	return res, nil
}

// sitesAddEvents records the sites added (names, with their start urls) in
// the policy log, as a says.
func (tx *Tx) sitesAddEvents(ctx context.Context, names, urls []string, now time.Time, a SitesAdd) error {
	if !a.EventPerSite {
		h := sha256.New()
		for _, n := range names {
			h.Write([]byte(n + "\n"))
		}
		detail, _ := json.Marshal(map[string]any{"sites": len(names), "first": names[0], "last": names[len(names)-1],
			"sha256": hex.EncodeToString(h.Sum(nil))})
		return tx.AppendEvent(ctx, &PolicyEvent{HappenedAt: now, Kind: EventSitesImport, Actor: a.Actor, Reason: a.Reason,
			Source: a.Source, Detail: string(detail)})
	}
	// One version per event, taken at once, in input order.
	var last int64
	if err := tx.queryRow(ctx, "UPDATE policy_state SET version = version + ? WHERE id = 1 RETURNING version", len(names)).Scan(&last); err != nil {
		return err
	}
	first := last - int64(len(names)) + 1
	var q string
	var args []any
	if tx.dialect == Postgres {
		q = `INSERT INTO policy_events (version, happened_at, kind, site, actor, reason, source, detail)
			SELECT CAST(? AS BIGINT) + i - 1, CAST(? AS TIMESTAMPTZ), CAST(? AS TEXT), n, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT),
			json_build_object('start_url', u)::text
			FROM unnest(CAST(? AS text[]), CAST(? AS text[])) WITH ORDINALITY AS j(n, u, i)`
		args = []any{first, now, EventSiteAdd, a.Actor, a.Reason, a.Source, names, urls}
	} else {
		q = `INSERT INTO policy_events (version, happened_at, kind, site, actor, reason, source, detail)
			SELECT ? + key, ?, ?, json_extract(value, '$[0]'), ?, ?, ?, json_object('start_url', json_extract(value, '$[1]'))
			FROM json_each(?)`
		args = []any{first, now, EventSiteAdd, a.Actor, a.Reason, a.Source, pairsJSON(names, urls)}
	}
	_, err := tx.exec(ctx, q, args...)
	return err
}

// arrayArg is names as one query argument: a JSON array on SQLite (read
// with json_each), the slice itself on PostgreSQL (text[]).
func (tx *Tx) arrayArg(names []string) any {
	if tx.dialect == Postgres {
		return names
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// pairsJSON is [[a0, b0], [a1, b1], ...] as JSON.
func pairsJSON(a, b []string) string {
	pairs := make([][2]string, len(a))
	for i := range a {
		pairs[i] = [2]string{a[i], b[i]}
	}
	out, _ := json.Marshal(pairs)
	return string(out)
}
