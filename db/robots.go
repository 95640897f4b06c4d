package db

import (
	"context"
	"fmt"
)

// RobotsSnapshotsOf returns the robots.txt snapshots of the given origins,
// by origin, then oldest first. It does I/O.
func (q queries) RobotsSnapshotsOf(ctx context.Context, origins []string) ([]RobotsSnapshot, error) {
	var out []RobotsSnapshot
	if len(origins) == 0 {
		return out, nil
	}
	if err := q.with(ctx).Where("origin IN ?", origins).Order("origin, fetched_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read robots.txt snapshots: %w", err)
	}
	return out, nil
}
