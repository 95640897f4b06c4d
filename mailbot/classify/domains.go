package classify

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/policy"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// ownSite is LohiSoft's own domain: naming it never asks for anything.
const ownSite = "lohisoft.com"

// fileExtensions are top-level domains that, written bare after a single
// name, are far more often a file name than a site (readme.md, setup.py).
// Serbia's .rs is not among them: a Serbian shop's name.rs is far likelier
// in this mailbox than a Rust source file, and only Rust's own file names
// (fileNames) are read as files.
var fileExtensions = map[string]bool{
	"zip": true, "mov": true, "md": true, "py": true, "sh": true, "so": true,
	"pm": true, "ps": true,
}

// fileNames are bare names that are files whatever their top-level domain.
var fileNames = map[string]bool{
	"main.rs": true, "lib.rs": true, "mod.rs": true, "build.rs": true,
}

// sitesIn returns the sorted, de-duplicated sites named in text: URLs and
// bare host names, de-obfuscated ("example[.]com", "example dot com"),
// IDNs as punycode, reduced to registrable domains by policy.SiteOf. E-mail
// addresses, lohisoft.com and mail providers' domains do not count.
func sitesIn(text string) []string {
	sites, _ := sitesAndProviders(text)
	return sites
}

// sitesAndProviders is sitesIn that also returns the mail providers'
// domains it left out (sorted, de-duplicated).
func sitesAndProviders(text string) (sites, providers []string) {
	text = blankEmails(text)
	text = deobfuscate(text)
	seen := map[string]bool{}
	dropped := map[string]bool{}
	forEachHost(text, func(host string) {
		site, err := policy.SiteOf(host)
		if err != nil || site == ownSite || seen[site] {
			return
		}
		if IsMailProvider(host) {
			dropped[site] = true
			return
		}
		seen[site] = true
	})
	sites = make([]string, 0, len(seen))
	for s := range seen {
		sites = append(sites, s)
	}
	sort.Strings(sites)
	for s := range dropped {
		providers = append(providers, s)
	}
	sort.Strings(providers)
	return sites, providers
}

// forEachHost calls fn with every host name in text.
func forEachHost(text string, fn func(host string)) {
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isHostRune(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isHostRune(r) {
				break
			}
			j += n
		}
		run := text[i:j]
		before := text[:i]
		i = j
		// A path segment (".../readme.md") is not a host; "//host" is.
		if strings.HasSuffix(before, "/") && !strings.HasSuffix(before, "//") {
			continue
		}
		if strings.HasSuffix(before, "@") || strings.HasPrefix(text[j:], "@") {
			continue
		}
		explicit := strings.HasSuffix(before, "://")
		if h := hostCandidate(run); h != "" {
			if !explicit && !strings.HasPrefix(strings.ToLower(run), "www.") && looksLikeFileOrTypo(run) {
				continue
			}
			fn(h)
		}
	}
}

// isHostRune reports whether r may appear in a host name as people write
// it: letters (IDN), digits, hyphens and dots.
func isHostRune(r rune) bool {
	return r == '.' || r == '-' || r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') ||
		r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
}

// hostCandidate returns s, trimmed of surrounding dots and hyphens, when it
// has the shape of a host name under a real top-level domain; else "".
func hostCandidate(s string) string {
	s = strings.Trim(s, ".-")
	if len(s) < 4 || len(s) > 253 || !strings.Contains(s, ".") {
		return ""
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return ""
		}
	}
	tld := labels[len(labels)-1]
	if i := strings.IndexByte(tld, '-'); i > 0 && caseSuffix(tld[i+1:]) && knownTLD(tld[:i]) {
		// A grammatical case ending or the rest of a compound written
		// after the name with a hyphen (Hungarian "example.hu-t", "-ról",
		// Croatian "example.hr-a", Czech "example.cz-u", Finnish
		// "example.fi-sivustoa"): the name is what comes before it. No
		// top-level domain is followed by a hyphen and letters.
		s = s[:len(s)-len(tld)+i]
		tld = tld[:i]
	}
	for _, r := range tld {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && !(r == '-' || r >= '0' && r <= '9') {
			return ""
		}
	}
	if r, _ := utf8.DecodeRuneInString(tld); !unicode.IsLetter(r) {
		return ""
	}
	if !knownTLD(tld) {
		return ""
	}
	return s
}

// caseSuffix reports whether s may be a case ending or the rest of a
// compound: one to 24 letters.
func caseSuffix(s string) bool {
	n := 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
		n++
	}
	return n >= 1 && n <= 24
}

// knownTLD says whether tld is a top-level domain of the Public Suffix
// List (ICANN section), so "robots.txt" and "index.php" are not hosts.
func knownTLD(tld string) bool {
	a := strings.ToLower(tld)
	if !isASCII(a) {
		var err error
		if a, err = idna.Lookup.ToASCII(a); err != nil || a == "" {
			return false
		}
	}
	_, icann := publicsuffix.PublicSuffix("x." + a)
	return icann
}

// looksLikeFileOrTypo rejects bare names that are more likely something
// else: a file name (name.md), or two sentences run together without a
// space ("done.Thanks").
func looksLikeFileOrTypo(run string) bool {
	s := strings.Trim(run, ".-")
	labels := strings.Split(s, ".")
	if len(labels) != 2 {
		return false
	}
	tld := labels[1]
	if fileExtensions[strings.ToLower(tld)] || fileNames[strings.ToLower(s)] {
		return true
	}
	// "thanks.Bye": a lowercase word, then a capitalised one.
	first, _ := utf8.DecodeRuneInString(labels[0])
	t0, _ := utf8.DecodeRuneInString(tld)
	if unicode.IsLower(first) && unicode.IsUpper(t0) && strings.ToLower(tld[1:]) == tld[1:] && len(tld) > 2 {
		return true
	}
	return false
}

