package db

import (
	"context"
	"fmt"
	"time"
)

// Exclusion returns the exclusion of site, or an error wrapping ErrNotFound
// when the site is not excluded. It does I/O.
func (q queries) Exclusion(ctx context.Context, site string) (*Exclusion, error) {
	var ex Exclusion
	if err := q.with(ctx).Where("site = ?", site).Take(&ex).Error; err != nil {
		return nil, notFound(err, "exclusion of "+site)
	}
	return &ex, nil
}

// Exclusions lists the current exclusions, sorted by site. It does I/O.
func (q queries) Exclusions(ctx context.Context) ([]Exclusion, error) {
	var out []Exclusion
	if err := q.with(ctx).Order("site").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: list exclusions: %w", err)
	}
	return out, nil
}

// ExcludedListedSites returns the excluded sites that are on the crawl
// list, in no particular order. It does I/O.
func (q queries) ExcludedListedSites(ctx context.Context) ([]string, error) {
	var out []string
	err := q.with(ctx).Model(&Exclusion{}).
		Joins("JOIN sites ON sites.name = exclusions.site").Pluck("exclusions.site", &out).Error
	if err != nil {
		return nil, fmt.Errorf("db: list excluded sites: %w", err)
	}
	return out, nil
}

// CreateExclusion stores ex. It does I/O.
func (q queries) CreateExclusion(ctx context.Context, ex *Exclusion) error {
	if err := q.with(ctx).Create(ex).Error; err != nil {
		return fmt.Errorf("db: create exclusion: %w", err)
	}
	return nil
}

// VerifyExclusion marks the exclusion of site as asked for by someone who
// speaks for the site. It does I/O.
func (q queries) VerifyExclusion(ctx context.Context, site string) error {
	if err := q.with(ctx).Model(&Exclusion{}).Where("site = ?", site).Update("verified", true).Error; err != nil {
		return fmt.Errorf("db: verify exclusion: %w", err)
	}
	return nil
}

// ExclusionsToPurge returns the exclusions whose kept index entries are due
// to be purged at now (PurgeAfter at or before it), by site. It does I/O.
func (q queries) ExclusionsToPurge(ctx context.Context, now time.Time) ([]Exclusion, error) {
	var out []Exclusion
	if err := q.with(ctx).Where("purge_after IS NOT NULL AND purge_after <= ?", now.UTC()).Order("site").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: list exclusions to purge: %w", err)
	}
	return out, nil
}

// SetExclusionPurgeAfter sets when the kept index entries of site's
// exclusion are purged; nil records that nothing is kept. It does I/O.
func (q queries) SetExclusionPurgeAfter(ctx context.Context, site string, at *time.Time) error {
	var v any
	if at != nil {
		v = at.UTC()
	}
	if err := q.with(ctx).Model(&Exclusion{}).Where("site = ?", site).Update("purge_after", v).Error; err != nil {
		return fmt.Errorf("db: set purge time of exclusion: %w", err)
	}
	return nil
}

// CountUnverifiedExclusionsBy counts the current unverified exclusions
// asked for by actor (an email sender) from source at or after since. It
// does I/O.
func (q queries) CountUnverifiedExclusionsBy(ctx context.Context, actor, source string, since time.Time) (int64, error) {
	var n int64
	err := q.with(ctx).Model(&Exclusion{}).Where("actor = ? AND source = ? AND NOT verified AND excluded_at >= ?", actor, source, since.UTC()).
		Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("db: count unverified exclusions: %w", err)
	}
	return n, nil
}

// DeleteExclusion deletes the exclusion of site and reports whether there
// was one. It does I/O.
func (q queries) DeleteExclusion(ctx context.Context, site string) (bool, error) {
	res := q.with(ctx).Where("site = ?", site).Delete(&Exclusion{})
	if res.Error != nil {
		return false, fmt.Errorf("db: delete exclusion: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// PurgeIndex deletes what the index keeps of site: its pages and the link
// texts pointing to it, and counts them. Run it in the transaction that
// excludes the site. It does I/O.
func (q queries) PurgeIndex(ctx context.Context, site string) (IndexPurge, error) {
	return PurgeIndex(ctx, q.g, site)
}
