// Package sqlite is the SQLite engine behind package db's interfaces for
// the crawler.
package sqlite

import (
	"context"
	"iter"

	"github.com/lohisoft/lohibot/db"
)

// Lister is the SQLite crawl list's Lister: one crawler uses the file at a
// time, so it walks the list by name (db.Store.ListFrom), from the end of
// a block chosen at random, without claims.
type Lister struct {
	store *db.Store
	pace  db.ListPace
}

// NewLister returns the Lister of store's crawl list for a crawler paced
// by pace (only pace.Starting matters here).
func NewLister(store *db.Store, pace db.ListPace) *Lister {
	return &Lister{store: store, pace: pace}
}

// List implements db.Lister.
func (l *Lister) List(ctx context.Context, total int64) iter.Seq2[db.ListedSite, error] {
	return func(yield func(db.ListedSite, error) bool) {
		block, _ := db.ListBlocks(total, l.pace.Starting)
		first, err := l.store.ListStart(ctx, total, block)
		if err != nil {
			yield(db.ListedSite{}, err)
			return
		}
		for s, err := range l.store.ListFrom(ctx, first) {
			if !yield(s, err) {
				return
			}
		}
	}
}
