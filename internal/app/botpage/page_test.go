package botpage_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/lohisoft/lohibot/internal/app/botpage"
)

// server serves the bot page from the facts held by the returned pointer.
func server(t *testing.T, f *botpage.Facts) (*httptest.Server, *atomic.Pointer[botpage.Facts]) {
	t.Helper()
	var cur atomic.Pointer[botpage.Facts]
	cur.Store(f)
	h, err := botpage.NewHandler(cur.Load, &botpage.Options{
		Now:    func() time.Time { return time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC) },
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &cur
}

// noRedirects is a client that reports a redirect instead of following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
	return errors.New("redirected")
}}

// get fetches path with the given headers and returns the response and
// its body.
func get(t *testing.T, srv *httptest.Server, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// doc is a parsed page.
type doc struct{ root *html.Node }

func parse(t *testing.T, body []byte) *doc {
	t.Helper()
	n, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return &doc{n}
}

// all returns the elements named tag, in document order.
func (d *doc) all(tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(d.root)
	return out
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

// text returns the visible text of n, whitespace collapsed, one line per
// block element.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && (n.Data == "style" || n.Data == "head" || n.Data == "title"):
			return
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
	walk(n)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func (d *doc) text() string { return text(d.root) }

func TestCatalogsComplete(t *testing.T) {
	want, err := botpage.CatalogKeys(botpage.English)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range botpage.Langs() {
		t.Run(string(l), func(t *testing.T) {
			got, err := botpage.CatalogKeys(l)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CatalogKeys(%s) differs from English (-en +%s):\n%s", l, l, diff)
			}
			en, err := botpage.Placeholders(botpage.English)
			if err != nil {
				t.Fatal(err)
			}
			ph, err := botpage.Placeholders(l)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range want {
				if !slices.Equal(en[key], ph[key]) {
					t.Errorf("Placeholders(%s)[%q] = %v, want %v", l, key, ph[key], en[key])
				}
			}
		})
	}
}

// TestPageLanguages serves the page in each language and checks the
// language-specific texts, the language links and the page's structure.
func TestPageLanguages(t *testing.T) {
	srv, _ := server(t, testFacts())
	tests := []struct {
		lang  botpage.Lang
		texts []string
	}{
		{botpage.English, []string{
			"LohiSoftBot is the web crawler operated by LohiSoft s.r.o. This page documents",
			"Last updated: 23 August 2026",
			"At most 20 pages per site",
			"Currently in use\nLohiSoftBot/1.0 (+message@lohisoft.com)\nBeing rolled out\nLohiSoftBot/1.0 (+https://lohisoft.com/bot)",
		}},
		{botpage.Italian, []string{
			"LohiSoftBot è il crawler web gestito da LohiSoft s.r.o. Questa pagina documenta cosa fa",
			"Ultimo aggiornamento: 23 agosto 2026",
			"Budget di scansione\nMassimo 20 pagine per sito",
			"Al massimo 20 pagine per sito.",
			"Attualmente in uso\nLohiSoftBot/1.0 (+message@lohisoft.com)\nIn fase di implementazione",
		}},
		{botpage.Danish, []string{
			"LohiSoftBot er webcrawleren, der drives af LohiSoft s.r.o. Denne side dokumenterer",
			"Sidst opdateret: 23. august 2026",
			"Crawlbudget\nMaks. 20 sider pr. site",
			"Højst 20 sider pr. site.",
			"I brug nu\nLohiSoftBot/1.0 (+message@lohisoft.com)\nUnder udrulning",
		}},
		{botpage.Hungarian, []string{
			"A LohiSoftBot a LohiSoft s.r.o. által üzemeltetett webrobot.",
			"Utoljára frissítve: 2026. augusztus 23.",
			"Feltérképezési keret\nMax. 20 oldal weboldalanként",
			"Weboldalanként legfeljebb 20 oldalt.",
			"Jelenleg használatban\nLohiSoftBot/1.0 (+message@lohisoft.com)\nBevezetés alatt",
		}},
	}
	common := []string{
		"79.139.58.98\ncrawler1.bot.lohisoft.com\n79.139.58.121\ncrawler2.bot.lohisoft.com",
		"User-agent: LohiSoftBot\nDisallow: /",
		"$ dig +short -x 79.139.58.98\ncrawler1.bot.lohisoft.com.\n$ dig +short crawler1.bot.lohisoft.com\n79.139.58.98",
		"https://lohisoft.com/bot/ips.json",
		"*.bot.lohisoft.com",
		"LohiSoft s.r.o.\nmessage@lohisoft.com",
	}
	for _, tt := range tests {
		t.Run(string(tt.lang), func(t *testing.T) {
			resp, body := get(t, srv, "/bot?lang="+string(tt.lang))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /bot?lang=%s: status %d", tt.lang, resp.StatusCode)
			}
			for h, want := range map[string]string{
				"Content-Type":     "text/html; charset=utf-8",
				"Content-Language": string(tt.lang),
			} {
				if got := resp.Header.Get(h); got != want {
					t.Errorf("%s = %q, want %q", h, got, want)
				}
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
				t.Errorf("Content-Security-Policy = %q, want default-src 'none' and a hashed style", csp)
			}
			d := parse(t, body)
			if got, _ := attr(d.all("html")[0], "lang"); got != string(tt.lang) {
				t.Errorf("<html lang> = %q, want %q", got, tt.lang)
			}
			page := d.text()
			for _, want := range append(tt.texts, common...) {
				if !strings.Contains(page, want) {
					t.Errorf("page %s lacks %q; text:\n%s", tt.lang, want, page)
				}
			}
			if strings.Contains(page, "{") {
				t.Errorf("page %s shows a raw placeholder:\n%s", tt.lang, page)
			}
			checkStructure(t, d, tt.lang)
		})
	}
}

