package message

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Fold lowercases s and removes diacritics: "Löschen" → "loschen",
// "wyłączenie" → "wylaczenie", "ærø" → "aero", "straße" → "strasse".
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] >= 'A' && s[i] <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		if int(r) < len(foldTable) {
			b.WriteString(foldTable[r])
			continue
		}
		b.WriteString(foldRune(r))
	}
	return b.String()
}

// foldTable is fold for the Latin runes below U+0250, computed once. It is
// never modified.
var foldTable = func() []string {
	t := make([]string, 0x250)
	for r := range t {
		t[r] = foldRune(rune(r))
	}
	return t
}()

// foldRune folds one rune: lowercase, without diacritics.
func foldRune(r rune) string {
	if f, ok := foldSpecial[r]; ok {
		return f
	}
	r = unicode.ToLower(r)
	if f, ok := foldSpecial[r]; ok {
		return f
	}
	var b strings.Builder
	for _, dr := range norm.NFD.String(string(r)) {
		if !unicode.Is(unicode.Mn, dr) {
			b.WriteRune(dr)
		}
	}
	return b.String()
}

// foldSpecial holds the letters that Unicode does not decompose into a
// base letter and a mark. It is never modified.
var foldSpecial = map[rune]string{
	'ß': "ss", 'æ': "ae", 'Æ': "ae", 'ø': "o", 'Ø': "o", 'œ': "oe", 'Œ': "oe",
	'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d", 'ð': "d", 'þ': "th", 'ı': "i",
	'’': "'", '‘': "'",
}
