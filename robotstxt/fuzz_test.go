package robotstxt_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/robotstxt"
)

// fuzzSeeds adds the vectors of the suite and some awkward inputs. The
// 16 KiB line-length vectors are left out: mutating them is slow and finds
// nothing the small ones do not.
func fuzzSeeds(f *testing.F, add func(body, agent, url string)) {
	for _, v := range loadVectors(f).Vectors {
		if len(v.Robots)+len(v.URL) < 4096 {
			add(v.Robots, v.Agent, v.URL)
		}
	}
	add("\xef\xbb\xbfUser-agent: *\r\nDisallow: /a*b$\r\nAllow: /a%2A\rCrawl-delay: 1.5\n", bot, "/a*b")
	add("User-agent: LohiSoftBot/1.0\nDisallow: /%E3%83%84\nAllow: /?u=http://x\n", "lohisoftbot", "https://x/ツ?u=http%3A%2F%2Fx")
	add("user-agent *\ndisallow /\n%%%\n::\n#\n\x00\xff", bot, "//a/b?c#d")
	add("User-agent: *\nDisallow: $\nDisallow: *\nDisallow: **$\nAllow: /%\nAllow: /%4\n", bot, "/%41%")
}

// FuzzParse checks that Parse and Decide never panic, and that what Parse
// reports is consistent.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f, func(body, _, _ string) { f.Add([]byte(body)) })
	f.Fuzz(func(t *testing.T, body []byte) {
		r := robotstxt.Parse(body)
		last := 0
		for _, rec := range r.Records() {
			if rec.Line <= last {
				t.Fatalf("Parse(%q): record %+v after line %d", body, rec, last)
			}
			last = rec.Line
		}
		for _, g := range r.Groups() {
			if len(g.Agents) == 0 {
				t.Fatalf("Parse(%q): group without user-agent: %+v", body, g)
			}
		}
		for _, agent := range []string{bot, "*", "", "x"} {
			r.CrawlDelay(agent)
			for _, url := range []string{"/", "https://example.com/a/b?c", "/robots.txt"} {
				checkDecision(t, r, string(body), agent, url)
			}
		}
	})
}

// FuzzDecide checks Decide against a plain reference matcher built from
// what Parse reports: regular expressions over the canonical patterns, the
// group selection of RFC 9309 2.2.1 and a full scan for the best rule.
func FuzzDecide(f *testing.F) {
	fuzzSeeds(f, func(body, agent, url string) { f.Add(body, agent, url) })
	f.Fuzz(func(t *testing.T, body, agent, url string) {
		checkDecision(t, robotstxt.Parse([]byte(body)), body, agent, url)
	})
}

func checkDecision(t *testing.T, r *robotstxt.Robots, body, agent, url string) {
	t.Helper()
	got := r.Decide(agent, url)
	want := referenceDecide(r, agent, url)
	if got != want {
		t.Fatalf("Decide(%q, %q) = %+v, want %+v (reference)\nrobots.txt: %q", agent, url, got, want, body)
	}
}

func referenceDecide(r *robotstxt.Robots, agent, url string) robotstxt.Decision {
	path := robotstxt.Canonical(robotstxt.PathOf(url))
	strict := robotstxt.CanonicalStrict(robotstxt.PathOf(url))
	if path == "/robots.txt" {
		return robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonRobotsTxt}
	}
	// A group applies through its first user-agent line naming agent, or
	// its first "*" line.
	type applying struct {
		g    robotstxt.Group
		ua   string
		line int
	}
	var ours, star []applying
	for _, g := range r.Groups() {
		named, all := -1, -1
		for k, a := range g.Agents {
			if a == "*" || len(a) > 1 && a[0] == '*' && strings.ContainsRune(" \t\v\f", rune(a[1])) {
				if all < 0 {
					all = k
				}
				continue
			}
			tok := a
			if i := strings.IndexFunc(a, func(c rune) bool {
				return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-')
			}); i >= 0 {
				tok = a[:i]
			}
			if named < 0 && tok != "" && strings.EqualFold(tok, agent) {
				named = k
			}
		}
		if named >= 0 {
			ours = append(ours, applying{g, g.Agents[named], g.AgentLines[named]})
		}
		if all >= 0 {
			star = append(star, applying{g, g.Agents[all], g.AgentLines[all]})
		}
	}
	if len(ours) == 0 {
		ours = star
	}
	var best *robotstxt.Rule
	var from applying
	bestLen := 0
	for _, a := range ours {
		for i := range a.g.Rules {
			ru := &a.g.Rules[i]
			// Allow rules match the strict form, disallow rules the
			// decoded one (also with :/?@ decoded in the query).
			p := path
			if ru.Allow {
				p = strict
			}
			n, ok := referenceMatch(ru.Allow, ru.Pattern, p)
			if !ok && !ru.Allow && looseQuery(ru.Pattern) {
				_, ok = referenceMatch(false, ru.Pattern, decodeQueryDelims(path))
			}
			if !ok {
				continue
			}
			if best == nil || n > bestLen || n == bestLen && ru.Allow && !best.Allow ||
				n == bestLen && ru.Allow == best.Allow && ru.Line < best.Line {
				best, bestLen, from = ru, n, a
			}
		}
	}
	d := robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}
	if best != nil {
		d = robotstxt.Decision{Allowed: best.Allow, Rule: best.String(), Line: best.Line}
	} else if len(ours) > 0 {
		from = ours[0]
	}
	d.Group, d.GroupLine = from.ua, from.line
	return d
}

