package message

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Limits for broken HTML: elements tracked, and how far down the open
// elements a closing tag looks for its match.
const (
	maxHTMLDepth  = 512
	maxHTMLSearch = 64
)

// htmlToText renders an HTML body as plain text for the classifier: block
// elements become line breaks, <blockquote> becomes "> " quoting (so quoted
// replies are recognised as in plain text), a signature block starts with
// the "-- " line, and a link whose target is not already in its text is
// followed by the target in angle brackets, so a site named only in an
// href still counts. Scripts, styles and the head are dropped.
func htmlToText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	r := &htmlText{}
	skip := 0 // depth inside elements whose text is not shown
	type link struct {
		href  string
		start int // r.b length when the link opened
	}
	var links []link
	// Elements opened with a special meaning, to undo on close.
	var stack []atom.Atom
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return r.String()
		case html.TextToken:
			if skip > 0 {
				continue
			}
			r.text(string(z.Text()))
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			var class, id, href string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "class":
					class = strings.ToLower(string(v))
				case "id":
					id = strings.ToLower(string(v))
				case "href":
					href = strings.TrimSpace(string(v))
				}
			}
			switch a {
			case atom.Head, atom.Script, atom.Style, atom.Title, atom.Template, atom.Noscript, atom.Svg:
				if tt == html.StartTagToken && len(stack) < maxHTMLDepth {
					skip++
					stack = append(stack, a)
				}
				continue
			case atom.Br:
				r.newline()
			case atom.Hr:
				r.block()
			case atom.Li:
				r.newline()
				r.text("- ")
			case atom.Blockquote:
				r.block()
				if tt == html.StartTagToken && len(stack) < maxHTMLDepth {
					r.quote++
					stack = append(stack, a)
				}
			case atom.A:
				if tt == html.StartTagToken && len(stack) < maxHTMLDepth {
					links = append(links, link{href: href, start: r.b.Len()})
					stack = append(stack, a)
				}
			case atom.P, atom.Div, atom.Tr, atom.Table, atom.Ul, atom.Ol, atom.Pre, atom.H1, atom.H2, atom.H3,
				atom.H4, atom.H5, atom.H6, atom.Dl, atom.Dt, atom.Dd, atom.Section, atom.Article, atom.Header,
				atom.Footer, atom.Center, atom.Address, atom.Td, atom.Th, atom.Caption:
				r.block()
				if tt == html.StartTagToken && len(stack) < maxHTMLDepth {
					stack = append(stack, a)
					if isSignatureBlock(class, id) {
						r.signature()
					}
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			// Close up to the matching open element, if it is open
			// (looking only a little way down, so broken HTML stays fast).
			idx := -1
			for i := len(stack) - 1; i >= 0 && i >= len(stack)-maxHTMLSearch; i-- {
				if stack[i] == a {
					idx = i
					break
				}
			}
			if idx < 0 {
				if a == atom.P || a == atom.Div || a == atom.Li || a == atom.Tr {
					r.block()
				}
				continue
			}
			for i := len(stack) - 1; i >= idx; i-- {
				switch stack[i] {
				case atom.Head, atom.Script, atom.Style, atom.Title, atom.Template, atom.Noscript, atom.Svg:
					skip--
				case atom.Blockquote:
					r.quote--
					r.block()
				case atom.A:
					if n := len(links); n > 0 {
						l := links[n-1]
						links = links[:n-1]
						r.linkTarget(l.href, l.start)
					}
				default:
					r.block()
				}
			}
			stack = stack[:idx]
		}
	}
}

// isSignatureBlock recognises the signature containers of common webmail
// and desktop clients.
func isSignatureBlock(class, id string) bool {
	return strings.Contains(class, "gmail_signature") || strings.Contains(class, "moz-signature") ||
		id == "signature" || strings.Contains(class, "x_signature")
}

// htmlText accumulates rendered text with quote prefixes.
type htmlText struct {
	b         strings.Builder
	quote     int  // blockquote depth
	lineStart bool // nothing written on the current line yet
	blankLine bool // the previous line is empty
	space     bool // a space is pending before the next word
}

func (r *htmlText) String() string { return r.b.String() }

func (r *htmlText) prefix() {
	if r.b.Len() == 0 || r.lineStart {
		if r.quote > 0 {
			r.b.WriteString(strings.Repeat(">", r.quote))
			r.b.WriteByte(' ')
		}
		r.lineStart = false
		r.blankLine = false
		r.space = false
	}
}

func (r *htmlText) text(s string) {
	words := strings.FieldsFunc(s, isHTMLSpace)
	if first, _ := utf8.DecodeRuneInString(s); isHTMLSpace(first) {
		r.space = true
	}
	for k, w := range words {
		if k > 0 {
			r.space = true
		}
		if r.space && !r.lineStart && r.b.Len() > 0 {
			r.b.WriteByte(' ')
		}
		r.prefix()
		r.b.WriteString(w)
		r.space = false
	}
	if last, _ := utf8.DecodeLastRuneInString(s); isHTMLSpace(last) {
		r.space = true
	}
}

func isHTMLSpace(c rune) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\u00a0' || c == '\u200b'
}

// newline ends the current line (<br>).
func (r *htmlText) newline() {
	if r.lineStart {
		// An empty line: <br><br>.
		if !r.blankLine {
			r.b.WriteByte('\n')
			r.blankLine = true
		}
		return
	}
	r.b.WriteByte('\n')
	r.lineStart = true
	r.space = false
}

// block ends the current line if it has text (block element boundary).
func (r *htmlText) block() {
	if r.b.Len() > 0 && !r.lineStart {
		r.b.WriteByte('\n')
		r.lineStart = true
		r.space = false
	}
}

// signature starts a signature block with the "-- " delimiter line.
func (r *htmlText) signature() {
	r.block()
	r.prefix()
	r.b.WriteString("-- \n")
	r.lineStart = true
}

// linkTarget writes " <href>" after a link's text when the text does not
// already show the target's host.
func (r *htmlText) linkTarget(href string, start int) {
	lh := strings.ToLower(href)
	if !strings.HasPrefix(lh, "http://") && !strings.HasPrefix(lh, "https://") && !strings.HasPrefix(lh, "www.") {
		return
	}
	host := lh
	if i := strings.Index(host, "//"); i >= 0 {
		host = host[i+2:]
	}
	if i := strings.IndexAny(host, "/?#:"); i >= 0 {
		host = host[:i]
	}
	host = strings.TrimPrefix(host, "www.")
	shown := ""
	if start <= r.b.Len() && r.b.Len()-start <= 1000 {
		shown = strings.ToLower(r.b.String()[start:])
	}
	if host != "" && strings.Contains(shown, host) {
		return
	}
	if !r.lineStart {
		r.b.WriteByte(' ')
	}
	r.prefix()
	r.b.WriteString("<" + href + ">")
	r.space = true
}
