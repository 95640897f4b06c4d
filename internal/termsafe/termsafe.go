// Package termsafe makes text that may come from email or the web safe to
// print on a terminal: control characters (ESC and the rest of C0 and C1,
// DEL) and Unicode format characters (bidi overrides, zero-width ones)
// become visible \xNN or \uNNNN escapes, so a subject holding "ESC ]0;..."
// cannot retitle the window and "ESC [2K" cannot erase a line. Newlines and
// tabs pass, so a multi-line text output stays as it was.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// needsEscape reports whether r is shown escaped. With multiline, newline
// and tab pass.
func needsEscape(r rune, multiline bool) bool {
	if multiline && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

func appendEscaped(b []byte, r rune) []byte {
	if r < 0x100 {
		return fmt.Appendf(b, `\x%02x`, r)
	}
	return fmt.Appendf(b, `\u%04x`, r)
}

// String returns s with every control and format character escaped,
// newlines and tabs included: for one field of a line.
func String(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return needsEscape(r, false) }) < 0 {
		return s
	}
	var b []byte
	for _, r := range s {
		if needsEscape(r, false) {
			b = appendEscaped(b, r)
		} else {
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}

// Writer escapes what is written through it (keeping newlines and tabs)
// and passes the result on. Invalid UTF-8 passes unchanged byte by byte
// (it holds no escape sequence); a rune split between two writes is joined
// first. A Writer is safe for concurrent use: each Write reaches the
// underlying writer whole, in one call.
type Writer struct {
	mu      sync.Mutex // guards w's writes and pending
	w       io.Writer
	pending []byte // the start of a rune cut by the end of the last write
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it to the underlying writer. It returns
// len(p) when the underlying write succeeds.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := p
	if len(t.pending) > 0 {
		data = append(t.pending, p...)
		t.pending = nil
	}
	var out []byte
	clean := 0 // data[clean:i] needs no escaping yet to be copied
	for i := 0; i < len(data); {
		c := data[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		if c < 0x80 { // C0 control or DEL
			out = append(out, data[clean:i]...)
			out = appendEscaped(out, rune(c))
			i++
			clean = i
			continue
		}
		if !utf8.FullRune(data[i:]) {
			out = append(out, data[clean:i]...)
			t.pending = append([]byte(nil), data[i:]...)
			clean = len(data)
			break
		}
		r, size := utf8.DecodeRune(data[i:])
		if r != utf8.RuneError && needsEscape(r, true) {
			out = append(out, data[clean:i]...)
			out = appendEscaped(out, r)
			clean = i + size
		}
		i += size
	}
	if clean == 0 && len(t.pending) == 0 && len(out) == 0 {
		out = data
	} else if clean < len(data) {
		out = append(out, data[clean:]...)
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a rune start kept from the last write, as it is.
func (t *Writer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return nil
	}
	_, err := t.w.Write(t.pending)
	t.pending = nil
	return err
}

// Line returns s as one short line safe to show and store: valid UTF-8,
// every control character a space, trimmed, and cut to at most max bytes
// (on a rune boundary, marked by "…"). It suits an error or panic message
// built from input.
func Line(s string, max int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}
