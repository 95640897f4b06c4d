package crawler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/lohisoft/lohibot/db"
)

// retried returns read, made to wait while the database is unreachable
// (db.Store.Retry): the crawl's reads ride out a database restarted for a
// moment as its writes do (db.Writer).
func retried[V any](s *db.Store, read func(ctx context.Context, keys []string) (map[string]V, error)) func(ctx context.Context, keys []string) (map[string]V, error) {
	return func(ctx context.Context, keys []string) (got map[string]V, err error) {
		err = s.Retry(ctx, func() (err error) {
			got, err = read(ctx, keys)
			return err
		})
		return got, err
	}
}

// logDB is the crawler's log for err, an error of the database, or a log
// that drops everything when err says the database was given up on: the
// store said so once (db.Store.Retry), where every site would say it
// again.
func (c *Crawler) logDB(err error) *slog.Logger {
	if errors.Is(err, db.ErrUnavailable) {
		return slog.New(slog.DiscardHandler)
	}
	return c.log
}

// retry runs f, a read of the database, again while the database is
// unreachable (db.Store.Retry).
func (c *Crawler) retry(ctx context.Context, f func() error) error { return c.store.Retry(ctx, f) }
