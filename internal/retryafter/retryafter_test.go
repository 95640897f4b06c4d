package retryafter_test

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/retryafter"
)

var completed = time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)

var notBeforeTests = []struct {
	name   string
	header string
	want   time.Time
	ok     bool
}{
	{"seconds", "120", completed.Add(2 * time.Minute), true},
	{"zero seconds", "0", completed, true},
	{"seconds with spaces", " 6 \t", completed.Add(6 * time.Second), true},
	{"seconds capped", "99999999999999", completed.Add((1 << 31) * time.Second), true},
	{"IMF-fixdate", "Wed, 21 Oct 2026 07:28:00 GMT", time.Date(2026, 10, 21, 7, 28, 0, 0, time.UTC), true},
	{"RFC 850 date", "Wednesday, 21-Oct-26 07:28:00 GMT", time.Date(2026, 10, 21, 7, 28, 0, 0, time.UTC), true},
	{"asctime date", "Wed Oct 21 07:28:00 2026", time.Date(2026, 10, 21, 7, 28, 0, 0, time.UTC), true},
	{"date in the past", "Wed, 21 Oct 2015 07:28:00 GMT", time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC), true},
	{"negative", "-5", time.Time{}, false},
	{"empty", "", time.Time{}, false},
	{"blank", "   ", time.Time{}, false},
	{"fraction", "1.5", time.Time{}, false},
	{"garbage", "soon", time.Time{}, false},
	{"date without zone", "2026-10-21 07:28:00", time.Time{}, false},
	{"seconds overflowing int64", "99999999999999999999", time.Time{}, false},
}

func TestNotBefore(t *testing.T) {
	for _, tt := range notBeforeTests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryafter.NotBefore(tt.header, completed)
			if ok != tt.ok || !got.Equal(tt.want) {
				t.Errorf("NotBefore(%q) = %v, %v, want %v, %v", tt.header, got, ok, tt.want, tt.ok)
			}
			if ok && got.Location() != time.UTC {
				t.Errorf("NotBefore(%q) is in %v, want UTC", tt.header, got.Location())
			}
		})
	}
}
