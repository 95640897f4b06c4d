package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lohisoft/lohibot/db"
)

// allowedColumns are the columns the index may have: the fields the public
// page promises to store (title, meta description, h1–h3, URL, the text of
// inbound links) and their bookkeeping (ids, site, status, times, the request
// that fetched them).
func allowedColumns() map[string][]string {
	return map[string][]string{
		"pages":   {"id", "url", "site", "title", "description", "h1", "h2", "h3", "status", "fetched_at", "request_id"},
		"anchors": {"id", "from_url", "to_url", "to_site", "anchor_text", "seen_at", "request_id"},
	}
}

// checkSchema reports columns of the index tables that the public page does
// not promise.
func (a *auditor) checkSchema(ctx context.Context) error {
	allowed := allowedColumns()
	for _, table := range []string{"pages", "anchors"} {
		a.count(RuleStorage, 1, 0)
		cols, err := a.columns(ctx, table)
		if err != nil {
			return err
		}
		for _, c := range cols {
			if slices.Contains(allowed[table], strings.ToLower(c)) {
				continue
			}
			if err := a.report(Violation{Rule: RuleStorage, Check: CheckExtraColumn, Requests: []RequestRef{},
				Evidence: fmt.Sprintf("table %s has a column %q; the index may hold only %s",
					table, c, strings.Join(allowed[table], ", "))}); err != nil {
				return err
			}
		}
	}
	return nil
}

// noindexURL is a URL whose last page fetch was marked noindex, waiting to
// be checked against the index.
type noindexURL struct {
	site string
	url  string
	ref  RequestRef // the fetch that said noindex
}

// flushNoindex reports index entries and link texts kept for the pending
// noindex URLs, in one query per noindexBatch URLs.
func (a *auditor) flushNoindex(ctx context.Context) error {
	pending := a.noindex
	a.noindex = a.noindex[:0]
	a.count(RuleStorage, int64(len(pending)), 0)
	for len(pending) > 0 {
		batch := pending[:min(len(pending), noindexBatch)]
		pending = pending[len(batch):]
		byURL := make(map[string]noindexURL, len(batch))
		urls := make([]string, len(batch))
		for i, n := range batch {
			byURL[n.url] = n
			urls[i] = n.url
		}
		hits, err := a.store.IndexHits(ctx, urls)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		// In the order the URLs were queued (site by site), index
		// entries before link texts.
		order := make(map[string]int, len(batch))
		for i, n := range batch {
			order[n.url] = i
		}
		slices.SortFunc(hits, func(x, y db.IndexHit) int {
			if c := cmp.Compare(order[x.URL], order[y.URL]); c != 0 {
				return c
			}
			return cmp.Compare(kind(x), kind(y))
		})
		for _, h := range hits {
			n := byURL[h.URL]
			v := Violation{Site: n.site, Rule: RuleStorage, Check: CheckNoindexPage, Requests: []RequestRef{n.ref}}
			if !h.Anchors {
				v.Evidence = fmt.Sprintf("the index keeps entry %d (title %q) for %s, whose last fetch (request %d at %s) was marked noindex",
					h.PageID, h.Title, h.URL, n.ref.ID, fmtTime(n.ref.SentAt))
			} else {
				v.Check = CheckNoindexAnchor
				v.Evidence = fmt.Sprintf("the index keeps %d link texts pointing to %s, whose last fetch (request %d at %s) was marked noindex",
					h.N, h.URL, n.ref.ID, fmtTime(n.ref.SentAt))
			}
			if err := a.report(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// kind orders index hits: page entries before link texts.
func kind(h db.IndexHit) int {
	if h.Anchors {
		return 2
	}
	return 1
}

// columns lists the columns of a table, from the engine's catalogue.
func (a *auditor) columns(ctx context.Context, table string) ([]string, error) {
	cols, err := a.store.TableColumns(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return cols, nil
}