// blankEmails replaces e-mail addresses (and mailto: links) with spaces:
// an address names a mailbox, not a site to exclude.
func blankEmails(text string) string {
	if !strings.Contains(text, "@") {
		return text
	}
	b := []byte(text)
	for i := 0; i < len(b); i++ {
		if b[i] != '@' {
			continue
		}
		// Local part to the left (at most 64 bytes, RFC 5321).
		l := i
		for l > 0 && i-l < 64 && isLocalByte(b[l-1]) {
			l--
		}
		// Domain to the right (any host rune, at most 255 bytes).
		r := i + 1
		for r < len(b) && r-i < 256 {
			ru, n := utf8.DecodeRune(b[r:])
			if !isHostRune(ru) {
				break
			}
			r += n
		}
		if l == i || r == i+1 {
			continue
		}
		if l >= 7 && strings.EqualFold(string(b[l-7:l]), "mailto:") {
			l -= 7
		}
		for k := l; k < r; k++ {
			b[k] = ' ' // every byte, so no rune is left half
		}
		i = r - 1
	}
	return string(b)
}

func isLocalByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) >= 0 || c >= 0x80
}

// deobfuscate undoes the usual ways of hiding a domain from link
// detection: "example[.]com", "example(.)com", "example[dot]com",
// "example (dot) com" and "example dot com" (the last only when the word
// before "dot" is not a common word, so "the dot com era" stays as it is).
func deobfuscate(text string) string {
	lower := strings.ToLower(text)
	if !strings.Contains(lower, "dot") && !strings.Contains(lower, "[.]") && !strings.Contains(lower, "(.)") &&
		!strings.Contains(lower, "{.}") && !strings.Contains(lower, "pun") && !strings.Contains(lower, "point") &&
		!strings.Contains(lower, "pon") && !strings.Contains(lower, "tecka") && !strings.Contains(lower, "tečka") &&
		!strings.Contains(lower, "kropka") && !strings.Contains(lower, "prick") {
		return text
	}
	b := make([]byte, 0, len(text))
	trimSpaces := func() {
		for len(b) > 0 && b[len(b)-1] == ' ' {
			b = b[:len(b)-1]
		}
	}
	i := 0
	for i < len(text) {
		if n := bracketDot(lower[i:]); n > 0 && endsWithLabel(text[:i]) {
			trimSpaces() // "example [.] com"
			b = append(b, '.')
			i += n
			for i < len(text) && text[i] == ' ' {
				i++
			}
			continue
		}
		if n := bareDot(lower[i:]); n > 0 && i > 0 && text[i-1] == ' ' {
			// The word before "dot", as rewritten so far: in "example dot
			// com dot au" the second "dot" follows "example.com", whose
			// "com" is a label even though it is also a common word.
			prev, dotted := lastLabel(b)
			if prev != "" && (dotted || !isCommonWord(prev)) && startsWithLabel(text[i+n:]) {
				trimSpaces()
				b = append(b, '.')
				i += n
				continue
			}
		}
		b = append(b, text[i])
		i++
	}
	return string(b)
}

// bracketDot returns the length of a bracketed dot at the start of s
// ("[.]", "( dot )", "{punkt}"), with optional spaces inside; 0 if none.
func bracketDot(s string) int {
	s0 := len(s)
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return 0
	}
	var closing byte
	switch s[0] {
	case '[':
		closing = ']'
	case '(':
		closing = ')'
	case '{':
		closing = '}'
	case '<':
		closing = '>'
	default:
		return 0
	}
	rest := strings.TrimLeft(s[1:], " ")
	var word string
	for _, w := range []string{".", "dot", "punkt", "point", "punto", "ponto", "pont", "tecka", "tečka", "kropka", "prick"} {
		if strings.HasPrefix(rest, w) {
			word = w
			break
		}
	}
	if word == "" {
		return 0
	}
	rest = strings.TrimLeft(rest[len(word):], " ")
	if rest == "" || rest[0] != closing {
		return 0
	}
	return s0 - len(rest) + 1
}

// bareDot returns the length of "dot " at the start of s; 0 if none.
func bareDot(s string) int {
	// "dot" and its translations: nl punt, de/da/sv/no/pl punkt, fr point,
	// it/es punto, pt ponto, hu pont, cs tečka, pl kropka, sv prick.
	for _, w := range []string{"dot ", "punt ", "punkt ", "point ", "punto ", "ponto ", "pont ", "tecka ", "tečka ", "kropka ", "prick "} {
		if strings.HasPrefix(s, w) {
			return len(w)
		}
	}
	return 0
}

func endsWithLabel(s string) bool {
	s = strings.TrimRight(s, " ")
	r, _ := utf8.DecodeLastRuneInString(s)
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func startsWithLabel(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// lastLabel returns the host-like word ending b (after trailing spaces),
// and whether a dot joins it to a label before it ("example.com" gives
// "com", true).
func lastLabel(b []byte) (string, bool) {
	end := len(b)
	for end > 0 && b[end-1] == ' ' {
		end--
	}
	j := end
	for j > 0 {
		r, n := utf8.DecodeLastRune(b[:j])
		if !isHostRune(r) || r == '.' {
			break
		}
		j -= n
	}
	dotted := j > 1 && b[j-1] == '.' && endsWithLabel(string(b[max(0, j-5):j-1]))
	return string(b[j:end]), dotted
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
