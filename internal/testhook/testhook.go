// Package testhook is a back channel from package db to the test fixtures
// (internal/testenv/dbtest), as the standard library's internal/testlog is
// from os to testing: through it the fixtures reach a store's handles,
// which db does not export, so that tests can poke rows.
package testhook

// StoreHandles, set by package db, returns the gorm handle (a *gorm.DB)
// and the connection pool (a *sql.DB) of store, a *db.Store.
var StoreHandles func(store any) (gormDB, pool any)
