package crawler

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/lohisoft/lohibot/db"
)

// Result is one page found by Search.
type Result struct {
	URL         string `json:"url"`
	Site        string `json:"site"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Score       int    `json:"score"`
}

// Search finds indexed pages whose title, description, h1 to h3 or inbound
// anchor texts contain every word of query (case-insensitively), best
// first: a word in the title weighs most, then h1, anchor texts and the
// description, then h2 and h3. Pages of excluded sites are not shown. At
// most limit results are returned (0 means 20). It does I/O.
func Search(ctx context.Context, store *db.Store, query string, limit int) ([]Result, error) {
	if limit <= 0 {
		limit = 20
	}
	terms := strings.Fields(strings.ToLower(query))
	if len(terms) == 0 {
		return nil, nil
	}
	if len(terms) > 10 {
		terms = terms[:10]
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
		LEFT JOIN exclusions e ON e.site = p.site WHERE e.site IS NULL AND ` + strings.Join(where, " AND ") + ` ORDER BY p.id LIMIT 1000`
	q = rebindFor(store, q)
	rows, err := store.SQL.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("crawler: search: %w", err)
	}
	defer rows.Close()
	type cand struct {
		Result
		h1, h2, h3 string
	}
	var cands []*cand
	byURL := map[string]*cand{}
	for rows.Next() {
		var c cand
		if err := rows.Scan(&c.URL, &c.Site, &c.Title, &c.Description, &c.h1, &c.h2, &c.h3); err != nil {
			return nil, fmt.Errorf("crawler: search: %w", err)
		}
		cands = append(cands, &c)
		byURL[c.URL] = &c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawler: search: %w", err)
	}
	rows.Close()
	anchors := map[string]string{}
	for i := 0; i < len(cands); i += 100 {
		chunk := cands[i:min(i+100, len(cands))]
		ph := make([]string, len(chunk))
		aargs := make([]any, len(chunk))
		for j, c := range chunk {
			ph[j], aargs[j] = "?", c.URL
		}
		ar, err := store.SQL.QueryContext(ctx, rebindFor(store, `SELECT to_url, anchor_text FROM anchors WHERE to_url IN (`+strings.Join(ph, ", ")+`)`), aargs...)
		if err != nil {
			return nil, fmt.Errorf("crawler: search: %w", err)
		}
		for ar.Next() {
			var u, t string
			if err := ar.Scan(&u, &t); err != nil {
				ar.Close()
				return nil, fmt.Errorf("crawler: search: %w", err)
			}
			anchors[u] += " " + strings.ToLower(t)
		}
		ar.Close()
	}
	out := make([]Result, 0, len(cands))
	for _, c := range cands {
		score := 0
		for _, t := range terms {
			score += 8*strings.Count(strings.ToLower(c.Title), t) + 4*strings.Count(strings.ToLower(c.h1), t) +
				3*min(strings.Count(anchors[c.URL], t), 5) + 2*strings.Count(strings.ToLower(c.Description), t) +
				strings.Count(strings.ToLower(c.h2), t) + strings.Count(strings.ToLower(c.h3), t)
		}
		c.Score = score
		out = append(out, c.Result)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func rebindFor(store *db.Store, q string) string {
	c := &Crawler{pg: store.Dialect == db.Postgres}
	return c.rebind(q)
}
