package db

import "github.com/lohisoft/lohibot/internal/testhook"

func init() {
	testhook.StoreHandles = func(store any) (any, any) {
		s := store.(*Store)
		return s.gdb, s.pool
	}
}
