package robotstxt

import (
	"slices"
	"strings"
)

// Paths and patterns are compared in a canonical form, the same on both
// sides (RFC 9309 2.2.2, figures 4 and 6). The strict form:
//
//   - octets outside US-ASCII, controls, space and the ASCII characters RFC
//     3986 does not allow in a URI ("<", ">", "\"", "\\", "^", "`", "{",
//     "|", "}") are percent-encoded, hex upper-case: /ツ → /%E3%83%84;
//   - escapes keep their encoding with upper-case hex: %2F is not "/" and
//     %3F is not "?", in the path and in the query alike, while %2f and %2F
//     are the same; a "%" that starts no escape becomes %25.
//
// The decoded form is the strict form with two more readings that RFC 9309
// prescribes and Google's matcher lacks:
//
//   - a percent-encoded unreserved character (letters, digits, "-", ".",
//     "_", "~") is decoded: /%62%61%7A → /baz (2.2.2, figure 4);
//   - %2A and %24 are decoded to "*" and "$", so that a rule can name those
//     characters literally (2.2.3: /path/foo-%24 matches /path/foo-$).
//
// Disallow rules match in the decoded form, allow rules in the strict one:
// where the two readings differ, the one that allows less applies. A rule's
// length, which decides between matching rules, is its octets in the strict
// form, as Google counts them.
//
// In a pattern, a raw "*" is the wildcard and a raw "$" at the very end
// anchors it; the canonical form of the literal parts between wildcards is
// built separately.

// Bytes that the canonical form does not copy as they are: controls and
// space, "%" (an escape to normalise, or a lone "%" to encode) and the
// ASCII characters a URI may not contain, as two 64-bit masks indexed by
// byte value; DEL and octets of 0x80 and above are never copied as they are.
const (
	changedLo uint64 = 1<<'!' - 1 | 1<<'"' | 1<<'%' | 1<<'<' | 1<<'>'
	changedHi uint64 = 1<<('\\'-64) | 1<<('^'-64) | 1<<('`'-64) | 1<<('{'-64) | 1<<('|'-64) | 1<<('}'-64) | 1<<(0x7f-64)
)

// kept reports whether the canonical form copies c as it is.
func kept(c byte) bool {
	switch {
	case c < 64:
		return changedLo>>c&1 == 0
	case c < 128:
		return changedHi>>(c-64)&1 == 0
	}
	return false
}

const hexUpper = "0123456789ABCDEF"

// isCanonical reports whether s is already in canonical form, the common
// case for URLs, so that Decide can match it without copying.
func isCanonical(s string) bool {
	for i := 0; i < len(s); i++ {
		if !kept(s[i]) {
			return false
		}
	}
	return true
}

// appendCanonical appends the strict canonical form of s to dst, or the
// decoded one when decode is set.
func appendCanonical(dst []byte, s string, decode bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case kept(c):
			dst = append(dst, c)
		case c != '%':
			dst = append(dst, '%', hexUpper[c>>4], hexUpper[c&15])
		default:
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				dst = append(dst, '%', '2', '5')
				continue
			}
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			if decode && decodes(v) {
				dst = append(dst, v)
			} else {
				dst = append(dst, '%', hexUpper[v>>4], hexUpper[v&15])
			}
		}
	}
	return dst
}

// hasDecodable reports whether the strict canonical form s holds an escape
// that the decoded form decodes.
func hasDecodable(s string) bool {
	for {
		i := strings.IndexByte(s, '%')
		if i < 0 || i+2 >= len(s) {
			return false
		}
		if decodes(unhex(s[i+1])<<4 | unhex(s[i+2])) {
			return true
		}
		s = s[i+3:]
	}
}

