package serve

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/app/botpage"
	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/mailbot/reply"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/robotstxt"
	"github.com/lohisoft/lohibot/webbotauth"
)

// Config is everything `lohibot serve` runs with: one value feeds the
// mailbox watcher, the crawl scheduler, the crawler and the bot page, so the
// page cannot state anything the crawler does not do. It is read from a TOML
// file (LoadFile), then overridden key by key (Set) from the environment and
// the command line. Secrets are never read from the file: the IMAP password
// comes from Mail.PasswordFile or is set by the caller from the
// environment.
//
// A Config is a plain value; the daemon never modifies one it was given.
type Config struct {
	// DB is the database DSN (db.Open). Default db.DefaultDSN.
	DB string `toml:"db"`
	// HTTP is the address the HTTP server listens on. Default
	// 127.0.0.1:8080. Changing it needs a restart.
	HTTP string `toml:"http"`
	// Node names this machine in the request log. Default: the host name.
	Node string `toml:"node"`
	// Resolver is the DNS server HOST:PORT for every lookup of the crawler;
	// empty means the system's.
	Resolver string `toml:"resolver"`

	Mail    MailConfig    `toml:"mail"`
	Crawler CrawlerConfig `toml:"crawler"`
	Page    PageConfig    `toml:"page"`
	Log     LogConfig     `toml:"log"`
}

// LogConfig is the publication of the transparency log (package translog)
// at /bot/log/. Its key is apart from the crawler's request-signing key: a
// leaked request key must not forge the log.
type LogConfig struct {
	// KeyFile is the Ed25519 private key (PKCS#8 PEM, 'lohibot keys
	// generate') the log's checkpoints are signed with. Empty means no log
	// is published.
	KeyFile string `toml:"key_file"`
	// Origin is the log's origin line and its key's name. Default
	// translog.DefaultOrigin (lohisoft.com/bot/log).
	Origin string `toml:"origin"`
}

// MailConfig is the exclusion mailbox the watcher watches.
type MailConfig struct {
	// IMAP is imaps://USER@HOST[:PORT]/MAILBOX (or imap:// for STARTTLS).
	// Empty means no watcher (the health check then reports it disabled).
	IMAP string `toml:"imap"`
	// PasswordFile holds the IMAP password (its first line).
	PasswordFile string `toml:"password_file"`
	// Password is the IMAP password when PasswordFile is empty. It is
	// never read from the configuration file.
	Password string `toml:"-"`
	// Insecure allows plaintext or an unverified certificate, for a server
	// on loopback only.
	Insecure bool `toml:"insecure"`
	// ProcessedFolder and ReviewFolder default to mailbot's defaults.
	ProcessedFolder string `toml:"processed_folder"`
	ReviewFolder    string `toml:"review_folder"`
	// AuthservID is the authserv-id of our receiving mail server: only the
	// Authentication-Results headers it added on top are trusted (RFC 8601
	// §5). Empty trusts none: every message is unauthenticated.
	AuthservID string `toml:"authserv_id"`
	// SMTP is smtp://USER@HOST:PORT (STARTTLS) or smtps://USER@HOST:PORT:
	// the server the acknowledgements are submitted to. Empty means no
	// reply is sent.
	SMTP string `toml:"smtp"`
	// SMTPPasswordFile holds the SMTP password (its first line).
	SMTPPasswordFile string `toml:"smtp_password_file"`
	// SMTPPassword is the SMTP password when SMTPPasswordFile is empty
	// (LOHIBOT_SMTP_PASSWORD). It is never read from the configuration file.
	SMTPPassword string `toml:"-"`
	// SMTPInsecure sends smtp:// without TLS, for a server on loopback only.
	SMTPInsecure bool `toml:"smtp_insecure"`
	// From is the address replies come from. Empty means
	// reply.DefaultFrom (message@lohisoft.com).
	From string `toml:"from"`
	// ReplyLimit is the most replies one address gets in 24 hours
	// (default reply.DefaultMaxPerRecipient); ReplyDailyLimit the most
	// sent in all in 24 hours (default reply.DefaultMaxPerDay).
	ReplyLimit      int `toml:"reply_limit"`
	ReplyDailyLimit int `toml:"reply_daily_limit"`
	// UnverifiedLimit is the most sites one sender not verified for them
	// may exclude in 24 hours; more go to staff (default
	// mailbot.DefaultUnverifiedLimit).
	UnverifiedLimit int `toml:"unverified_limit"`
	// UnverifiedHold is how long an unverified exclusion keeps the site's
	// index entries, hidden from search, before they are purged (default
	// policy.DefaultUnverifiedHold, 720h).
	UnverifiedHold Duration `toml:"unverified_hold"`
}

