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

// LatestRobotsSnapshot returns the newest robots.txt snapshot of origin
// (its RequestID left nil), or an error wrapping ErrNotFound when there is
// none. It does I/O.
func (s *Store) LatestRobotsSnapshot(ctx context.Context, origin string) (*RobotsSnapshot, error) {
	sn := &RobotsSnapshot{Origin: origin}
	err := s.SQL.QueryRowContext(ctx, s.rebind(`SELECT id, fetched_at, status, outcome, final_url, body, sha256, error
		FROM robots_snapshots WHERE origin = ? ORDER BY fetched_at DESC, id DESC LIMIT 1`), origin).
		Scan(&sn.ID, &sn.FetchedAt, &sn.Status, &sn.Outcome, &sn.FinalURL, &sn.Body, &sn.Sha256, &sn.Error)
	if err != nil {
		return nil, notFound(err, "robots.txt snapshot of "+origin)
	}
	return sn, nil
}

// InsertRobotsSnapshot stores the robots.txt snapshot s and sets s.ID. It
// runs in a crawler's write transaction.
func InsertRobotsSnapshot(ctx context.Context, tx WriteTx, s *RobotsSnapshot) error {
	return tx.QueryRow(ctx, `INSERT INTO robots_snapshots (origin, fetched_at, status, final_url, body, sha256, outcome, error, request_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		s.Origin, s.FetchedAt, s.Status, s.FinalURL, s.Body, s.Sha256, s.Outcome, s.Error, s.RequestID).Scan(&s.ID)
}
