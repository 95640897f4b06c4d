package crawler

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// OutcomeAbandoned is the outcome of a request whose crawler died (kill -9,
// a lost machine) before it was answered. Its completed_at is the time the
// dead crawler's lease expired: no crawler could send the host another
// request before then, so the request counts as in flight until that time,
// and no longer (the politeness audit reads it so).
const OutcomeAbandoned = "abandoned"

// abandon closes, inside the transaction that took over the lease key from
// the dead holder whose lease expired at expiredAt, the request rows that
// holder left unanswered: for a host lease, the host's open rows; for a
// cycle lease ("cycle:SITE"), the site's open rows, each closed at its
// host's lease expiry when the dead holder still held that lease, else at
// expiredAt. Only rows sent before the lease expired are closed: a row
// sent later came from a crawler that was still alive.
func (c *Crawler) abandon(ctx context.Context, tx db.WriteTx, key, holder string, expiredAt time.Time) error {
	why := "not answered: the crawler " + holder + " that sent it stopped; closed when its lease expired"
	var (
		n   int64
		err error
	)
	if site, ok := strings.CutPrefix(key, "cycle:"); ok {
		n, err = db.AbandonSiteRequests(ctx, tx, site, holder, OutcomeAbandoned, why, expiredAt)
	} else {
		n, err = db.AbandonHostRequests(ctx, tx, key, OutcomeAbandoned, why, expiredAt)
	}
	if err != nil {
		return fmt.Errorf("close abandoned requests: %w", err)
	}
	if n > 0 {
		c.log.Info("requests of a crawler that stopped closed as abandoned", "lease", key, "from", holder,
			"requests", n, "expired_at", expiredAt.UTC().Format(time.RFC3339Nano))
	}
	return nil
}
