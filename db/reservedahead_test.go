package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestReservedAhead checks what an exclusion on PostgreSQL waits for
// (db.Tx.AwaitReservedAhead): the latest sent_at after its time of the
// requests to the sites it excludes, and nothing for a site whose
// requests were all due before, or for another site's request reserved
// ahead.
func TestReservedAhead(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t, "postgres")
	now := db.Now()
	add := func(id int64, site string, at time.Time) {
		t.Helper()
		r := &db.Request{ID: id, Site: site, Host: "www." + site, Origin: "https://www." + site + ":443",
			URL: "https://www." + site + "/robots.txt", Method: "GET", Purpose: db.PurposeRobots, SentAt: at}
		if err := dbtest.Gorm(s).WithContext(ctx).Create(r).Error; err != nil {
			t.Fatal(err)
		}
	}
	add(1, "a.example", now.Add(-time.Second))          // sent before
	add(2, "a.example", now.Add(40*time.Millisecond))   // reserved ahead
	add(3, "a.example", now.Add(90*time.Millisecond))   // the latest
	add(4, "b.example", now.Add(120*time.Millisecond))  // another site's
	add(5, "c.example", now.Add(-500*time.Millisecond)) // sent before
	for _, tt := range []struct {
		sites []string
		now   time.Time
		want  time.Time
	}{
		{[]string{"a.example"}, now, now.Add(90 * time.Millisecond)},
		{[]string{"c.example", "a.example"}, now, now.Add(90 * time.Millisecond)},
		{[]string{"a.example", "b.example"}, now, now.Add(120 * time.Millisecond)},
		{[]string{"c.example"}, now, time.Time{}},
		{[]string{"d.example"}, now, time.Time{}},
		{[]string{"a.example"}, now.Add(90 * time.Millisecond), time.Time{}},
	} {
		var got time.Time
		err := s.InTx(ctx, func(tx *db.Tx) error {
			var err error
			got, err = tx.ReservedAhead(ctx, tt.sites, tt.now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(tt.want) {
			t.Errorf("sites %v, now+%v: %v, want %v", tt.sites, tt.now.Sub(now), got, tt.want)
		}
	}
}