// looseQuery reports whether a disallow pattern has a raw ":", "/", "?" or
// "@" after its first "?": it then also matches those characters
// percent-encoded in a URL's query.
func looseQuery(pattern string) bool {
	pattern = strings.TrimSuffix(pattern, "$")
	q := strings.Index(pattern, "?")
	return q >= 0 && strings.ContainsAny(pattern[q+1:], ":/?@")
}

// decodeQueryDelims decodes %3A, %2F, %3F and %40 after the first "?" of a
// canonical path.
func decodeQueryDelims(path string) string {
	q := strings.Index(path, "?")
	if q < 0 {
		return path
	}
	r := strings.NewReplacer("%3A", ":", "%2F", "/", "%3F", "?", "%40", "@")
	return path[:q+1] + r.Replace(path[q+1:])
}

// referenceMatch matches a rule value against a canonical path with a
// regular expression and returns the rule's length: its octets in the
// strict canonical form.
func referenceMatch(allow bool, pattern, path string) (length int, ok bool) {
	parts, anchored := robotstxt.CompiledPattern(allow, pattern)
	if parts == nil {
		return 0, false
	}
	expr := "^"
	for i, p := range parts {
		if i > 0 {
			expr += ".*"
		}
		expr += regexp.QuoteMeta(p)
	}
	if anchored {
		expr += "$"
		length++
		pattern = pattern[:len(pattern)-1]
	}
	length += len(robotstxt.CanonicalStrict(pattern))
	return length, regexp.MustCompile("(?s)" + expr).MatchString(path)
}

// FuzzPathOf checks PathOf against a line-by-line port of Google's
// GetPathParamsQuery (robots.cc).
func FuzzPathOf(f *testing.F) {
	for _, c := range loadVectors(f).Checks.URLToPath {
		f.Add(c.URL)
	}
	for _, v := range loadVectors(f).Vectors {
		if len(v.URL) < 4096 {
			f.Add(v.URL)
		}
	}
	f.Add("a#b://c/d")
	f.Add("//a:/b;c?d#e")
	f.Fuzz(func(t *testing.T, url string) {
		if got, want := robotstxt.PathOf(url), googlePathOf(url); got != want {
			t.Fatalf("PathOf(%q) = %q, want %q", url, got, want)
		}
	})
}

func googlePathOf(url string) string {
	npos := len(url) + 1 // std::string::npos: larger than any index
	find := func(s string, from int) int {
		if from > len(url) {
			return npos
		}
		if i := strings.Index(url[from:], s); i >= 0 {
			return from + i
		}
		return npos
	}
	findFirstOf := func(set string, from int) int {
		if from > len(url) {
			return npos
		}
		if i := strings.IndexAny(url[from:], set); i >= 0 {
			return from + i
		}
		return npos
	}
	searchStart := 0
	if len(url) >= 2 && url[0] == '/' && url[1] == '/' {
		searchStart = 2
	}
	earlyPath := findFirstOf("/?;", searchStart)
	protocolEnd := find("://", searchStart)
	if earlyPath < protocolEnd {
		protocolEnd = npos
	}
	if protocolEnd == npos {
		protocolEnd = searchStart
	} else {
		protocolEnd += 3
	}
	pathStart := findFirstOf("/?;", protocolEnd)
	if pathStart != npos {
		hashPos := find("#", searchStart)
		if hashPos < pathStart {
			return "/"
		}
		pathEnd := hashPos
		if hashPos == npos {
			pathEnd = len(url)
		}
		if url[pathStart] != '/' {
			return "/" + url[pathStart:pathEnd]
		}
		return url[pathStart:pathEnd]
	}
	return "/"
}
