package robotstxt_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/robotstxt"
)

const bot = robotstxt.ProductToken

// decideTests are decisions with their explanation: the rule as Decision
// names it and its line.
var decideTests = []struct {
	name   string
	robots string
	agent  string
	url    string
	want   robotstxt.Decision
}{
	{"no rule", "User-agent: *\nDisallow: /private/\n", bot, "https://example.com/public",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"empty file", "", bot, "https://example.com/",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"disallow with line", "# ours\nUser-agent: *\n\nDisallow: /private/\n", bot, "https://example.com/private/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /private/", Line: 4}},
	{"canonical directive name", "user-agent: *\ndisallow:/private/ # no\n", bot, "/private/",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /private/", Line: 2}},
	{"allow wins a tie", "User-agent: *\nDisallow: /a\nAllow: /a\n", bot, "/a",
		robotstxt.Decision{Allowed: true, Rule: "Allow: /a", Line: 3}},
	{"longest wins", "User-agent: *\nAllow: /a\nDisallow: /a/b\n", bot, "/a/b/c",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a/b", Line: 3}},
	{"earlier of two equal rules", "User-agent: *\nDisallow: /a\nDisallow: /a\n", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a", Line: 2}},
	{"robots.txt always allowed", "User-agent: *\nDisallow: /\n", bot, "https://example.com/robots.txt",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonRobotsTxt}},
	{"robots.txt encoded", "User-agent: *\nDisallow: /\n", bot, "https://example.com/robots%2Etxt",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonRobotsTxt}},
	{"robots.txt with query is a URL like others", "User-agent: *\nDisallow: /\n", bot, "https://example.com/robots.txt?x",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 2}},

	// Group selection (RFC 9309 2.2.1).
	{"our group over star", "User-agent: *\nDisallow: /\n\nUser-agent: LohiSoftBot\nDisallow: /x\n", bot, "/y",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"token case-insensitive", "User-agent: LOHISOFTBOT\nDisallow: /\n", bot, "/y",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 2}},
	{"agent case-insensitive", "User-agent: LohiSoftBot\nDisallow: /\n", "lohisoftbot", "/y",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 2}},
	{"token with version", "User-agent: LohiSoftBot/1.0 (+https://lohisoft.com/bot)\nDisallow: /\n", bot, "/y",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 2}},
	{"longer token is not ours", "User-agent: LohiSoftBotX\nDisallow: /\n", bot, "/y",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"shorter token is not ours", "User-agent: Lohi\nDisallow: /\n", bot, "/y",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"groups merged", "User-agent: LohiSoftBot\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\nUser-agent: lohisoftbot\nDisallow: /b\n", bot, "/b",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /b", Line: 8}},
	{"merged groups: longest across groups", "User-agent: LohiSoftBot\nDisallow: /a\n\nUser-agent: LohiSoftBot\nAllow: /a/b\n", bot, "/a/b",
		robotstxt.Decision{Allowed: true, Rule: "Allow: /a/b", Line: 5}},
	{"star groups merged", "User-agent: *\nDisallow: /a\n\nUser-agent: x\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n", bot, "/b",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /b", Line: 8}},
	{"shared group", "User-agent: other\nUser-agent: LohiSoftBot\nDisallow: /x\n", bot, "/x",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /x", Line: 3}},
	{"rules before user-agent ignored", "Disallow: /\nUser-agent: *\nDisallow: /x\n", bot, "/y",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"star with comment", "User-agent: * # everyone\nDisallow: /\n", bot, "/y",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 2}},
	{"star prefix is no star", "User-agent: *bot\nDisallow: /\n", bot, "/y",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"empty disallow ends the user-agent lines", "User-agent: a\nDisallow:\nUser-agent: LohiSoftBot\nDisallow: /x\n", "a", "/x",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},

	// Line syntax.
	{"CR endings", "User-agent: *\rDisallow: /a\r", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a", Line: 2}},
	{"CRLF endings", "User-agent: *\r\n\r\nDisallow: /a\r\n", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a", Line: 3}},
	{"byte-order mark", "\xef\xbb\xbfUser-agent: *\nDisallow: /a\n", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a", Line: 2}},
	{"blanks", " \t User-agent \t :  * \t\n\tDisallow :\t/a \t\n", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a", Line: 2}},
	{"missing colon", "User-agent *\nDisallow /a\n", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a", Line: 2}},
	{"missing colon, three words", "User-agent: *\nDisallow /a /b\n", bot, "/a",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"misspelt disallow", "User-agent: *\nDisalow: /a\n", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a", Line: 2}},
	{"unknown directive", "User-agent: *\nNoindex: /a\n", bot, "/a",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"NUL bytes", "User-agent: *\nDisallow: /a\x00b\n", bot, "/a%00b",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a\x00b", Line: 2}},

	// Patterns (RFC 9309 2.2.3).
	{"wildcard", "User-agent: *\nDisallow: /*.pdf\n", bot, "/docs/a.pdf?x=1",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /*.pdf", Line: 2}},
	{"wildcards in a row", "User-agent: *\nDisallow: /a**b\n", bot, "/ab",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a**b", Line: 2}},
	{"anchor", "User-agent: *\nDisallow: /*.pdf$\n", bot, "/a.pdf?x=1",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"anchor after wildcard", "User-agent: *\nDisallow: /a*$\n", bot, "/abc",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a*$", Line: 2}},
	{"anchored parts overlap", "User-agent: *\nDisallow: /*ab*bc$\n", bot, "/abc",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"dollar inside is literal", "User-agent: *\nDisallow: /a$b\n", bot, "/a$bc",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a$b", Line: 2}},
	{"dollar alone", "User-agent: *\nDisallow: $\n", bot, "/",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"pattern without slash matches nothing", "User-agent: *\nDisallow: private\n", bot, "/private",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"case-sensitive", "User-agent: *\nDisallow: /Private\n", bot, "/private",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},

	// Percent-encoding (RFC 9309 2.2.2).
	{"lower-case hex", "User-agent: *\nDisallow: /a%2fb\n", bot, "/a%2Fb",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a%2fb", Line: 2}},
	{"encoded slash is no slash", "User-agent: *\nDisallow: /a/b\n", bot, "/a%2Fb",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"encoded query colon", "User-agent: *\nDisallow: /r?u=http://x\n", bot, "/r?u=http%3a%2F%2Fx",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /r?u=http://x", Line: 2}},
	{"encoded query colon: allow rule reads it strictly", "User-agent: *\nDisallow: /r\nAllow: /r?u=http://x\n", bot, "/r?u=http%3a%2F%2Fx",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /r", Line: 2}},
	{"raw query colon", "User-agent: *\nDisallow: /r?u=http://x\n", bot, "/r?u=http://x/y",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /r?u=http://x", Line: 2}},
	{"encoded question mark in a rule is no question mark", "User-agent: *\nDisallow: /?%3Fcontrollername=search\n", bot, "/??controllername=search",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"encoded question mark matches itself", "User-agent: *\nDisallow: /?%3fcontrollername=search\n", bot, "/?%3Fcontrollername=search",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /?%3fcontrollername=search", Line: 2}},
	{"encoded slash in a query rule is no slash", "User-agent: *\nDisallow: /login?returnUrl=%2Fauthentication%2F\n", bot,
		"/login?returnUrl=/authentication/x", robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"encoded slash in a query matches itself, any hex case", "User-agent: *\nDisallow: /login?returnUrl=%2Fauthentication%2F\n", bot,
		"/login?returnUrl=%2fauthentication%2fx", robotstxt.Decision{Allowed: false, Rule: "Disallow: /login?returnUrl=%2Fauthentication%2F", Line: 2}},
	{"hex case does not matter", "User-agent: *\nDisallow: /a%2bb\n", bot, "/a%2Bb",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a%2bb", Line: 2}},
	{"encoded plus is no plus", "User-agent: *\nDisallow: /a+b\n", bot, "/a%2Bb",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"encoded path colon stays", "User-agent: *\nDisallow: /a:b\n", bot, "/a%3Ab",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"encoded ampersand stays", "User-agent: *\nDisallow: /r?a=1&b\n", bot, "/r?a=1%26b",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"space", "User-agent: *\nDisallow: /a b\n", bot, "/a%20b",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a b", Line: 2}},
	{"lone percent", "User-agent: *\nDisallow: /100%\n", bot, "/100%25",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /100%", Line: 2}},
	{"encoded star is literal", "User-agent: *\nDisallow: /a%2Ab\n", bot, "/a*b",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /a%2Ab", Line: 2}},
	{"encoded star matches no other", "User-agent: *\nDisallow: /a%2Ab\n", bot, "/axb",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"encoded unreserved in an allow rule matches only itself", "User-agent: *\nAllow: /%7Ea\nDisallow: /~a\n", bot, "/~a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /~a", Line: 3}},
	{"encoded unreserved in an allow rule matches itself", "User-agent: *\nAllow: /%7ea\nDisallow: /~a\n", bot, "/%7Ea",
		robotstxt.Decision{Allowed: true, Rule: "Allow: /%7ea", Line: 2}},
	{"encoded unreserved in a disallow rule matches decoded", "User-agent: *\nDisallow: /%7Ea\n", bot, "/~a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /%7Ea", Line: 2}},
	{"length counts strict octets", "User-agent: *\nDisallow: /%7Ea\nAllow: /~a/\n", bot, "/~a/",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /%7Ea", Line: 2}},
	{"long path to normalise", "User-agent: *\nDisallow: /ü" + strings.Repeat("x", 400) + "\n", bot, "/ü" + strings.Repeat("x", 500),
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /ü" + strings.Repeat("x", 400), Line: 2}},
	{"path starting with query", "User-agent: *\nDisallow: /?a\n", bot, "https://example.com?a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /?a", Line: 2}},
}

// ruleOf is d without the group it names, for tests of the rule alone.
func ruleOf(d robotstxt.Decision) robotstxt.Decision {
	return robotstxt.Decision{Allowed: d.Allowed, Rule: d.Rule, Line: d.Line}
}

func TestDecide(t *testing.T) {
	for _, tt := range decideTests {
		t.Run(tt.name, func(t *testing.T) {
			got := ruleOf(robotstxt.Parse([]byte(tt.robots)).Decide(tt.agent, tt.url))
			if got != tt.want {
				t.Errorf("Decide(%q, %q) = %+v, want %+v\nrobots.txt:\n%s", tt.agent, tt.url, got, tt.want, tt.robots)
			}
		})
	}
}

func TestAllowAllDisallowAll(t *testing.T) {
	if got := robotstxt.AllowAll(); !got.Allowed || got.Rule != robotstxt.ReasonUnavailable || got.Line != 0 {
		t.Errorf("AllowAll() = %+v, want allowed, %q", got, robotstxt.ReasonUnavailable)
	}
	if got := robotstxt.DisallowAll(); got.Allowed || got.Rule != robotstxt.ReasonUnreachable || got.Line != 0 {
		t.Errorf("DisallowAll() = %+v, want disallowed, %q", got, robotstxt.ReasonUnreachable)
	}
}

func TestPathOf(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://example.com", "/"},
		{"https://example.com:8443/a/b?c=d#e", "/a/b?c=d"},
		{"HTTPS://EXAMPLE.COM/A", "/A"},
		{"https://example.com?q", "/?q"},
		{"https://example.com#/x", "/"},
		{"/a?b", "/a?b"},
		{"/", "/"},
		{"/robots.txt", "/robots.txt"},
		{"/a/b?c=http://d/e", "/a/b?c=http://d/e"},
		{"https://user@example.com/a", "/a"},
	}
	for _, tt := range tests {
		if got := robotstxt.PathOf(tt.url); got != tt.want {
			t.Errorf("PathOf(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		name   string
		robots string
		agent  string
		want   time.Duration
		wantOK bool
	}{
		{"none", "User-agent: *\nDisallow: /x\n", bot, 0, false},
		{"star", "User-agent: *\nCrawl-delay: 10\n", bot, 10 * time.Second, true},
		{"ours over star", "User-agent: *\nCrawl-delay: 10\nDisallow: /a\n\nUser-agent: LohiSoftBot\nCrawl-delay: 2\n", bot, 2 * time.Second, true},
		{"our group without delay", "User-agent: *\nCrawl-delay: 10\nDisallow:\n\nUser-agent: LohiSoftBot\nDisallow: /x\n", bot, 0, false},
		// A Crawl-delay does not end the user-agent lines: the agents named
		// around it share one group, and its largest delay.
		{"joined group: delay for every agent", "User-agent: *\nCrawl-delay: 120\n\nUser-agent: 008\nDisallow: /\n", bot, 120 * time.Second, true},
		{"joined group: ours joined to star", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: LohiSoftBot\nDisallow: /x\n", bot, 10 * time.Second, true},
		{"joined group: largest delay", "User-agent: Slurp\nCrawl-delay: 2\nUser-agent: LohiSoftBot\nCrawl-delay: 5\nUser-agent: *\nDisallow: /cgi-bin/\n", "slurp", 5 * time.Second, true},
		{"joined group: named after the delay", "User-agent: Slurp\nCrawl-delay: 2\nUser-agent: LohiSoftBot\nDisallow: /x\n", bot, 2 * time.Second, true},
		{"fraction", "User-agent: lohisoftbot\ncrawl-delay: 0.5\n", bot, 500 * time.Millisecond, true},
		{"leading dot", "User-agent: *\nCrawl-delay: .25\n", bot, 250 * time.Millisecond, true},
		{"zero", "User-agent: *\nCrawl-delay: 0\n", bot, 0, true},
		{"merged groups: largest", "User-agent: LohiSoftBot\nCrawl-delay: 3\nDisallow: /a\n\nUser-agent: LohiSoftBot\nCrawl-delay: 7\n", bot, 7 * time.Second, true},
		{"after rules", "User-agent: *\nDisallow: /a\nCrawl-delay: 4\n", bot, 4 * time.Second, true},
		{"huge", "User-agent: *\nCrawl-delay: 99999999999999999999999999\n", bot, 365 * 24 * time.Hour, true},
		{"negative", "User-agent: *\nCrawl-delay: -1\n", bot, 0, false},
		{"unit", "User-agent: *\nCrawl-delay: 5s\n", bot, 0, false},
		{"not a number", "User-agent: *\nCrawl-delay: Inf\n", bot, 0, false},
		{"two dots", "User-agent: *\nCrawl-delay: 1.2.3\n", bot, 0, false},
		{"before any group", "Crawl-delay: 5\nUser-agent: *\nDisallow: /a\n", bot, 0, false},
		{"other agent's", "User-agent: other\nCrawl-delay: 5\n", bot, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := robotstxt.Parse([]byte(tt.robots)).CrawlDelay(tt.agent)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("CrawlDelay(%q) = %v, %v, want %v, %v", tt.agent, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseMaxSize(t *testing.T) {
	head := "User-agent: *\nDisallow: /\n"
	// fill returns head, a comment line and tail, MaxSize bytes in all.
	fill := func(tail string) string {
		return head + "#" + strings.Repeat("x", robotstxt.MaxSize-len(head)-len(tail)-2) + "\n" + tail
	}
	tests := []struct {
		name string
		body string
		url  string
		want robotstxt.Decision
	}{
		{"rule ending at the limit is read", fill("Allow: /a\n") + "Allow: /b\n", "/a",
			robotstxt.Decision{Allowed: true, Rule: "Allow: /a", Line: 4}},
		{"rule beyond the limit is not read", fill("Allow: /a\n") + "Allow: /b\n", "/b",
			robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 2}},
		{"line break just after the limit", fill("Allow: /a") + "\r\n", "/a",
			robotstxt.Decision{Allowed: true, Rule: "Allow: /a", Line: 4}},
		{"rule cut by the limit is dropped", fill("Allow: /a") + "bc\n", "/a",
			robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 2}},
		{"one long line", "Disallow: /" + strings.Repeat("x", robotstxt.MaxSize), "/x",
			robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ruleOf(robotstxt.Parse([]byte(tt.body)).Decide(bot, tt.url))
			if got != tt.want {
				t.Errorf("Decide(%q) = %+v, want %+v", tt.url, got, tt.want)
			}
		})
	}
}

func TestGroupsSitemapsRecords(t *testing.T) {
	body := "Sitemap: https://example.com/a.xml\n" +
		"Disallow: /early\n" +
		"User-agent: a\n" +
		"Foo: bar\n" +
		"user-agent: LohiSoftBot/1.0\n" +
		"Crawl-delay: 1.5\n" +
		"Disallow: /x # comment\n" +
		"Allow:\n" +
		"User-agent: *\n" +
		"Disallow: /\n" +
		"sitemap: https://example.com/b.xml\n"
	r := robotstxt.Parse([]byte(body))

	wantGroups := []robotstxt.Group{
		{Line: 3, Agents: []string{"a", "LohiSoftBot/1.0"}, AgentLines: []int{3, 5}, CrawlDelay: 1500 * time.Millisecond, CrawlDelaySet: true,
			Rules: []robotstxt.Rule{{Pattern: "/x", Line: 7}, {Allow: true, Pattern: "", Line: 8}}},
		{Line: 9, Agents: []string{"*"}, AgentLines: []int{9}, Rules: []robotstxt.Rule{{Pattern: "/", Line: 10}}},
	}
	if diff := cmp.Diff(wantGroups, r.Groups()); diff != "" {
		t.Errorf("Groups() mismatch (-want +got):\n%s", diff)
	}
	if got, want := r.Sitemaps(), []string{"https://example.com/a.xml", "https://example.com/b.xml"}; !cmp.Equal(got, want) {
		t.Errorf("Sitemaps() = %q, want %q", got, want)
	}
	wantRecords := []robotstxt.Record{
		{Line: 1, Kind: robotstxt.KindSitemap, Key: "Sitemap", Value: "https://example.com/a.xml"},
		{Line: 2, Kind: robotstxt.KindDisallow, Key: "Disallow", Value: "/early"},
		{Line: 3, Kind: robotstxt.KindUserAgent, Key: "User-agent", Value: "a"},
		{Line: 4, Kind: robotstxt.KindUnknown, Key: "Foo", Value: "bar"},
		{Line: 5, Kind: robotstxt.KindUserAgent, Key: "user-agent", Value: "LohiSoftBot/1.0"},
		{Line: 6, Kind: robotstxt.KindCrawlDelay, Key: "Crawl-delay", Value: "1.5"},
		{Line: 7, Kind: robotstxt.KindDisallow, Key: "Disallow", Value: "/x"},
		{Line: 8, Kind: robotstxt.KindAllow, Key: "Allow", Value: ""},
		{Line: 9, Kind: robotstxt.KindUserAgent, Key: "User-agent", Value: "*"},
		{Line: 10, Kind: robotstxt.KindDisallow, Key: "Disallow", Value: "/"},
		{Line: 11, Kind: robotstxt.KindSitemap, Key: "sitemap", Value: "https://example.com/b.xml"},
	}
	if diff := cmp.Diff(wantRecords, r.Records()); diff != "" {
		t.Errorf("Records() mismatch (-want +got):\n%s", diff)
	}
	if got := (robotstxt.Rule{Pattern: "/x"}).String(); got != "Disallow: /x" {
		t.Errorf("Rule.String() = %q, want %q", got, "Disallow: /x")
	}
	if got := robotstxt.KindCrawlDelay.String(); got != "Crawl-delay" {
		t.Errorf("KindCrawlDelay.String() = %q, want %q", got, "Crawl-delay")
	}
}

// TestParseCopies checks that a Robots does not depend on the caller's
// buffer after Parse returns.
func TestParseCopies(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /a\n")
	r := robotstxt.Parse(body)
	copy(body, strings.Repeat("#", len(body)))
	if got := r.Decide(bot, "/a"); got.Allowed || got.Rule != "Disallow: /a" {
		t.Errorf("Decide(%q) after reuse of the body = %+v, want Disallow: /a", "/a", got)
	}
}

func TestDecideDoesNotAllocate(t *testing.T) {
	r := robotstxt.Parse([]byte("User-agent: *\nDisallow: /*.pdf$\nAllow: /a/\nDisallow: /\n\nUser-agent: LohiSoftBot\nDisallow: /private/\n"))
	for _, tc := range []struct{ agent, url string }{
		{bot, "https://example.com/private/x?y=1"},
		{"lohisoftbot", "https://example.com/public"},
		{"OtherBot", "https://example.com/a/b.pdf"},
		{bot, "https://example.com/%7Eanna/caf%C3%A9?q=%2F"},
		{bot, "https://example.com?q"},
	} {
		if n := testing.AllocsPerRun(100, func() { r.Decide(tc.agent, tc.url) }); n != 0 {
			t.Errorf("Decide(%q, %q) makes %v allocations, want 0", tc.agent, tc.url, n)
		}
	}
}

// TestDecideManyAgents covers files naming more tokens than a scan suits.
func TestDecideManyAgents(t *testing.T) {
	var sb strings.Builder
	for i := range 20 {
		fmt.Fprintf(&sb, "User-agent: Bot-%c\nDisallow: /%c\n\n", 'a'+i, 'a'+i)
	}
	long := strings.Repeat("Long", 20)
	sb.WriteString("User-agent: " + long + "\nDisallow: /long\n\nUser-agent: *\nDisallow: /star\n")
	r := robotstxt.Parse([]byte(sb.String()))
	tests := []struct {
		agent, url string
		want       robotstxt.Decision
	}{
		{"Bot-c", "/c", robotstxt.Decision{Allowed: false, Rule: "Disallow: /c", Line: 8}},
		{"bot-c", "/c", robotstxt.Decision{Allowed: false, Rule: "Disallow: /c", Line: 8}},
		{"BOT-T", "/t", robotstxt.Decision{Allowed: false, Rule: "Disallow: /t", Line: 59}},
		{"Bot-c", "/star", robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
		{"Bot-z", "/star", robotstxt.Decision{Allowed: false, Rule: "Disallow: /star", Line: 65}},
		{strings.ToUpper(long), "/long", robotstxt.Decision{Allowed: false, Rule: "Disallow: /long", Line: 62}},
		{strings.ToLower(long), "/long", robotstxt.Decision{Allowed: false, Rule: "Disallow: /long", Line: 62}},
		{strings.ToUpper(long) + "X", "/star", robotstxt.Decision{Allowed: false, Rule: "Disallow: /star", Line: 65}},
	}
	for _, tt := range tests {
		if got := ruleOf(r.Decide(tt.agent, tt.url)); got != tt.want {
			t.Errorf("Decide(%q, %q) = %+v, want %+v", tt.agent, tt.url, got, tt.want)
		}
	}
}

// groupingTests are files whose user-agent lines are separated by lines
// that are not rules: only an allow or disallow line ends the user-agent
// lines of a group (RFC 9309 2.1), as Google's parser reads them.
var groupingTests = []struct {
	name   string
	robots string
	agent  string
	url    string
	want   robotstxt.Decision
}{
	{"crawl-delay between star and a named agent", "User-Agent: *\nCrawl-delay: 120\n\nUser-agent: 008\nDisallow: /\n", bot, "/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /", Line: 5, Group: "*", GroupLine: 1}},
	{"crawl-delays between three agents: first", "User-agent: Slurp\nCrawl-delay: 2\n\nUser-agent: bingbot\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /cgi-bin/\nDisallow: /tmp/\n",
		"slurp", "/tmp/x", robotstxt.Decision{Allowed: false, Rule: "Disallow: /tmp/", Line: 9, Group: "Slurp", GroupLine: 1}},
	{"crawl-delays between three agents: second", "User-agent: Slurp\nCrawl-delay: 2\n\nUser-agent: bingbot\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /cgi-bin/\nDisallow: /tmp/\n",
		"BingBot", "/cgi-bin/a", robotstxt.Decision{Allowed: false, Rule: "Disallow: /cgi-bin/", Line: 8, Group: "bingbot", GroupLine: 4}},
	{"crawl-delays between three agents: star", "User-agent: Slurp\nCrawl-delay: 2\n\nUser-agent: bingbot\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /cgi-bin/\nDisallow: /tmp/\n",
		bot, "/cgi-bin/a", robotstxt.Decision{Allowed: false, Rule: "Disallow: /cgi-bin/", Line: 8, Group: "*", GroupLine: 7}},
	{"sitemap inside the user-agent lines", "User-agent: LohiSoftBot\nSitemap: https://example.com/s.xml\nUser-agent: other\nDisallow: /private/\n", bot, "/private/a",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /private/", Line: 4, Group: "LohiSoftBot", GroupLine: 1}},
	{"host, clean-param, request-rate and unknown keys", "User-agent: Yandex\nHost: example.com\nClean-param: ref /\nRequest-rate: 1/5\nNoindex: /x\n\nUser-agent: LohiSoftBot\nDisallow: /search\n",
		"yandex", "/search?q=1", robotstxt.Decision{Allowed: false, Rule: "Disallow: /search", Line: 8, Group: "Yandex", GroupLine: 1}},
	{"comment and blank lines", "User-agent: a\n# the next one too\n\n\nUser-agent: LohiSoftBot\nDisallow: /x\n", "a", "/x",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /x", Line: 6, Group: "a", GroupLine: 1}},
	{"an empty disallow ends the user-agent lines", "User-agent: *\nDisallow:\nUser-agent: LohiSoftBot\nDisallow: /x\n", "other", "/x",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule, Group: "*", GroupLine: 1}},
	{"rules after a crawl-delay stay in the group", "User-agent: LohiSoftBot\nDisallow: /a\nCrawl-delay: 3\nDisallow: /b\nUser-agent: other\nDisallow: /c\n", bot, "/b",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /b", Line: 4, Group: "LohiSoftBot", GroupLine: 1}},
	{"a specific group replaces star: says which", "User-agent: *\nDisallow: /private/\n\nUser-agent: LohiSoftBot/1.0\nDisallow: /cart\n", bot, "/private/x",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule, Group: "LohiSoftBot/1.0", GroupLine: 4}},
	{"merged groups: the deciding rule's", "User-agent: LohiSoftBot\nDisallow: /a\n\nUser-agent: lohisoftbot\nDisallow: /b\n", bot, "/b",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /b", Line: 5, Group: "lohisoftbot", GroupLine: 4}},
	{"no group applies", "User-agent: other\nDisallow: /\n", bot, "/a",
		robotstxt.Decision{Allowed: true, Rule: robotstxt.ReasonNoRule}},
	{"key that starts with a directive", "User-agents: *\nDisallowed: /old/\n", bot, "/old/x",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /old/", Line: 2, Group: "*", GroupLine: 1}},
	{"star followed by a comment word", "User-agent: * everyone\nDisallow: /x\n", bot, "/x",
		robotstxt.Decision{Allowed: false, Rule: "Disallow: /x", Line: 2, Group: "* everyone", GroupLine: 1}},
}

func TestGrouping(t *testing.T) {
	for _, tt := range groupingTests {
		t.Run(tt.name, func(t *testing.T) {
			got := robotstxt.Parse([]byte(tt.robots)).Decide(tt.agent, tt.url)
			if got != tt.want {
				t.Errorf("Decide(%q, %q) = %+v, want %+v\nrobots.txt:\n%s", tt.agent, tt.url, got, tt.want, tt.robots)
			}
		})
	}
}
