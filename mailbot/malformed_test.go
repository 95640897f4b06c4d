package mailbot_test

import (
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/mailbot"
)

// TestMalformedHeaderSaysItOnce: the review reason of a message whose
// header cannot be read says what is wrong once, without repeating
// "malformed" or a Go package name.
func TestMalformedHeaderSaysItOnce(t *testing.T) {
	tests := []struct {
		raw, want string
	}{
		{"vm\n\nbody", "malformed: a header line without a colon: vm"},
		{" folded\nSubject: x\n\nbody", "malformed: the header starts with a continuation line:"},
	}
	for _, tt := range tests {
		m := mailbot.Parse([]byte(tt.raw))
		if !strings.HasPrefix(m.Review, tt.want) || strings.Count(m.Review, "malformed") != 1 || strings.Contains(m.Review, "message:") {
			t.Errorf("Parse(%q).Review = %q, want %q said once", tt.raw, m.Review, tt.want)
		}
	}
}
