// Package robotstxt parses robots.txt files and decides access exactly as
// RFC 9309 says.
//
// Parse accepts any bytes and never fails: it reads the first MaxSize bytes
// (RFC 9309 2.5), splits lines on CR, LF or CRLF, skips a UTF-8 byte-order
// mark, comments, unknown records and rules that precede the first
// user-agent line, and compiles every allow and disallow pattern once.
// Decide then selects the group for a product token (RFC 9309 2.2.1) and
// applies the most specific matching rule (RFC 9309 2.2.2), without regular
// expressions and without allocating for ordinary URLs.
//
// Where RFC 9309 leaves room, the package follows Google's reference parser,
// whose behaviour webmasters test their files against: a line with a missing
// colon ("disallow /x") is read when it has exactly two words, a key names
// the directive it starts with ("Disallowed"), a few common misspellings of
// the directive names are recognised, and a user-agent line names the
// product token at its start ("User-agent: LohiSoftBot/1.0" names
// LohiSoftBot). It departs from Google where RFC 9309 prescribes otherwise:
// percent-encoding is normalised on both sides (RFC 9309 2.2.2; where the
// RFC's decoded reading and Google's literal one differ, the one that
// allows less applies), lines have no length limit, "/index.html" rules do
// not also match the directory, and /robots.txt is always allowed.
//
// Groups follow RFC 9309's grammar, as Google's parser reads it: only an
// allow or disallow line ends the run of user-agent lines that starts a
// group. Other lines inside that run (Crawl-delay, Sitemap, Host, unknown
// keys, blank lines) do not, so "User-agent: *", "Crawl-delay: 120",
// "User-agent: 008", "Disallow: /" is one group whose rule applies to "*".
//
// Crawl-delay is not in RFC 9309, but lohibot honours it: a Crawl-delay line
// belongs to the group it appears in, and the group's largest delay applies
// to every agent the group names.
package robotstxt

import (
	"strings"
	"time"
	"unsafe"
)

// ProductToken is LohiSoftBot's product token, matched case-insensitively
// against user-agent lines (RFC 9309 2.2.1).
const ProductToken = "LohiSoftBot"

// MaxSize is how much of a robots.txt is parsed (RFC 9309 2.5: at least
// 500 kibibytes).
const MaxSize = 500 * 1024

// Reasons given when no rule decides.
const (
	ReasonNoRule      = "no rule matched"
	ReasonRobotsTxt   = "robots.txt always allowed"
	ReasonUnavailable = "unavailable: allow all"
	ReasonUnreachable = "unreachable: disallow all"
)

// Decision is an access decision and why it was made.
type Decision struct {
	Allowed bool
	// Rule is the deciding rule as written ("Disallow: /private/"), or one of
	// the Reason constants when no rule decided.
	Rule string
	// Line is the 1-based line of Rule in the file, 0 when no rule decided.
	Line int
	// Group is the value, as written, of the user-agent line that selected
	// the group applied: the line naming the agent ("LohiSoftBot"), or "*"
	// when no group names it. It is "" when no group applies, and then so
	// is every rule.
	Group string
	// GroupLine is the 1-based line of that user-agent line, 0 when no
	// group applies.
	GroupLine int
}

// Robots is a parsed robots.txt. It is immutable and safe for concurrent use.
// Only Parse makes a usable Robots.
type Robots struct {
	records  []Record
	groups   []*group
	agents   []agentGroups          // lowercase product token → groups naming it, in file order
	byAgent  map[string]agentGroups // the same, indexed, when there are many tokens
	star     []groupRef             // groups with "User-agent: *", in file order
	loose    bool                   // some rule is loose (see rule.loose)
	sitemaps []string
}

