package extract_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/crawler/extract"
)

func TestParse(t *testing.T) {
	base, _ := url.Parse("http://example.test/dir/page.html")
	tests := []struct {
		name        string
		html        string
		contentType string
		want        extract.Page
	}{
		{
			name: "fields and links",
			html: `<html><head><title>  Hello
				&amp; welcome </title><meta name="Description" content=" A   short
				description "><script>var x = "<h1>not a heading</h1>";</script></head>
				<body><h1>Main <em>title</em></h1><p>body text never returned</p>
				<h2>Second</h2><h3>Third</h3><h2>Second again</h2>
				<a href="/a#frag">Link <b>A</b></a> <a href="b.html" rel="nofollow ugc">B</a>
				<a href="mailto:x@example.test">mail</a><a href="javascript:void(0)">js</a>
				<a href="https://other.test/"><img alt="Other site"></a></body></html>`,
			want: extract.Page{
				Title: "Hello & welcome", Description: "A short description",
				H1: []string{"Main title"}, H2: []string{"Second", "Second again"}, H3: []string{"Third"},
				Links: []extract.Link{
					{URL: "http://example.test/a", Text: "Link A"},
					{URL: "http://example.test/dir/b.html", Text: "B", Nofollow: true},
					{URL: "https://other.test/", Text: "Other site"},
				},
			},
		},
		{
			name: "meta robots and base",
			html: `<head><base href="http://example.test/other/"><meta name="robots" content="NOINDEX, follow">
				<meta name="lohisoftbot" content="nofollow"><meta name="googlebot" content="none"></head><a href="x">x</a>`,
			want: extract.Page{NoIndex: true, NoFollow: true, Links: []extract.Link{{URL: "http://example.test/other/x", Text: "x"}}},
		},
		{
			name:        "latin-1 from the header",
			html:        "<title>Caf\xe9</title>",
			contentType: "text/html; charset=iso-8859-1",
			want:        extract.Page{Title: "Café"},
		},
		{
			name: "windows-1252 from meta",
			html: `<meta charset="windows-1252"><title>` + "\x93q\x94 \x80" + `</title>`,
			want: extract.Page{Title: "“q” €"},
		},
		{
			name: "bounded title",
			html: "<title>" + strings.Repeat("ab ", 1000) + "</title>",
			want: extract.Page{Title: strings.TrimSpace(strings.Repeat("ab ", 100))},
		},
		{
			name: "line breaks and blocks separate words, inline elements do not",
			html: `<h2>Line1<br>Line2</h2><h1>Hello<div>World</div></h1><h3>Pri<b>ce</b>s<span> and</span><br/>offers</h3>
				<a href=/s>Our<br>Team</a><a href=/shop><p>Shop</p><p>Now</p></a><a href=/x>Sp<em>lit</em></a>
				<a href=/l><ul><li>One</li><li>Two</li></ul></a><a href=/t><table><tr><td>A</td><td>B</td></tr></table></a>`,
			want: extract.Page{
				H1: []string{"Hello World"}, H2: []string{"Line1 Line2"}, H3: []string{"Prices and offers"},
				Links: []extract.Link{
					{URL: "http://example.test/s", Text: "Our Team"},
					{URL: "http://example.test/shop", Text: "Shop Now"},
					{URL: "http://example.test/x", Text: "Split"},
					{URL: "http://example.test/l", Text: "One Two"},
					{URL: "http://example.test/t", Text: "A B"},
				},
			},
		},
		{
			name: "the first title counts",
			html: `<title>First</title><title>Second</title><svg><title>Icon</title></svg>`,
			want: extract.Page{Title: "First"},
		},
		{
			name: "a link whose only content is an icon",
			html: `<a href=/1 aria-label="Home page" title="Home"><img alt="house"></a>
				<a href=/2 title="Cart"><img alt="cart icon"></a>
				<a href=/3><img alt="Search"></a>
				<a href=/4 aria-label="Profile"><svg><title>user</title></svg></a>
				<a href=/5 aria-label="  "><i class="icon-mail"></i></a>
				<a href=/6 aria-label="ignored">Visible <img alt="and alt"></a>`,
			want: extract.Page{Links: []extract.Link{
				{URL: "http://example.test/1", Text: "Home page"},
				{URL: "http://example.test/2", Text: "Cart"},
				{URL: "http://example.test/3", Text: "Search"},
				{URL: "http://example.test/4", Text: "Profile"},
				{URL: "http://example.test/5", Text: ""},
				{URL: "http://example.test/6", Text: "Visible and alt"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := extract.Parse(strings.NewReader(tt.html), tt.contentType, base, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*unparsed(t, got), tt.want) {
				t.Errorf("Parse() = %+v, want %+v", *got, tt.want)
			}
			got, err = extract.ParseBytes([]byte(tt.html), tt.contentType, base, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*unparsed(t, got), tt.want) {
				t.Errorf("ParseBytes() = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestRobotsTag(t *testing.T) {
	tests := []struct {
		values            []string
		noindex, nofollow bool
	}{
		{[]string{"noindex"}, true, false},
		{[]string{"NoIndex, NoFollow"}, true, true},
		{[]string{"none"}, true, true},
		{[]string{"otherbot: noindex"}, false, false},
		{[]string{"LohiSoftBot: nofollow"}, false, true},
		{[]string{"unavailable_after: 25 Jun 2010 15:00:00 PST"}, false, false},
	}
	for _, tt := range tests {
		ni, nf := extract.RobotsTag(tt.values, "LohiSoftBot")
		if ni != tt.noindex || nf != tt.nofollow {
			t.Errorf("RobotsTag(%q) = %v, %v, want %v, %v", tt.values, ni, nf, tt.noindex, tt.nofollow)
		}
	}
}

// TestParseBytesDecodes checks that ParseBytes reads a document as it is
// only when decoding would not change it: text that is not valid in its
// charset, or not ASCII in windows-1252, is decoded as Parse does.
func TestParseBytesDecodes(t *testing.T) {
	base, _ := url.Parse("http://example.test/")
	for _, tt := range []struct {
		name, doc, contentType, title string
	}{
		{"valid utf-8", "<title>Caf\u00e9 \u00e1rv\u00edzt\u0171r\u0151</title>", "text/html; charset=utf-8", "Caf\u00e9 \u00e1rv\u00edzt\u0171r\u0151"},
		{"invalid utf-8 declared", "<title>Caf\xe9 ok</title>", "text/html; charset=utf-8", "Caf\ufffd ok"},
		{"invalid utf-8 after a valid start", "<title>\u00e9" + strings.Repeat(" ", 2000) + "\xff</title>", "text/html; charset=utf-8", "\u00e9 \ufffd"},
		{"windows-1252 declared", "<title>\x93q\x94 \x80</title>", "text/html; charset=windows-1252", "\u201cq\u201d \u20ac"},
		{"nothing declared, ASCII start, 1252 byte later", "<title>a" + strings.Repeat(" ", 2000) + "\xe9</title>", "text/html", "a \u00e9"},
		{"nothing declared, ASCII", "<title>plain</title>", "", "plain"},
		{"latin-1 meta", "<meta charset=\"iso-8859-1\"><title>\xe9t\xe9</title>", "", "\u00e9t\u00e9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, err := extract.Parse(strings.NewReader(tt.doc), tt.contentType, base, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := extract.ParseBytes([]byte(tt.doc), tt.contentType, base, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != tt.title || want.Title != tt.title {
				t.Errorf("title: ParseBytes %q, Parse %q, want %q", got.Title, want.Title, tt.title)
			}
		})
	}
}

// unparsed checks that every link's Parsed is its URL and returns p with
// Parsed cleared, for comparison with a Page written by hand.
func unparsed(t *testing.T, p *extract.Page) *extract.Page {
	t.Helper()
	for i, l := range p.Links {
		if l.Parsed == nil || l.Parsed.String() != l.URL {
			t.Errorf("link %q: Parsed is %v", l.URL, l.Parsed)
		}
		p.Links[i].Parsed = nil
	}
	return p
}
