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
	URL      string // absolute, fragment removed
	Text     string // the anchor text, collapsed and bounded
	Nofollow bool   // rel contains nofollow
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
func Parse(r io.Reader, contentType string, base *url.URL, opts *Options) (*Page, error) {
	agent := "lohisoftbot"
	if opts != nil && opts.Agent != "" {
		agent = strings.ToLower(opts.Agent)
	}
	dr, err := charset.NewReader(r, contentType)
	if err != nil {
		return nil, fmt.Errorf("extract: charset: %w", err)
	}
	p := &Page{}
	z := html.NewTokenizer(dr)

	var (
		inTitle     bool
		title       text
		heading     atom.Atom // h1..h3 being read, or 0
		headingText text
		inA         bool
		aHref       string
		aNofollow   bool
		aText       text
		skip        int // depth inside script/style/template/noscript... (text not wanted)
		seenLinks   = map[string]int{}
	)
	flushA := func() {
		if !inA {
			return
		}
		inA = false
		if aHref == "" || len(p.Links) >= MaxLinks {
			return
		}
		u, ok := resolve(base, aHref)
		if !ok {
			return
		}
		l := Link{URL: u, Text: aText.String(MaxAnchorText), Nofollow: aNofollow}
		if i, dup := seenLinks[l.URL+"\x00"+l.Text]; dup {
			// The same link twice with the same text adds nothing; a
			// followable copy wins over a nofollow one.
			p.Links[i].Nofollow = p.Links[i].Nofollow && l.Nofollow
			return
		}
		seenLinks[l.URL+"\x00"+l.Text] = len(p.Links)
		p.Links = append(p.Links, l)
	}
	flushHeading := func() {
		if heading == 0 {
			return
		}
		t := headingText.String(MaxHeading)
		if t != "" {
			switch heading {
			case atom.H1:
				if len(p.H1) < MaxHeadings {
					p.H1 = append(p.H1, t)
				}
			case atom.H2:
				if len(p.H2) < MaxHeadings {
					p.H2 = append(p.H2, t)
				}
			case atom.H3:
				if len(p.H3) < MaxHeadings {
					p.H3 = append(p.H3, t)
				}
			}
		}
		heading = 0
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flushA()
			flushHeading()
			if err := z.Err(); err != nil && err != io.EOF {
				return nil, fmt.Errorf("extract: %w", err)
			}
			p.Title = title.String(MaxTitle)
			return p, nil
		case html.TextToken:
			if skip > 0 {
				continue
			}
			t := z.Text()
			if inTitle {
				title.add(t)
			}
			if heading != 0 {
				headingText.add(t)
			}
			if inA {
				aText.add(t)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			var attrs map[string]string
			if hasAttr && (a == atom.Meta || a == atom.A || a == atom.Base || a == atom.Img) {
				attrs = readAttrs(z)
			}
			switch a {
			case atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Svg, atom.Math, atom.Iframe, atom.Textarea, atom.Select:
				if tt == html.StartTagToken {
					skip++
				}
			case atom.Title:
				if tt == html.StartTagToken && skip == 0 {
					inTitle = true
				}
			case atom.H1, atom.H2, atom.H3:
				flushHeading()
				if tt == html.StartTagToken {
					heading = a
					headingText = text{}
				}
			case atom.A:
				flushA()
				if tt == html.StartTagToken {
					inA = true
					aHref = strings.TrimSpace(attrs["href"])
					aNofollow = hasToken(attrs["rel"], "nofollow")
					aText = text{}
				}
			case atom.Img:
				if inA {
					aText.add([]byte(" " + attrs["alt"] + " "))
				}
			case atom.Base:
				if href := strings.TrimSpace(attrs["href"]); href != "" && base != nil {
					if u, err := base.Parse(href); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
						base = u
					}
				}
			case atom.Meta:
				n := strings.ToLower(strings.TrimSpace(attrs["name"]))
				content := attrs["content"]
				switch n {
				case "description":
					if p.Description == "" {
						var d text
						d.add([]byte(content))
						p.Description = d.String(MaxDescription)
					}
				case "robots", agent:
					for _, tok := range strings.Split(strings.ToLower(content), ",") {
						switch strings.TrimSpace(tok) {
						case "noindex":
							p.NoIndex = true
						case "nofollow":
							p.NoFollow = true
						case "none":
							p.NoIndex, p.NoFollow = true, true
						}
					}
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch a := atom.Lookup(name); a {
			case atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Svg, atom.Math, atom.Iframe, atom.Textarea, atom.Select:
				if skip > 0 {
					skip--
				}
			case atom.Title:
				inTitle = false
			case atom.H1, atom.H2, atom.H3:
				flushHeading()
			case atom.A:
				flushA()
			}
		}
	}
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

func readAttrs(z *html.Tokenizer) map[string]string {
	m := map[string]string{}
	for {
		k, v, more := z.TagAttr()
		key := string(k)
		if _, dup := m[key]; !dup {
			m[key] = string(v)
		}
		if !more {
			return m
		}
	}
}

func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(strings.ToLower(list)) {
		if f == tok {
			return true
		}
	}
	return false
}

// resolve makes href absolute against base: http and https only, fragment
// dropped, userinfo refused.
func resolve(base *url.URL, href string) (string, bool) {
	if base == nil || len(href) > MaxURL {
		return "", false
	}
	u, err := base.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	u.Fragment = ""
	u.RawFragment = ""
	s := u.String()
	if len(s) > MaxURL {
		return "", false
	}
	return s, true
}

// text collects text with whitespace collapsed, up to a bound of bytes that
// comfortably exceeds every rune limit.
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
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		if unicode.IsSpace(r) || r == 0 {
			t.space = true
			continue
		}
		if r == utf8.RuneError && n == 1 {
			r = unicode.ReplacementChar
		}
		if t.space && t.b.Len() > 0 {
			t.b.WriteByte(' ')
		}
		t.space = false
		if unicode.IsControl(r) {
			continue
		}
		t.b.WriteRune(r)
	}
}

// String returns the collected text (the tokenizer has decoded entities
// already), cut to max runes.
func (t *text) String(max int) string {
	s := strings.Join(strings.Fields(t.b.String()), " ")
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:max]))
	}
	return s
}
