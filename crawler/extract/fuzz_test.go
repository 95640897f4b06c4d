package extract_test

import (
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/crawler/extract"
)

// FuzzParse checks what Parse promises for any input: it returns (and
// ParseBytes returns the same), every
// text is valid UTF-8, collapsed and within its bound, every link is an
// absolute http(s) URL without fragment or userinfo, and the lists are
// bounded. Run it with: go test ./crawler/extract -fuzz FuzzParse -fuzztime 30s
func FuzzParse(f *testing.F) {
	pages, _ := filepath.Glob(filepath.Join(goldenDir, "*.html"))
	for _, p := range pages {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "")
		}
	}
	for _, s := range []string{
		`<a href=/s>Our<br>Team</a>`, `<a><p>Shop</p><p>Now</p></a>`, `<h2>Line1<br>Line2</h2>`,
		`<h1>Hello<div>World</div></h1>`, `<title>First</title><title>Second</title>`,
		`<a href="/x" aria-label="Cart"><img alt="cart"></a>`, `<svg><a href=/in-svg>x</a></svg><a href=/out>y</a>`,
		`<a href="http://user:pw@example.test/">secret</a>`, `<base href="javascript:alert(1)"><a href=x>x</a>`,
		"<title>\x00\x1b[31m\u00ad</title>", `<a href="/a%2fb?q=%zz&x=ü">e</a>`, `<a href="HTTP://Example.TEST:80/ü ä">u</a>`,
		`<a href="//h.test/p;x?y#z">r</a>`, `<a href="../%7Euser/./a/../b">d</a>`, `<a href="?only">q</a>`, `<a href="https://[::1]:8080/%41">6</a>`, `<h1><h2><h3>nested</h1>`, `<script><a href=/no>no</a>`,
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte("<title>\x93q\x94</title>"), "text/html; charset=windows-1252")
	f.Add([]byte("<title>\x82\xa0</title>"), "text/html; charset=shift_jis")
	base, _ := url.Parse("https://www.example.test/dir/page")
	f.Fuzz(func(t *testing.T, doc []byte, contentType string) {
		p, err := extract.Parse(strings.NewReader(string(doc)), contentType, base, nil)
		if pb, errb := extract.ParseBytes(doc, contentType, base, nil); (err == nil) != (errb == nil) || !reflect.DeepEqual(pb, p) {
			t.Fatalf("ParseBytes() = %+v, %v; Parse() = %+v, %v", pb, errb, p, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "extract: charset") {
				t.Fatalf("Parse failed on a readable document: %v", err)
			}
			return
		}
		checkText(t, "title", p.Title, extract.MaxTitle)
		checkText(t, "description", p.Description, extract.MaxDescription)
		for _, hs := range [][]string{p.H1, p.H2, p.H3} {
			if len(hs) > extract.MaxHeadings {
				t.Errorf("%d headings of one level, want at most %d", len(hs), extract.MaxHeadings)
			}
			for _, h := range hs {
				if h == "" {
					t.Error("empty heading kept")
				}
				checkText(t, "heading", h, extract.MaxHeading)
			}
		}
		if len(p.Links) > extract.MaxLinks {
			t.Errorf("%d links, want at most %d", len(p.Links), extract.MaxLinks)
		}
		for _, l := range p.Links {
			checkText(t, "link text", l.Text, extract.MaxAnchorText)
			u, err := url.Parse(l.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
				strings.Contains(l.URL, "#") || len(l.URL) > extract.MaxURL {
				t.Errorf("link URL %q is not an absolute http(s) URL without fragment or userinfo", l.URL)
				continue
			}
			if l.Parsed == nil || l.Parsed.String() != l.URL || l.Parsed.Scheme != u.Scheme || l.Parsed.Host != u.Host ||
				l.Parsed.EscapedPath() != u.EscapedPath() || l.Parsed.RawQuery != u.RawQuery {
				t.Errorf("link %q: Parsed %#v is not the URL parsed again (%#v)", l.URL, l.Parsed, u)
			}
		}
	})
}

func checkText(t *testing.T, what, s string, max int) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s %q is not valid UTF-8", what, s)
	}
	if n := utf8.RuneCountInString(s); n > max {
		t.Errorf("%s has %d runes, want at most %d", what, n, max)
	}
	if s != strings.Join(strings.Fields(s), " ") {
		t.Errorf("%s %q is not whitespace-collapsed", what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			t.Errorf("%s %q holds control character %U", what, s, r)
		}
	}
}
