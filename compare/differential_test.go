package compare_test

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jimsmart/grobotstxt"

	"github.com/lohisoft/lohibot/robotstxt"
)

// The differential test decides every probe URL of every file of the corpus
// with lohibot's matcher and with Google's (github.com/jimsmart/grobotstxt,
// a function-for-function Go port of google/robotstxt), for LohiSoftBot, for
// every product token the file names and for one it does not name.
//
// Every disagreement must be explained by one of the categories of
// allowedDisagreements, where RFC 9309 is explicit and Google's library
// reads otherwise. A disagreement is put in a category only when removing
// that category's cause from both the file and the URL (see neutralizers)
// makes the two matchers agree; any other disagreement fails the test.
//
//	go test -run Differential -v ./ (in compare/)

const corpusDir = "../testdata/robots/corpus"

// category names a known, RFC-justified difference from Google's matcher.
type category string

const (
	catRobotsTxt category = "/robots.txt"
	catNonASCII  category = "raw non-ASCII"
	catURIChars  category = "characters a URI cannot hold"
	catHexCase   category = "hex case"
	catIndexHTML category = "index.html extension"
	catDecoded   category = "RFC 9309 decoding, disallow rules only"
)

// allowedDisagreements are the only categories in which lohibot may decide
// otherwise than Google's matcher, each with the part of RFC 9309 that
// lohibot follows there.
var allowedDisagreements = map[category]string{
	catRobotsTxt: "RFC 9309 2.2.2: the /robots.txt URI is implicitly allowed; " +
		"Google's matcher applies the rules to it",
	catNonASCII: "RFC 9309 2.2.2: octets outside US-ASCII are percent-encoded before comparison, on both sides; " +
		"Google's library encodes them in rules only (the Go port also in the URL's path, not its query)",
	catURIChars: "RFC 9309 2.2.2 and RFC 3986 2: characters a URI cannot hold (space, \", <, >, \\, ^, `, {, |, }) " +
		"are compared percent-encoded, on both sides; Google's library compares them as written",
	catHexCase: "RFC 9309 2.2.2 and RFC 3986 2.1: %2b and %2B are the same octet on both sides; " +
		"Google's library upper-cases the hex of rules only",
	catIndexHTML: "RFC 9309 2.2.2: a rule matches the paths it is a prefix of; Google's extension " +
		"(Allow: /dir/index.html also allows /dir/) is not in RFC 9309 and allows more",
	// The RFC vectors of testdata/robots/vectors.json require these readings
	// (figure 4 rows 2, 5 and 6; figure 6), all with disallow rules; lohibot
	// applies them to disallow rules only, so that here it is only ever
	// stricter than Google's matcher. The test checks that direction.
	catDecoded: "RFC 9309 2.2.2 figure 4 and 2.2.3 figure 6: %62%61%7A compares as baz, %2A and %24 as * and $, " +
		"and a disallow rule's ?u=http:// also matches ?u=http%3A%2F%2F; Google's library compares escapes as written",
}

// neutralizers remove one category's cause from a file and a probe URL,
// changing nothing else; the order is the order categories are tried in.
var neutralizers = []struct {
	cat category
	fix func(body []byte, probe string) ([]byte, string)
}{
	{catHexCase, func(b []byte, p string) ([]byte, string) {
		return []byte(upperHex(string(b))), upperHex(p)
	}},
	{catNonASCII, func(b []byte, p string) ([]byte, string) {
		bom := []byte("\xef\xbb\xbf")
		if bytes.HasPrefix(b, bom) {
			return append(bom, encodeBytes(string(b[len(bom):]), isNonASCII)...), encodeBytes(p, isNonASCII)
		}
		return []byte(encodeBytes(string(b), isNonASCII)), encodeBytes(p, isNonASCII)
	}},
	{catURIChars, func(b []byte, p string) ([]byte, string) {
		return []byte(encodeRuleValues(string(b), isNotURIChar)), encodeBytes(p, isNotURIChar)
	}},
	{catIndexHTML, func(b []byte, p string) ([]byte, string) {
		return bytes.ReplaceAll(b, []byte("/index.htm"), []byte("/index_htm")), strings.ReplaceAll(p, "/index.htm", "/index_htm")
	}},
	{catDecoded, func(b []byte, p string) ([]byte, string) {
		return []byte(decodeUnreserved(string(b))), decodeQueryDelims(decodeUnreserved(p))
	}},
}

