// Package mailbot reads the exclusion mailbox: it parses and classifies
// webmasters' emails (any common European language, any common mail client)
// and applies them: exclusions at once, everything else queued for staff.
//
// Parse turns one raw RFC 5322 message into a classified Message: package
// mailbot/message decodes it (MIME, charsets, HTML, quotes and signature
// set apart), package mailbot/classify decides its language, intent, sites
// and the reasons, and the sender's authentication comes from the
// receiving server's Authentication-Results header (auth.go). On top of
// that, this package stores and applies messages (process.go), imports
// mailboxes and files (import.go, mbox.go), watches an IMAP mailbox
// (watch.go) and serves the staff review queue (review.go).
package mailbot

import (
	"time"

	"github.com/lohisoft/lohibot/mailbot/classify"
	"github.com/lohisoft/lohibot/mailbot/message"

	"github.com/lohisoft/lohibot/policy"
)

// Intent is what a message asks for (see testdata/mail/README.md); it is
// classify.Intent.
type Intent = classify.Intent

// The intents.
const (
	IntentExclude   = classify.IntentExclude   // stop crawling one or more sites
	IntentReinclude = classify.IntentReinclude // crawl again, undo an exclusion
	IntentOther     = classify.IntentOther     // a human should read it
	IntentAuto      = classify.IntentAuto      // machine-generated: auto-reply, bounce, receipt, bulk
)

// Action is what lohibot dares to do about a message without a human; it
// is classify.Action.
type Action = classify.Action

// The actions.
const (
	ActionApply  = classify.ActionApply  // applied at once, no human asked
	ActionReview = classify.ActionReview // queued for staff
	ActionIgnore = classify.ActionIgnore // machine mail: stored and dropped
)

// MaxSize is the largest message parsed; larger ones go to staff review.
const MaxSize = message.MaxSize

// Auth is what the receiving server's Authentication-Results header says
// about the sender.
type Auth struct {
	DKIM   string `json:"dkim,omitempty"`   // pass, fail, none, ... ("" when absent)
	SPF    string `json:"spf,omitempty"`    // pass, fail, softfail, ...
	DMARC  string `json:"dmarc,omitempty"`  // pass, fail, ...
	Domain string `json:"domain,omitempty"` // the authenticated domain (DKIM d=, else SPF, when it passed)
	// Aligned is the authenticated domain (DKIM d=, else SPF MAIL FROM)
	// that is aligned with the From domain (same registrable domain), ""
	// when none is: only it proves who the sender speaks for.
	Aligned string `json:"aligned,omitempty"`
}

// Message is a parsed and classified email.
type Message struct {
	// MessageID is the Message-ID without angle brackets, or, when the
	// message has none, a stable id derived from its content.
	MessageID string
	From      string    // bare sender address, lowercase
	Subject   string    // decoded
	Date      time.Time // zero when missing or unparsable
	Intent    Intent
	Domains   []string // sorted, de-duplicated sites named in the new text
	Lang      string   // ISO 639-1 code of the new text, "" when unknown
	Auth      Auth
	// Review says why the message needs staff even if its intent alone
	// would not (malformed, too large, ...); "" otherwise.
	Review string
	Size   int
	// Reasons explains the classification for staff, one short phrase per
	// piece of evidence, such as `header Auto-Submitted: auto-replied` or
	// `exclude (en): "stop crawling"`. Nil when there is nothing to say.
	Reasons []string
	// Action is what Processor.Process does with the message (see
	// Decide): ActionApply only for an exclusion that passed the
	// act-alone rule and names valid sites.
	Action Action
}

// Verified reports whether the message proves that its sender speaks for
// site: a trusted Authentication-Results header (see parseAuth) shows a
// DKIM or SPF pass for a domain aligned with From that belongs to site.
func (m *Message) Verified(site string) bool {
	if m == nil || m.Auth.Aligned == "" || site == "" {
		return false
	}
	a, err := policy.SiteOfHost(m.Auth.Aligned)
	return err == nil && a == site
}

// SentBy reports whether the sender's authenticated domain (Auth.Domain)
// belongs to site: the request then came from the site's own people. It
// compares registrable domains, so mail.example.com counts for example.com.
func (m *Message) SentBy(site string) bool {
	if m == nil || m.Auth.Domain == "" || site == "" {
		return false
	}
	a, err := policy.SiteOf(m.Auth.Domain)
	if err != nil {
		return false
	}
	s, err := policy.SiteOf(site)
	if err != nil {
		return false
	}
	return a == s
}
