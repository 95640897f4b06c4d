package compare_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	temoto "github.com/temoto/robotstxt"

	"github.com/lohisoft/lohibot/robotstxt"
)

// The benchmarks compare lohibot's matcher with github.com/temoto/robotstxt
// (the parser Colly uses), on the same file and URLs. temoto takes a path,
// so it is given PathOf of each URL, computed outside the timed loop; lohibot
// is timed both on the full URL (what the crawler passes) and on the path.
//
//	go test -run '^$' -bench . -benchmem ./ (in compare/)

const siteFile = "../testdata/robots/site.txt"

var benchURLs = []string{
	"https://www.example.com/",
	"https://www.example.com/wiki/Main_Page",
	"https://www.example.com/wiki/Special:Search?search=robots",
	"https://www.example.com/wiki/Special%3ARandom",
	"https://www.example.com/w/index.php?title=Robots&action=edit",
	"https://www.example.com/w/load.php?modules=site",
	"https://www.example.com/api/public/v1/items",
	"https://www.example.com/api/rest_v1/?doc",
	"https://www.example.com/collections/shoes?sort_by=price",
	"https://www.example.com/collections/red+shoes",
	"https://www.example.com/products/blue-shoe",
	"https://www.example.com/products/blue-shoe.json",
	"https://www.example.com/docs/manual.pdf",
	"https://www.example.com/docs/manual.pdf?download=1",
	"https://www.example.com/blog/2024/05/robots-txt/feed/",
	"https://www.example.com/blog/2024/05/robots-txt/?replytocom=12",
	"https://www.example.com/account/login",
	"https://www.example.com/account/orders/1234",
	"https://www.example.com/wp-admin/admin-ajax.php",
	"https://www.example.com/index.php",
	"https://www.example.com/about-us/team/anna-k%C3%B6nig",
	"https://www.example.com/search?q=caf%C3%A9",
	"https://www.example.com/static/css/site.3f2a1b.css",
	"https://www.example.com/a/very/long/path/that/matches/nothing/at/all/in/this/file.html?utm_source=x&utm_medium=y",
}

func loadSite(b *testing.B) []byte {
	b.Helper()
	body, err := os.ReadFile(siteFile)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkDecide(b *testing.B) {
	body := loadSite(b)
	ours := robotstxt.Parse(body)
	theirs, err := temoto.FromBytes(body)
	if err != nil {
		b.Fatal(err)
	}
	paths := make([]string, len(benchURLs))
	for i, u := range benchURLs {
		paths[i] = robotstxt.PathOf(u)
	}
	// ExampleBot falls to the long "*" group; LohiSoftBot has its own.
	for _, agent := range []string{"ExampleBot", robotstxt.ProductToken} {
		b.Run("lohibot-url/"+agent, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ours.Decide(agent, benchURLs[i%len(benchURLs)])
			}
		})
		b.Run("lohibot-path/"+agent, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ours.Decide(agent, paths[i%len(paths)])
			}
		})
		b.Run("temoto-path/"+agent, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				theirs.TestAgent(paths[i%len(paths)], agent)
			}
		})
	}
}

// BenchmarkDecideSimple is the small RFC 9309 5.1 example: plain prefixes,
// where temoto needs no regular expressions either.
func BenchmarkDecideSimple(b *testing.B) {
	body := []byte("User-Agent: *\nDisallow: /example/\nAllow: /publications/\n\n" +
		"User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n")
	urls := []string{"https://www.example.com/publications/doc.html", "https://www.example.com/example/page.html",
		"https://www.example.com/images/pic.gif", "https://www.example.com/index.html"}
	paths := make([]string, len(urls))
	for i, u := range urls {
		paths[i] = robotstxt.PathOf(u)
	}
	ours := robotstxt.Parse(body)
	theirs, err := temoto.FromBytes(body)
	if err != nil {
		b.Fatal(err)
	}
	for _, agent := range []string{"ExampleBot", "foobot"} {
		b.Run("lohibot-url/"+agent, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ours.Decide(agent, urls[i%len(urls)])
			}
		})
		b.Run("temoto-path/"+agent, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				theirs.TestAgent(paths[i%len(paths)], agent)
			}
		})
	}
}

// bigRobots returns a robots.txt of at least n bytes: many groups of varied
// rules, wildcards, anchors, comments and percent-encoding, as a
// machine-written file would have.
func bigRobots(n int) []byte {
	var sb strings.Builder
	for g := 0; sb.Len() < n; g++ {
		fmt.Fprintf(&sb, "# group %d\nUser-agent: Bot%d\nUser-agent: Crawler-%d\n", g, g, g)
		for r := 0; r < 40; r++ {
			switch r % 5 {
			case 0:
				fmt.Fprintf(&sb, "Disallow: /section-%d/page-%d/\n", g, r)
			case 1:
				fmt.Fprintf(&sb, "Allow: /section-%d/*/public-%d$\n", g, r)
			case 2:
				fmt.Fprintf(&sb, "Disallow: /*?session=%d&*\n", r)
			case 3:
				fmt.Fprintf(&sb, "Disallow: /caf%%C3%%A9/%d/ü # note\r\n", r)
			case 4:
				fmt.Fprintf(&sb, "Crawl-delay: %d.5\n", r)
			}
		}
		sb.WriteString("\n")
	}
	return []byte(sb.String())
}

func BenchmarkParse(b *testing.B) {
	cases := []struct {
		name string
		body []byte
	}{
		{"site", loadSite(b)},
		{"500KiB", bigRobots(robotstxt.MaxSize)[:robotstxt.MaxSize]},
	}
	for _, c := range cases {
		b.Run("lohibot/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				robotstxt.Parse(c.body)
			}
		})
		b.Run("temoto/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := temoto.FromBytes(c.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
