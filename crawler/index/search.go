// Package index reads LohiSoftBot's index (the pages the crawler stored, and
// the link texts pointing to them) to answer searches. The crawler writes the
// index; this package only reads it, through the db package.
package index

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

// MaxTerms is how many words of a query count; the rest are ignored.
const MaxTerms = 10

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
	if len(terms) > MaxTerms {
		terms = terms[:MaxTerms]
	}
	entries, err := store.SearchIndex(ctx, terms)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	urls := make([]string, len(entries))
	for i, e := range entries {
		urls[i] = e.URL
	}
	texts, err := store.AnchorTexts(ctx, urls)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	out := make([]Result, 0, len(entries))
	for _, e := range entries {
		anchors := strings.ToLower(strings.Join(texts[e.URL], " "))
		title, h1, desc := strings.ToLower(e.Title), strings.ToLower(e.H1), strings.ToLower(e.Description)
		h2, h3 := strings.ToLower(e.H2), strings.ToLower(e.H3)
		score := 0
		for _, t := range terms {
			score += 8*strings.Count(title, t) + 4*strings.Count(h1, t) +
				3*min(strings.Count(anchors, t), 5) + 2*strings.Count(desc, t) +
				strings.Count(h2, t) + strings.Count(h3, t)
		}
		out = append(out, Result{URL: e.URL, Site: e.Site, Title: e.Title, Description: e.Description, Score: score})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
