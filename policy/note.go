package policy

import (
	"context"
	"fmt"

	"github.com/lohisoft/lohibot/db"
)

// Record appends one event of kind about site (which may be "" when the
// event concerns no site) to the policy log without changing the crawl list
// or the exclusions: a staff decision that leaves the policy as it is, such
// as dismissing an email. It does I/O.
func (p *Policy) Record(ctx context.Context, kind, site string, c Change) (*db.PolicyEvent, error) {
	if c.Actor == "" {
		return nil, ErrNoActor
	}
	var ev *db.PolicyEvent
	err := p.inTx(ctx, func(tx *db.Tx) error {
		if err := tx.LockPolicy(ctx); err != nil {
			return err
		}
		var err error
		ev, err = appendEvent(ctx, tx, p.now().UTC(), kind, site, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("policy: record %s: %w", kind, err)
	}
	return ev, nil
}
