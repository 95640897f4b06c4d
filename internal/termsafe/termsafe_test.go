package termsafe_test

import (
	"bytes"
	"testing"

	"github.com/lohisoft/lohibot/internal/termsafe"
)

var writes = []struct {
	name string
	in   []string // written in these pieces
	want string
}{
	{"plain", []string{"example.com\tmail\n"}, "example.com\tmail\n"},
	{"OSC title", []string{"\x1b]0;pwned\x07subject\n"}, `\x1b]0;pwned\x07subject` + "\n"},
	{"erase line", []string{"a\x1b[2Kb\r\n"}, `a\x1b[2Kb\x0d` + "\n"},
	{"DEL", []string{"a\x7fb"}, `a\x7fb`},
	{"C1 CSI", []string{"a\u009b2Kb"}, `a\x9b2Kb`},
	{"bidi override", []string{"a\u202eb"}, `a\u202eb`},
	{"UTF-8 kept", []string{"Grüße, 日本\n"}, "Grüße, 日本\n"},
	{"rune split across writes", []string{"Gr\xc3", "\xbc\xc2", "\x9bx"}, `Grü\x9bx`},
	{"invalid UTF-8 passes", []string{"a\xffb"}, "a\xffb"},
}

func TestWriter(t *testing.T) {
	for _, c := range writes {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := termsafe.NewWriter(&buf)
			for _, p := range c.in {
				if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
					t.Fatalf("Write(%q) = %d, %v", p, n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != c.want {
				t.Errorf("wrote %q, want %q", got, c.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	if got, want := termsafe.String("a\nb\x1b[2K"), `a\x0ab\x1b[2K`; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestWidth(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"Café", 4},
		{"Cafe\u0301", 4}, // e and a combining acute: one column
		{"漢字", 4},
		{"Ａ1", 3}, // fullwidth A
		{"a\u200bb", 2},
		{termsafe.String("\x1b[2K"), 7}, // \x1b[2K as printed
	} {
		if got := termsafe.Width(c.s); got != c.want {
			t.Errorf("Width(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}
