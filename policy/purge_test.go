package policy_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// indexSite writes what a crawl of shop.com leaves: two pages, link texts
// pointing to them from shop.com and other.org, a page of other.org with a
// link from shop.com, and the evidence (a request, a robots.txt snapshot,
// an email).
func indexSite(t *testing.T, ctx context.Context, store *db.Store) {
	t.Helper()
	now := time.Now().UTC()
	rows := []any{
		&db.Page{URL: "https://shop.com/", Site: "shop.com", Title: "Shop", FetchedAt: now},
		&db.Page{URL: "https://www.shop.com/team", Site: "shop.com", Title: "Team", FetchedAt: now},
		&db.Page{URL: "https://other.org/", Site: "other.org", Title: "Other", FetchedAt: now},
		&db.Anchor{FromURL: "https://shop.com/", ToURL: "https://www.shop.com/team", ToSite: "shop.com", AnchorText: "Our Team", SeenAt: now},
		&db.Anchor{FromURL: "https://other.org/", ToURL: "https://shop.com/", ToSite: "shop.com", AnchorText: "a shop", SeenAt: now},
		&db.Anchor{FromURL: "https://other.org/x", ToURL: "https://shop.com/", ToSite: "shop.com", AnchorText: "shop", SeenAt: now},
		&db.Anchor{FromURL: "https://shop.com/", ToURL: "https://other.org/", ToSite: "other.org", AnchorText: "friends", SeenAt: now},
		&db.Request{Site: "shop.com", Host: "shop.com", Origin: "https://shop.com", URL: "https://shop.com/", Method: "GET",
			Purpose: db.PurposePage, SentAt: now, Outcome: "ok"},
		&db.RobotsSnapshot{Origin: "https://shop.com", FetchedAt: now, Status: 200, Body: []byte("User-agent: *\n"), Outcome: db.RobotsParsed},
		&db.MailMessage{MessageID: "m1@shop.com", ReceivedAt: now, Intent: "exclude", Domains: "shop.com", Outcome: "excluded"},
	}
	for _, r := range rows {
		if err := dbtest.Gorm(store).WithContext(ctx).Create(r).Error; err != nil {
			t.Fatalf("create %T: %v", r, err)
		}
	}
}

func count(t *testing.T, store *db.Store, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := dbtest.Gorm(store).Table(table).Where(where, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestExcludePurgesIndex(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		indexSite(t, ctx, store)
		p := policy.New(store, nil)

		// A bad input anywhere changes nothing, the index included.
		if _, err := p.Exclude(ctx, []string{"shop.com", "co.uk"}, policy.Change{Actor: "anna", Source: "cli"}); err == nil {
			t.Fatal("Exclude with a public suffix succeeded")
		}
		if n := count(t, store, "pages", "site = ?", "shop.com"); n != 2 {
			t.Fatalf("after a refused exclusion, %d pages of shop.com, want 2", n)
		}

		res, err := p.Exclude(ctx, []string{"https://www.shop.com/x"}, policy.Change{Actor: "anna", Source: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		if want := (db.IndexPurge{Pages: 2, Anchors: 3}); res[0].Purged != want {
			t.Errorf("Exclude purged %+v, want %+v", res[0].Purged, want)
		}
		for _, c := range []struct {
			table, where string
			want         int64
		}{
			{"pages", "site = 'shop.com'", 0},
			{"anchors", "to_site = 'shop.com'", 0},
			{"pages", "site = 'other.org'", 1},
			{"anchors", "to_site = 'other.org'", 1},
			{"requests", "site = 'shop.com'", 1},
			{"robots_snapshots", "origin = 'https://shop.com'", 1},
			{"mail_messages", "message_id = 'm1@shop.com'", 1},
		} {
			if n := count(t, store, c.table, c.where); n != c.want {
				t.Errorf("after exclusion: %s where %s: %d rows, want %d", c.table, c.where, n, c.want)
			}
		}
		hist, err := p.History(ctx, "shop.com")
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 1 || hist[0].Kind != db.EventExclude || hist[0].PurgedPages != 2 || hist[0].PurgedAnchors != 3 {
			t.Fatalf("history = %+v, want one exclude event recording 2 pages, 3 link texts", hist)
		}

		// Whatever lands while the site is excluded (a request that was in
		// flight, another site's link) is gone when it is re-included.
		if err := dbtest.Gorm(store).Create(&db.Anchor{FromURL: "https://other.org/y", ToURL: "https://shop.com/", ToSite: "shop.com",
			AnchorText: "late", SeenAt: time.Now().UTC()}).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := p.Reinclude(ctx, "shop.com", policy.Change{Actor: "anna", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, store, "anchors", "to_site = ?", "shop.com"); n != 0 {
			t.Errorf("after re-inclusion, %d link texts point to shop.com, want an empty index", n)
		}
		hist, _ = p.History(ctx, "shop.com")
		if last := hist[len(hist)-1]; last.Kind != db.EventReinclude || last.PurgedAnchors != 1 {
			t.Errorf("re-include event = %+v, want one purged link text", last)
		}
		if n, err := store.IndexCount(ctx, "shop.com"); err != nil || n != (db.IndexPurge{}) {
			t.Errorf("IndexCount(shop.com) = %+v, %v; want zero", n, err)
		}
	})
}
