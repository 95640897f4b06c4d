package db

import (
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/internal/sqlitetime"
)

// textTime scans a timestamp as either engine returns it: a time.Time
// (PostgreSQL), or the text SQLite stores (the audit's request stream
// selects SQLite's times as text, which it parses faster than the driver
// does).
type textTime struct {
	t     time.Time
	valid bool
}

// Scan implements sql.Scanner.
func (d *textTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		d.t, d.valid = time.Time{}, false
		return nil
	case time.Time:
		d.t, d.valid = x.UTC(), true
		return nil
	case string:
		return d.parse(x)
	case []byte:
		return d.parse(string(x))
	}
	return fmt.Errorf("db: cannot scan %T as a time", v)
}

// ptr returns the time, or nil when it was NULL.
func (d *textTime) ptr() *time.Time {
	if !d.valid {
		return nil
	}
	t := d.t
	return &t
}

func (d *textTime) parse(s string) error {
	if t, ok := parseFixed(s); ok {
		d.t, d.valid = t, true
		return nil
	}
	if t, ok := sqlitetime.Parse(s); ok {
		d.t, d.valid = t.UTC(), true
		return nil
	}
	return fmt.Errorf("db: cannot read %q as a time", s)
}

// parseFixed parses "YYYY-MM-DD HH:MM:SS[.fraction][Z|±HH:MM]" (space or T)
// without allocating, from a string or its bytes; ok is false for anything
// else.
func parseFixed[S ~string | ~[]byte](s S) (time.Time, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	// The ranges time.Parse (the driver's parser) accepts.
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	i := 19
	nsec := 0
	if i < len(s) && s[i] == '.' {
		i++
		digits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if digits < 9 {
				nsec = nsec*10 + int(s[i]-'0')
				digits++
			}
			i++
		}
		if digits == 0 {
			return time.Time{}, false
		}
		for ; digits < 9; digits++ {
			nsec *= 10
		}
	}
	offset := 0
	switch {
	case i == len(s):
	case s[i] == 'Z' && i+1 == len(s):
	case (s[i] == '+' || s[i] == '-') && i+6 == len(s) && s[i+3] == ':':
		oh, ok1 := num(i+1, 2)
		om, ok2 := num(i+4, 2)
		if !ok1 || !ok2 || oh > 24 || om > 60 {
			return time.Time{}, false
		}
		offset = oh*3600 + om*60
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

// daysIn returns the number of days of a month of the proleptic Gregorian
// calendar.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
