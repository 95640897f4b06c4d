// Package extract pulls out of an HTML page exactly what LohiSoftBot's index
// may keep (title, meta description, h1 to h3 texts) plus what the crawler
// needs to go on (links with their anchor text and rel, the page's robots
// directives). Nothing else of the page is returned.
//
// Text is decoded from the page's charset (golang.org/x/net/html/charset:
// the Content-Type header, a byte-order mark or a <meta> declaration),
// whitespace is collapsed and every length is bounded. Parsing is a single
// streaming pass of golang.org/x/net/html's tokenizer.
package extract

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// Bounds on what a page may contribute.
const (
	MaxTitle       = 300 // runes of the title
	MaxDescription = 500 // runes of the meta description
	MaxHeading     = 300 // runes of one heading
	MaxHeadings    = 20  // headings kept per level
	MaxAnchorText  = 200 // runes of one link's text
	MaxLinks       = 500 // links kept per page
	MaxURL         = 2048
)

// Link is one <a href> of the page.
type Link struct {
	URL      string `json:"url"`      // absolute, fragment removed
	Text     string `json:"text"`     // the anchor text, collapsed and bounded
	Nofollow bool   `json:"nofollow"` // rel contains nofollow
	// Parsed is URL as a *url.URL: its String is URL, and url.Parse(URL)
	// has the same scheme, host and escaped path and query. Nil in a Link
	// not made by Parse.
	Parsed *url.URL `json:"-"`
}

// Page is what a page contributes.
type Page struct {
	Title       string
	Description string
	H1, H2, H3  []string
	Links       []Link
	// NoIndex and NoFollow are the page's meta robots directives, from
	// <meta name="robots"> or a <meta> named after the product token.
	NoIndex, NoFollow bool
}

// Options configures Parse. A nil *Options is the zero value.
type Options struct {
	// Agent is the product token whose own <meta name=...> directives apply
	// besides "robots". Empty means "LohiSoftBot".
	Agent string
}

// Parse reads an HTML document from r, whose Content-Type header is
// contentType (may be empty), and whose URL is base. It reads r to the end
// (bound the reader yourself) and fails only on a charset it cannot decode
// or a read error.
//
// Text is joined as a browser lays it out: <br> and block-level elements
// separate words, inline elements do not, so <a>Our<br>Team</a> reads "Our
// Team" and <a>Hel<b>lo</b></a> reads "Hello". The first <title> counts. A
// link whose only content is an icon takes its text from its aria-label,
// its title, or the image's alt, in that order.
func Parse(r io.Reader, contentType string, base *url.URL, opts *Options) (*Page, error) {
	agent := agentOf(opts)
	dr, err := charset.NewReader(r, contentType)
	if err != nil {
		return nil, fmt.Errorf("extract: charset: %w", err)
	}
	return parse(dr, base, agent)
}

// ParseBytes is Parse of a document held in memory, b. A document that
// decoding would leave as it is, is read as it is: valid UTF-8 in UTF-8
// (as its Content-Type, byte-order mark or <meta> say, or as guessed when
// none says), or nothing but ASCII in windows-1252 (the guess for a
// document that says nothing and starts with ASCII). Decoding it would
// give the same text after copying every byte through a decoder's
// buffers: a fifth of what a crawl allocated. Any other document is
// decoded as Parse does.
func ParseBytes(b []byte, contentType string, base *url.URL, opts *Options) (*Page, error) {
	_, name, _ := charset.DetermineEncoding(b[:min(len(b), sniffLen)], contentType)
	// (An empty document goes to Parse, which fails on it.)
	if len(b) > 0 && (name == "utf-8" && utf8.Valid(b) || name == "windows-1252" && isASCII(b)) {
		return parse(bytes.NewReader(b), base, agentOf(opts))
	}
	return Parse(bytes.NewReader(b), contentType, base, opts)
}

// isASCII reports whether every byte of b is below 0x80.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// sniffLen is how much of a document charset.NewReader looks at for its
// encoding.
const sniffLen = 1024

// agentOf returns the lowercase product token of opts.
func agentOf(opts *Options) string {
	if opts != nil && opts.Agent != "" {
		return strings.ToLower(opts.Agent)
	}
	return "lohisoftbot"
}

