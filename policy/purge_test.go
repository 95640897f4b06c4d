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

// TestUnverifiedExclusionKeepsIndex: an unverified exclusion stops the site
// at once and hides its pages from search, but keeps them: a staff
// re-inclusion restores them; a verification, or the end of the hold with
// no objection, purges them.
func TestUnverifiedExclusionKeepsIndex(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		clock := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		p := policy.New(store, &policy.Options{Now: func() time.Time { return clock }, UnverifiedHold: 72 * time.Hour})
		stranger := policy.Change{Actor: "someone@elsewhere.example", Source: "mail", Evidence: "m1@elsewhere.example", Unverified: true}
		staff := policy.Change{Actor: "anna", Source: "cli"}
		pages := func() int64 { return count(t, store, "pages", "site = 'shop.com'") }
		searchable := func() bool {
			hits, err := store.SearchIndex(ctx, []string{"shop"})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Site == "shop.com" {
					return true
				}
			}
			return false
		}

		// Excluded by a stranger, then re-included by staff: all back.
		indexSite(t, ctx, store)
		res, err := p.Exclude(ctx, []string{"shop.com"}, stranger)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Purged != (db.IndexPurge{}) || res[0].Exclusion.PurgeAfter == nil || !res[0].Exclusion.PurgeAfter.Equal(clock.Add(72*time.Hour)) {
			t.Errorf("unverified Exclude = %+v; want nothing purged, kept until %v", res[0], clock.Add(72*time.Hour))
		}
		if _, ex, err := p.Check(ctx, "shop.com"); err != nil || ex == nil {
			t.Fatalf("shop.com not excluded at once: %v, %v", ex, err)
		}
		if pages() != 2 || searchable() {
			t.Errorf("after an unverified exclusion: %d pages kept (want 2), searchable %v (want false)", pages(), searchable())
		}
		// Asked again by a stranger: still kept.
		if res, err := p.Exclude(ctx, []string{"shop.com"}, stranger); err != nil || res[0].Purged != (db.IndexPurge{}) || pages() != 2 {
			t.Errorf("repeated unverified Exclude = %+v, %v; %d pages; want nothing purged", res, err, pages())
		}
		if _, err := p.Reinclude(ctx, "shop.com", staff); err != nil {
			t.Fatal(err)
		}
		if pages() != 2 || count(t, store, "anchors", "to_site = 'shop.com'") != 3 || !searchable() {
			t.Errorf("after re-inclusion: %d pages, searchable %v; want the site back whole", pages(), searchable())
		}

		// Excluded by a stranger, then confirmed by staff: purged then.
		if _, err := p.Exclude(ctx, []string{"shop.com"}, stranger); err != nil {
			t.Fatal(err)
		}
		res, err = p.Exclude(ctx, []string{"shop.com"}, staff)
		if err != nil || res[0].Purged != (db.IndexPurge{Pages: 2, Anchors: 3}) || !res[0].Exclusion.Verified || res[0].Exclusion.PurgeAfter != nil {
			t.Errorf("staff confirmation = %+v, %v; want verified, 2 pages and 3 link texts purged", res, err)
		}
		if _, err := p.Reinclude(ctx, "shop.com", staff); err != nil {
			t.Fatal(err)
		}

		// Excluded by a stranger, unopposed: purged once the hold ends.
		indexSite2(t, ctx, store)
		if _, err := p.Exclude(ctx, []string{"shop.com"}, stranger); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(71 * time.Hour)
		if done, err := p.PurgeDue(ctx); err != nil || len(done) != 0 || pages() != 2 {
			t.Errorf("PurgeDue before the hold ends = %v, %v; %d pages; want nothing", done, err, pages())
		}
		clock = clock.Add(time.Hour)
		if done, err := p.PurgeDue(ctx); err != nil || len(done) != 1 || done[0] != "shop.com" || pages() != 0 {
			t.Errorf("PurgeDue at the end of the hold = %v, %v; %d pages; want shop.com purged", done, err, pages())
		}
		evs, _ := p.History(ctx, "shop.com")
		if last := evs[len(evs)-1]; last.Kind != db.EventPurge || last.PurgedPages != 2 || last.Evidence != "m1@elsewhere.example" {
			t.Errorf("last event = %+v; want the purge with its counts and the email as evidence", last)
		}
		if _, ex, _ := p.Check(ctx, "shop.com"); ex == nil || ex.PurgeAfter != nil || ex.Verified {
			t.Errorf("after the purge the exclusion is %+v; want still excluded, unverified, nothing kept", ex)
		}
		if done, err := p.PurgeDue(ctx); err != nil || len(done) != 0 {
			t.Errorf("PurgeDue again = %v, %v; want nothing", done, err)
		}
	})
}

// indexSite2 indexes shop.com's two pages again (after a purge).
func indexSite2(t *testing.T, ctx context.Context, store *db.Store) {
	t.Helper()
	now := time.Now().UTC()
	for _, r := range []any{
		&db.Page{URL: "https://shop.com/", Site: "shop.com", Title: "Shop", FetchedAt: now},
		&db.Page{URL: "https://www.shop.com/team", Site: "shop.com", Title: "Team", FetchedAt: now},
	} {
		if err := dbtest.Gorm(store).WithContext(ctx).Create(r).Error; err != nil {
			t.Fatalf("create %T: %v", r, err)
		}
	}
}
