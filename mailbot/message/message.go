// Package message decodes one raw email into what a reader needs: the
// header fields that matter, the readable text (MIME structure walked,
// transfer encodings undone, charsets converted to UTF-8, HTML turned into
// text), that text split into the sender's new text, the quoted part and
// the signature, and the list of attachments. It decides nothing about
// what the message asks for: that is package classify.
package message

import (
	"time"

	"github.com/emersion/go-message"
)

// MaxSize is the largest message decoded; a larger one is read for its
// header only and Fatal says why.
const MaxSize = 10 << 20

// Message is one decoded email.
type Message struct {
	// Header is the top-level header as read (possibly partial when
	// Fatal is set).
	Header message.Header
	// MessageID is the Message-ID without angle brackets, or, when the
	// message has none, a stable id derived from its content.
	MessageID string
	From      string    // bare sender address, lowercase; "" when none
	Subject   string    // decoded (RFC 2047), one line
	Date      time.Time // zero when missing or unparsable
	Size      int       // bytes of the raw message

	// Text is all the readable text of the body, in order, in UTF-8.
	Text string
	// New is the part of Text its sender wrote: without quoted replies
	// and without the signature. Text forwarded inline counts as new.
	New string
	// Quoted is the quoted reply text left out of New ("> " lines, and
	// everything below an attribution such as "On … wrote:"), and
	// QuotedLines the number of its non-empty lines.
	Quoted      string
	QuotedLines int
	// Signature is the text below a "-- " line (or an HTML signature
	// block), left out of New.
	Signature string

	// Attachments lists the parts not read as text, in order, including
	// attached messages (Type message/rfc822, Name their subject).
	Attachments []Attachment
	// Forwards holds the attached messages (forwards as attachment, the
	// original of a bounce), decoded.
	Forwards []Forward
	// Report is the report-type of a top-level multipart/report
	// (delivery-status, disposition-notification); "" otherwise.
	Report string
	// ReportPart is true when a delivery-status or disposition
	// notification part was seen anywhere.
	ReportPart bool

	// Errors says what part of the message could not be decoded.
	Errors []string
	// Fatal says why the message cannot be read as a whole (malformed,
	// too large); "" when it was read.
	Fatal string
	// BodyRead is false when Fatal stopped the reading before the body
	// (too large, a broken header): only header fields are known.
	BodyRead bool
}

// Attachment is a part of a message that is not read as text.
type Attachment struct {
	Name string // file name, or the subject of an attached message; "" when none
	Type string // media type, lowercase
}

// Forward is an attached message/rfc822.
type Forward struct {
	Subject string // decoded
	Text    string // all its readable text
	New     string // its new text (see Message.New)
}