// CrawlerConfig is the crawler and its schedule.
type CrawlerConfig struct {
	// Enabled runs the crawl scheduler. Default true; false serves the
	// page and watches the mailbox only.
	Enabled bool `toml:"enabled"`
	// UserAgent is crawler.UserAgent (default) or crawler.UserAgentEmail.
	UserAgent string `toml:"user_agent"`
	// SourceIP is the address requests are sent from; it must be one of
	// Fleet's. Empty lets the system choose (tests, the demo).
	SourceIP string `toml:"source_ip"`
	// Delay is the minimum gap between two requests to a host. Default
	// crawler.DefaultDelay.
	Delay Duration `toml:"delay"`
	// RecrawlAfter is how long after a cycle started a site is crawled
	// again. Default crawler.DefaultRecrawlAfter.
	RecrawlAfter Duration `toml:"recrawl_after"`
	// MaxSitesParallel is an upper bound on the sites crawled at once (it
	// does not set the speed: a site waiting for its gap holds no request
	// slot). Zero (the default) means the crawler's machine-sized default,
	// crawler.SitesPerCPU per CPU.
	MaxSitesParallel int `toml:"max_sites_parallel"`
	// ScanInterval is how often the crawl list is searched for sites that
	// are due. Default one minute.
	ScanInterval Duration `toml:"scan_interval"`
	// AllowPrivate lets the crawler connect to loopback and private
	// addresses (tests and the demo).
	AllowPrivate bool `toml:"allow_private"`
	// Timeout bounds one request. Default crawler.DefaultTimeout.
	Timeout Duration `toml:"timeout"`
	// Discover adds the sites that crawled pages link to, once
	// DiscoverMinLinks distinct sites link to one, at most DiscoverMaxNew
	// a day (crawler.DiscoverOptions). Default false.
	Discover bool `toml:"discover"`
	// DiscoverMinLinks is how many distinct sites must link to a site
	// before it is added. Default crawler.DefaultDiscoverMinLinks.
	DiscoverMinLinks int `toml:"discover_min_links"`
	// DiscoverMaxNew bounds the sites added per 24 hours, over the fleet.
	// Default crawler.DefaultDiscoverMaxNew.
	DiscoverMaxNew int `toml:"discover_max_new"`
	// Fleet is every crawler machine's address and host name, as the bot
	// page and ips.json publish them. Default identity.DefaultCrawlers().
	Fleet []Machine `toml:"fleet"`
	// SigningKeyFile is the Ed25519 private key (PKCS#8 PEM, 'lohibot keys
	// generate') every request is signed with (Web Bot Auth). Empty means
	// requests are not signed.
	SigningKeyFile string `toml:"signing_key_file"`
	// SignatureAgent is the origin the signatures name in Signature-Agent,
	// where the key directory is served. Default webbotauth.DefaultAgent.
	SignatureAgent string `toml:"signature_agent"`
	// SignatureValidity is how long a request signature is valid. Default
	// webbotauth.DefaultValidity.
	SignatureValidity Duration `toml:"signature_validity"`
	// PublishedKeys are further keys the directory lists (rotation: the
	// next key before it signs, the previous one until its last signature
	// expired), with the window in which each may sign.
	PublishedKeys []PublishedKey `toml:"published_keys"`
}

// PublishedKey is a key the directory lists besides the signing key: a
// file with its public or private key (PEM, or a JWK), and the window in
// which it may sign. NotAfter is when it leaves the directory.
type PublishedKey struct {
	File      string    `toml:"file"`
	NotBefore time.Time `toml:"not_before,omitzero" json:"not_before,omitzero"`
	NotAfter  time.Time `toml:"not_after,omitzero" json:"not_after,omitzero"`
}

