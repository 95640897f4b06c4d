package db

import (
	"context"
	"fmt"
)

// Site returns the listed site named name, or an error wrapping ErrNotFound
// when it is not on the crawl list. It does I/O.
func (q queries) Site(ctx context.Context, name string) (*Site, error) {
	var s Site
	if err := q.with(ctx).Where("name = ?", name).Take(&s).Error; err != nil {
		return nil, notFound(err, "site "+name)
	}
	return &s, nil
}

// Sites returns the crawl list sorted by name. It does I/O.
func (q queries) Sites(ctx context.Context) ([]Site, error) {
	var out []Site
	if err := q.with(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: list sites: %w", err)
	}
	return out, nil
}

// CreateSite puts s on the crawl list (s.ID is set). It does I/O.
func (q queries) CreateSite(ctx context.Context, s *Site) error {
	if err := q.with(ctx).Create(s).Error; err != nil {
		return fmt.Errorf("db: add site: %w", err)
	}
	return nil
}

// SetStartURL changes the start URL of the listed site s (by its ID) and of
// s. It does I/O.
func (q queries) SetStartURL(ctx context.Context, s *Site, startURL string) error {
	s.StartURL = startURL
	if err := q.with(ctx).Model(s).Update("start_url", startURL).Error; err != nil {
		return fmt.Errorf("db: update site: %w", err)
	}
	return nil
}

// DeleteSite takes the site named name off the crawl list and reports
// whether it was listed. It does I/O.
func (q queries) DeleteSite(ctx context.Context, name string) (bool, error) {
	res := q.with(ctx).Where("name = ?", name).Delete(&Site{})
	if res.Error != nil {
		return false, fmt.Errorf("db: remove site: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}