// decodeUnreserved decodes the percent-encoded unreserved characters of s
// (RFC 3986 2.3).
func decodeUnreserved(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if 'a' <= v && v <= 'z' || 'A' <= v && v <= 'Z' || '0' <= v && v <= '9' || strings.IndexByte("-._~", v) >= 0 {
				sb.WriteByte(v)
				i += 2
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
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

// decodeQueryDelims decodes %3A, %2F, %3F and %40 (any hex case) in the
// query of a probe path.
func decodeQueryDelims(p string) string {
	q := strings.IndexByte(p, '?')
	if q < 0 {
		return p
	}
	r := strings.NewReplacer("%3A", ":", "%3a", ":", "%2F", "/", "%2f", "/", "%3F", "?", "%3f", "?", "%40", "@")
	return p[:q+1] + r.Replace(p[q+1:])
}

// corpusFile is a robots.txt of the corpus with its probe paths.
type corpusFile struct {
	name   string
	body   []byte
	google string // body as google/robotstxt reads it (see googleBody)
	probes []string
	listed int // probes[:listed] are the file's .urls list, "/" and "/robots.txt"
	agents []string
}

func loadCorpus(t *testing.T) []corpusFile {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var files []corpusFile
	for _, name := range names {
		body, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		listed, err := os.ReadFile(strings.TrimSuffix(name, ".txt") + ".urls")
		if err != nil {
			t.Fatalf("%s has no probe URLs: %v", name, err)
		}
		f := corpusFile{name: filepath.Base(name), body: body, google: googleBody(string(body))}
		seen := map[string]bool{}
		addProbe := func(p string) {
			if !seen[p] {
				seen[p] = true
				f.probes = append(f.probes, p)
			}
		}
		for _, p := range strings.Split(strings.TrimSuffix(string(listed), "\n"), "\n") {
			if _, err := url.Parse(probeURL(p)); err != nil || !strings.HasPrefix(p, "/") {
				t.Fatalf("%s: probe %q is not a path the reference can read: %v", f.name, p, err)
			}
			addProbe(p)
		}
		addProbe("/")
		addProbe("/robots.txt")
		f.listed = len(f.probes)
		for _, p := range derivedProbes(robotstxt.Parse(body)) {
			if _, err := url.Parse(probeURL(p)); err == nil {
				addProbe(p)
			}
		}
		f.agents = fileAgents(robotstxt.Parse(body))
		files = append(files, f)
	}
	return files
}

// manyAgents is how many of a file's agents are asked about every probe;
// the others are asked about the file's listed probes.
const manyAgents = 24

func probeURL(p string) string { return "https://www.example.com" + p }

// derivedProbes makes paths from a file's own rules, as a crawler meets
// them: each pattern with its wildcards filled, and a little longer, shorter
// or with a query. A file of many rules gives probes from some 200.
func derivedProbes(r *robotstxt.Robots) []string {
	var patterns []string
	for _, g := range r.Groups() {
		for _, ru := range g.Rules {
			if ru.Pattern != "" {
				patterns = append(patterns, ru.Pattern)
			}
		}
	}
	step := max(1, len(patterns)/200)
	var out []string
	for i := 0; i < len(patterns); i += step {
		p := strings.TrimSuffix(patterns[i], "$")
		for _, fill := range []string{"x", ""} {
			base := strings.ReplaceAll(p, "*", fill)
			if !strings.HasPrefix(base, "/") {
				base = "/" + base
			}
			out = append(out, base, base+"x", base+"/", base+"?q=1")
			if len(base) > 1 {
				out = append(out, base[:len(base)-1])
			}
		}
	}
	return out
}

// fileAgents are LohiSoftBot, every product token the file's user-agent
// lines name (their leading letters, "_" and "-"), and one token it does
// not name.
func fileAgents(r *robotstxt.Robots) []string {
	agents := []string{robotstxt.ProductToken, "UnnamedBot"}
	seen := map[string]bool{strings.ToLower(robotstxt.ProductToken): true, "unnamedbot": true}
	for _, g := range r.Groups() {
		for _, a := range g.Agents {
			i := 0
			for i < len(a) && isTokenByte(a[i]) {
				i++
			}
			if tok := a[:i]; tok != "" && !seen[strings.ToLower(tok)] {
				seen[strings.ToLower(tok)] = true
				agents = append(agents, tok)
			}
		}
	}
	return agents
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}

// googleAllowed is Google's decision on body as googleBody rewrote it.
func googleAllowed(body, agent, probe string) (allowed bool) {
	defer func() {
		if recover() != nil {
			allowed = false
		}
	}()
	return grobotstxt.AgentAllowed(body, agent, probeURL(probe))
}

// googleBody rewrites body so that the port decides on it as
// google/robotstxt decides on body itself, undoing two differences of the
// port (listed in docs/robots.md):
//
//   - the port reads a user-agent line's product token with RFC 7231 token
//     characters (digits, ".", "*", ...), where Google's library stops at
//     the first character that is not a letter, "_" or "-": user-agent
//     lines are rewritten by googleUserAgents;
//   - the port upper-cases the hex of a rule's escape by clearing bit 5 of
//     both characters, which turns the digit of "%c3" into a control
//     character; Google's library upper-cases letters only, which
//     upper-casing every escape beforehand reproduces.
func googleBody(body string) string {
	return upperHex(googleUserAgents(body))
}

// googleUserAgents rewrites each user-agent line of body to the product
// token google/robotstxt's ExtractUserAgent reads from it ("Mediapartners-
// Google*" → "Mediapartners-Google", "MJ12bot" → "MJ", "008" → ""),
// keeping "*" lines, every other line and the line breaks as they are.
func googleUserAgents(body string) string {
	var sb strings.Builder
	if strings.HasPrefix(body, "\xef\xbb\xbf") {
		sb.WriteString(body[:3])
		body = body[3:]
	}
	for body != "" {
		i := strings.IndexAny(body, "\r\n")
		line, brk := body, ""
		if i >= 0 {
			line, brk = body[:i], body[i:i+1]
			if strings.HasPrefix(body[i:], "\r\n") {
				brk = "\r\n"
			}
		}
		body = body[len(line)+len(brk):]
		sb.WriteString(googleUserAgentLine(line))
		sb.WriteString(brk)
	}
	return sb.String()
}

func googleUserAgentLine(line string) string {
	content := line
	if i := strings.IndexByte(content, '#'); i >= 0 {
		content = content[:i]
	}
	content = strings.TrimSpace(content)
	sep := strings.IndexByte(content, ':')
	if sep < 0 {
		sep = strings.IndexAny(content, " \t")
		if sep < 0 || strings.ContainsAny(strings.TrimSpace(content[sep:]), " \t") {
			return line
		}
	}
	key, value := strings.TrimSpace(content[:sep]), strings.TrimSpace(content[sep+1:])
	lk := strings.ToLower(key)
	if !strings.HasPrefix(lk, "user-agent") && !strings.HasPrefix(lk, "useragent") && !strings.HasPrefix(lk, "user agent") {
		return line
	}
	if value == "*" || len(value) > 1 && value[0] == '*' && strings.IndexByte(" \t\v\f", value[1]) >= 0 {
		return line
	}
	i := 0
	for i < len(value) && isTokenByte(value[i]) {
		i++
	}
	return key + ":" + value[:i]
}

// upperHex upper-cases the hex digits of every percent-encoded octet.
func upperHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHex(b[i+1]) && isHex(b[i+2]) {
			b[i+1], b[i+2] = upper(b[i+1]), upper(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func isNonASCII(c byte) bool { return c >= 0x80 }

// isNotURIChar reports whether c is printable ASCII a URI cannot hold
// (RFC 3986 2, appendix A).
func isNotURIChar(c byte) bool { return strings.IndexByte(" \"<>\\^`{|}", c) >= 0 }

// encodeBytes percent-encodes the bytes of s that enc selects.
func encodeBytes(s string, enc func(byte) bool) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if enc(s[i]) {
			fmt.Fprintf(&sb, "%%%02X", s[i])
		} else {
			sb.WriteByte(s[i])
		}
	}
	return sb.String()
}

// encodeRuleValues percent-encodes the bytes enc selects in the values of
// the allow and disallow lines of body (between the colon and any comment,
// blanks around the value left alone).
func encodeRuleValues(body string, enc func(byte) bool) string {
	lines := strings.SplitAfter(body, "\n")
	for n, line := range lines {
		colon := strings.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(line[:colon]))
		if !strings.HasPrefix(key, "allow") && !strings.HasPrefix(key, "disallow") {
			continue
		}
		end := len(line)
		if h := strings.IndexByte(line, '#'); h > colon {
			end = h
		}
		value := strings.TrimRight(line[colon+1:end], " \t\r\n")
		lead := len(value) - len(strings.TrimLeft(value, " \t"))
		lines[n] = line[:colon+1+lead] + encodeBytes(value[lead:], enc) + line[colon+1+len(value):]
	}
	return strings.Join(lines, "")
}

// decider is a matcher under test: lohibotAllowed, or a broken one that
// shows the test can fail.
type decider func(body []byte, agent, probe string) robotstxt.Decision

func lohibotDecide(body []byte, agent, probe string) robotstxt.Decision {
	return robotstxt.Parse(body).Decide(agent, probeURL(probe))
}

// classify returns the categories that explain a disagreement between
// decide and Google's matcher, or nil when none does.
func classify(decide decider, f corpusFile, agent, probe string) []category {
	if decide(f.body, agent, probe).Rule == robotstxt.ReasonRobotsTxt {
		return []category{catRobotsTxt}
	}
	agree := func(body []byte, p string) bool {
		return decide(body, agent, p).Allowed == googleAllowed(googleBody(string(body)), agent, p)
	}
	for _, n := range neutralizers {
		if b, p := n.fix(f.body, probe); agree(b, p) {
			return []category{n.cat}
		}
	}
	// Causes of more than one category: all removed together, then each
	// put back to find those that matter.
	b, p := f.body, probe
	for _, n := range neutralizers {
		b, p = n.fix(b, p)
	}
	if !agree(b, p) {
		return nil
	}
	var cats []category
	for i, n := range neutralizers {
		b, p := f.body, probe
		for j, m := range neutralizers {
			if j != i {
				b, p = m.fix(b, p)
			}
		}
		if !agree(b, p) {
			cats = append(cats, n.cat)
		}
	}
	return cats
}

func TestDifferentialGoogle(t *testing.T) {
	files := loadCorpus(t)
	if len(files) < 40 {
		t.Fatalf("%s holds %d files, want at least 40", corpusDir, len(files))
	}
	var decisions, ourDecisions, probes int
	byCategory := map[category]int{}
	var listed []string
	for _, f := range files {
		r := robotstxt.Parse(f.body)
		probes += len(f.probes)
		for n, agent := range f.agents {
			// Past the first agents of a file naming many, the probes made
			// from the rules add time, not cases.
			probes := f.probes
			if n >= manyAgents {
				probes = f.probes[:f.listed]
			}
			for _, p := range probes {
				decisions++
				if agent == robotstxt.ProductToken {
					ourDecisions++
				}
				ours := r.Decide(agent, probeURL(p))
				if ours.Allowed == googleAllowed(f.google, agent, p) {
					continue
				}
				cats := classify(lohibotDecide, f, agent, p)
				for _, c := range cats {
					if _, ok := allowedDisagreements[c]; !ok {
						cats = nil // cannot happen: every neutralizer's category is listed
					}
				}
				if cats == nil {
					t.Errorf("%s, agent %s, %s: lohibot says allowed %v (%s, line %d; group %q), Google's matcher the opposite, for no listed reason",
						f.name, agent, p, ours.Allowed, ours.Rule, ours.Line, ours.Group)
					continue
				}
				if slices.Contains(cats, catDecoded) && ours.Allowed {
					t.Errorf("%s, agent %s, %s: lohibot allows where Google's matcher does not (%s), by a reading meant only to allow less",
						f.name, agent, p, ours.Rule)
				}
				key := category(joinCategories(cats))
				byCategory[key]++
				listed = append(listed, fmt.Sprintf("%s [%s] %s %s: lohibot allowed=%v (%s)", key, f.name, agent, p, ours.Allowed, ours.Rule))
			}
		}
	}
	t.Logf("%d files, %d probe paths, %d decisions (%d for LohiSoftBot's token), agreement on %d",
		len(files), probes, decisions, ourDecisions, decisions-len(listed))
	keys := make([]string, 0, len(byCategory))
	for c := range byCategory {
		keys = append(keys, string(c))
	}
	sort.Strings(keys)
	for _, c := range keys {
		t.Logf("disagreements, %s: %d", c, byCategory[category(c)])
	}
	if testing.Verbose() {
		for _, l := range listed {
			t.Log(l)
		}
	}
}

func joinCategories(cats []category) string {
	s := make([]string, len(cats))
	for i, c := range cats {
		s[i] = string(c)
	}
	slices.Sort(s)
	return strings.Join(s, " + ")
}

// TestGoogleUserAgents checks the rewrite that makes the port read
// user-agent lines as google/robotstxt does.
func TestGoogleUserAgents(t *testing.T) {
	in := "\xef\xbb\xbfUser-agent: Mediapartners-Google*\r\nuser-agent: MJ12bot # x\nUser-agent: 008\rUser-agent: * here\nUseragent LohiSoftBot/1.0\nDisallow: /a\n"
	want := "\xef\xbb\xbfUser-agent:Mediapartners-Google\r\nuser-agent:MJ\nUser-agent:\rUser-agent: * here\nUseragent:LohiSoftBot\nDisallow: /a\n"
	if got := googleUserAgents(in); got != want {
		t.Errorf("googleUserAgents(%q) = %q, want %q", in, got, want)
	}
	// Google's library: "%c3%a9" in a rule is "%C3%A9".
	if googleAllowed(googleBody("User-agent: *\nDisallow: /caf%c3%a9\n"), "x", "/caf%C3%A9") {
		t.Errorf("after googleBody, Disallow: /caf%%c3%%a9 should match /caf%%C3%%A9")
	}
	// Google's library: "MJ12bot" names MJ, not MJ12bot.
	body := googleUserAgents("User-agent: MJ12bot\nDisallow: /\n")
	if googleAllowed(body, "MJ", "/x") || !googleAllowed(body, "MJ12bot", "/x") {
		t.Errorf("after googleUserAgents, User-agent: MJ12bot should name MJ only")
	}
}

// TestDifferentialFinds checks that the differential can fail: a matcher
// that ended groups at Crawl-delay would disagree with Google's on the
// corpus file that separates user-agent lines with one.
func TestDifferentialFinds(t *testing.T) {
	body := "User-Agent: *\nCrawl-delay: 120\n\nUser-agent: 008\nDisallow: /\n"
	if googleAllowed(googleBody(body), robotstxt.ProductToken, "/a") {
		t.Fatal("Google's matcher allows /a: it should join * and 008 into one group")
	}
	split := "User-Agent: *\nCrawl-delay: 120\nDisallow:\n\nUser-agent: 008\nDisallow: /\n"
	if !googleAllowed(googleBody(split), robotstxt.ProductToken, "/a") || !robotstxt.Parse([]byte(split)).Decide(robotstxt.ProductToken, "/a").Allowed {
		t.Fatal("with an empty Disallow ending the * group, both matchers should allow /a")
	}
	// A matcher that ended a group at Crawl-delay, as if it were an empty
	// Disallow line.
	endAtDelay := func(b []byte, agent, probe string) robotstxt.Decision {
		return lohibotDecide(bytes.ReplaceAll(b, []byte("Crawl-delay: 120"), []byte("Disallow:")), agent, probe)
	}
	f := corpusFile{name: "x", body: []byte(body)}
	if cats := classify(endAtDelay, f, robotstxt.ProductToken, "/a"); cats != nil {
		t.Errorf("a grouping disagreement was put in %v, want no category", cats)
	}
	if cats := classify(lohibotDecide, f, robotstxt.ProductToken, "/robots.txt"); !slices.Equal(cats, []category{catRobotsTxt}) {
		t.Errorf("/robots.txt was put in %v, want %v", cats, catRobotsTxt)
	}
}
