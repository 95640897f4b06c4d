package robotstxt

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// group is a parsed group with its rules compiled. A group's records are
// contiguous: from its first user-agent line to the next group's.
type group struct {
	rec0, rec1 int    // its records are r.records[rec0:rec1]
	rules      []rule // compiled non-empty rules, best first (see rule.beats)
	sawRule    bool   // an allow or disallow line has ended the user-agent lines
	delay      time.Duration
	delaySet   bool
}

// Parse parses the first MaxSize bytes of a robots.txt body. It accepts any
// bytes and never fails.
//
// When body is longer than MaxSize, the line cut at the limit is dropped
// rather than read in part: a cut "Allow: /public/page" would otherwise
// allow all of /p. Lines end at CR, LF or CRLF; a leading UTF-8 byte-order
// mark (or the first bytes of one) is skipped; "#" starts a comment; keys
// are case-insensitive and blanks around keys and values are ignored
// (RFC 9309 2.2). Allow and disallow lines before the first user-agent line
// belong to no group and are ignored. Parse copies what it keeps; body may
// be reused afterwards.
func Parse(body []byte) *Robots {
	if len(body) > MaxSize {
		cut := body[MaxSize] == '\n' || body[MaxSize] == '\r'
		body = body[:MaxSize]
		if !cut {
			body = body[:lastLineBreak(body)+1]
		}
	}
	// One copy of the text; every string kept below is a substring of it.
	text := skipBOM(string(body))

	r := &Robots{
		// Room for a record per line, assuming lines of 16 bytes or more so
		// that a file of blank lines does not reserve megabytes.
		records: make([]Record, 0, min(strings.Count(text, "\n")+1, len(text)/16+1)),
	}
	var cur *group
	var rules []rule    // all rules of the file, in order; groups own contiguous runs
	var ruleStart []int // index in rules where each group's run starts
	for line := 1; text != ""; line++ {
		var l string
		l, text = nextLine(text)
		key, value, ok := keyValue(l)
		if !ok {
			continue
		}
		kind := kindOf(key)
		r.records = append(r.records, Record{Line: line, Kind: kind, Key: key, Value: value})
		switch kind {
		case KindUserAgent:
			if cur == nil || cur.sawRule {
				if cur != nil {
					cur.rec1 = len(r.records) - 1
				}
				cur = &group{rec0: len(r.records) - 1}
				r.groups = append(r.groups, cur)
				ruleStart = append(ruleStart, len(rules))
			}
		case KindAllow, KindDisallow:
			if cur == nil {
				continue // before the first user-agent line: no group
			}
			cur.sawRule = true
			if ru, ok := compileRule(kind == KindAllow, value, trimBlanks(uncomment(l)), line); ok {
				rules = append(rules, ru)
				r.loose = r.loose || ru.loose
			}
		case KindCrawlDelay:
			if cur == nil {
				continue
			}
			// A Crawl-delay does not end the group's user-agent lines: only
			// a rule does (RFC 9309 2.1). The largest delay of the group
			// applies to each of its agents.
			if d, ok := parseDelay(value); ok && (!cur.delaySet || d > cur.delay) {
				cur.delay, cur.delaySet = d, true
			}
		case KindSitemap:
			r.sitemaps = append(r.sitemaps, value)
		}
	}
	if cur != nil {
		cur.rec1 = len(r.records)
	}

	// Order each group's rules best first, so that Decide can stop at the
	// first match. Sorting packed keys (precedence, then index) moves no
	// pointers; the rules are then copied once into their final order.
	sorted := make([]rule, len(rules))
	index := map[string]int{} // token → position in r.agents
	var keys []uint64
	for gi, g := range r.groups {
		lo, hi := ruleStart[gi], len(rules)
		if gi+1 < len(r.groups) {
			hi = ruleStart[gi+1]
		}
		keys = keys[:0]
		for i := lo; i < hi; i++ {
			keys = append(keys, precedence(&rules[i])<<32|uint64(i-lo))
		}
		slices.Sort(keys)
		for j, k := range keys {
			sorted[lo+j] = rules[lo+int(uint32(k))]
		}
		g.rules = sorted[lo:hi:hi]

		for _, rec := range r.records[g.rec0:g.rec1] {
			if rec.Kind != KindUserAgent {
				continue
			}
			ref := groupRef{g: g, name: rec.Value, line: rec.Line}
			if isStar(rec.Value) {
				if n := len(r.star); n == 0 || r.star[n-1].g != g {
					r.star = append(r.star, ref)
				}
				continue
			}
			tok := agentToken(rec.Value)
			if tok == "" {
				continue
			}
			if hasUpper(tok) {
				tok = strings.ToLower(tok)
			}
			i, ok := index[tok]
			if !ok {
				i = len(r.agents)
				index[tok] = i
				r.agents = append(r.agents, agentGroups{token: tok})
			}
			if gs := r.agents[i].groups; len(gs) == 0 || gs[len(gs)-1].g != g {
				r.agents[i].groups = append(gs, ref)
			}
		}
	}
	if len(r.agents) > manyAgents {
		r.byAgent = make(map[string]agentGroups, len(r.agents))
		for _, e := range r.agents {
			r.byAgent[e.token] = e
		}
	}
	return r
}

