package db

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/sqlitetime"
)

// parseFixedTests are times as SQLite may hold them, well-formed or not.
var parseFixedTests = []string{
	"2026-08-03 09:00:01.25+00:00",
	"2026-08-03 09:00:01+00:00",
	"2026-08-03 11:00:01+02:00",
	"2026-08-03 07:30:01-01:30",
	"2026-08-03T09:00:01.000000001-01:30",
	"2026-08-03T09:00:01.5Z",
	"2026-08-03 09:00:01Z",
	"2026-08-03 09:00:01.123456",
	"2026-08-03 09:00:01.1234567891234",
	"2026-08-03 09:00:01",
	"2026-12-31 23:59:59.999999999+00:00",
	"2024-02-29 00:00:00",
	"0001-01-01 00:00:00+00:00",
	"9999-12-31 23:59:59",
	"2026-08-03 00:00:00+14:00",
	"2026-08-03 00:00:00-12:00",
	// Malformed, or valid only for the slow parser.
	"2026-02-29 09:00:01",
	"2100-02-29 09:00:01",
	"2000-02-29 09:00:01",
	"2026-02-31 09:00:01",
	"2026-04-31 09:00:01",
	"2026-13-03 09:00:01",
	"2026-00-03 09:00:01",
	"2026-08-00 09:00:01",
	"2026-08-03 24:00:00",
	"2026-08-03 09:60:00",
	"2026-08-03 09:00:60",
	"2026-08-03 09:00:01.",
	"2026-08-03 09:00:01.5x",
	"2026-08-03 09:00:01+0200",
	"2026-08-03 09:00:01+02:60",
	"2026-08-03 09:00:01+25:00",
	"2026-08-03 09:00:01+24:00",
	"2026-08-03 09:00:01-02:60",
	"2026-08-03 09:00:01+02:00Z",
	"2026-08-03 09:00:01 +0200 CEST",
	"2026-08-03 09:00:01 +0000 UTC m=+0.001",
	"2026-08-03t09:00:01",
	"2026-08-03 9:00:01",
	"2026-8-03 09:00:01",
	"+026-08-03 09:00:01",
	"2026-08-03 09:00",
	"2026-08-03",
	"1785747601",
	"",
	"yesterday",
}

// TestParseFixed checks the fast parser against the driver's layouts
// (sqlitetime.Parse): whatever it reads, the slow parser reads as the same
// instant; what it declines, the slow parser may still read (textTime
// falls back to it); and it reads the bytes of a time as it reads the
// string.
func TestParseFixed(t *testing.T) {
	fast := 0
	for _, in := range parseFixedTests {
		got, ok := parseFixed(in)
		want, wantOK := sqlitetime.Parse(in)
		if ok {
			fast++
			if !wantOK || !got.Equal(want) {
				t.Errorf("parseFixed(%q) = %v, true; the driver's layouts read %v, %v", in, got, want, wantOK)
			}
			if got.Location() != time.UTC {
				t.Errorf("parseFixed(%q) is in %v, want UTC", in, got.Location())
			}
		}
		gotB, okB := parseFixed([]byte(in))
		if okB != ok || !gotB.Equal(got) {
			t.Errorf("parseFixed([]byte(%q)) = %v, %v; from the string %v, %v", in, gotB, okB, got, ok)
		}
		var d textTime
		err := d.parse(in)
		if (err == nil) != wantOK || (wantOK && !d.t.Equal(want)) {
			t.Errorf("textTime.parse(%q) = %v, %v; the driver's layouts read %v, %v", in, d.t, err, want, wantOK)
		}
	}
	if fast < 15 {
		t.Errorf("parseFixed read %d of the times, want the 16 well-formed ones at least", fast)
	}
}

func BenchmarkParseFixed(b *testing.B) {
	in := []byte("2026-08-03 09:00:01.123456+00:00")
	for b.Loop() {
		if _, ok := parseFixed(in); !ok {
			b.Fatal("not read")
		}
	}
}

// TestDaysIn checks daysIn against the time package's own calendar.
func TestDaysIn(t *testing.T) {
	for _, year := range []int{1, 1900, 2000, 2024, 2026, 2100, 9999} {
		for month := 1; month <= 12; month++ {
			want := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
			if got := daysIn(month, year); got != want {
				t.Errorf("daysIn(%d, %d) = %d, want %d", month, year, got, want)
			}
		}
	}
}
