package dbtest

import (
	"database/sql"

	"gorm.io/gorm"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testhook"
)

// SQL returns s's connection pool, for tests that poke rows or read what
// no query of db returns.
func SQL(s *db.Store) *sql.DB {
	_, pool := testhook.StoreHandles(s)
	return pool.(*sql.DB)
}

// Gorm returns s's gorm handle, for tests that write rows with the models.
func Gorm(s *db.Store) *gorm.DB {
	g, _ := testhook.StoreHandles(s)
	return g.(*gorm.DB)
}