// precedence is a sort key for rules: lower sorts first. It orders as
// rule.beats does, by length and then allow over disallow; ties keep file
// order. It is 32 bits wide.
func precedence(r *rule) uint64 {
	k := uint64(1<<31-1-r.length) << 1
	if !r.allow {
		k |= 1
	}
	return k
}

// lastLineBreak returns the index of the last CR or LF in b, or -1.
func lastLineBreak(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' || b[i] == '\r' {
			return i
		}
	}
	return -1
}

// skipBOM drops a UTF-8 byte-order mark at the start of s, or as much of
// one as s starts with (as Google's parser does).
func skipBOM(s string) string {
	const bom = "\xef\xbb\xbf"
	i := 0
	for i < len(bom) && i < len(s) && s[i] == bom[i] {
		i++
	}
	return s[i:]
}

// nextLine splits s after its first line break: CR, LF or CRLF.
func nextLine(s string) (line, rest string) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, ""
	}
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return s[:i], s[i+2:]
	}
	return s[:i], s[i+1:]
}

// keyValue reads "key: value # comment". ok is false for blank and comment
// lines and for lines that are no key-value pair. Like Google's parser it
// accepts a missing colon when the line is exactly two words
// ("disallow /x"): the intent is plain, and a polite crawler obeys it.
func keyValue(line string) (key, value string, ok bool) {
	line = trimBlanks(uncomment(line))
	if line == "" {
		return "", "", false
	}
	if i := strings.IndexByte(line, ':'); i >= 0 {
		key, value = trimBlanks(line[:i]), trimBlanks(line[i+1:])
	} else {
		i := strings.IndexAny(line, " \t\v\f")
		if i < 0 {
			return "", "", false
		}
		key, value = line[:i], trimBlanks(line[i:])
		if strings.ContainsAny(value, " \t\v\f") {
			return "", "", false
		}
	}
	return key, value, key != ""
}

// uncomment drops a comment: "#" to the end of the line.
func uncomment(line string) string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		return line[:i]
	}
	return line
}

// trimBlanks drops spaces, tabs, vertical tabs and form feeds at both ends.
func trimBlanks(s string) string {
	for s != "" && isBlank(s[0]) {
		s = s[1:]
	}
	for s != "" && isBlank(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

// kindOf classifies a key as Google's reference parser does: a key names a
// directive when it starts with the directive's name, case-insensitively
// ("Disallowed" is a disallow line), and a few common misspellings count as
// the directive they misspell ("diaslow" too, which the Go port of Google's
// parser accepts: reading it as a disallow line allows less). Crawl-delay, not a directive of RFC 9309 or
// of Google, is recognised the same way.
func kindOf(key string) Kind {
	if key == "" {
		return KindUnknown
	}
	switch lower(key[0]) {
	case 'u':
		if hasPrefixFold(key, "user-agent") || hasPrefixFold(key, "useragent") || hasPrefixFold(key, "user agent") {
			return KindUserAgent
		}
	case 'a':
		if hasPrefixFold(key, "allow") {
			return KindAllow
		}
	case 'd':
		if hasPrefixFold(key, "disallow") || hasPrefixFold(key, "dissallow") || hasPrefixFold(key, "dissalow") ||
			hasPrefixFold(key, "disalow") || hasPrefixFold(key, "diasllow") || hasPrefixFold(key, "disallaw") ||
			hasPrefixFold(key, "diaslow") {
			return KindDisallow
		}
	case 's':
		if hasPrefixFold(key, "sitemap") || hasPrefixFold(key, "site-map") {
			return KindSitemap
		}
	case 'c':
		if hasPrefixFold(key, "crawl-delay") || hasPrefixFold(key, "crawldelay") {
			return KindCrawlDelay
		}
	}
	return KindUnknown
}

// hasPrefixFold reports whether s starts with the lowercase ASCII prefix,
// ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFoldLower(s[:len(prefix)], prefix)
}

// isStar reports whether a user-agent value names every crawler: "*", alone
// or followed by a blank and anything ("* # all" reads as "*").
func isStar(value string) bool {
	return value == "*" || len(value) > 1 && value[0] == '*' && isBlank(value[1])
}

// agentToken returns the product token a user-agent value names: its
// leading letters, "_" and "-" ("LohiSoftBot/1.0" names LohiSoftBot).
func agentToken(value string) string {
	i := 0
	for i < len(value) && isTokenByte(value[i]) {
		i++
	}
	return value[:i]
}

// maxDelay bounds a Crawl-delay so that it fits a time.Duration; callers cap
// it much lower.
const maxDelay = 365 * 24 * time.Hour

// parseDelay reads a Crawl-delay value: seconds as digits with an optional
// fraction ("10", "0.5", ".5"). Anything else is ignored.
func parseDelay(value string) (time.Duration, bool) {
	digits, dots := 0, 0
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil && f == 0 { // a value too large to parse still says "long"
		return 0, false
	}
	if f >= maxDelay.Seconds() {
		return maxDelay, true
	}
	return time.Duration(f * float64(time.Second)), true
}
