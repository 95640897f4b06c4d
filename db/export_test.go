package db

import (
	"context"
	"time"
)

// ReservedAhead exposes reservedAhead to the package's external tests.
func (tx *Tx) ReservedAhead(ctx context.Context, sites []string, now time.Time) (time.Time, error) {
	return tx.reservedAhead(ctx, sites, now)
}