// Decide says whether agent (a product token such as ProductToken) may fetch
// target, an absolute URL or a path with optional query (see PathOf).
//
// The groups whose user-agent lines name agent (compared case-insensitively)
// apply, merged; when none does, the "*" groups apply (RFC 9309 2.2.1). Of
// the rules that match the percent-encoding-normalised path, the one with
// the most octets decides; between an allow and a disallow rule of equal
// length, allow wins (RFC 9309 2.2.2). /robots.txt is always allowed. The
// decision names the group applied: the one of the deciding rule, else the
// first that applies. Decide does not allocate unless the path is longer
// than a few hundred bytes and needs normalising.
func (r *Robots) Decide(agent, target string) Decision {
	var buf [256]byte
	strict, p := matchPaths(buf[:0], target)
	if p == "/robots.txt" {
		return Decision{Allowed: true, Rule: ReasonRobotsTxt}
	}
	refs := r.lookup(agent)
	var best *rule
	from := 0 // index in refs of best's group
	if r.loose || len(strict) != len(p) || unsafe.StringData(strict) != unsafe.StringData(p) {
		best, from = bestRule(refs, strict, p)
	} else {
		// The common case: one form of the path, no rule reading its query
		// decoded.
		for k := range refs {
			g := refs[k].g
			for i := range g.rules {
				ru := &g.rules[i]
				if best != nil && !ru.beats(best) {
					break // sorted: nothing further in this group can win
				}
				if ru.match(p) {
					best, from = ru, k
					break
				}
			}
		}
	}
	if best != nil {
		ref := &refs[from]
		return Decision{Allowed: best.allow, Rule: best.text, Line: int(best.line), Group: ref.name, GroupLine: ref.line}
	}
	if len(refs) == 0 {
		return Decision{Allowed: true, Rule: ReasonNoRule}
	}
	return Decision{Allowed: true, Rule: ReasonNoRule, Group: refs[0].name, GroupLine: refs[0].line}
}

// bestRule is Decide's search for the deciding rule of refs, the rule that
// takes precedence among those that match, and the index in refs of its
// group: allow rules are matched against the strict form of the path,
// disallow rules against the decoded form, and loose disallow rules also
// against the decoded form with its query's reserved escapes decoded.
func bestRule(refs []groupRef, strict, decoded string) (best *rule, from int) {
	for k := range refs {
		g := refs[k].g
		for i := range g.rules {
			ru := &g.rules[i]
			if best != nil && !ru.beats(best) {
				break // sorted: nothing further in this group can win
			}
			q := decoded
			if ru.allow {
				q = strict
			}
			if ru.match(q) || ru.loose && ru.matchDecodedQuery(decoded) {
				best, from = ru, k
				break
			}
		}
	}
	return best, from
}

// CrawlDelay returns the Crawl-delay of the group that applies to agent, if
// it sets one (not part of RFC 9309; lohibot honours it). The group is chosen
// as Decide chooses it; when several merged groups set a delay, the largest
// applies. Values are seconds, fractions allowed; callers cap the result.
func (r *Robots) CrawlDelay(agent string) (time.Duration, bool) {
	var d time.Duration
	var ok bool
	for _, ref := range r.lookup(agent) {
		if g := ref.g; g.delaySet && (!ok || g.delay > d) {
			d, ok = g.delay, true
		}
	}
	return d, ok
}

// Sitemaps returns the values of the file's Sitemap lines, in order. They
// are not part of any group (RFC 9309 2.2.4).
func (r *Robots) Sitemaps() []string {
	return append([]string(nil), r.sitemaps...)
}

// Groups returns the file's groups in order, as written.
func (r *Robots) Groups() []Group {
	out := make([]Group, 0, len(r.groups))
	for _, g := range r.groups {
		gr := Group{Line: r.records[g.rec0].Line, CrawlDelay: g.delay, CrawlDelaySet: g.delaySet}
		for _, rec := range r.records[g.rec0:g.rec1] {
			switch rec.Kind {
			case KindUserAgent:
				gr.Agents = append(gr.Agents, rec.Value)
				gr.AgentLines = append(gr.AgentLines, rec.Line)
			case KindAllow, KindDisallow:
				gr.Rules = append(gr.Rules, Rule{Allow: rec.Kind == KindAllow, Pattern: rec.Value, Line: rec.Line})
			}
		}
		out = append(out, gr)
	}
	return out
}

// Records returns every key-value line of the file in order, recognised or
// not, as the parser read it.
func (r *Robots) Records() []Record {
	return append([]Record(nil), r.records...)
}

// agentGroups are the groups naming one product token.
type agentGroups struct {
	token  string // lowercase
	groups []groupRef
}

// groupRef is a group that applies to an agent, and the user-agent line
// that makes it apply: its value as written and its line.
type groupRef struct {
	g    *group
	name string
	line int
}

// manyAgents is the number of distinct tokens above which lookup uses a
// map rather than a scan.
const manyAgents = 8

