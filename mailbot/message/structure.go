package message

import (
	"regexp"
	"strings"
)

// Quotes are recognised by their shape as well as by the phrases of the
// clients we know, so that a client or a language we have never seen
// still has its quoted text set apart: an attribution is a short line
// ending with a colon that carries an e-mail address or a date with a
// time; a header block is a run of "Label: value" lines naming a sender
// and a date.

var (
	// emailRe finds an e-mail address.
	emailRe = regexp.MustCompile(`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)+`)
	// dateRe finds a date with a year: 3.8.2026, 2026-03-09, 03/09/26,
	// "9 mar 2026", "March 9, 2026", "2026. márc. 9.".
	dateRe = regexp.MustCompile(`\b\d{1,4}\s?[./-]\s?\d{1,2}\s?[./-]\s?\d{2,4}\b|\b(19|20)\d{2}\b`)
	// timeRe finds a time of day: 10:15, 9.12 (after "klo", "kl."), 10h15.
	timeRe = regexp.MustCompile(`\b\d{1,2}[:.h]\d{2}\b`)
)

// attributionShape reports whether line looks like a reply attribution in
// any language: at most 300 bytes, ending with a colon, and carrying an
// e-mail address and a digit, or a date and a time ("ti 14.7.2026 klo
// 9.12 Sanna <s@example.fi> kirjoitti:", "Dňa 3. 8. 2026 o 10:15 LohiSoft
// napísal(a):").
func attributionShape(line string) bool {
	t := strings.TrimSpace(line)
	if len(t) < 12 || len(t) > 300 || !strings.HasSuffix(t, ":") {
		return false
	}
	if emailRe.MatchString(t) && strings.ContainsAny(t, "0123456789") {
		return true
	}
	return dateRe.MatchString(t) && timeRe.MatchString(t)
}

// labelLine splits a "Label: value" line: a label of one to four words
// (no digits, no URL scheme) and its value. ok is false for any other
// line.
func labelLine(l string) (label, value string, ok bool) {
	t := strings.TrimSpace(strings.ReplaceAll(l, "*", ""))
	i := strings.IndexByte(t, ':')
	if i <= 0 || i > 30 {
		return "", "", false
	}
	label, value = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:])
	if strings.HasPrefix(value, "//") || len(strings.Fields(label)) > 4 || strings.ContainsAny(label, "0123456789@/<>()[]") {
		return "", "", false
	}
	return label, value, true
}

// headerBlockShape recognises a quoted or forwarded message's header block
// at line i in any language ("Από: … / Στάλθηκε: … / Προς: … / Θέμα: …"):
// consecutive "Label: value" lines, one of the first four carrying a date
// with a year: three when the first names a sender (an e-mail address, or
// a label we know for From), four otherwise.
func headerBlockShape(lines []string, i int) bool {
	if i >= len(lines) {
		return false
	}
	label, first, ok := labelLine(lines[i])
	if !ok {
		return false
	}
	sender := emailRe.MatchString(first) || fromFields[Fold(label)]
	n, dated := 1, false
	for j := i + 1; j < len(lines) && n < 8; j++ {
		_, v, ok := labelLine(lines[j])
		if !ok {
			break
		}
		n++
		if n <= 4 && dateRe.MatchString(v) {
			dated = true
		}
	}
	// A sender we cannot tell by its address or label ("Saatja:
	// LohiSoft") needs a longer run.
	return dated && (n >= 3 && sender || n >= 4)
}
