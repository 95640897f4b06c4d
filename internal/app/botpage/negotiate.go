package botpage

import (
	"slices"
	"strconv"
	"strings"
)

// ParseLang returns the page language s names: a language code with or
// without a region (it, it-IT, IT_it), case-insensitive. ok is false when
// the page is not written in that language.
func ParseLang(s string) (l Lang, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	primary, _, _ := strings.Cut(strings.ReplaceAll(s, "_", "-"), "-")
	l = Lang(primary)
	return l, slices.Contains(Langs(), l)
}

// Negotiate picks the page language for a request: the ?lang= value when
// it names one of the page's languages, else the best language of the
// Accept-Language header (RFC 9110 section 12.5.4) by q-value (ties keep
// the header's order; q=0 refuses a language; a region matches its
// language), else DefaultLang. fromHeader reports whether the header
// decided, so the response must say Vary: Accept-Language.
func Negotiate(query, acceptLanguage string) (l Lang, fromHeader bool) {
	if l, ok := ParseLang(query); ok && query != "" {
		return l, false
	}
	return negotiateHeader(acceptLanguage), true
}

// negotiateHeader returns the best page language of an Accept-Language
// value, or DefaultLang. Malformed entries are skipped.
func negotiateHeader(h string) Lang {
	type choice struct {
		lang Lang
		q    float64
		wild bool
	}
	var choices []choice
	refused := map[Lang]bool{}
	for _, part := range strings.Split(h, ",") {
		tag, params, _ := strings.Cut(part, ";")
		tag = strings.TrimSpace(tag)
		if tag == "" {
			continue
		}
		q := 1.0
		if params != "" {
			name, val, ok := strings.Cut(strings.TrimSpace(params), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		if tag == "*" {
			choices = append(choices, choice{lang: DefaultLang, q: q, wild: true})
			continue
		}
		l, ok := ParseLang(tag)
		if !ok {
			continue
		}
		if q == 0 {
			refused[l] = true
			continue
		}
		choices = append(choices, choice{lang: l, q: q})
	}
	slices.SortStableFunc(choices, func(a, b choice) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return 0
	})
	for _, c := range choices {
		if c.wild {
			if c.q == 0 {
				continue
			}
			// Any language will do: the default unless refused, else the
			// first one not refused.
			for _, l := range Langs() {
				if !refused[l] {
					return l
				}
			}
			continue
		}
		if !refused[c.lang] {
			return c.lang
		}
	}
	return DefaultLang
}
