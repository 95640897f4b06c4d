package policy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

func openPolicy(t *testing.T, dsn string) (*policy.Policy, *db.Store) {
	t.Helper()
	s := dbtest.OpenDSN(t, dsn)
	return policy.New(s, nil), s
}

func countEvents(t *testing.T, s *db.Store, site, kind string) int64 {
	t.Helper()
	var n int64
	if err := dbtest.Gorm(s).Model(&db.PolicyEvent{}).Where("site = ? AND kind = ?", site, kind).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestExcludeAndReinclude(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		p, s := openPolicy(t, dsn)

		res, err := p.Exclude(ctx, []string{"https://www.Example.co.uk/x"}, policy.Change{Actor: "anna", Reason: "email", Source: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Site != "example.co.uk" || res[0].Already {
			t.Fatalf("Exclude = %+v", res)
		}
		site, ex, err := p.Check(ctx, "shop.example.co.uk")
		if err != nil || ex == nil || site != "example.co.uk" {
			t.Fatalf("Check = %q, %+v, %v; want excluded example.co.uk", site, ex, err)
		}
		if ex.Actor != "anna" || ex.Reason != "email" || ex.Evidence != "anna" {
			t.Errorf("exclusion evidence = %+v", ex)
		}

		// Excluding again is a no-op that still records the request.
		res, err = p.Exclude(ctx, []string{"example.co.uk"}, policy.Change{Actor: "bob@example.co.uk", Evidence: "msg-1@example.co.uk", Source: "mail"})
		if err != nil || !res[0].Already {
			t.Fatalf("second Exclude = %+v, %v; want already excluded", res, err)
		}
		if n := countEvents(t, s, "example.co.uk", db.EventExcludeRepeat); n != 1 {
			t.Errorf("repeat events = %d, want 1", n)
		}
		list, _ := p.Exclusions(ctx)
		if len(list) != 1 || list[0].Actor != "anna" {
			t.Errorf("Exclusions = %+v, want the first exclusion unchanged", list)
		}

		// Re-inclusion needs an actor, and only works on an excluded site.
		if _, err := p.Reinclude(ctx, "example.co.uk", policy.Change{}); !errors.Is(err, policy.ErrNoActor) {
			t.Errorf("Reinclude without actor = %v, want ErrNoActor", err)
		}
		if _, err := p.Reinclude(ctx, "example.co.uk", policy.Change{Actor: "carla", Reason: "asked back"}); err != nil {
			t.Fatal(err)
		}
		if _, ex, _ := p.Check(ctx, "example.co.uk"); ex != nil {
			t.Errorf("still excluded after re-inclusion: %+v", ex)
		}
		if _, err := p.Reinclude(ctx, "example.co.uk", policy.Change{Actor: "carla"}); !errors.Is(err, policy.ErrNotExcluded) {
			t.Errorf("Reinclude of a crawlable site = %v, want ErrNotExcluded", err)
		}

		hist, err := p.History(ctx, "example.co.uk")
		if err != nil {
			t.Fatal(err)
		}
		kinds := []string{}
		for _, e := range hist {
			kinds = append(kinds, e.Kind)
		}
		want := []string{db.EventExclude, db.EventExcludeRepeat, db.EventReinclude}
		if len(kinds) != len(want) {
			t.Fatalf("history kinds = %v, want %v", kinds, want)
		}
		for i := range want {
			if kinds[i] != want[i] {
				t.Fatalf("history kinds = %v, want %v", kinds, want)
			}
		}
		if hist[1].Evidence != "msg-1@example.co.uk" || hist[2].Actor != "carla" {
			t.Errorf("history evidence = %+v", hist)
		}
	})
}

func TestExcludeIsAllOrNothing(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		p, s := openPolicy(t, dsn)
		_, err := p.Exclude(ctx, []string{"good.com", "co.uk"}, policy.Change{Actor: "anna"})
		if !errors.Is(err, policy.ErrBadSite) {
			t.Fatalf("Exclude(good.com, co.uk) = %v, want ErrBadSite", err)
		}
		if list, _ := p.Exclusions(ctx); len(list) != 0 {
			t.Errorf("exclusions after refused command = %+v, want none", list)
		}
		var n int64
		dbtest.Gorm(s).Model(&db.PolicyEvent{}).Count(&n)
		if n != 0 {
			t.Errorf("%d events after refused command, want 0", n)
		}
	})
}

func TestSites(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		p, _ := openPolicy(t, dsn)
		added, err := p.AddSites(ctx, []string{"https://shop.example.org:8443/start?x=1", "bücher.de"}, policy.Change{Actor: "anna"})
		if err != nil {
			t.Fatal(err)
		}
		if added[0].Name != "example.org" || added[0].StartURL != "https://shop.example.org:8443/start?x=1" ||
			added[1].Name != "xn--bcher-kva.de" || added[1].StartURL != "https://xn--bcher-kva.de/" {
			t.Errorf("AddSites = %+v", added)
		}
		// Adding a URL of a listed site updates its start URL.
		if _, err := p.AddSites(ctx, []string{"http://example.org/"}, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exclude(ctx, []string{"bücher.de"}, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		list, err := p.Sites(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].StartURL != "http://example.org/" || list[0].Excluded || !list[1].Excluded {
			t.Errorf("Sites = %+v", list)
		}
		if _, err := p.RemoveSites(ctx, []string{"example.org", "nowhere.example"}, policy.Change{Actor: "anna"}); !errors.Is(err, policy.ErrNotListed) {
			t.Errorf("RemoveSites with an unlisted site = %v, want ErrNotListed", err)
		}
		if list, _ := p.Sites(ctx); len(list) != 2 {
			t.Errorf("refused removal removed something: %+v", list)
		}
		if _, err := p.RemoveSites(ctx, []string{"example.org"}, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		if list, _ := p.Sites(ctx); len(list) != 1 || list[0].Name != "xn--bcher-kva.de" {
			t.Errorf("after removal Sites = %+v", list)
		}
	})
}
