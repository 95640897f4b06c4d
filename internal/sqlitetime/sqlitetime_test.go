package sqlitetime_test

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/sqlitetime"
)

var parseTests = []struct {
	name string
	in   string
	want time.Time // compared with Equal; the zone is not checked
	ok   bool
}{
	{"Format in UTC", "2026-08-03 09:00:01.25+00:00", time.Date(2026, 8, 3, 9, 0, 1, 250e6, time.UTC), true},
	{"Format with offset", "2026-08-03 11:00:01+02:00", time.Date(2026, 8, 3, 9, 0, 1, 0, time.UTC), true},
	{"T and offset", "2026-08-03T09:00:01.000000001-01:30", time.Date(2026, 8, 3, 10, 30, 1, 1, time.UTC), true},
	{"Z suffix", "2026-08-03T09:00:01.5Z", time.Date(2026, 8, 3, 9, 0, 1, 500e6, time.UTC), true},
	{"no zone is UTC", "2026-08-03 09:00:01.123456", time.Date(2026, 8, 3, 9, 0, 1, 123456e3, time.UTC), true},
	{"seconds", "2026-08-03 09:00:01", time.Date(2026, 8, 3, 9, 0, 1, 0, time.UTC), true},
	{"minutes", "2026-08-03T09:00", time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC), true},
	{"date", "2026-08-03", time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC), true},
	{"time.Time.String", "2026-08-03 11:00:01.5 +0200 CEST", time.Date(2026, 8, 3, 9, 0, 1, 500e6, time.UTC), true},
	{"time.Time.String with monotonic reading", "2026-08-03 09:00:01 +0000 UTC m=+0.001", time.Date(2026, 8, 3, 9, 0, 1, 0, time.UTC), true},
	{"empty", "", time.Time{}, false},
	{"garbage", "yesterday", time.Time{}, false},
	{"bad month", "2026-13-03 09:00:01", time.Time{}, false},
	{"unix seconds", "1785747601", time.Time{}, false},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sqlitetime.Parse(tt.in)
			if ok != tt.ok || !got.Equal(tt.want) {
				t.Errorf("Parse(%q) = %v, %v, want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestFormatRoundTrip: what Format writes, Parse reads back to the same
// instant, and times in UTC compare as text in time order.
func TestFormatRoundTrip(t *testing.T) {
	a := time.Date(2026, 8, 3, 9, 0, 1, 999999999, time.UTC)
	b := a.Add(time.Nanosecond)
	for _, x := range []time.Time{a, b} {
		got, ok := sqlitetime.Parse(x.Format(sqlitetime.Format))
		if !ok || !got.Equal(x) {
			t.Errorf("Parse(Format(%v)) = %v, %v, want %v, true", x, got, ok, x)
		}
	}
	if sa, sb := a.Format(sqlitetime.Format), b.Format(sqlitetime.Format); !(sa < sb) {
		t.Errorf("Format: %q sorts after %q", sa, sb)
	}
}
