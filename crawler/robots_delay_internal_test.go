package crawler

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/robotstxt"
)

// TestCrawlDelayOfJoinedGroup checks the delay the crawler keeps when
// LohiSoftBot is named in a group whose user-agent lines are separated by
// Crawl-delay lines: the group's largest delay applies to every agent it
// names, capped at MaxCrawlDelay.
func TestCrawlDelayOfJoinedGroup(t *testing.T) {
	tests := []struct {
		name string
		body string
		want time.Duration
	}{
		{"named after another agent's delay", "User-agent: Slurp\nCrawl-delay: 2\n\nUser-agent: LohiSoftBot\nCrawl-delay: 5\n\nUser-agent: *\nDisallow: /cgi-bin/\n", 5 * time.Second},
		{"named before the delay", "User-agent: LohiSoftBot\nUser-agent: bingbot\nCrawl-delay: 7\nDisallow: /tmp/\n", 7 * time.Second},
		{"joined to star by star's delay", "User-agent: *\nCrawl-delay: 3\n\nUser-agent: LohiSoftBot\nDisallow: /x\n", 3 * time.Second},
		{"capped", "User-agent: *\nCrawl-delay: 120\n\nUser-agent: 008\nDisallow: /\n", MaxCrawlDelay},
		{"own group after rules", "User-agent: *\nCrawl-delay: 30\nDisallow: /a\n\nUser-agent: LohiSoftBot\nCrawl-delay: 1\n", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &robotsEntry{Outcome: db.RobotsParsed, rules: robotstxt.Parse([]byte(tt.body))}
			if got := e.crawlDelay(); got != tt.want {
				t.Errorf("crawlDelay() = %v, want %v\nrobots.txt:\n%s", got, tt.want, tt.body)
			}
		})
	}
}
