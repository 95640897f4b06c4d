package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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
	err := s.pool.QueryRowContext(ctx, s.rebind(`SELECT id, fetched_at, status, outcome, final_url, body, sha256, error
		FROM robots_snapshots WHERE origin = ? ORDER BY fetched_at DESC, id DESC LIMIT 1`), origin).
		Scan(&sn.ID, &sn.FetchedAt, &sn.Status, &sn.Outcome, &sn.FinalURL, &sn.Body, &sn.Sha256, &sn.Error)
	if err != nil {
		return nil, notFound(err, "robots.txt snapshot of "+origin)
	}
	return sn, nil
}

// latestSnapshotsSQL is LatestRobotsSnapshots' query (PostgreSQL): the
// newest snapshot of each origin of $1, by the index on (origin,
// fetched_at).
const latestSnapshotsSQL = `SELECT o.origin, s.id, s.fetched_at, s.status, s.outcome, s.final_url, s.body, s.sha256, s.error
	FROM unnest($1::text[]) AS o(origin) CROSS JOIN LATERAL (
		SELECT id, fetched_at, status, outcome, final_url, body, sha256, error FROM robots_snapshots
		WHERE robots_snapshots.origin = o.origin ORDER BY fetched_at DESC, id DESC LIMIT 1) s`

// LatestRobotsSnapshots returns the newest robots.txt snapshot of each of
// origins that has one (LatestRobotsSnapshot for many origins, in one
// query per 500 on PostgreSQL), by origin. It does I/O.
func (s *Store) LatestRobotsSnapshots(ctx context.Context, origins []string) (map[string]*RobotsSnapshot, error) {
	out := make(map[string]*RobotsSnapshot, len(origins))
	if s.Dialect != Postgres {
		for _, o := range origins {
			sn, err := s.LatestRobotsSnapshot(ctx, o)
			switch {
			case err == nil:
				out[o] = sn
			case !errors.Is(err, ErrNotFound):
				return nil, err
			}
		}
		return out, nil
	}
	for len(origins) > 0 {
		chunk := origins[:min(len(origins), 500)]
		origins = origins[len(chunk):]
		if err := func() error {
			rows, err := s.pool.QueryContext(ctx, latestSnapshotsSQL, chunk)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				sn := &RobotsSnapshot{}
				if err := rows.Scan(&sn.Origin, &sn.ID, &sn.FetchedAt, &sn.Status, &sn.Outcome, &sn.FinalURL, &sn.Body, &sn.Sha256, &sn.Error); err != nil {
					return err
				}
				out[sn.Origin] = sn
			}
			return rows.Err()
		}(); err != nil {
			return nil, fmt.Errorf("db: read robots.txt snapshots: %w", err)
		}
	}
	return out, nil
}

// InsertRobotsSnapshot stores the robots.txt snapshot s and sets s.ID. It
// runs in a crawler's write transaction.
func InsertRobotsSnapshot(ctx context.Context, tx WriteTx, s *RobotsSnapshot) error {
	if err := checkSnapshot(s); err != nil {
		return err
	}
	return tx.QueryRow(ctx, insertRobotsSnapshotSQL, robotsSnapshotArgs(s)...).Scan(&s.ID)
}

const insertRobotsSnapshotSQL = `INSERT INTO robots_snapshots (origin, fetched_at, status, final_url, body, sha256, outcome, error, request_id)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`

// checkSnapshot is checkText for the text columns of a robots.txt
// snapshot's row.
func checkSnapshot(s *RobotsSnapshot) error {
	return checkText("robots_snapshots", "origin", s.Origin, "final_url", s.FinalURL, "sha256", s.Sha256, "outcome", s.Outcome, "error", s.Error)
}

func robotsSnapshotArgs(s *RobotsSnapshot) []any {
	return []any{s.Origin, s.FetchedAt, s.Status, s.FinalURL, s.Body, s.Sha256, s.Outcome, s.Error, s.RequestID}
}

// RobotsSnapshotInfo is what is known of a robots.txt snapshot without its
// body.
type RobotsSnapshotInfo struct {
	ID        int64
	Origin    string
	FetchedAt time.Time // UTC
	Status    int
	Outcome   string
	Sha256    string
	Error     string
	RequestID int64 // 0: none
	Size      int64 // of the body
}

// RobotsSnapshotInfos calls fn for every robots.txt snapshot of the given
// origins (as spelled in the table), without its body, in no particular
// order: a few hundred origins per query. It does I/O and stops at the
// first error fn returns, returning it.
func (s *Store) RobotsSnapshotInfos(ctx context.Context, origins []string, fn func(RobotsSnapshotInfo) error) error {
	return inChunks(origins, robotsChunk, func(args []any) error {
		return s.robotsSnapshotInfos(ctx, s.rebind(robotsInfoSelect+"("+placeholders(len(args))+")"), args, fn)
	})
}

// How many origins, and how many bodies, one query reads.
const (
	robotsChunk = 300
	bodiesChunk = 200
)

// robotsInfoSelect reads snapshot metadata: add the IN list of origins.
const robotsInfoSelect = `SELECT id, origin, fetched_at, status, outcome, sha256, error, request_id, COALESCE(length(body), 0)
	FROM robots_snapshots WHERE origin IN `

func (s *Store) robotsSnapshotInfos(ctx context.Context, q string, args []any, fn func(RobotsSnapshotInfo) error) error {
	rows, err := s.pool.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("db: read robots.txt snapshots: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			sn      RobotsSnapshotInfo
			reqID   sql.NullInt64
			fetched textTime
		)
		if err := rows.Scan(&sn.ID, &sn.Origin, &fetched, &sn.Status, &sn.Outcome, &sn.Sha256, &sn.Error, &reqID, &sn.Size); err != nil {
			return fmt.Errorf("db: read robots.txt snapshots: %w", err)
		}
		sn.FetchedAt, sn.RequestID = fetched.t, reqID.Int64
		if err := fn(sn); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: read robots.txt snapshots: %w", err)
	}
	return nil
}

// RobotsBodies calls fn with the body of each robots.txt snapshot of ids
// that exists, in no particular order: two hundred per query. It does I/O
// and stops at the first error fn returns, returning it.
func (s *Store) RobotsBodies(ctx context.Context, ids []int64, fn func(id int64, body []byte) error) error {
	return inChunks(ids, bodiesChunk, func(args []any) error {
		return s.robotsBodies(ctx, s.rebind("SELECT id, body FROM robots_snapshots WHERE id IN ("+placeholders(len(args))+")"), args, fn)
	})
}

func (s *Store) robotsBodies(ctx context.Context, q string, args []any, fn func(id int64, body []byte) error) error {
	rows, err := s.pool.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("db: read robots.txt bodies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			body []byte
		)
		if err := rows.Scan(&id, &body); err != nil {
			return fmt.Errorf("db: read robots.txt bodies: %w", err)
		}
		if err := fn(id, body); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: read robots.txt bodies: %w", err)
	}
	return nil
}

// RobotsBody returns the body of robots.txt snapshot id, or an error
// wrapping ErrNotFound. It does I/O.
func (s *Store) RobotsBody(ctx context.Context, id int64) ([]byte, error) {
	var body []byte
	if err := s.pool.QueryRowContext(ctx, s.rebind("SELECT body FROM robots_snapshots WHERE id = ?"), id).Scan(&body); err != nil {
		return nil, notFound(err, fmt.Sprintf("robots.txt snapshot %d", id))
	}
	return body, nil
}
