package classify

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/mailbot/message"
)

// A token is one word of text, prepared for keyword matching and language
// detection.
type token struct {
	lower  string // lowercase, with diacritics ("möchte"); "" for the special tokens
	folded string // lowercase ASCII-folded ("mochte"), or tokHost / tokBarrier
	host   string // the host name of a tokHost token
	// alt is folded with the German transliterations ae, oe, ue read as
	// a, o, u ("hoeren" → "horen", as "hören" folds), "" when the word
	// has none.
	alt string
}

// Special token values of token.folded.
const (
	tokHost    = "\x00host"    // a host name or URL: keywords may refer to it as HOST
	tokBarrier = "\x00barrier" // end of sentence or paragraph: phrases never cross it
)

// tokenize splits text into words. Host names, URLs and e-mail addresses
// become one tokHost token (e-mail addresses have been blanked out before,
// see domains.go); the end of a sentence or a paragraph becomes tokBarrier.
// Words are split at any character that is not a letter or digit, so
// "d'exploration" gives "d" and "exploration" and "re-include" gives "re"
// and "include".
func tokenize(text string, out []token) []token {
	text = greekQuestionMarks(text)
	lineStart := true
	blank := false
	i := 0
	for i < len(text) {
		// Skip space, noting blank lines.
		c := text[i]
		if c == '\n' {
			if lineStart {
				if !blank {
					out = appendBarrier(out)
					blank = true
				}
			}
			lineStart = true
			i++
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
			i++
			continue
		}
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) {
				i += n
				continue
			}
		}
		lineStart, blank = false, false
		// A chunk runs to the next white space.
		j := i
		for j < len(text) {
			c := text[j]
			if c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
				break
			}
			if c >= 0x80 {
				r, n := utf8.DecodeRuneInString(text[j:])
				if unicode.IsSpace(r) {
					break
				}
				j += n
				continue
			}
			j++
		}
		chunk := text[i:j]
		i = j
		out = appendChunk(out, chunk)
	}
	return out
}

func appendBarrier(out []token) []token {
	if len(out) > 0 && out[len(out)-1].folded != tokBarrier {
		out = append(out, token{folded: tokBarrier})
	}
	return out
}

// appendQuestionMark ends a sentence with a question mark: its barrier's
// lower is "?".
func appendQuestionMark(out []token) []token {
	out = appendBarrier(out)
	if len(out) > 0 {
		out[len(out)-1].lower = "?"
	}
	return out
}

// appendChunk appends the tokens of one white-space-separated chunk.
func appendChunk(out []token, chunk string) []token {
	core := strings.TrimRight(chunk, ".,;:!?)]}>\"'»”’…*")
	trail := chunk[len(core):]
	core = strings.TrimLeft(core, "([{<\"'«„“‘*¿¡")
	if core == "" {
		switch {
		case strings.Contains(trail, "?"):
			out = appendQuestionMark(out)
		case strings.ContainsAny(trail, ".!"):
			out = appendBarrier(out)
		}
		return out
	}
	if isHostChunk(core) {
		out = append(out, token{folded: tokHost, host: core})
	} else {
		start := -1
		for k, r := range core {
			if isIdeograph(r) {
				// Chinese and Japanese are written without spaces: each
				// character is a token, and rules spell words out.
				if start >= 0 {
					out = appendWord(out, core[start:k])
					start = -1
				}
				out = appendWord(out, string(r))
				continue
			}
			if r == '。' || r == '！' || r == '？' {
				if start >= 0 {
					out = appendWord(out, core[start:k])
					start = -1
				}
				if r == '？' {
					out = appendQuestionMark(out)
				} else {
					out = appendBarrier(out)
				}
				continue
			}
			if isWordRune(r) {
				if start < 0 {
					start = k
				}
				continue
			}
			if start >= 0 {
				out = appendWord(out, core[start:k])
				start = -1
			}
		}
		if start >= 0 {
			out = appendWord(out, core[start:])
		}
	}
	switch {
	case strings.Contains(trail, "?"):
		out = appendQuestionMark(out)
	case strings.ContainsAny(trail, ".!"):
		out = appendBarrier(out)
	}
	return out
}

// isIdeograph reports whether r is a Han character or kana.
func isIdeograph(r rune) bool {
	return r >= 0x3040 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || r == 'ー')
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func appendWord(out []token, w string) []token {
	lower := strings.ToLower(w)
	t := token{lower: lower, folded: message.Fold(lower)}
	if len(t.folded) >= 5 && (strings.Contains(t.folded, "ae") || strings.Contains(t.folded, "oe") || strings.Contains(t.folded, "ue")) {
		t.alt = strings.NewReplacer("ae", "a", "oe", "o", "ue", "u").Replace(t.folded)
	}
	return append(out, t)
}

// isHostChunk says whether a chunk is a URL or looks like a host name
// (labels of letters, digits and hyphens joined by dots, ending in a known
// top-level domain).
func isHostChunk(s string) bool {
	if !strings.Contains(s, ".") && !strings.Contains(s, "://") {
		return false
	}
	if hasPrefixFold(s, "http://") || hasPrefixFold(s, "https://") || hasPrefixFold(s, "www.") {
		return true
	}
	// A path, a port, or an ending after a colon or an apostrophe
	// (Finnish "example.fi:stä", German "example.de's").
	if i := strings.IndexAny(s, "/:?#'’"); i > 0 {
		s = s[:i]
	}
	return hostCandidate(s) != ""
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// greekQuestionMarks turns the Greek question mark (";", or U+037E) into
// "?" so that a Greek question is read as one ("Θέλετε να σταματήσουμε
// …;"): a ";" followed by white space or the end, in a sentence that
// holds Greek letters. A semicolon in any other text stays.
func greekQuestionMarks(text string) string {
	if !strings.ContainsRune(text, ';') && !strings.ContainsRune(text, '\u037e') {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	// ends reports whether the punctuation at i ends a sentence: white
	// space or the end follows it (the dots of a host name do not).
	ends := func(i int) bool {
		return i+1 == len(text) || strings.IndexByte(" \t\r\n", text[i+1]) >= 0
	}
	greek := false
	for i, r := range text {
		switch {
		case r == '\u037e':
			b.WriteByte('?')
			greek = false
			continue
		case r == ';' && greek && ends(i):
			b.WriteByte('?')
			greek = false
			continue
		case (r == '.' || r == '!' || r == '?') && ends(i), r == '\n':
			greek = false
		case unicode.Is(unicode.Greek, r):
			greek = true
		}
		b.WriteRune(r)
	}
	return b.String()
}
