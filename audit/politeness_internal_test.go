package audit

import (
	"testing"
	"time"
)

// TestDelaySourceWording pins the words of the delay in force, which the
// audit now works out for every request but words only for a too-soon
// violation: the same text as when it was formatted for every request.
func TestDelaySourceWording(t *testing.T) {
	sn := &snapshot{id: 3, crawlDelay: 10 * time.Second}
	tests := []struct {
		name string
		d    delaySource
		want string
	}{
		{"none", delaySource{}, "no delay set"},
		{"cycle", delaySource{cycle: true, cycleID: 7, cycleDelay: 1500 * time.Millisecond}, "--delay 1.5s of cycle 7"},
		{"robots.txt", delaySource{snapshot: sn}, "Crawl-delay 10s of robots.txt snapshot 3"},
		{"robots.txt over cycle", delaySource{cycle: true, cycleID: 7, cycleDelay: 1500 * time.Millisecond, snapshot: sn},
			"Crawl-delay 10s of robots.txt snapshot 3, longer than the --delay 1.5s of cycle 7"},
		{"zero cycle delay", delaySource{cycle: true, cycleID: 8}, "--delay 0s of cycle 8"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("%s: String() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
