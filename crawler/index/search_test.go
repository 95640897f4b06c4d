package index_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/crawler/extract"
	"github.com/lohisoft/lohibot/crawler/index"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

func TestSearch(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		now := time.Now().UTC()
		pages := []db.Page{
			{URL: "https://a.com/", Site: "a.com", Title: "Bakery in Rome", Description: "Fresh bread", FetchedAt: now},
			{URL: "https://b.com/", Site: "b.com", Title: "Shoes", H2: "Our bakery corner", FetchedAt: now},
			{URL: "https://c.com/", Site: "c.com", Title: "Cars", FetchedAt: now},
			{URL: "https://x.com/", Site: "x.com", Title: "Bakery excluded", FetchedAt: now},
			{URL: "https://d.com/100%", Site: "d.com", Title: "Discount 100%", FetchedAt: now},
		}
		if err := dbtest.Gorm(store).Create(&pages).Error; err != nil {
			t.Fatal(err)
		}
		anchors := []db.Anchor{{FromURL: "https://b.com/", ToURL: "https://c.com/", ToSite: "c.com", AnchorText: "Best BAKERY cars", SeenAt: now}}
		if err := dbtest.Gorm(store).Create(&anchors).Error; err != nil {
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

// TestSearchFindsWordsAcrossLineBreaks stores what extraction makes of a
// link and a heading written across a <br> and blocks, as the crawler does,
// checks the index keeps the words apart and searches a word of each.
func TestSearchFindsWordsAcrossLineBreaks(t *testing.T) {
	ctx := context.Background()
	store := dbtest.OpenDSN(t, dbtest.DSN(t, "sqlite"))
	base, _ := url.Parse("https://shop.test/")
	home, err := extract.Parse(strings.NewReader(`<title>Shop</title><h1>Hello<div>World</div></h1>
		<a href="/team">Our<br>Team</a><a href="/new"><p>Shop</p><p>Now</p></a>`), "", base, nil)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, l := range home.Links {
		texts = append(texts, l.Text)
	}
	if strings.Join(texts, "|") != "Our Team|Shop Now" || strings.Join(home.H1, "|") != "Hello World" {
		t.Errorf("extracted link texts %q, h1 %q; want [Our Team Shop Now], [Hello World]", texts, home.H1)
	}
	now := time.Now().UTC()
	rows := []any{
		&db.Page{URL: "https://shop.test/", Site: "shop.test", Title: home.Title, H1: strings.Join(home.H1, "\n"), FetchedAt: now},
		&db.Page{URL: "https://shop.test/team", Site: "shop.test", Title: "People", FetchedAt: now},
		&db.Page{URL: "https://shop.test/new", Site: "shop.test", Title: "Arrivals", FetchedAt: now},
	}
	for _, l := range home.Links {
		rows = append(rows, &db.Anchor{FromURL: "https://shop.test/", ToURL: l.URL, ToSite: "shop.test", AnchorText: l.Text, SeenAt: now})
	}
	for _, r := range rows {
		if err := dbtest.Gorm(store).Create(r).Error; err != nil {
			t.Fatal(err)
		}
	}
	for query, want := range map[string]string{
		"team": "https://shop.test/team", "our team": "https://shop.test/team",
		"now": "https://shop.test/new", "world": "https://shop.test/",
	} {
		got, err := index.Search(ctx, store, query, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].URL != want {
			t.Errorf("Search(%q) = %+v, want %s", query, got, want)
		}
	}
}