// Machine is one crawler machine of the fleet.
type Machine struct {
	IP   string `toml:"ip"`
	Host string `toml:"host"`
}

// PageConfig is what the bot page states beyond the crawler's settings.
type PageConfig struct {
	// URL is the page's public address. Default https://lohisoft.com/bot.
	URL string `toml:"url"`
	// IPsURL is the public address of ips.json. Default URL + "/ips.json".
	IPsURL string `toml:"ips_url"`
	// Operator is who runs the crawler. Default LohiSoft s.r.o.
	Operator string `toml:"operator"`
	// Contact is the exclusion address. Default message@lohisoft.com.
	Contact string `toml:"contact"`
	// Budget is the page budget the page states. Default crawler.Budget;
	// it may not be lower than what the crawler spends.
	Budget int `toml:"budget"`
	// Updated is the page's "last updated" date. Default 2026-08-23.
	Updated Date `toml:"updated"`
}

// Duration is a time.Duration written as a Go duration string ("5s",
// "168h"). A bare number is refused: it would silently mean nanoseconds.
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("serve: duration %q: write it with a unit, like 5s or 168h", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Date is a calendar date, written 2026-08-23 (a TOML local date, or a
// string).
type Date struct{ time.Time }

// UnmarshalTOML implements toml.Unmarshaler.
func (d *Date) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case time.Time:
		d.Time = time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, time.UTC)
		return nil
	case string:
		return d.UnmarshalText([]byte(v))
	}
	return fmt.Errorf("serve: date %v: write it as 2026-08-23", v)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Date) UnmarshalText(b []byte) error {
	t, err := time.Parse(time.DateOnly, string(b))
	if err != nil {
		return fmt.Errorf("serve: date %q: write it as 2026-08-23", b)
	}
	d.Time = t
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.Format(time.DateOnly)), nil }

// DefaultHTTP is the HTTP address when the configuration names none.
const DefaultHTTP = "127.0.0.1:8080"

// DefaultScanInterval is how often the crawl list is searched for due sites.
const DefaultScanInterval = time.Minute

// Defaults of the page.
const (
	DefaultPageURL  = "https://lohisoft.com/bot"
	DefaultOperator = "LohiSoft s.r.o."
	DefaultContact  = "message@lohisoft.com"
)

// defaultPageUpdated is the "last updated" date of the published page.
var defaultPageUpdated = time.Date(2026, 8, 23, 0, 0, 0, 0, time.UTC)

// DefaultConfig returns the configuration that holds when nothing is set:
// the published page's values and the crawler's defaults.
func DefaultConfig() *Config {
	c := &Config{
		DB:   db.DefaultDSN,
		HTTP: DefaultHTTP,
		Mail: MailConfig{
			ProcessedFolder: mailbot.DefaultProcessedFolder,
			ReviewFolder:    mailbot.DefaultReviewFolder,
			ReplyLimit:      reply.DefaultMaxPerRecipient,
			ReplyDailyLimit: reply.DefaultMaxPerDay,
			UnverifiedLimit: mailbot.DefaultUnverifiedLimit,
			UnverifiedHold:  Duration(policy.DefaultUnverifiedHold),
		},
		Crawler: CrawlerConfig{
			Enabled:        true,
			UserAgent:      crawler.UserAgent,
			Delay:          Duration(crawler.DefaultDelay),
			RecrawlAfter:   Duration(crawler.DefaultRecrawlAfter),
			ScanInterval:   Duration(DefaultScanInterval),
			Timeout:        Duration(crawler.DefaultTimeout),
			SignatureAgent: webbotauth.DefaultAgent,

			DiscoverMinLinks: crawler.DefaultDiscoverMinLinks,
			DiscoverMaxNew:   crawler.DefaultDiscoverMaxNew,

			SignatureValidity: Duration(webbotauth.DefaultValidity),
		},
		Page: PageConfig{
			URL:      DefaultPageURL,
			Operator: DefaultOperator,
			Contact:  DefaultContact,
			Budget:   crawler.Budget,
			Updated:  Date{defaultPageUpdated},
		},
	}
	for _, m := range identity.DefaultCrawlers() {
		c.Crawler.Fleet = append(c.Crawler.Fleet, Machine{IP: m.IP.String(), Host: m.Host})
	}
	return c
}

