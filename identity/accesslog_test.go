package identity_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/identity"
)

func TestParseLine(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		name   string
		format identity.Format
		line   string
		want   identity.Entry // zero Addr: malformed
	}{
		{"combined", identity.FormatCombined,
			`79.139.58.98 - - [01/May/2026:12:00:00 +0200] "GET /a?b=c HTTP/1.1" 200 5120 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"`,
			identity.Entry{Addr: netip.MustParseAddr("79.139.58.98"), Time: at("2026-05-01T10:00:00Z"), Method: "GET", Target: "/a?b=c", Status: 200, UserAgent: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"}},
		{"combined escapes and extra fields", identity.FormatCombined,
			`::ffff:1.2.3.4 - bob [01/May/2026:10:00:00 -0030] "GET /\"q\" HTTP/1.0" 304 - "http://x/" "A \"B\" \x43" "1.2.3.5" rt=0.1`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:30:00Z"), Method: "GET", Target: `/"q"`, Status: 304, UserAgent: `A "B" C`}},
		{"vhost_combined", identity.FormatCombined,
			`www.example.com:443 2001:db8::7 - - [01/May/2026:10:00:00 +0000] "HEAD / HTTP/1.1" 200 0 "-" "curl/8"`,
			identity.Entry{Addr: netip.MustParseAddr("2001:db8::7"), Time: at("2026-05-01T10:00:00Z"), Method: "HEAD", Target: "/", Host: "www.example.com:443", Status: 200, UserAgent: "curl/8"}},
		{"unreadable request is kept", identity.FormatCombined,
			`1.2.3.4 - - [01/May/2026:10:00:00 +0000] "\x16\x03\x01" 400 0 "-" "-"`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:00:00Z"), Status: 400}},
		{"combined without user agent", identity.FormatCombined,
			`1.2.3.4 - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 10`, identity.Entry{}},
		{"host name instead of address", identity.FormatCombined,
			`crawler1.bot.lohisoft.com - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0"`, identity.Entry{}},
		{"bad time", identity.FormatCombined,
			`1.2.3.4 - - [31/Feb/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 10 "-" "x"`, identity.Entry{}},
		{"bad status", identity.FormatCombined,
			`1.2.3.4 - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" OK 10 "-" "x"`, identity.Entry{}},
		{"unterminated quote", identity.FormatCombined,
			`1.2.3.4 - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0`, identity.Entry{}},
		{"common", identity.FormatCommon,
			`1.2.3.4 - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 10`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:00:00Z"), Method: "GET", Target: "/", Status: 200}},
		{"common, no request quotes", identity.FormatCommon,
			`1.2.3.4 - - [01/May/2026:10:00:00 +0000] GET / 200 10`, identity.Entry{}},
		{"json nginx", identity.FormatJSON,
			`{"remote_addr":"1.2.3.4","time_local":"01/May/2026:10:00:00 +0000","request":"GET /x HTTP/1.1","status":"200","http_user_agent":"LohiSoftBot/1.0","http_host":"Example.com"}`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:00:00Z"), Method: "GET", Target: "/x", Host: "Example.com", Status: 200, UserAgent: "LohiSoftBot/1.0"}},
		{"json caddy", identity.FormatJSON,
			`{"ts":1777629609.5,"request":{"client_ip":"1.2.3.4","method":"GET","host":"example.com","uri":"/a","headers":{"User-Agent":["LohiSoftBot/1.0"]}},"status":200}`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:00:09.5Z"), Method: "GET", Target: "/a", Host: "example.com", Status: 200, UserAgent: "LohiSoftBot/1.0"}},
		{"json traefik", identity.FormatJSON,
			`{"ClientAddr":"[2001:db8::1]:443","StartUTC":"2026-05-01T10:00:00.25Z","RequestMethod":"POST","RequestPath":"/p","DownstreamStatus":201,"request_User-Agent":"x"}`,
			identity.Entry{Addr: netip.MustParseAddr("2001:db8::1"), Time: at("2026-05-01T10:00:00.25Z"), Method: "POST", Target: "/p", Status: 201, UserAgent: "x"}},
		{"json epoch milliseconds and query", identity.FormatJSON,
			`{"ip":"1.2.3.4","timestamp":1777629600000,"method":"GET","path":"/s","args":"q=1","@version":"1"}`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:00:00Z"), Method: "GET", Target: "/s?q=1"}},
		{"json escapes", identity.FormatJSON,
			`{"ip":"1.2.3.4","t\u0069me":"2026-05-01T10:00:00Z","request":"GET /\u00e9\/x HTTP/1.1","user_agent":"\"LohiSoftBot\"\ud83d\ude00","nested":[{"ip":"9.9.9.9"},[1,true,null,-2.5e3]]}`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:00:00Z"), Method: "GET", Target: "/\u00e9/x", UserAgent: "\"LohiSoftBot\"\U0001F600"}},
		{"json shallow field wins", identity.FormatJSON,
			`{"request":{"remote_ip":"9.9.9.9","uri":"/deep"},"remote_ip":"1.2.3.4","time":"2026-05-01 10:00:00","uri":"/top"}`,
			identity.Entry{Addr: netip.MustParseAddr("1.2.3.4"), Time: at("2026-05-01T10:00:00Z"), Target: "/top"}},
		{"json trailing comma", identity.FormatJSON, `{"ip":"1.2.3.4","time":"2026-05-01T10:00:00Z","uri":"/",}`, identity.Entry{}},
		{"json missing comma", identity.FormatJSON, `{"ip":"1.2.3.4" "time":"2026-05-01T10:00:00Z","uri":"/"}`, identity.Entry{}},
		{"json control character", identity.FormatJSON, "{\"ip\":\"1.2.3.4\",\"time\":\"2026-05-01T10:00:00Z\",\"uri\":\"/\t\"}", identity.Entry{}},
		{"json bad escape", identity.FormatJSON, `{"ip":"1.2.3.4","time":"2026-05-01T10:00:00Z","uri":"/\q"}`, identity.Entry{}},
		{"json two objects", identity.FormatJSON, `{"ip":"1.2.3.4","time":"2026-05-01T10:00:00Z","uri":"/"}{}`, identity.Entry{}},
		{"json without time", identity.FormatJSON, `{"ip":"1.2.3.4","request":"GET / HTTP/1.1"}`, identity.Entry{}},
		{"json without address", identity.FormatJSON, `{"time":"2026-05-01T10:00:00Z","request":"GET / HTTP/1.1"}`, identity.Entry{}},
		{"json without request", identity.FormatJSON, `{"ip":"1.2.3.4","time":"2026-05-01T10:00:00Z"}`, identity.Entry{}},
		{"json array", identity.FormatJSON, `[1,2]`, identity.Entry{}},
		{"json truncated", identity.FormatJSON, `{"ip":"1.2.3.4","time":"2026-05-01T10:00:00Z"`, identity.Entry{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := identity.ParseLine(tt.format, []byte(tt.line))
			if !tt.want.Addr.IsValid() {
				if !errors.Is(err, identity.ErrMalformed) {
					t.Errorf("ParseLine(%s, %q) = %+v, %v; want ErrMalformed", tt.format, tt.line, got, err)
				}
				return
			}
			if err != nil || got.Addr != tt.want.Addr || !got.Time.Equal(tt.want.Time) || got.Method != tt.want.Method ||
				got.Target != tt.want.Target || got.Host != tt.want.Host || got.Status != tt.want.Status || got.UserAgent != tt.want.UserAgent {
				t.Errorf("ParseLine(%s, %q) = %+v, %v; want %+v", tt.format, tt.line, got, err, tt.want)
			}
		})
	}
}

func TestClaimsBot(t *testing.T) {
	tests := []struct {
		ua   string
		want bool
	}{
		{"LohiSoftBot/1.0 (+https://lohisoft.com/bot)", true},
		{"LohiSoftBot/1.0 (+message@lohisoft.com)", true},
		{"Mozilla/5.0 (compatible; LOHISOFTBOT/2.0)", true},
		{"lohisoftbot", true},
		{"x lohiSoftBot", true},
		{"NotLohiSoftBot/1.0", false},
		{"LohiSoftBotX/1.0", false},
		{"LohiSoft Bot/1.0", false},
		{"Mozilla/5.0 (X11; Linux x86_64)", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := identity.ClaimsBot(tt.ua); got != tt.want {
			t.Errorf("ClaimsBot(%q) = %v, want %v", tt.ua, got, tt.want)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		line string
		want identity.Format
	}{
		{`1.2.3.4 - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 10 "-" "x"`, identity.FormatCombined},
		{`1.2.3.4 - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 10`, identity.FormatCommon},
		{` {"ip":"1.2.3.4","time":"2026-05-01T10:00:00Z","request":"GET / HTTP/1.1"}`, identity.FormatJSON},
		{`garbage`, ""},
	}
	for _, tt := range tests {
		if got := identity.DetectFormat([]byte(tt.line)); got != tt.want {
			t.Errorf("DetectFormat(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want identity.Format
		ok   bool
	}{
		{"combined", identity.FormatCombined, true},
		{"Common", identity.FormatCommon, true},
		{"json", identity.FormatJSON, true},
		{"", "", true},
		{"auto", "", true},
		{"w3c", "", false},
	}
	for _, tt := range tests {
		got, err := identity.ParseFormat(tt.in)
		if got != tt.want || (err == nil) != tt.ok || (err != nil && !errors.Is(err, identity.ErrBadFormat)) {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
