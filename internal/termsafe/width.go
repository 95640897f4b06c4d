package termsafe

import (
	"unicode"

	"golang.org/x/text/width"
)

// Width returns how many terminal columns s takes: two for each wide or
// fullwidth character (East Asian Width W or F, such as 漢 or Ａ), none for
// combining marks and format characters (the e and U+0301 of a decomposed é
// take one column together), one for any other printable character. A
// control character counts as none: String escapes those, so measure what
// String returns.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x7f:
		return 1
	case unicode.IsControl(r), unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
