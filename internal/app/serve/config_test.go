package serve_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/internal/app/botpage"
	"github.com/lohisoft/lohibot/internal/app/serve"
)

const fullConfig = `
db = "/var/lib/lohibot/lohibot.db"
http = "127.0.0.1:9090"
node = "crawler1"
resolver = "127.0.0.1:5353"

[mail]
imap = "imaps://message%40lohisoft.com@imap.lohisoft.com/INBOX"
password_file = "/etc/lohibot/imap-password"
processed_folder = "Done"
review_folder = "Staff"
reply_limit = 2
reply_daily_limit = 100
unverified_limit = 5
unverified_hold = "240h"

[crawler]
enabled = true
user_agent = "LohiSoftBot/1.0 (+message@lohisoft.com)"
source_ip = "79.139.58.121"
delay = "7s"
recrawl_after = "72h"
max_sites_parallel = 8
scan_interval = "30s"
timeout = "20s"
signing_key_file = "/etc/lohibot/signing.pem"
signature_agent = "https://lohisoft.com"
signature_validity = "10m"

[[crawler.published_keys]]
file = "/etc/lohibot/previous.pub.pem"
not_after = 2026-12-01T12:00:00Z

[[crawler.fleet]]
ip = "79.139.58.98"
host = "crawler1.bot.lohisoft.com"

[[crawler.fleet]]
ip = "79.139.58.121"
host = "crawler2.bot.lohisoft.com."

[page]
url = "https://lohisoft.com/bot"
ips_url = "https://lohisoft.com/bot/ips.json"
operator = "LohiSoft s.r.o."
contact = "optout@lohisoft.com"
budget = 25
updated = 2026-09-30
`

func TestParseFull(t *testing.T) {
	got, err := serve.Parse([]byte(fullConfig))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := serve.DefaultConfig()
	want.DB = "/var/lib/lohibot/lohibot.db"
	want.HTTP = "127.0.0.1:9090"
	want.Node = "crawler1"
	want.Resolver = "127.0.0.1:5353"
	want.Mail = serve.MailConfig{IMAP: "imaps://message%40lohisoft.com@imap.lohisoft.com/INBOX", PasswordFile: "/etc/lohibot/imap-password",
		ProcessedFolder: "Done", ReviewFolder: "Staff", ReplyLimit: 2, ReplyDailyLimit: 100, UnverifiedLimit: 5,
		UnverifiedHold: serve.Duration(240 * time.Hour)}
	want.Crawler = serve.CrawlerConfig{Enabled: true, UserAgent: crawler.UserAgentEmail, SourceIP: "79.139.58.121",
		Delay: serve.Duration(7 * time.Second), RecrawlAfter: serve.Duration(72 * time.Hour), MaxSitesParallel: 8,
		ScanInterval: serve.Duration(30 * time.Second), Timeout: serve.Duration(20 * time.Second),
		DiscoverMinLinks: crawler.DefaultDiscoverMinLinks, DiscoverMaxNew: crawler.DefaultDiscoverMaxNew,
		Fleet:          []serve.Machine{{IP: "79.139.58.98", Host: "crawler1.bot.lohisoft.com"}, {IP: "79.139.58.121", Host: "crawler2.bot.lohisoft.com."}},
		SigningKeyFile: "/etc/lohibot/signing.pem", SignatureAgent: "https://lohisoft.com", SignatureValidity: serve.Duration(10 * time.Minute),
		PublishedKeys: []serve.PublishedKey{{File: "/etc/lohibot/previous.pub.pem", NotAfter: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}}}
	want.Page = serve.PageConfig{URL: "https://lohisoft.com/bot", IPsURL: "https://lohisoft.com/bot/ips.json", Operator: "LohiSoft s.r.o.",
		Contact: "optout@lohisoft.com", Budget: 25, Updated: serve.Date{Time: time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse(full) mismatch (-want +got):\n%s", diff)
	}
	got.Mail.Password = "x"
	if err := got.Validate(); err != nil {
		t.Errorf("Validate(full) = %v, want nil", err)
	}
	f, err := got.Facts(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	wantUAs := []botpage.UserAgent{{String: crawler.UserAgentEmail, Status: botpage.InUse}, {String: crawler.UserAgent, Status: botpage.RollingOut}}
	if diff := cmp.Diff(wantUAs, f.UserAgents); diff != "" {
		t.Errorf("Facts().UserAgents mismatch (-want +got):\n%s", diff)
	}
	if f.Budget != 25 || f.Contact != "optout@lohisoft.com" || f.Crawlers[1].Host != "crawler2.bot.lohisoft.com" {
		t.Errorf("Facts() = budget %d, contact %q, host %q", f.Budget, f.Contact, f.Crawlers[1].Host)
	}
}

func TestParseDefaults(t *testing.T) {
	got, err := serve.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(serve.DefaultConfig(), got); diff != "" {
		t.Errorf("Parse(empty) differs from DefaultConfig (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate(defaults) = %v, want nil", err)
	}
	f, err := got.Facts(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if f.IPsURL != "https://lohisoft.com/bot/ips.json" || f.Budget != crawler.Budget || f.UserAgents[0].String != crawler.UserAgent || f.UserAgents[1].Status != botpage.Older {
		t.Errorf("Facts(defaults) = %+v", f)
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"unknown key", "htp = \"127.0.0.1:1\"", "unknown key htp"},
		{"unknown nested key", "[crawler]\ndelay_s = \"1s\"", "unknown key crawler.delay_s"},
		{"password", "[mail]\npassword = \"hunter2\"", "secrets are never read from the configuration file"},
		{"dsn password", "db = \"postgres://lohibot:hunter2@db/lohibot\"", "the DSN holds a password"},
		{"dsn password parameter", "db = \"host=db password=hunter2\"", "the DSN holds a password"},
		{"bare number duration", "[crawler]\ndelay = 5", "write it with a unit"},
		{"bad date", "[page]\nupdated = \"23/08/2026\"", "write it as 2026-08-23"},
		{"not toml", "db = ", "bad configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve.Parse([]byte(tt.toml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) = %v, want an error containing %q", tt.toml, err, tt.want)
			}
			if !errors.Is(err, serve.ErrConfig) {
				t.Errorf("Parse(%q) = %v, want it to wrap ErrConfig", tt.toml, err)
			}
		})
	}
	if _, err := serve.Parse([]byte("db = \"postgres://lohibot@db/lohibot?sslmode=verify-full\"")); err != nil {
		t.Errorf("Parse(DSN without password) = %v, want nil", err)
	}
}

