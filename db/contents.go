package db

import (
	"context"
	"fmt"
)

// Empty reports whether the database holds none of what lohibot records:
// no site, exclusion, mail message or request (the demo refuses any other
// database). It does I/O.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	for _, m := range []any{&Site{}, &Exclusion{}, &MailMessage{}, &Request{}} {
		var n int64
		if err := s.gdb.WithContext(ctx).Model(m).Count(&n).Error; err != nil {
			return false, fmt.Errorf("db: count rows: %w", err)
		}
		if n > 0 {
			return false, nil
		}
	}
	return true, nil
}
