package serve_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// screenshotEnv names a folder: when set, TestChromium also saves a
// screenshot of every page it renders there, to be looked at.
const screenshotEnv = "LOHIBOT_SCREENSHOTS"

// chromiumPath returns Debian's chromium, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// chromium runs headless Chromium on url with a fresh profile and the
// flags that keep it off the network, and returns what it printed.
func chromium(t *testing.T, bin, url string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(),
	}, extra...)
	args = append(args, url)
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", strings.Join(extra, " "), err)
	}
	return string(out)
}

// domText parses a DOM dump and returns its <html lang> and its visible
// text, one line per block.
func domText(t *testing.T, dom string) (lang, text string) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "html":
				for _, a := range n.Attr {
					if a.Key == "lang" {
						lang = a.Val
					}
				}
			case "head", "style", "script":
				return
			}
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "p", "li", "dt", "dd", "h1", "h2", "h3", "pre", "br", "address":
				b.WriteString("\n")
			}
		}
	}
	walk(root)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return lang, strings.Join(lines, "\n")
}

// TestChromium renders the bot page in headless Chromium in the four
// languages, by ?lang= and by the browser's Accept-Language, then reloads a
// configuration with other numbers and checks that the rendered pages show
// them and no longer the old ones.
func TestChromium(t *testing.T) {
	bin := chromiumPath(t)
	shots := os.Getenv(screenshotEnv)
	cfg := testConfig(dbtest.DSN(t, "sqlite"))
	srv, src := newServer(t, cfg)
	web := httptest.NewServer(srv.Handler())
	defer web.Close()

	type want struct {
		lang  string
		texts []string
	}
	render := func(stage string, cases []want) {
		var wg sync.WaitGroup
		for _, c := range cases {
			wg.Go(func() {
				dom := chromium(t, bin, web.URL+"/bot?lang="+c.lang, "--dump-dom")
				lang, text := domText(t, dom)
				if lang != c.lang {
					t.Errorf("%s: /bot?lang=%s rendered with lang %q", stage, c.lang, lang)
				}
				for _, w := range c.texts {
					neg := strings.HasPrefix(w, "!")
					has := strings.Contains(text, strings.TrimPrefix(w, "!"))
					if has == neg {
						t.Errorf("%s: rendered %s page: Contains(%q) = %v, want %v\n%s", stage, c.lang, strings.TrimPrefix(w, "!"), has, !neg, text)
					}
				}
				if shots != "" {
					chromium(t, bin, web.URL+"/bot?lang="+c.lang, "--hide-scrollbars", "--window-size=1000,3400",
						"--screenshot="+filepath.Join(shots, stage+"-"+c.lang+".png"))
				}
			})
		}
		wg.Wait()
	}
	published := []string{"79.139.58.98\ncrawler1.bot.lohisoft.com\n79.139.58.121\ncrawler2.bot.lohisoft.com", "message@lohisoft.com"}
	render("published", []want{
		{"en", append([]string{"Crawl budget\nAt most 20 pages per site", "At most 20 pages per site."}, published...)},
		{"it", append([]string{"Budget di scansione\nMassimo 20 pagine per sito", "Al massimo 20 pagine per sito."}, published...)},
		{"da", append([]string{"Crawlbudget\nMaks. 20 sider pr. site", "Højst 20 sider pr. site."}, published...)},
		{"hu", append([]string{"Feltérképezési keret\nMax. 20 oldal weboldalanként", "Weboldalanként legfeljebb 20 oldalt."}, published...)},
	})

	// The browser's languages choose the page's.
	// (--accept-lang is a list of languages; Chromium writes the q-values.)
	for accept, wantLang := range map[string]string{"sv,hu-HU,en": "hu", "sv,de": "en"} {
		lang, _ := domText(t, chromium(t, bin, web.URL+"/bot", "--accept-lang="+accept, "--dump-dom"))
		if lang != wantLang {
			t.Errorf("Chromium with --accept-lang=%s got the %q page, want %q", accept, lang, wantLang)
		}
	}

	next := *cfg
	next.Page.Budget = 27
	next.Page.Contact = "optout@lohisoft.com"
	next.Crawler.Fleet = []serve.Machine{{IP: "192.0.2.44", Host: "crawler9.bot.lohisoft.com"}}
	src.set(&next, nil)
	if err := srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	changed := []string{"192.0.2.44\ncrawler9.bot.lohisoft.com", "$ dig +short -x 192.0.2.44", "optout@lohisoft.com",
		"!79.139.58.98", "!crawler1.bot.lohisoft.com", "!\nmessage@lohisoft.com", "! message@lohisoft.com"}
	render("reloaded", []want{
		{"en", append([]string{"At most 27 pages per site", "!20 pages"}, changed...)},
		{"it", append([]string{"Massimo 27 pagine per sito", "!20 pagine"}, changed...)},
		{"da", append([]string{"Maks. 27 sider pr. site", "!20 sider"}, changed...)},
		{"hu", append([]string{"Max. 27 oldal weboldalanként", "!20 oldal"}, changed...)},
	})
}