func TestSet(t *testing.T) {
	c := serve.DefaultConfig()
	sets := [][2]string{
		{"db", "postgres://lohibot@db/lohibot"}, {"http", "0.0.0.0:80"}, {"crawler.delay", "2s"},
		{"crawler.enabled", "false"}, {"crawler.max_sites_parallel", "3"}, {"page.budget", "30"},
		{"page.updated", "2027-01-02"}, {"crawler.fleet", "192.0.2.1=c1.bot.lohisoft.com, 192.0.2.2=c2.bot.lohisoft.com"},
		{"mail.insecure", "true"}, {"page.contact", "x@lohisoft.com"},
	}
	for _, kv := range sets {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%q, %q) = %v", kv[0], kv[1], err)
		}
	}
	if c.DB != "postgres://lohibot@db/lohibot" || c.HTTP != "0.0.0.0:80" || c.Crawler.Delay != serve.Duration(2*time.Second) ||
		c.Crawler.Enabled || c.Crawler.MaxSitesParallel != 3 || c.Page.Budget != 30 || c.Page.Updated.Year() != 2027 ||
		len(c.Crawler.Fleet) != 2 || c.Crawler.Fleet[1] != (serve.Machine{IP: "192.0.2.2", Host: "c2.bot.lohisoft.com"}) ||
		!c.Mail.Insecure || c.Page.Contact != "x@lohisoft.com" {
		t.Errorf("after Set: %+v", c)
	}
	for _, kv := range [][2]string{
		{"nope", "1"}, {"crawler.delay", "5"}, {"crawler.enabled", "maybe"}, {"page.budget", "many"}, {"crawler.fleet", "192.0.2.1"},
	} {
		if err := c.Set(kv[0], kv[1]); !errors.Is(err, serve.ErrConfig) {
			t.Errorf("Set(%q, %q) = %v, want an ErrConfig error", kv[0], kv[1], err)
		}
	}
	for _, key := range serve.Keys() {
		if !strings.HasPrefix(serve.EnvName(key), "LOHIBOT_") || strings.ContainsAny(serve.EnvName(key), ".abcdefghijklmnopqrstuvwxyz") {
			t.Errorf("EnvName(%q) = %q", key, serve.EnvName(key))
		}
	}
	if got := serve.EnvName("crawler.max_sites_parallel"); got != "LOHIBOT_CRAWLER_MAX_SITES_PARALLEL" {
		t.Errorf("EnvName(crawler.max_sites_parallel) = %q", got)
	}
	if got := serve.EnvName("db"); got != "LOHIBOT_DB" {
		t.Errorf("EnvName(db) = %q, want LOHIBOT_DB", got)
	}
}