// parse runs the parser over r, UTF-8 text.
func parse(r io.Reader, base *url.URL, agent string) (*Page, error) {
	p := &parser{z: html.NewTokenizer(r), base: base, agent: agent, page: &Page{}, seen: map[linkKey]int{}}
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.page, nil
}

// parser is the state of one Parse: one pass of the tokenizer, with the
// element whose text is being collected.
type parser struct {
	z     *html.Tokenizer
	base  *url.URL // the document's base URL; <base href> may change it
	agent string   // lowercase product token for <meta name=...>
	page  *Page

	titleState  int // 0 before the first <title>, 1 inside it, 2 after it
	title       text
	heading     atom.Atom // h1..h3 being read, or 0
	headingText text
	link        *openLink // the <a href> being read, or nil
	skip        int       // depth inside elements whose text is never wanted
	seen        map[linkKey]int
}

// linkKey is what makes two links of a page the same: their URL and text.
type linkKey struct{ url, text string }

// openLink is an <a> whose end has not been seen yet.
type openLink struct {
	href      string
	nofollow  bool
	ariaLabel string
	title     string
	text      text // text content, image alts included
	hasText   bool // text content other than image alts was seen
}

func (p *parser) run() error {
	for {
		tt := p.z.Next()
		switch tt {
		case html.ErrorToken:
			p.flushLink()
			p.flushHeading()
			if err := p.z.Err(); err != nil && err != io.EOF {
				return fmt.Errorf("extract: %w", err)
			}
			p.page.Title = p.title.String(MaxTitle)
			return nil
		case html.TextToken:
			if p.skip == 0 {
				p.text(p.z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			p.start(tt)
		case html.EndTagToken:
			name, _ := p.z.TagName()
			p.end(atom.Lookup(name))
		}
	}
}

// text adds a text node to every element collecting text.
func (p *parser) text(t []byte) {
	if p.titleState == 1 {
		p.title.add(t)
	}
	if p.heading != 0 {
		p.headingText.add(t)
	}
	if l := p.link; l != nil {
		if len(bytes.TrimSpace(t)) > 0 {
			l.hasText = true
		}
		l.text.add(t)
	}
}

// separate ends the current word of every element collecting text, as a
// line break or block boundary does.
func (p *parser) separate() {
	p.headingText.add(space)
	if p.link != nil {
		p.link.text.add(space)
	}
}

var space = []byte(" ")

func (p *parser) start(tt html.TokenType) {
	name, hasAttr := p.z.TagName()
	a := atom.Lookup(name)
	var attrs attrs
	if hasAttr && (a == atom.Meta || a == atom.A || a == atom.Base || a == atom.Img) {
		attrs = readAttrs(p.z)
	}
	if skipped[a] {
		if tt == html.StartTagToken {
			p.skip++
		}
		return
	}
	if p.skip > 0 {
		return
	}
	if blocks[a] {
		p.separate()
	}
	switch a {
	case atom.Title:
		if tt == html.StartTagToken && p.titleState == 0 {
			p.titleState = 1
		}
	case atom.H1, atom.H2, atom.H3:
		p.flushHeading()
		if tt == html.StartTagToken {
			p.heading = a
			p.headingText = text{}
		}
	case atom.A:
		p.flushLink()
		if tt == html.StartTagToken {
			p.link = &openLink{href: strings.TrimSpace(attrs.href), nofollow: hasToken(attrs.rel, "nofollow"),
				ariaLabel: attrs.ariaLabel, title: attrs.title}
		}
	case atom.Img:
		if p.link != nil {
			p.link.text.add(space)
			p.link.text.addString(attrs.alt)
			p.link.text.add(space)
		}
	case atom.Base:
		if href := strings.TrimSpace(attrs.href); href != "" && p.base != nil {
			if u, err := p.base.Parse(href); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
				p.base = u
			}
		}
	case atom.Meta:
		p.meta(attrs)
	}
}

func (p *parser) end(a atom.Atom) {
	if skipped[a] {
		if p.skip > 0 {
			p.skip--
		}
		return
	}
	if p.skip > 0 {
		return
	}
	if blocks[a] {
		p.separate()
	}
	switch a {
	case atom.Title:
		if p.titleState == 1 {
			p.titleState = 2
		}
	case atom.H1, atom.H2, atom.H3:
		p.flushHeading()
	case atom.A:
		p.flushLink()
	}
}

// meta reads a <meta name=description> or a robots directive.
func (p *parser) meta(attrs attrs) {
	n := strings.ToLower(strings.TrimSpace(attrs.name))
	content := attrs.content
	switch n {
	case "description":
		if p.page.Description == "" {
			var d text
			d.addString(content)
			p.page.Description = d.String(MaxDescription)
		}
	case "robots", p.agent:
		for _, tok := range strings.Split(strings.ToLower(content), ",") {
			switch strings.TrimSpace(tok) {
			case "noindex":
				p.page.NoIndex = true
			case "nofollow":
				p.page.NoFollow = true
			case "none":
				p.page.NoIndex, p.page.NoFollow = true, true
			}
		}
	}
}

func (p *parser) flushLink() {
	l := p.link
	if l == nil {
		return
	}
	p.link = nil
	if l.href == "" || len(p.page.Links) >= MaxLinks {
		return
	}
	u, parsed, ok := resolve(p.base, l.href)
	if !ok {
		return
	}
	label := l.text.String(MaxAnchorText)
	if !l.hasText {
		// Only an icon: name the link as a screen reader would.
		for _, s := range []string{l.ariaLabel, l.title} {
			var t text
			t.addString(s)
			if v := t.String(MaxAnchorText); v != "" {
				label = v
				break
			}
		}
	}
	link := Link{URL: u, Text: label, Nofollow: l.nofollow, Parsed: parsed}
	key := linkKey{link.URL, link.Text}
	if i, dup := p.seen[key]; dup {
		// The same link twice with the same text adds nothing; a
		// followable copy wins over a nofollow one.
		p.page.Links[i].Nofollow = p.page.Links[i].Nofollow && link.Nofollow
		return
	}
	p.seen[key] = len(p.page.Links)
	p.page.Links = append(p.page.Links, link)
}

func (p *parser) flushHeading() {
	if p.heading == 0 {
		return
	}
	t := p.headingText.String(MaxHeading)
	if t != "" {
		var list *[]string
		switch p.heading {
		case atom.H1:
			list = &p.page.H1
		case atom.H2:
			list = &p.page.H2
		case atom.H3:
			list = &p.page.H3
		}
		if len(*list) < MaxHeadings {
			*list = append(*list, t)
		}
	}
	p.heading = 0
}

// skipped are the elements whose text is never page text: scripts, styles,
// templates, embedded documents and form controls.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Template: true, atom.Noscript: true, atom.Svg: true,
	atom.Math: true, atom.Iframe: true, atom.Textarea: true, atom.Select: true,
}

