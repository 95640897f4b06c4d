package mailbot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/lohisoft/lohibot/internal/termsafe"
	"github.com/lohisoft/lohibot/mailbot/classify"
	"github.com/lohisoft/lohibot/mailbot/message"
)

// Parse parses and classifies one raw RFC 5322 message. It never fails and
// never panics: a malformed or oversized message comes back with intent
// other and Review set to the reason. It does no I/O, keeps no state and is
// safe for concurrent use.
//
// Parse trusts no Authentication-Results header: the message is
// unauthenticated. ParseTrusting reads the receiving server's.
func Parse(raw []byte) *Message {
	return ParseTrusting(raw, "")
}

// ParseTrusting is Parse reading the sender's authentication from the
// Authentication-Results headers that the receiving server whose
// authserv-id is authservID added on top (RFC 8601 §5); none when
// authservID is "".
func ParseTrusting(raw []byte, authservID string) (m *Message) {
	m = &Message{Intent: IntentOther, Size: len(raw), Action: ActionReview}
	defer func() {
		// Parse promises never to panic; a panic here is a bug, and the
		// message goes to staff with what is known so far.
		if r := recover(); r != nil {
			m.Intent, m.Action = IntentOther, ActionReview
			m.Review = termsafe.Line(fmt.Sprintf("internal error: %v", r), 200)
			if m.MessageID == "" {
				m.MessageID = "sha256-" + hexSum(raw) + "@lohibot.invalid"
			}
		}
	}()
	d := message.Read(raw)
	m.MessageID, m.From, m.Subject, m.Date = d.MessageID, d.From, d.Subject, d.Date
	m.Auth = parseAuth(d.Header, authservID)
	if d.Fatal != "" {
		m.Review = d.Fatal
		m.Reasons = append(m.Reasons, "not classified: "+d.Fatal)
		if !d.BodyRead {
			return m
		}
	}
	for _, e := range d.Errors {
		m.Reasons = append(m.Reasons, "decoding: "+e)
	}
	c := classify.Classify(d)
	m.Intent, m.Domains, m.Lang, m.Action = c.Intent, c.Domains, c.Lang, c.Action
	m.Reasons = append(m.Reasons, c.Reasons...)
	if m.Review != "" {
		// A message we could not read properly is for staff, whatever
		// its words seemed to say.
		m.Intent = IntentOther
	}
	m.Action = Decide(m).Action
	return m
}

func hexSum(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// fromAddress returns the bare, lowercase address of a From header (see
// message.Address).
func fromAddress(v string) string { return message.Address(v) }
