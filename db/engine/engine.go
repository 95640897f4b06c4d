// Package engine picks, for an open db.Store, the implementation of each
// interface the crawler uses that its database engine has: package
// db/sqlite's or db/postgres's. It is the one place that tells the engines
// apart, so that the crawler never does.
package engine

import (
	"context"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/postgres"
	"github.com/lohisoft/lohibot/db/sqlite"
)

// NewLister returns store's crawl list Lister for a crawler paced by pace.
func NewLister(store *db.Store, pace db.ListPace) db.Lister {
	if store.Dialect == db.Postgres {
		return postgres.NewLister(store, pace)
	}
	return sqlite.NewLister(store, pace)
}

// NewWriter starts store's Writer with o. It does I/O.
func NewWriter(ctx context.Context, store *db.Store, o db.WriterOptions) (db.Writer, error) {
	if store.Dialect == db.Postgres {
		return postgres.NewWriter(ctx, store, o), nil
	}
	w, err := sqlite.NewWriter(ctx, store, o)
	if err != nil {
		return nil, err
	}
	return w, nil
}