// decodes says whether the escape of v is replaced by v itself: for the
// unreserved characters of RFC 3986 and for "*" and "$".
func decodes(v byte) bool {
	switch {
	case 'a' <= v && v <= 'z', 'A' <= v && v <= 'Z', '0' <= v && v <= '9':
		return true
	}
	switch v {
	case '-', '.', '_', '~', '*', '$':
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// rule is a compiled allow or disallow rule.
//
// A pattern "p0*p1*...*pn$" is stored as prefix p0 and rest p1..pn. It
// matches a path that starts with p0 and then contains p1, ..., pn-1 in
// order; pn must follow them and, when the pattern is anchored, end the
// path. Taking each middle part at its leftmost occurrence leaves the most
// room for the rest, so that greedy scan is exact.
type rule struct {
	prefix   string
	rest     []string // the parts after each "*"; nil without wildcard
	text     string   // "Disallow: /x/", for Decision.Rule
	line     int32
	length   int32 // octets in the canonical pattern, "*" and "$" included
	allow    bool
	anchored bool // the pattern ends in "$"
	// loose is set for a disallow rule with a raw ":", "/", "?" or "@" in
	// its query: it also matches the query with those characters
	// percent-encoded (see matchDecodedQuery).
	loose bool
}

// compileRule compiles the value of an allow or disallow line; written is
// the whole line as read (blanks and comment removed), used as the rule's
// text when it is already in the form "Disallow: value". An empty value
// matches nothing and gives ok false.
func compileRule(allow bool, value, written string, line int) (r rule, ok bool) {
	if value == "" {
		return rule{}, false
	}
	r = rule{allow: allow, line: int32(min(line, 1<<31-1))}
	decode := !allow
	name := "Disallow: "
	if allow {
		name = "Allow: "
	}
	if len(written) == len(name)+len(value) && strings.HasPrefix(written, name) {
		r.text = written // value is a suffix of written: no copy needed
	} else {
		r.text = name + value
	}
	if value[len(value)-1] == '$' {
		r.anchored = true
		value = value[:len(value)-1]
	}
	if q := strings.IndexByte(value, '?'); !allow && q >= 0 && strings.ContainsAny(value[q+1:], ":/?@") {
		r.loose = true
	}
	r.length = int32(min(strictLen(value)+b2i(r.anchored), 1<<31-1))
	stars := strings.Count(value, "*")
	if stars == 0 {
		r.prefix = canonical(value, decode)
		return r, true
	}
	// The literal parts between wildcards, normalised one after another.
	// They are cut from one string; a "*" decoded from %2A inside a part
	// stays a literal.
	parts := make([]string, 0, stars+1)
	if isCanonical(value) {
		for seg := range strings.SplitSeq(value, "*") {
			parts = append(parts, seg)
		}
	} else {
		buf := make([]byte, 0, len(value)+len(value)/2)
		ends := make([]int, 0, stars+1)
		for seg := range strings.SplitSeq(value, "*") {
			buf = appendCanonical(buf, seg, decode)
			ends = append(ends, len(buf))
		}
		all, from := string(buf), 0
		for _, e := range ends {
			parts = append(parts, all[from:e])
			from = e
		}
	}
	r.prefix = parts[0]
	// Empty middle parts (from "**") match anywhere: drop them.
	last := parts[len(parts)-1]
	r.rest = slices.DeleteFunc(parts[1:len(parts)-1], func(s string) bool { return s == "" })
	r.rest = append(r.rest, last)
	return r, true
}

// canonical returns the canonical form of a path or literal part (decoded
// when decode is set), without copying when it already is.
func canonical(s string, decode bool) string {
	if isCanonical(s) {
		return s
	}
	b := appendCanonical(make([]byte, 0, len(s)+len(s)/2), s, decode)
	return string(b)
}

// strictLen is the length of the strict canonical form of s.
func strictLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case kept(c):
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			n += 2 // encoded as %XX
		}
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// match reports whether the rule matches the canonical path p, starting at
// its first octet (RFC 9309 2.2.2).
func (r *rule) match(p string) bool {
	if len(p) < len(r.prefix) || p[:len(r.prefix)] != r.prefix {
		return false
	}
	if r.rest == nil {
		return !r.anchored || len(p) == len(r.prefix)
	}
	rest := p[len(r.prefix):]
	n := len(r.rest) - 1
	for _, m := range r.rest[:n] {
		i := strings.Index(rest, m)
		if i < 0 {
			return false
		}
		rest = rest[i+len(m):]
	}
	if r.anchored {
		return strings.HasSuffix(rest, r.rest[n])
	}
	return strings.Contains(rest, r.rest[n])
}

// matchDecodedQuery reports whether the rule matches the canonical path p
// with %3A, %2F, %3F and %40 in its query read as ":", "/", "?" and "@".
//
// RFC 9309 2.2.2 (figure 4) compares "?baz=https://foo.bar" in a rule with
// "?baz=https%3A%2F%2Ffoo.bar" in a URL, while an encoded reserved character
// in a rule ("?%3Fx") matches only its encoded form, as Google's parser
// reads it. Only disallow rules read a URL so: for an allow rule the reading
// that allows less applies.
func (r *rule) matchDecodedQuery(p string) bool {
	q := strings.IndexByte(p, '?')
	if q < 0 || strings.IndexByte(p[q:], '%') < 0 {
		return false
	}
	b := make([]byte, 0, len(p))
	b = append(b, p[:q+1]...)
	for i := q + 1; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) {
			switch p[i+1 : i+3] {
			case "3A", "2F", "3F", "40":
				b = append(b, unhex(p[i+1])<<4|unhex(p[i+2]))
				i += 2
				continue
			}
		}
		b = append(b, p[i])
	}
	return r.match(string(b))
}

// beats reports whether r takes precedence over o when both match: more
// octets, then allow over disallow (RFC 9309 2.2.2), then the earlier line.
func (r *rule) beats(o *rule) bool {
	if r.length != o.length {
		return r.length > o.length
	}
	if r.allow != o.allow {
		return r.allow
	}
	return r.line < o.line
}