// blocks are the elements a browser lays out on a line of their own (HTML
// Living Standard, "Rendering", display: block, list-item, table parts), and
// <br>: their start and end separate words.
var blocks = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Body: true,
	atom.Br: true, atom.Caption: true, atom.Center: true, atom.Dd: true, atom.Details: true,
	atom.Dialog: true, atom.Dir: true, atom.Div: true, atom.Dl: true, atom.Dt: true,
	atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true, atom.Footer: true, atom.Form: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Header: true, atom.Hgroup: true, atom.Hr: true, atom.Html: true, atom.Legend: true,
	atom.Li: true, atom.Listing: true, atom.Main: true, atom.Menu: true, atom.Nav: true,
	atom.Ol: true, atom.Optgroup: true, atom.Option: true, atom.P: true, atom.Plaintext: true,
	atom.Pre: true, atom.Search: true, atom.Section: true, atom.Summary: true, atom.Table: true,
	atom.Tbody: true, atom.Td: true, atom.Tfoot: true, atom.Th: true, atom.Thead: true,
	atom.Tr: true, atom.Ul: true, atom.Xmp: true,
}

// RobotsTag applies the values of X-Robots-Tag headers to noindex and
// nofollow, honouring directives that name no agent or agent (the product
// token, case-insensitively).
func RobotsTag(values []string, agent string) (noindex, nofollow bool) {
	agent = strings.ToLower(agent)
	for _, v := range values {
		v = strings.ToLower(v)
		// "lohisoftbot: noindex, nofollow" or "noindex, nofollow".
		if i := strings.IndexByte(v, ':'); i >= 0 {
			who := strings.TrimSpace(v[:i])
			if !strings.ContainsAny(who, ", ") && who != "unavailable_after" {
				if who != agent {
					continue
				}
				v = v[i+1:]
			}
		}
		for _, tok := range strings.Split(v, ",") {
			switch strings.TrimSpace(tok) {
			case "noindex":
				noindex = true
			case "nofollow":
				nofollow = true
			case "none":
				noindex, nofollow = true, true
			}
		}
	}
	return noindex, nofollow
}