// lookup returns the groups that apply to agent: those naming it, else the
// "*" groups. It does not allocate for agents of up to 64 bytes.
func (r *Robots) lookup(agent string) []groupRef {
	if r.byAgent == nil {
		for i := range r.agents {
			if equalFoldLower(agent, r.agents[i].token) {
				return r.agents[i].groups
			}
		}
		return r.star
	}
	key := agent
	var buf [64]byte
	if hasUpper(agent) {
		if len(agent) > len(buf) {
			key = strings.ToLower(agent)
		} else {
			b := buf[:len(agent)]
			for i := 0; i < len(agent); i++ {
				b[i] = lower(agent[i])
			}
			if e, ok := r.byAgent[string(b)]; ok { // no allocation for map index
				return e.groups
			}
			return r.star
		}
	}
	if e, ok := r.byAgent[key]; ok {
		return e.groups
	}
	return r.star
}

// equalFoldLower reports whether s equals the lowercase ASCII token t,
// ignoring ASCII case.
func equalFoldLower(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != t[i] {
			return false
		}
	}
	return true
}

// Group is a group of records: one or more user-agent lines and the rules
// that follow them (RFC 9309 2.1). Lines other than rules between the
// user-agent lines (Crawl-delay, Sitemap, unknown keys) do not end them.
type Group struct {
	// Line is the 1-based line of the group's first user-agent line.
	Line int
	// Agents are the values of the user-agent lines, as written, and
	// AgentLines their 1-based lines.
	Agents     []string
	AgentLines []int
	// Rules are the allow and disallow lines of the group, in order.
	Rules []Rule
	// CrawlDelay is the group's Crawl-delay; it is only meaningful when
	// CrawlDelaySet is true.
	CrawlDelay    time.Duration
	CrawlDelaySet bool
}

// Rule is one allow or disallow line of a group.
type Rule struct {
	Allow   bool
	Pattern string // the value as written, comment and blanks removed
	Line    int    // 1-based
}

// String returns the rule as a Decision names it: "Disallow: /private/".
func (r Rule) String() string {
	if r.Allow {
		return "Allow: " + r.Pattern
	}
	return "Disallow: " + r.Pattern
}

// Kind says what a record is.
type Kind uint8

// The kinds of record. Misspellings that Google's parser accepts count as
// the directive they misspell.
const (
	KindUnknown    Kind = iota // any other key: ignored (RFC 9309 2.2.4)
	KindUserAgent              // user-agent
	KindAllow                  // allow
	KindDisallow               // disallow
	KindSitemap                // sitemap
	KindCrawlDelay             // crawl-delay (not in RFC 9309)
)

// String returns the canonical directive name, or "unknown".
func (k Kind) String() string {
	switch k {
	case KindUserAgent:
		return "User-agent"
	case KindAllow:
		return "Allow"
	case KindDisallow:
		return "Disallow"
	case KindSitemap:
		return "Sitemap"
	case KindCrawlDelay:
		return "Crawl-delay"
	}
	return "unknown"
}

// Record is one key-value line of a robots.txt.
type Record struct {
	Line  int    // 1-based
	Kind  Kind   // what the key names
	Key   string // as written
	Value string // as written, comment and surrounding blanks removed
}

// ValidProductToken reports whether s is a valid product token: non-empty,
// only letters, "_" and "-" (RFC 9309 2.2.1).
func ValidProductToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

// AllowAll is the decision for every URL of an origin whose robots.txt is
// unavailable (RFC 9309 2.3.1.3: 4xx other than 401/403).
func AllowAll() Decision { return Decision{Allowed: true, Rule: ReasonUnavailable} }

// DisallowAll is the decision for every URL of an origin whose robots.txt is
// unreachable (RFC 9309 2.3.1.4: 5xx, network errors; lohibot adds 401/403
// and 429).
func DisallowAll() Decision { return Decision{Allowed: false, Rule: ReasonUnreachable} }

// matchPaths returns the strings rules are matched against: PathOf(target)
// in the strict and in the decoded canonical form (see appendCanonical).
// When the path needs rewriting they are built in buf; the results then
// alias buf's memory, which the caller must not modify while they are in
// use.
func matchPaths(buf []byte, target string) (strict, decoded string) {
	p, slash := pathOf(target)
	if !slash && isCanonical(p) {
		return p, p
	}
	if slash {
		buf = append(buf, '/')
	}
	buf = appendCanonical(buf, p, false)
	strict = unsafe.String(unsafe.SliceData(buf), len(buf))
	if !hasDecodable(strict) {
		return strict, strict
	}
	dec := appendCanonical(buf[len(buf):], strict, true)
	return strict, unsafe.String(unsafe.SliceData(dec), len(dec))
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