// ErrConfig is wrapped by every error about the configuration's content.
var ErrConfig = errors.New("serve: bad configuration")

// LoadFile reads the TOML configuration file at path over the defaults.
// Unknown keys are refused (a typo would silently keep a default), and so
// is any secret: passwords come from files or the environment only.
func LoadFile(path string) (*Config, error) {
	raw, err := boundedread.ReadFile(path, boundedread.ConfigLimit)
	if err != nil {
		return nil, fmt.Errorf("serve: configuration: %w", err)
	}
	c, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads a TOML configuration over the defaults; see LoadFile.
func Parse(raw []byte) (*Config, error) {
	c := DefaultConfig()
	fleet := c.Crawler.Fleet
	c.Crawler.Fleet = nil
	md, err := toml.NewDecoder(bytes.NewReader(raw)).Decode(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		k := u[0] // the first unknown key is enough to refuse the file
		name := k.String()
		last := k[len(k)-1]
		if strings.Contains(strings.ToLower(last), "password") || strings.Contains(strings.ToLower(last), "secret") {
			return nil, fmt.Errorf("%w: %s: secrets are never read from the configuration file: use mail.password_file or the %s environment variable", ErrConfig, name, "LOHIBOT_IMAP_PASSWORD")
		}
		return nil, fmt.Errorf("%w: unknown key %s", ErrConfig, name)
	}
	if !md.IsDefined("crawler", "fleet") {
		c.Crawler.Fleet = fleet
	}
	if hasPassword(c.DB) {
		return nil, fmt.Errorf("%w: db: the DSN holds a password; keep it out of the configuration file (PGPASSFILE, ~/.pgpass, or LOHIBOT_DB in the environment)", ErrConfig)
	}
	return c, nil
}

// hasPassword reports whether a postgres:// DSN carries a password.
func hasPassword(dsn string) bool {
	rest, ok := strings.CutPrefix(dsn, "postgres://")
	if !ok {
		rest, ok = strings.CutPrefix(dsn, "postgresql://")
	}
	if !ok {
		return strings.Contains(dsn, "password=")
	}
	userinfo, _, found := strings.Cut(rest, "@")
	if found && !strings.Contains(userinfo, "/") && strings.Contains(userinfo, ":") {
		return true
	}
	return strings.Contains(dsn, "password=")
}

// settingKeys are the keys Set knows, in the order Keys lists them.
var settingKeys = []string{
	"db", "http", "node", "resolver",
	"mail.imap", "mail.password_file", "mail.insecure", "mail.processed_folder", "mail.review_folder",
	"mail.authserv_id", "mail.smtp", "mail.smtp_password_file", "mail.smtp_insecure", "mail.from",
	"mail.reply_limit", "mail.reply_daily_limit", "mail.unverified_limit", "mail.unverified_hold",
	"crawler.enabled", "crawler.user_agent", "crawler.source_ip", "crawler.delay", "crawler.recrawl_after",
	"crawler.max_sites_parallel", "crawler.scan_interval", "crawler.allow_private", "crawler.timeout", "crawler.fleet",
	"crawler.discover", "crawler.discover_min_links", "crawler.discover_max_new",
	"crawler.signing_key_file", "crawler.signature_agent", "crawler.signature_validity",
	"page.url", "page.ips_url", "page.operator", "page.contact", "page.budget", "page.updated",
	"log.key_file", "log.origin",
}

// Keys returns the keys Set accepts: the file's keys, dotted
// (crawler.delay). The environment variable of a key is LOHIBOT_ followed
// by the key in upper case with dots as underscores (LOHIBOT_CRAWLER_DELAY).
func Keys() []string { return slices.Clone(settingKeys) }

// EnvName returns the environment variable that overrides key.
func EnvName(key string) string {
	return "LOHIBOT_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Set overrides one key (see Keys) with a value written as on the command
// line: durations like 5s, booleans true/false, crawler.fleet as
// IP=HOST,IP=HOST.
func (c *Config) Set(key, value string) error {
	bad := func(err error) error { return fmt.Errorf("%w: %s=%q: %w", ErrConfig, key, value, err) }
	str := map[string]*string{
		"db": &c.DB, "http": &c.HTTP, "node": &c.Node, "resolver": &c.Resolver,
		"mail.imap": &c.Mail.IMAP, "mail.password_file": &c.Mail.PasswordFile,
		"mail.processed_folder": &c.Mail.ProcessedFolder, "mail.review_folder": &c.Mail.ReviewFolder,
		"mail.authserv_id": &c.Mail.AuthservID, "crawler.user_agent": &c.Crawler.UserAgent, "crawler.source_ip": &c.Crawler.SourceIP,
		"crawler.signing_key_file": &c.Crawler.SigningKeyFile, "crawler.signature_agent": &c.Crawler.SignatureAgent,
		"mail.smtp": &c.Mail.SMTP, "mail.smtp_password_file": &c.Mail.SMTPPasswordFile, "mail.from": &c.Mail.From,
		"page.url": &c.Page.URL, "page.ips_url": &c.Page.IPsURL, "page.operator": &c.Page.Operator,
		"page.contact": &c.Page.Contact, "log.key_file": &c.Log.KeyFile, "log.origin": &c.Log.Origin,
	}
	boolean := map[string]*bool{
		"mail.insecure": &c.Mail.Insecure, "mail.smtp_insecure": &c.Mail.SMTPInsecure, "crawler.enabled": &c.Crawler.Enabled,
		"crawler.allow_private": &c.Crawler.AllowPrivate, "crawler.discover": &c.Crawler.Discover,
	}
	dur := map[string]*Duration{
		"crawler.delay": &c.Crawler.Delay, "crawler.recrawl_after": &c.Crawler.RecrawlAfter,
		"crawler.scan_interval": &c.Crawler.ScanInterval, "crawler.timeout": &c.Crawler.Timeout,
		"crawler.signature_validity": &c.Crawler.SignatureValidity, "mail.unverified_hold": &c.Mail.UnverifiedHold,
	}
	integer := map[string]*int{
		"crawler.max_sites_parallel": &c.Crawler.MaxSitesParallel, "page.budget": &c.Page.Budget,
		"mail.reply_limit": &c.Mail.ReplyLimit, "mail.reply_daily_limit": &c.Mail.ReplyDailyLimit,
		"mail.unverified_limit":      &c.Mail.UnverifiedLimit,
		"crawler.discover_min_links": &c.Crawler.DiscoverMinLinks, "crawler.discover_max_new": &c.Crawler.DiscoverMaxNew,
	}
	switch {
	case str[key] != nil:
		*str[key] = value
	case boolean[key] != nil:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return bad(errors.New("want true or false"))
		}
		*boolean[key] = b
	case dur[key] != nil:
		if err := dur[key].UnmarshalText([]byte(value)); err != nil {
			return bad(err)
		}
	case integer[key] != nil:
		n, err := strconv.Atoi(value)
		if err != nil {
			return bad(errors.New("want a whole number"))
		}
		*integer[key] = n
	case key == "page.updated":
		if err := c.Page.Updated.UnmarshalText([]byte(value)); err != nil {
			return bad(err)
		}
	case key == "crawler.fleet":
		var fleet []Machine
		for _, part := range strings.Split(value, ",") {
			ip, host, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok {
				return bad(errors.New("want IP=HOST,IP=HOST"))
			}
			fleet = append(fleet, Machine{IP: ip, Host: host})
		}
		c.Crawler.Fleet = fleet
	default:
		return fmt.Errorf("%w: unknown key %q", ErrConfig, key)
	}
	return nil
}

// ReadSecrets reads the IMAP password from Mail.PasswordFile and the SMTP
// password from Mail.SMTPPasswordFile, when set (their first line). It
// does I/O.
func (c *Config) ReadSecrets() error {
	if f := c.Mail.SMTPPasswordFile; f != "" {
		b, err := boundedread.ReadFile(f, boundedread.SecretLimit)
		if err != nil {
			return fmt.Errorf("serve: mail.smtp_password_file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		c.Mail.SMTPPassword = strings.TrimRight(line, "\r")
	}
	if c.Mail.PasswordFile == "" {
		return nil
	}
	b, err := boundedread.ReadFile(c.Mail.PasswordFile, boundedread.SecretLimit)
	if err != nil {
		return fmt.Errorf("serve: mail.password_file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	c.Mail.Password = strings.TrimRight(line, "\r")
	return nil
}

// SMTPSender returns the SMTP sender of mail.smtp, or nil when it is
// empty, or why it cannot be used. It does no I/O.
func (c *Config) SMTPSender() (*reply.SMTP, error) {
	if c.Mail.SMTP == "" {
		return nil, nil
	}
	m, err := reply.ParseSMTPURL(c.Mail.SMTP)
	if err != nil {
		return nil, fmt.Errorf("mail.smtp: %w", err)
	}
	if c.Mail.SMTPInsecure && !m.IsLoopback() {
		return nil, fmt.Errorf("mail.smtp_insecure is only allowed for a server on loopback, not %s", m.Host)
	}
	m.Insecure = c.Mail.SMTPInsecure
	if m.User != "" {
		if c.Mail.SMTPPassword == "" {
			return nil, fmt.Errorf("no SMTP password: set mail.smtp_password_file or LOHIBOT_SMTP_PASSWORD")
		}
		m.Password = c.Mail.SMTPPassword
	}
	if a, err := mail.ParseAddress(c.Mail.From); c.Mail.From != "" && (err != nil || a.Address != c.Mail.From) {
		return nil, fmt.Errorf("mail.from %q is not a bare email address", c.Mail.From)
	}
	return m, nil
}

// Fleet returns the crawler machines as identity.Crawlers.
func (c *Config) Fleet() ([]identity.Crawler, error) {
	out := make([]identity.Crawler, 0, len(c.Crawler.Fleet))
	for _, m := range c.Crawler.Fleet {
		ip, err := netip.ParseAddr(m.IP)
		if err != nil {
			return nil, fmt.Errorf("%w: crawler.fleet: %q is not an IP address", ErrConfig, m.IP)
		}
		out = append(out, identity.Crawler{IP: ip, Host: strings.ToLower(strings.TrimSuffix(m.Host, "."))})
	}
	if err := identity.CheckCrawlers(out); err != nil {
		return nil, fmt.Errorf("%w: crawler.fleet: %w", ErrConfig, err)
	}
	return out, nil
}

// Validate reports every way in which c cannot be run, or in which the
// page would state something the crawler does not do. It does no I/O.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.DB == "" {
		add("db is empty")
	}
	if _, port, err := net.SplitHostPort(c.HTTP); err != nil {
		add("http %q is not HOST:PORT", c.HTTP)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		add("http %q: bad port %q (want 0 to 65535)", c.HTTP, port)
	}
	if c.Mail.AuthservID != "" && !mailbot.ValidAuthservID(c.Mail.AuthservID) {
		add("mail.authserv_id %q is not an authserv-id (a name such as mx1.lohisoft.com)", c.Mail.AuthservID)
	}
	if c.Resolver != "" {
		if err := resolver.Check(c.Resolver); err != nil {
			add("resolver %q is not HOST:PORT with a port from 1 to 65535", c.Resolver)
		}
	}
	if c.Mail.IMAP != "" {
		ep, err := mailbot.ParseIMAPURL(c.Mail.IMAP)
		switch {
		case err != nil:
			add("mail.imap: %v", err)
		case c.Mail.Insecure && !ep.IsLoopback():
			add("mail.insecure is only allowed for a server on loopback, not %s", ep.Host)
		}
		if c.Mail.Password == "" {
			add("no IMAP password: set mail.password_file or LOHIBOT_IMAP_PASSWORD")
		}
		if c.Mail.ProcessedFolder == "" || c.Mail.ReviewFolder == "" {
			add("mail folders must not be empty")
		}
	}
	if c.Mail.SMTP != "" {
		if _, err := c.SMTPSender(); err != nil {
			add("%v", err)
		}
	}
	if c.Mail.ReplyLimit < 1 || c.Mail.ReplyDailyLimit < 1 || c.Mail.UnverifiedLimit < 1 {
		add("mail.reply_limit, mail.reply_daily_limit and mail.unverified_limit must be at least 1")
	}
	if c.Mail.UnverifiedHold <= 0 {
		add("mail.unverified_hold must be positive")
	}
	cr := &c.Crawler
	if cr.UserAgent != crawler.UserAgent && cr.UserAgent != crawler.UserAgentEmail {
		add("crawler.user_agent %q: must be %q or %q (the page documents only these)", cr.UserAgent, crawler.UserAgent, crawler.UserAgentEmail)
	}
	if cr.Delay <= 0 || cr.RecrawlAfter <= 0 || cr.ScanInterval <= 0 || cr.Timeout <= 0 {
		add("crawler durations must be positive")
	}
	if cr.DiscoverMinLinks < 1 || cr.DiscoverMaxNew < 0 {
		add("crawler.discover_min_links must be at least 1, crawler.discover_max_new not negative")
	}
	if cr.MaxSitesParallel < 0 {
		add("crawler.max_sites_parallel must not be negative (0: the default)")
	}
	fleet, err := c.Fleet()
	if err != nil {
		errs = append(errs, err)
	}
	if cr.SourceIP != "" {
		ip, err := netip.ParseAddr(cr.SourceIP)
		switch {
		case err != nil:
			add("crawler.source_ip %q is not an IP address", cr.SourceIP)
		case fleet != nil && !slices.ContainsFunc(fleet, func(m identity.Crawler) bool { return m.IP == ip.Unmap() }):
			add("crawler.source_ip %s is not one of the addresses the page publishes (crawler.fleet)", ip)
		}
	}
	if _, err := webbotauth.Origin(cr.SignatureAgent); err != nil {
		add("crawler.signature_agent: %v", err)
	}
	if cr.SignatureValidity <= 0 || time.Duration(cr.SignatureValidity) > webbotauth.MaxValidity {
		add("crawler.signature_validity must be positive and at most %s", webbotauth.MaxValidity)
	}
	for i, k := range cr.PublishedKeys {
		if k.File == "" {
			add("crawler.published_keys[%d]: no file", i)
		}
		if !k.NotBefore.IsZero() && !k.NotAfter.IsZero() && !k.NotAfter.After(k.NotBefore) {
			add("crawler.published_keys[%d] (%s): not_after is not after not_before", i, k.File)
		}
	}
	if c.Log.Origin != "" && (strings.ContainsAny(c.Log.Origin, "+ \t\n") || !utf8.ValidString(c.Log.Origin)) {
		add("log.origin %q is not a log origin (a name such as lohisoft.com/bot/log, no spaces or '+')", c.Log.Origin)
	}
	if c.Page.Budget < crawler.Budget {
		add("page.budget %d is below the %d pages the crawler may spend on a site", c.Page.Budget, crawler.Budget)
	}
	if _, err := c.Facts(time.Time{}); err != nil && fleet != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Facts returns what the bot page states under c, with the IP list created
// at ipsCreated.
func (c *Config) Facts(ipsCreated time.Time) (*botpage.Facts, error) {
	fleet, err := c.Fleet()
	if err != nil {
		return nil, err
	}
	uas := []botpage.UserAgent{{String: c.Crawler.UserAgent, Status: botpage.InUse}}
	switch c.Crawler.UserAgent {
	case crawler.UserAgentEmail:
		uas = append(uas, botpage.UserAgent{String: crawler.UserAgent, Status: botpage.RollingOut})
	case crawler.UserAgent:
		uas = append(uas, botpage.UserAgent{String: crawler.UserAgentEmail, Status: botpage.Older})
	}
	ipsURL := c.Page.IPsURL
	if ipsURL == "" {
		ipsURL = strings.TrimSuffix(c.Page.URL, "/") + "/ips.json"
	}
	f := &botpage.Facts{
		Bot:        robotstxt.ProductToken,
		UserAgents: uas,
		Operator:   c.Page.Operator,
		Contact:    c.Page.Contact,
		Crawlers:   fleet,
		BotDomain:  identity.BotDomain,
		Budget:     c.Page.Budget,
		URL:        c.Page.URL,
		IPsURL:     ipsURL,
		Updated:    c.Page.Updated.Time,
		IPsCreated: ipsCreated,
	}
	if c.Crawler.SigningKeyFile != "" {
		if f.SignatureAgent, err = webbotauth.Origin(c.Crawler.SignatureAgent); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		f.DirectoryURL = f.SignatureAgent + webbotauth.DirectoryPath
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%w: page: %w", ErrConfig, err)
	}
	return f, nil
}