// attrs are the attributes of a tag the parser reads (the first of each
// name counts, as in a browser).
type attrs struct{ href, rel, ariaLabel, title, alt, name, content string }

func readAttrs(z *html.Tokenizer) attrs {
	var a attrs
	var set uint8 // which fields were read, one bit each
	for {
		k, v, more := z.TagAttr()
		var f *string
		var bit uint8
		switch string(k) { // (the tokenizer gives names in lower case)
		case "href":
			f, bit = &a.href, 1
		case "rel":
			f, bit = &a.rel, 2
		case "aria-label":
			f, bit = &a.ariaLabel, 4
		case "title":
			f, bit = &a.title, 8
		case "alt":
			f, bit = &a.alt, 16
		case "name":
			f, bit = &a.name, 32
		case "content":
			f, bit = &a.content, 64
		}
		if f != nil && set&bit == 0 {
			*f, set = string(v), set|bit
		}
		if !more {
			return a
		}
	}
}

// hasToken reports whether the space-separated list holds tok, an ASCII
// word in lower case, in any case.
func hasToken(list, tok string) bool {
	for f := range strings.FieldsSeq(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// resolve makes href absolute against base: http and https only, fragment
// dropped, userinfo refused.
func resolve(base *url.URL, href string) (string, *url.URL, bool) {
	if base == nil || len(href) > MaxURL {
		return "", nil, false
	}
	u, err := base.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", nil, false
	}
	u.Fragment = ""
	u.RawFragment = ""
	s := u.String()
	if len(s) > MaxURL {
		return "", nil, false
	}
	return s, u, true
}

// text collects text with whitespace collapsed, up to a bound of bytes that
// comfortably exceeds every rune limit: words are separated by one space,
// with none before the first or after the last.
type text struct {
	b     strings.Builder
	space bool
}

const maxTextBytes = 4 * MaxDescription

func (t *text) add(s []byte) {
	for len(s) > 0 {
		if t.b.Len() >= maxTextBytes {
			return
		}
		if c := s[0]; c >= ' ' && c < utf8.RuneSelf && c != 0x7f {
			// Printable ASCII, most of a page's text.
			if c == ' ' {
				t.space = true
			} else {
				if t.space && t.b.Len() > 0 {
					t.b.WriteByte(' ')
				}
				t.space = false
				t.b.WriteByte(c)
			}
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		t.addRune(r, n)
	}
}

// addString is add of a string.
func (t *text) addString(s string) {
	for len(s) > 0 {
		if t.b.Len() >= maxTextBytes {
			return
		}
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		t.addRune(r, n)
	}
}

// addRune adds r, decoded from n bytes.
func (t *text) addRune(r rune, n int) {
	if unicode.IsSpace(r) || r == 0 {
		t.space = true
		return
	}
	if r == utf8.RuneError && n == 1 {
		r = unicode.ReplacementChar
	}
	if invisible(r) {
		return
	}
	if unicode.IsControl(r) {
		// Nothing, as an invisible character, except that a space
		// seen before it still separates what comes after.
		return
	}
	if t.space && t.b.Len() > 0 {
		t.b.WriteByte(' ')
	}
	t.space = false
	t.b.WriteRune(r)
}

// invisible reports whether r is a character a browser shows as nothing
// between two letters of a word: a soft hyphen, a zero-width space, a word
// joiner or a byte-order mark. Dropping it keeps "work&shy;shop" findable as
// "workshop".
func invisible(r rune) bool {
	switch r {
	case '\u00ad', '\u200b', '\u2060', '\ufeff':
		return true
	}
	return false
}

// String returns the collected text (the tokenizer has decoded entities
// already), cut to max runes.
func (t *text) String(max int) string {
	s := t.b.String()
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:max]))
	}
	return s
}
