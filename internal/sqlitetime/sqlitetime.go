// Package sqlitetime writes and reads times as lohibot's SQLite driver
// (modernc.org/sqlite with _time_format=sqlite) stores them as text, for
// the code that binds and reads values itself: the crawler's fast writer
// and the audit's streaming reader. A time written with Format compares as
// text in the same order as the times themselves when all are in UTC.
package sqlitetime

import (
	"strings"
	"time"
)

// Format is the layout the driver writes a time.Time in (its
// _time_format "sqlite", which lohibot's DSNs name).
const Format = "2006-01-02 15:04:05.999999999-07:00"

// stringFormat is the layout of time.Time.String without its monotonic
// clock reading, which the driver also reads.
const stringFormat = "2006-01-02 15:04:05.999999999 -0700 MST"

// layouts are the layouts the driver reads a stored time from, in the
// order it tries them: formats 1 to 7 of SQLite's date and time functions
// (https://www.sqlite.org/lang_datefunc.html), Format first. Never written.
var layouts = [...]string{
	Format,
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// Parse reads s as the driver reads a stored time: in one of its layouts
// (SQLite's formats 1 to 7, space or "T" between date and time), with an
// optional trailing "Z", a time without a zone being UTC; or the form of
// time.Time.String. The result keeps the offset written in s (call UTC for
// UTC). ok is false when s is none of those. It is safe for concurrent
// use.
func Parse(s string) (t time.Time, ok bool) {
	ts := strings.TrimSuffix(s, "Z")
	for _, layout := range &layouts {
		if t, err := time.ParseInLocation(layout, ts, time.UTC); err == nil {
			return t, true
		}
	}
	if i := strings.Index(s, " m="); i > 0 {
		s = s[:i]
	}
	if t, err := time.Parse(stringFormat, strings.TrimSpace(s)); err == nil {
		return t, true
	}
	return time.Time{}, false
}
