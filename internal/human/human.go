// Package human formats values the way lohibot shows them to people, the
// same in every command, report and log line: times in UTC to the second
// with their zone, and sites with an IDN in Unicode beside its A-label.
package human

import (
	"strings"
	"time"

	"golang.org/x/net/idna"
)

// TimeLayout is the one time format of text output.
const TimeLayout = "2006-01-02 15:04:05 UTC"

// Time formats t for people: UTC, to the second, with its zone
// (2026-12-01 10:21:50 UTC).
func Time(t time.Time) string { return t.UTC().Format(TimeLayout) }

// TimeMS is Time to the millisecond, for request logs, where the gaps
// between requests are evidence.
func TimeMS(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") }

// Site writes a site (or host) as people write it: an IDN in Unicode with
// its A-label beside it, "bücher.de (xn--bcher-kva.de)"; any other name as
// it is. Machine output keeps the A-label alone.
func Site(name string) string {
	if !strings.Contains(name, "xn--") {
		return name
	}
	u, err := idna.Lookup.ToUnicode(name)
	if err != nil || u == name {
		return name
	}
	return u + " (" + name + ")"
}
