// Package robots parses robots.txt files and decides access exactly as
// RFC 9309 says.
//
// STUB: the API below is fixed; the implementation is being written.
package robots

import (
	"strings"
	"time"
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
}

// Robots is a parsed robots.txt. It is immutable and safe for concurrent use.
type Robots struct {
	body []byte
}

// Parse parses the first MaxSize bytes of a robots.txt body. It accepts any
// bytes and never fails.
func Parse(body []byte) *Robots {
	if len(body) > MaxSize {
		body = body[:MaxSize]
	}
	return &Robots{body: body}
}

// Decide says whether agent (a product token such as ProductToken) may fetch
// target, an absolute URL or a path with optional query.
func (r *Robots) Decide(agent, target string) Decision {
	if PathOf(target) == "/robots.txt" {
		return Decision{Allowed: true, Rule: ReasonRobotsTxt}
	}
	return Decision{Allowed: true, Rule: ReasonNoRule}
}

// CrawlDelay returns the Crawl-delay of the group that applies to agent, if
// it sets one (not part of RFC 9309; lohibot honours it).
func (r *Robots) CrawlDelay(agent string) (time.Duration, bool) {
	return 0, false
}

// PathOf reduces a URL to the string rules are matched against: path, params
// and query, fragment dropped; an empty path is "/".
func PathOf(target string) string {
	s := target
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
		if j := strings.IndexAny(s, "/?#"); j >= 0 {
			s = s[j:]
		} else {
			s = ""
		}
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if s == "" || s[0] != '/' {
		s = "/" + s
	}
	return s
}

// AllowAll is the decision for every URL of an origin whose robots.txt is
// unavailable (RFC 9309 2.3.1.3: 4xx other than 401/403).
func AllowAll() Decision { return Decision{Allowed: true, Rule: ReasonUnavailable} }

// DisallowAll is the decision for every URL of an origin whose robots.txt is
// unreachable (RFC 9309 2.3.1.4: 5xx, network errors; lohibot adds 401/403
// and 429).
func DisallowAll() Decision { return Decision{Allowed: false, Rule: ReasonUnreachable} }