// TestDiscoverConfig: crawler.discover and its two bounds are read from
// the file and from Set, with the crawler's defaults, and checked.
func TestDiscoverConfig(t *testing.T) {
	c, err := serve.Parse([]byte("[crawler]\ndiscover = true\ndiscover_min_links = 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Crawler.Discover || c.Crawler.DiscoverMinLinks != 3 || c.Crawler.DiscoverMaxNew != crawler.DefaultDiscoverMaxNew {
		t.Errorf("parsed %+v; want discover on, 3 links, the default maximum", c.Crawler)
	}
	if err := c.Set("crawler.discover_max_new", "7"); err != nil || c.Crawler.DiscoverMaxNew != 7 {
		t.Errorf("Set(crawler.discover_max_new, 7) = %v; max %d", err, c.Crawler.DiscoverMaxNew)
	}
	if d := serve.DefaultConfig(); d.Crawler.Discover {
		t.Error("discovery is on by default; want off")
	}
	c.Crawler.DiscoverMinLinks = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "discover_min_links") {
		t.Errorf("Validate(discover_min_links = 0) = %v; want an error naming it", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*serve.Config)
		want   string
	}{
		{"unknown user agent", func(c *serve.Config) { c.Crawler.UserAgent = "Mozilla/5.0" }, "crawler.user_agent"},
		{"source not in the fleet", func(c *serve.Config) { c.Crawler.SourceIP = "192.0.2.9" }, "not one of the addresses the page publishes"},
		{"source not an address", func(c *serve.Config) { c.Crawler.SourceIP = "crawler1" }, "crawler.source_ip"},
		{"budget below the crawler's", func(c *serve.Config) { c.Page.Budget = crawler.Budget - 1 }, "page.budget"},
		{"IPv6 in the fleet", func(c *serve.Config) {
			c.Crawler.Fleet = []serve.Machine{{IP: "2001:db8::1", Host: "c.bot.lohisoft.com"}}
		}, "not IPv4"},
		{"host outside the bot zone", func(c *serve.Config) { c.Crawler.Fleet = []serve.Machine{{IP: "192.0.2.1", Host: "mail.lohisoft.com"}} }, "bot.lohisoft.com"},
		{"empty fleet", func(c *serve.Config) { c.Crawler.Fleet = nil }, "no crawler address"},
		{"imap without password", func(c *serve.Config) { c.Mail.IMAP = "imaps://bot@127.0.0.1/INBOX" }, "no IMAP password"},
		{"insecure remote imap", func(c *serve.Config) {
			c.Mail.IMAP, c.Mail.Password, c.Mail.Insecure = "imaps://bot@imap.lohisoft.com/INBOX", "x", true
		}, "only allowed for a server on loopback"},
		{"bad imap url", func(c *serve.Config) { c.Mail.IMAP, c.Mail.Password = "http://imap/", "x" }, "mail.imap"},
		{"bad http", func(c *serve.Config) { c.HTTP = "8080" }, "http"},
		{"http port out of range", func(c *serve.Config) { c.HTTP = "127.0.0.1:99999" }, `bad port "99999"`},
		{"negative parallel", func(c *serve.Config) { c.Crawler.MaxSitesParallel = -1 }, "max_sites_parallel"},
		{"negative delay", func(c *serve.Config) { c.Crawler.Delay = -1 }, "durations must be positive"},
		{"contact not an address", func(c *serve.Config) { c.Page.Contact = "write to us" }, "contact"},
		{"page url relative", func(c *serve.Config) { c.Page.URL = "/bot" }, "page URL"},
		{"authserv-id with blanks", func(c *serve.Config) { c.Mail.AuthservID = "mx1 lohisoft.com;" }, "mail.authserv_id"},
		{"resolver port out of range", func(c *serve.Config) { c.Resolver = "127.0.0.1:99999" }, "resolver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve.DefaultConfig()
			tt.change(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, serve.ErrConfig) {
				t.Errorf("Validate() = %v, want an ErrConfig error containing %q", err, tt.want)
			}
		})
	}
}

func TestReadSecrets(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\r\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := serve.DefaultConfig()
	c.Mail.PasswordFile = pw
	if err := c.ReadSecrets(); err != nil || c.Mail.Password != "s3cret" {
		t.Errorf("ReadSecrets() = %v, password %q; want nil, s3cret", err, c.Mail.Password)
	}
	c.Mail.PasswordFile = filepath.Join(dir, "missing")
	if err := c.ReadSecrets(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadSecrets(missing) = %v, want ErrNotExist", err)
	}
	if _, err := serve.LoadFile(filepath.Join(dir, "missing.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile(missing) = %v, want ErrNotExist", err)
	}
}

// TestAuthservID: mail.authserv_id comes from the file or the environment
// key, and is empty (trust no Authentication-Results header) by default.
func TestAuthservID(t *testing.T) {
	c, err := serve.Parse([]byte("[mail]\nauthserv_id = \"mx1.lohisoft.com\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Mail.AuthservID != "mx1.lohisoft.com" {
		t.Errorf("Mail.AuthservID = %q, want mx1.lohisoft.com", c.Mail.AuthservID)
	}
	if err := c.Set("mail.authserv_id", "mx2.lohisoft.com"); err != nil || c.Mail.AuthservID != "mx2.lohisoft.com" {
		t.Errorf("Set(mail.authserv_id) = %v, AuthservID %q", err, c.Mail.AuthservID)
	}
	if serve.EnvName("mail.authserv_id") != "LOHIBOT_MAIL_AUTHSERV_ID" {
		t.Errorf("EnvName = %q", serve.EnvName("mail.authserv_id"))
	}
	if d := serve.DefaultConfig(); d.Mail.AuthservID != "" {
		t.Errorf("default AuthservID = %q, want empty", d.Mail.AuthservID)
	}
}
