// Package mailbot reads the exclusion mailbox: it parses and classifies
// webmasters' emails (any common European language, any common mail client)
// and applies them: exclusions at once, everything else queued for staff.
//
// STUB: Message and Parse are the fixed API; the implementation is being
// written.
package mailbot

import "time"

// Intent is what a message asks for (see testdata/mail/README.md).
type Intent string

// The intents.
const (
	IntentExclude   Intent = "exclude"   // stop crawling one or more sites
	IntentReinclude Intent = "reinclude" // crawl again, undo an exclusion
	IntentOther     Intent = "other"     // a human should read it
	IntentAuto      Intent = "auto"      // machine-generated: auto-reply, bounce, receipt, bulk
)

// MaxSize is the largest message parsed; larger ones go to staff review.
const MaxSize = 10 << 20

// Auth is what the receiving server's Authentication-Results header says
// about the sender.
type Auth struct {
	DKIM   string `json:"dkim,omitempty"`   // pass, fail, none, ... ("" when absent)
	SPF    string `json:"spf,omitempty"`    // pass, fail, softfail, ...
	DMARC  string `json:"dmarc,omitempty"`  // pass, fail, ...
	Domain string `json:"domain,omitempty"` // the authenticated domain (DKIM d=, else SPF, when it passed)
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
}

// Parse parses and classifies one raw RFC 5322 message. It never fails and
// never panics: a malformed or oversized message comes back with intent
// other and Review set to the reason.
func Parse(raw []byte) *Message {
	return &Message{Intent: IntentOther, Review: "not implemented", Size: len(raw)}
}
