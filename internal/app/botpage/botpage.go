// Package botpage renders LohiSoftBot's public page (/bot) and its
// machine-readable address list (/bot/ips.json) from Facts, the values of
// the running configuration, in English, Italian, Danish and Hungarian.
//
// The page is the bot's promise to webmasters, so nothing on it that the
// crawler can change is written into the texts: the user agents, the
// source addresses and host names, the page budget, the contact address and
// the list's address all come from Facts, which `lohibot serve` builds from
// the same configuration it hands the crawler. The texts (messages/*.toml)
// keep the content and structure of the published Italian, Danish and
// Hungarian pages; the English was written from them.
//
// The package lives in internal/ because it is not API: it is the view of
// `lohibot serve` (internal/app/serve), which owns the configuration, the
// daemon and the other HTTP endpoints. It does no I/O of its own besides
// writing responses.
package botpage

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/identity"
)

// Lang is a language the page is written in: a lowercase ISO 639-1 code.
type Lang string

// The languages of the page.
const (
	English   Lang = "en"
	Italian   Lang = "it"
	Danish    Lang = "da"
	Hungarian Lang = "hu"
)

// DefaultLang is the language served when neither ?lang= nor
// Accept-Language names one of the page's languages.
const DefaultLang = English

// Langs returns the page's languages in the order the language links show
// them. It returns a new slice on every call.
func Langs() []Lang { return []Lang{English, Italian, Danish, Hungarian} }

// UserAgentStatus says how a user agent string is used.
type UserAgentStatus int

// The statuses of a user agent string.
const (
	// InUse is the string the crawler sends now.
	InUse UserAgentStatus = iota
	// RollingOut is a newer string that replaces the one in use.
	RollingOut
	// Older is a string the fleet used before and that may still be seen.
	Older
)

// UserAgent is one user agent string the page documents.
type UserAgent struct {
	String string
	Status UserAgentStatus
}

// Facts are the values the page states. Every field is required unless
// said otherwise; Check says which one is missing or wrong.
type Facts struct {
	// Bot is the product token robots.txt groups are matched on
	// (LohiSoftBot).
	Bot string
	// UserAgents are the user agent strings, the one in use first.
	UserAgents []UserAgent
	// Operator is who runs the crawler (LohiSoft s.r.o.).
	Operator string
	// Contact is the email address for questions and exclusions.
	Contact string
	// Crawlers are the fleet's source addresses and host names.
	Crawlers []identity.Crawler
	// BotDomain is the zone the crawlers' host names are below
	// (identity.BotDomain).
	BotDomain string
	// Budget is the most page requests the crawler spends on a site in one
	// cycle.
	Budget int
	// URL is the page's public address (https://lohisoft.com/bot): the
	// base of the hreflang links.
	URL string
	// IPsURL is the public address of the machine-readable list.
	IPsURL string
	// Updated is the date the page shows as its last update (only the date
	// is shown).
	Updated time.Time
	// IPsCreated is the creationTime of the machine-readable list: when
	// the list of crawlers last changed. Zero means the time of the
	// request.
	IPsCreated time.Time
	// SignatureAgent is the Signature-Agent origin the crawler's Web Bot
	// Auth signatures name (https://lohisoft.com). Empty means requests
	// are not signed, and the page does not say they are.
	SignatureAgent string
	// DirectoryURL is the public address of the key directory
	// (SignatureAgent + /.well-known/http-message-signatures-directory).
	DirectoryURL string
	// KeyIDs are the keyids (JWK thumbprints) the directory lists.
	KeyIDs []string
	// LogURL is the public address of the transparency log (its signed
	// checkpoint is LogURL + "/checkpoint"). Empty means no log is
	// published, and the page does not mention one.
	LogURL string
	// LogVerifierKey is the note verifier key the log's checkpoints are
	// signed with.
	LogVerifierKey string
}

// ErrBadFacts is wrapped by Check's errors.
var ErrBadFacts = errors.New("botpage: bad facts")

// Check reports the first field of f that the page cannot show truthfully:
// a missing value, a contact that is not an email address, an address list
// identity.CheckCrawlers refuses, a budget below one, a user agent list
// whose first entry is not the one in use, or a URL that is not absolute
// http(s).
func (f *Facts) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadFacts, fmt.Sprintf(format, args...))
	}
	switch {
	case strings.TrimSpace(f.Bot) == "":
		return bad("no bot name")
	case len(f.UserAgents) == 0 || f.UserAgents[0].Status != InUse:
		return bad("the first user agent must be the one in use")
	case strings.TrimSpace(f.Operator) == "":
		return bad("no operator")
	case f.Budget < 1:
		return bad("page budget %d is below one", f.Budget)
	case f.BotDomain == "":
		return bad("no bot domain")
	case f.Updated.IsZero():
		return bad("no update date")
	}
	for _, ua := range f.UserAgents {
		if strings.TrimSpace(ua.String) == "" {
			return bad("empty user agent")
		}
	}
	if a, err := mail.ParseAddress(f.Contact); err != nil || a.Address != f.Contact || a.Name != "" {
		return bad("contact %q is not a bare email address", f.Contact)
	}
	if err := identity.CheckCrawlers(f.Crawlers); err != nil {
		return fmt.Errorf("%w: %w", ErrBadFacts, err)
	}
	for _, u := range []struct{ name, v string }{{"page URL", f.URL}, {"IP list URL", f.IPsURL}} {
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.RawQuery != "" || p.Fragment != "" {
			return bad("%s %q is not an absolute http(s) URL without query", u.name, u.v)
		}
	}
	return nil
}

// Product returns the product part of the user agent in use
// (LohiSoftBot/1.0), as the page's summary shows it.
func (f *Facts) Product() string {
	if len(f.UserAgents) == 0 {
		return f.Bot
	}
	p, _, _ := strings.Cut(strings.TrimSpace(f.UserAgents[0].String), " ")
	return p
}

// IPList returns the machine-readable list of f's crawler addresses, the
// same document `lohibot ips` prints, created at f.IPsCreated or, when
// that is zero, at now.
func (f *Facts) IPList(now time.Time) identity.IPList {
	t := f.IPsCreated
	if t.IsZero() {
		t = now
	}
	return identity.NewIPList(f.Crawlers, t)
}