// checkStructure checks what a screen reader and a browser rely on: one
// h1, no skipped heading level, the landmarks, the language links, and no
// script or external resource.
func checkStructure(t *testing.T, d *doc, lang botpage.Lang) {
	t.Helper()
	if n := len(d.all("h1")); n != 1 {
		t.Errorf("%d h1 elements, want 1", n)
	}
	level := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && len(n.Data) == 2 && n.Data[0] == 'h' && n.Data[1] >= '1' && n.Data[1] <= '6' {
			l := int(n.Data[1] - '0')
			if l > level+1 {
				t.Errorf("heading %q is h%d after h%d", text(n), l, level)
			}
			level = l
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(d.root)
	for _, tag := range []string{"header", "nav", "main", "footer"} {
		if len(d.all(tag)) != 1 {
			t.Errorf("%d <%s> landmarks, want 1", len(d.all(tag)), tag)
		}
	}
	for _, tag := range []string{"script", "img", "iframe", "object", "embed", "form", "link"} {
		for _, n := range d.all(tag) {
			if rel, _ := attr(n, "rel"); tag == "link" && rel == "alternate" {
				continue
			}
			t.Errorf("page has a <%s> element", tag)
		}
	}
	var links []string
	for _, a := range d.all("a") {
		hl, ok := attr(a, "hreflang")
		if !ok {
			continue
		}
		href, _ := attr(a, "href")
		la, _ := attr(a, "lang")
		_, current := attr(a, "aria-current")
		if href != "?lang="+hl || la != hl {
			t.Errorf("language link %q: href %q lang %q, want ?lang=%s and lang=%s", text(a), href, la, hl, hl)
		}
		if current != (hl == string(lang)) {
			t.Errorf("language link %s: aria-current %v on the %s page", hl, current, lang)
		}
		links = append(links, hl)
	}
	if want := []string{"en", "it", "da", "hu"}; !slices.Equal(links, want) {
		t.Errorf("language links %v, want %v", links, want)
	}
	var alternates []string
	for _, l := range d.all("link") {
		hl, _ := attr(l, "hreflang")
		href, _ := attr(l, "href")
		alternates = append(alternates, hl+" "+href)
	}
	want := []string{
		"en https://lohisoft.com/bot?lang=en", "it https://lohisoft.com/bot?lang=it",
		"da https://lohisoft.com/bot?lang=da", "hu https://lohisoft.com/bot?lang=hu",
		"x-default https://lohisoft.com/bot",
	}
	if !slices.Equal(alternates, want) {
		t.Errorf("alternate links %q, want %q", alternates, want)
	}
}

// TestSeedsKept checks that the Italian, Danish and Hungarian pages keep
// the published texts (testdata/seeds, plain text extractions): every line
// of a seed is on the page, but for the extraction's artefacts and the
// deliberate edits listed.
func TestSeedsKept(t *testing.T) {
	// Lines of the seeds that the page words differently on purpose.
	edited := map[string]string{
		// The FCrDNS steps use the formal "Lei" like the rest of the page.
		"Esegui una risoluzione inversa sull'indirizzo IP da cui proviene la richiesta. Il nome host restituito deve terminare con .bot.lohisoft.com":                                                                                              "Esegua una risoluzione inversa sull'indirizzo IP da cui proviene la richiesta. Il nome host restituito deve terminare con .bot.lohisoft.com.",
		"Esegui una risoluzione diretta su quel nome host. Deve risolvere esattamente allo stesso indirizzo IP.":                                                                                                                                   "Esegua una risoluzione diretta su quel nome host. Deve risolvere esattamente allo stesso indirizzo IP.",
		"Verifica la corrispondenza con il suffisso .bot.lohisoft.com, non con il dominio nudo .lohisoft.com: quest'ultimo copre anche il nostro server web e il nostro server di posta, mentre .bot.lohisoft.com copre esclusivamente i crawler.": "Verifichi la corrispondenza con il suffisso .bot.lohisoft.com, non con il dominio nudo .lohisoft.com: quest'ultimo copre anche il nostro server web e il nostro server di posta, mentre .bot.lohisoft.com copre esclusivamente i crawler.",
	}
	srv, _ := server(t, testFacts())
	for _, lang := range []botpage.Lang{botpage.Italian, botpage.Danish, botpage.Hungarian} {
		t.Run(string(lang), func(t *testing.T) {
			raw, err := os.ReadFile("testdata/seeds/" + string(lang) + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			_, body := get(t, srv, "/bot?lang="+string(lang))
			d := parse(t, body)
			// The extraction wrote definition lists as "term: value" or
			// "term:: value" and glued some blocks together ("Disallow:
			// /Può ..."): compare without white space and colons. The
			// navigation's name is read out by screen readers.
			page := d.text()
			for _, nav := range d.all("nav") {
				label, _ := attr(nav, "aria-label")
				page += "\n" + label
			}
			flat := squeeze(page)
			for _, line := range strings.Split(string(raw), "\n") {
				line = strings.TrimSpace(strings.TrimPrefix(line, "- "))
				if e, ok := edited[line]; ok {
					line = e
				}
				if !strings.Contains(flat, squeeze(line)) {
					t.Errorf("page %s lacks the seed's %q", lang, line)
				}
			}
		})
	}
}

// squeeze drops white space and colons.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ':' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
