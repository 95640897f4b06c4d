package index_test

import (
	"context"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler/index"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

func TestSearch(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		now := time.Now().UTC()
		pages := []db.Page{
			{URL: "https://a.com/", Site: "a.com", Title: "Bakery in Rome", Description: "Fresh bread", FetchedAt: now},
			{URL: "https://b.com/", Site: "b.com", Title: "Shoes", H2: "Our bakery corner", FetchedAt: now},
			{URL: "https://c.com/", Site: "c.com", Title: "Cars", FetchedAt: now},
			{URL: "https://x.com/", Site: "x.com", Title: "Bakery excluded", FetchedAt: now},
			{URL: "https://d.com/100%", Site: "d.com", Title: "Discount 100%", FetchedAt: now},
		}
		if err := store.DB.Create(&pages).Error; err != nil {
			t.Fatal(err)
		}
		anchors := []db.Anchor{{FromURL: "https://b.com/", ToURL: "https://c.com/", ToSite: "c.com", AnchorText: "Best BAKERY cars", SeenAt: now}}
		if err := store.DB.Create(&anchors).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := policy.New(store, nil).Exclude(ctx, []string{"x.com"}, policy.Change{Actor: "staff", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
		got, err := index.Search(ctx, store, "bakery", 0)
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, r := range got {
			urls = append(urls, r.URL)
		}
		want := []string{"https://a.com/", "https://c.com/", "https://b.com/"}
		if len(urls) != len(want) {
			t.Fatalf("Search(bakery) = %q, want %q", urls, want)
		}
		for i := range want {
			if urls[i] != want[i] {
				t.Fatalf("Search(bakery) = %q, want %q", urls, want)
			}
		}
		if got, _ := index.Search(ctx, store, "bakery rome", 0); len(got) != 1 || got[0].URL != "https://a.com/" {
			t.Errorf("Search(bakery rome) = %+v, want a.com only", got)
		}
		if got, _ := index.Search(ctx, store, "100%", 0); len(got) != 1 || got[0].Site != "d.com" {
			t.Errorf("Search(100%%) = %+v, want d.com only (%% is literal)", got)
		}
		if got, _ := index.Search(ctx, store, "bakery", 1); len(got) != 1 {
			t.Errorf("Search(bakery, limit 1) returned %d results", len(got))
		}
	})
}
