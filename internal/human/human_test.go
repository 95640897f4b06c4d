package human

import (
	"testing"
	"time"
)

func TestTime(t *testing.T) {
	at := time.Date(2026, 12, 1, 11, 21, 50, 123e6, time.FixedZone("CET", 3600))
	if got, want := Time(at), "2026-12-01 10:21:50 UTC"; got != want {
		t.Errorf("Time = %q, want %q", got, want)
	}
	if got, want := TimeMS(at), "2026-12-01 10:21:50.123 UTC"; got != want {
		t.Errorf("TimeMS = %q, want %q", got, want)
	}
}

func TestSite(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":      "example.com",
		"xn--bcher-kva.de": "bücher.de (xn--bcher-kva.de)",
	} {
		if got := Site(in); got != want {
			t.Errorf("Site(%q) = %q, want %q", in, got, want)
		}
	}
}
