package botpage_test

import (
	"net/netip"
	"time"

	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/app/botpage"
)

// testFacts returns the facts of the published page.
func testFacts() *botpage.Facts {
	return &botpage.Facts{
		Bot: "LohiSoftBot",
		UserAgents: []botpage.UserAgent{
			{String: "LohiSoftBot/1.0 (+message@lohisoft.com)", Status: botpage.InUse},
			{String: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)", Status: botpage.RollingOut},
		},
		Operator:   "LohiSoft s.r.o.",
		Contact:    "message@lohisoft.com",
		Crawlers:   identity.DefaultCrawlers(),
		BotDomain:  identity.BotDomain,
		Budget:     20,
		URL:        "https://lohisoft.com/bot",
		IPsURL:     "https://lohisoft.com/bot/ips.json",
		Updated:    time.Date(2026, 8, 23, 0, 0, 0, 0, time.UTC),
		IPsCreated: time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC),
	}
}

func crawler(ip, host string) identity.Crawler {
	return identity.Crawler{IP: netip.MustParseAddr(ip), Host: host}
}
