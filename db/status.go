package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// SiteStatus is what the public status page may say about a site, and
// nothing more: whether it is on the crawl list (never while excluded), since when it is excluded
// (never who asked or how), when the bot last sent it a request, and its
// last cycle's page requests against that cycle's budget.
type SiteStatus struct {
	Listed        bool
	ExcludedSince *time.Time // nil when the site is not excluded
	LastRequest   *time.Time // nil when no request was ever sent
	// LastCycle is the site's most recent visit, nil when there was none.
	LastCycle *CycleSummary
	// ExclusionLeaf is the transparency log's leaf index of the site's
	// latest exclusion event, while the site is excluded; nil when it is
	// not, or the event is not appended yet.
	ExclusionLeaf *int64
}

// CycleSummary is one visit of a site, as the status page shows it.
type CycleSummary struct {
	StartedAt    time.Time
	FinishedAt   *time.Time
	Budget       int
	PageRequests int // requests for pages of the site sent (robots.txt and withdrawn ones not counted)
}

// SiteStatus reads the status of site (as policy.SiteOf returns it). It
// does I/O.
func (s *Store) SiteStatus(ctx context.Context, site string) (*SiteStatus, error) {
	g := s.gdb.WithContext(ctx)
	st := &SiteStatus{}
	var n int64
	if err := g.Model(&Site{}).Where("name = ?", site).Count(&n).Error; err != nil {
		return nil, fmt.Errorf("db: site status: %w", err)
	}
	var ex Exclusion
	switch err := g.Select("site", "excluded_at").Where("site = ?", site).Take(&ex).Error; {
	case err == nil:
		t := ex.ExcludedAt.UTC()
		st.ExcludedSince = &t
		var ev PolicyEvent
		switch err := g.Select("id").Where("site = ? AND kind = ?", site, EventExclude).Order("id DESC").Take(&ev).Error; {
		case err == nil:
			switch idx, err := s.LeafIndex(ctx, "policy_events", ev.ID); {
			case err == nil:
				st.ExclusionLeaf = &idx
			case !errors.Is(err, ErrNotFound):
				return nil, fmt.Errorf("db: site status: %w", err)
			}
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return nil, fmt.Errorf("db: site status: %w", err)
		}
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, fmt.Errorf("db: site status: %w", err)
	}
	// An exclusion takes the site off the crawl list, as the bot's page
	// promises; its row is kept, so a re-inclusion puts a site that was
	// listed back on the list, and only such a site.
	st.Listed = n > 0 && st.ExcludedSince == nil
	var req Request
	switch err := g.Select("id", "sent_at").Where("site = ?", site).Order("sent_at DESC, id DESC").Take(&req).Error; {
	case err == nil:
		t := req.SentAt.UTC()
		st.LastRequest = &t
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, fmt.Errorf("db: site status: %w", err)
	}
	var c CrawlCycle
	switch err := g.Where("site = ?", site).Order("started_at DESC, id DESC").Take(&c).Error; {
	case err == nil:
		var pages int64
		if err := g.Model(&Request{}).Where("cycle_id = ? AND purpose = ? AND outcome <> ?", c.ID, PurposePage, OutcomeWithdrawn).Count(&pages).Error; err != nil {
			return nil, fmt.Errorf("db: site status: %w", err)
		}
		sum := &CycleSummary{StartedAt: c.StartedAt.UTC(), Budget: c.Budget, PageRequests: int(pages)}
		if c.FinishedAt != nil {
			t := c.FinishedAt.UTC()
			sum.FinishedAt = &t
		}
		st.LastCycle = sum
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, fmt.Errorf("db: site status: %w", err)
	}
	return st, nil
}
