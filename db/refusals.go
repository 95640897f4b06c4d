package db

import (
	"context"
	"fmt"
	"time"
)

// MaxRobotsRefusals bounds the URLs robots.txt refused that are recorded
// per cycle: the report lists them, and a site that links to thousands of
// disallowed URLs costs no more than this.
const MaxRobotsRefusals = 100

// RobotsRefusal is a URL of a cycle that robots.txt refused: never
// requested. It is not evidence of a request, and not in the transparency
// log.
type RobotsRefusal struct {
	ID               int64
	CycleID          int64
	Site             string
	URL              string
	RobotsSnapshotID *int64 // the snapshot whose rule refused it
	RobotsRule       string
	RobotsLine       int
	RefusedAt        time.Time
}

// TableName implements gorm's tabler.
func (RobotsRefusal) TableName() string { return "robots_refusals" }

// insertRobotsRefusalSQL inserts one refusal unless its cycle holds
// MaxRobotsRefusals already or the URL is recorded for the cycle; the
// PostgreSQL form types its parameters (a SELECT list does not).
const (
	insertRobotsRefusalSQL = `INSERT INTO robots_refusals (cycle_id, site, url, robots_snapshot_id, robots_rule, robots_line, refused_at)
	SELECT ?, ?, ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM robots_refusals WHERE cycle_id = ?) < ?
	ON CONFLICT (cycle_id, url) DO NOTHING`
	insertRobotsRefusalPG = `INSERT INTO robots_refusals (cycle_id, site, url, robots_snapshot_id, robots_rule, robots_line, refused_at)
	SELECT CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS TIMESTAMPTZ)
	WHERE (SELECT count(*) FROM robots_refusals WHERE cycle_id = CAST(? AS BIGINT)) < CAST(? AS BIGINT)
	ON CONFLICT (cycle_id, url) DO NOTHING`
)

func robotsRefusalArgs(r *RobotsRefusal) []any {
	return []any{r.CycleID, r.Site, r.URL, r.RobotsSnapshotID, r.RobotsRule, r.RobotsLine, r.RefusedAt, r.CycleID, MaxRobotsRefusals}
}

// InsertRobotsRefusals records the URLs robots.txt refused, each once per
// cycle, and at most MaxRobotsRefusals per cycle (the rest are not
// recorded). It runs in a crawler's write transaction.
func InsertRobotsRefusals(ctx context.Context, tx WriteTx, rs []RobotsRefusal) error {
	for i := range rs {
		if err := checkText("robots_refusals", "site", rs[i].Site, "url", rs[i].URL, "robots_rule", rs[i].RobotsRule); err != nil {
			return err
		}
		q := insertRobotsRefusalSQL
		if tx.Dialect() == Postgres {
			q = insertRobotsRefusalPG
		}
		if _, err := tx.Exec(ctx, q, robotsRefusalArgs(&rs[i])...); err != nil {
			return err
		}
	}
	return nil
}

// RobotsRefusals queues InsertRobotsRefusals's statements (a refusal
// whose text cannot be stored is left out).
func (p *Pipeline) RobotsRefusals(rs []RobotsRefusal) {
	for i := range rs {
		if checkText("robots_refusals", "site", rs[i].Site, "url", rs[i].URL, "robots_rule", rs[i].RobotsRule) != nil {
			continue
		}
		p.b.Queue(rebind(Postgres, insertRobotsRefusalPG), robotsRefusalArgs(&rs[i])...)
	}
}

// SiteRobotsRefusals returns the URLs of site robots.txt refused, oldest
// first. It does I/O.
func (q queries) SiteRobotsRefusals(ctx context.Context, site string) ([]RobotsRefusal, error) {
	var out []RobotsRefusal
	if err := q.with(ctx).Where("site = ?", site).Order("refused_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read robots.txt refusals: %w", err)
	}
	return out, nil
}
