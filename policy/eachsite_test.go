package policy_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// TestEachSite: the crawl list read a page at a time gives what Sites
// gives, across more than one page, with the exclusions.
func TestEachSite(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		p, _ := openPolicy(t, dsn)
		var names []string
		for i := range 2100 {
			names = append(names, fmt.Sprintf("s%05d.example", i))
		}
		if _, err := p.AddSites(ctx, names, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exclude(ctx, []string{"s01500.example"}, policy.Change{Actor: "anna"}); err != nil {
			t.Fatal(err)
		}
		want, err := p.Sites(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []policy.ListedSite
		if err := p.EachSite(ctx, func(s policy.ListedSite) error {
			got = append(got, s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("EachSite gave %d sites, Sites %d", len(got), len(want))
		}
		for i := range got {
			if got[i].Name != want[i].Name || got[i].StartURL != want[i].StartURL || got[i].Excluded != want[i].Excluded ||
				!got[i].AddedAt.Equal(want[i].AddedAt) {
				t.Fatalf("EachSite[%d] = %+v, Sites[%d] = %+v", i, got[i], i, want[i])
			}
		}
		if !got[1500].Excluded || got[1499].Excluded {
			t.Errorf("excluded flags: %v %v", got[1499].Excluded, got[1500].Excluded)
		}
		stop := fmt.Errorf("stop")
		n := 0
		if err := p.EachSite(ctx, func(policy.ListedSite) error { n++; return stop }); err != stop || n != 1 {
			t.Errorf("EachSite with f failing = %v after %d calls, want stop after 1", err, n)
		}
	})
}
