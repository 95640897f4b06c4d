package db

import (
	"context"
	"fmt"
)

// SiteCycles returns the crawl cycles of site, oldest first. It does I/O.
func (q queries) SiteCycles(ctx context.Context, site string) ([]CrawlCycle, error) {
	var out []CrawlCycle
	if err := q.with(ctx).Where("site = ?", site).Order("started_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read cycles: %w", err)
	}
	return out, nil
}
