package message

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"mime"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/textproto"

	"github.com/lohisoft/lohibot/internal/termsafe"
)

// Limits that keep Read fast on hostile input. They are far above what a
// person writes to an opt-out address.
const (
	maxDepth     = 12        // nested multiparts and message/rfc822
	maxParts     = 500       // MIME parts read per message
	maxTextBytes = 512 << 10 // decoded text kept for classification
	maxHeaderLen = 256 << 10 // header block of a message or part
)

// Read decodes one raw RFC 5322 message. It never fails: what cannot be
// read is said in Fatal (the message as a whole) or Errors (a part), and
// the rest is decoded as far as it goes. It does no I/O, keeps no state and
// is safe for concurrent use. It may panic only on a bug; callers that must
// never fail recover.
func Read(raw []byte) *Message {
	m := &Message{Size: len(raw)}
	// A message saved from an mbox may still start with its "From "
	// separator line, which is not a header field.
	if bytes.HasPrefix(raw, []byte("From ")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw = raw[i+1:]
		}
	}
	if len(raw) > MaxSize {
		m.Fatal = fmt.Sprintf("too large: %d bytes, over the %d-byte limit", len(raw), MaxSize)
		// The header alone still says who sent it and which message it is.
		if h, _, err := readHeader(bytes.NewReader(raw[:min(len(raw), maxHeaderLen)])); err == nil {
			fillHeader(m, h)
		}
		if m.MessageID == "" {
			m.MessageID = contentID(raw)
		}
		return m
	}

	h, br, err := readHeader(bytes.NewReader(raw))
	if err != nil || h.Len() == 0 {
		if err == nil {
			err = fmt.Errorf("no header fields")
		}
		m.Fatal = "malformed: " + termsafe.Line(err.Error(), 200)
		fillHeader(m, h) // what was read before the error
		if m.MessageID == "" {
			m.MessageID = contentID(raw)
		}
		return m
	}
	fillHeader(m, h)
	if m.MessageID == "" {
		m.MessageID = contentID(raw)
	}

	m.BodyRead = true
	b := extractBody(h, br)
	if b.fatal != "" {
		m.Fatal = "malformed: " + termsafe.Line(b.fatal, 200)
	}
	for _, e := range b.errs {
		m.Errors = append(m.Errors, termsafe.Line(e, 200))
	}
	m.Text = b.text
	m.Report = b.report
	m.ReportPart = b.reportSub
	m.Attachments = b.attached
	m.split()
	for _, f := range b.forwards {
		fw := Forward{Subject: f.subject, Text: f.text}
		fw.New, _ = NewText(f.text, IsForwardSubject(f.subject))
		m.Forwards = append(m.Forwards, fw)
	}
	return m
}

// split separates Text into New, Quoted and Signature.
func (m *Message) split() {
	var q Quote
	m.New, q = NewText(m.Text, IsForwardSubject(m.Subject))
	m.Quoted, m.QuotedLines, m.Signature = q.Text, q.Lines, q.Signature
}

// capLen cuts a header value that no sender writes that long.
func capLen(v string, n int) string {
	if len(v) > n {
		return v[:n]
	}
	return v
}

// readHeader reads a header block with a size limit and returns it with a
// reader for the body that follows. What textproto refuses (a line without
// a colon, a header that never ends) is an error.
func readHeader(r io.Reader) (message.Header, *bufio.Reader, error) {
	lr := &limitReader{r: r, n: maxHeaderLen}
	br := bufio.NewReader(lr)
	h, err := textproto.ReadHeader(br)
	lr.n = math.MaxInt
	if err != nil {
		// The fields read before the error are kept.
		return message.Header{Header: h}, br, &headerError{err}
	}
	return message.Header{Header: h}, br, nil
}

// headerError is a header block textproto refused, worded for the staff
// who read the review reason once: go-message's own text ("message:
// malformed MIME header line: x") would repeat what the reason already says.
type headerError struct{ err error }

func (e *headerError) Error() string {
	msg := e.err.Error()
	for _, w := range []struct{ prefix, says string }{
		{"message: malformed MIME header initial line: ", "the header starts with a continuation line: "},
		{"message: malformed MIME header line: ", "a header line without a colon: "},
		{"message: malformed MIME header key: ", "a header name with characters a name cannot have: "},
	} {
		if rest, ok := strings.CutPrefix(msg, w.prefix); ok {
			return w.says + rest
		}
	}
	return "in the header: " + strings.TrimPrefix(msg, "message: ")
}

func (e *headerError) Unwrap() error { return e.err }

// limitReader is io.LimitedReader that reports running out as an error, so
// a header that never ends is not mistaken for a complete one.
type limitReader struct {
	r io.Reader
	n int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("longer than %d bytes", maxHeaderLen)
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}

// fillHeader sets the fields that come straight from the header.
func fillHeader(m *Message, h message.Header) {
	m.Header = h
	m.MessageID = messageID(capLen(h.Get("Message-Id"), 2000))
	m.From = Address(capLen(h.Get("From"), 4000))
	m.Subject = headerText(capLen(h.Get("Subject"), 16000))
	m.Date = parseDate(capLen(h.Get("Date"), 200))
}

// messageID returns the Message-ID without angle brackets and surrounding
// space; when several ids are present, the first. "" when there is none.
func messageID(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, '<'); i >= 0 {
		if j := strings.IndexByte(v[i:], '>'); j > 0 {
			v = v[i+1 : i+j]
		} else {
			v = v[i+1:]
		}
	}
	v = strings.TrimSpace(v)
	if f := strings.Fields(v); len(f) > 1 {
		v = f[0]
	}
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "?")
	}
	return v
}

// contentID is the stable id of a message without a Message-ID: a hash of
// its content, so the same message read again (from IMAP, from an mbox,
// with CRLF or LF line ends, with different trace headers added by the
// servers on the way) gets the same id.
func contentID(raw []byte) string {
	sum := sha256.New()
	br := bufio.NewReader(bytes.NewReader(raw))
	if h, err := textproto.ReadHeader(br); err == nil {
		fields := h.Fields()
		for fields.Next() {
			switch strings.ToLower(fields.Key()) {
			case "received", "return-path", "delivered-to", "x-original-to",
				"authentication-results", "arc-seal", "arc-message-signature",
				"arc-authentication-results", "x-spam-status", "x-spam-score",
				"x-spam-flag", "x-spam-level", "x-virus-scanned", "status",
				"x-uid", "x-keywords", "x-status", "content-length", "lines":
				continue
			}
			fmt.Fprintf(sum, "%s:%s\n", strings.ToLower(fields.Key()), strings.Join(strings.Fields(fields.Value()), " "))
		}
		rest := new(bytes.Buffer)
		_, _ = rest.ReadFrom(br)
		raw = rest.Bytes()
	}
	sum.Write([]byte{0})
	body := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	sum.Write(bytes.TrimRight(body, "\n\r\t "))
	return "sha256-" + hex.EncodeToString(sum.Sum(nil)) + "@lohibot.invalid"
}

// headerWords decodes RFC 2047 encoded words with our charset decoder.
var headerWords = &mime.WordDecoder{CharsetReader: charsetReader}

// headerText decodes an unstructured header value: RFC 2047 encoded words,
// raw 8-bit UTF-8, or raw 8-bit in a legacy charset (read as
// windows-1252). Folding and surrounding space are removed.
func headerText(v string) string {
	if v == "" {
		return ""
	}
	if d, err := headerWords.DecodeHeader(v); err == nil {
		v = d
	} else {
		v = decodeWordsLeniently(v)
	}
	if !utf8.ValidString(v) {
		v = decodeText([]byte(v), "")
	}
	return strings.Join(strings.Fields(v), " ")
}

// decodeWordsLeniently decodes the encoded words it can, one by one, and
// keeps the others as they are (an unknown charset, a broken word).
func decodeWordsLeniently(v string) string {
	var b strings.Builder
	for _, f := range strings.Fields(v) {
		if d, err := headerWords.Decode(f); err == nil {
			b.WriteString(d)
		} else {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Address returns the bare, lowercase address of a From header, or ""
// when it holds none. It copes with what net/mail refuses (unquoted dots
// or brackets in the display name, raw 8-bit, garbage around the address).
func Address(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	p := mail.AddressParser{WordDecoder: headerWords}
	if list, err := p.ParseList(v); err == nil && len(list) > 0 {
		return strings.ToLower(list[0].Address)
	}
	// By hand: the last <...> holding an @, else the first word with one.
	if i := strings.LastIndexByte(v, '<'); i >= 0 {
		if j := strings.IndexByte(v[i:], '>'); j > 0 && strings.Contains(v[i:i+j], "@") {
			return strings.ToLower(strings.TrimSpace(v[i+1 : i+j]))
		}
	}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == ';' || r == '<' || r == '>' || r == '"' || r == '(' || r == ')'
	}) {
		if strings.Contains(f, "@") {
			return strings.ToLower(strings.ToValidUTF8(f, ""))
		}
	}
	return ""
}

// parseDate parses a Date header; zero when missing or unparsable.
func parseDate(v string) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	if t, err := mail.ParseDate(v); err == nil {
		return t.UTC()
	}
	// Drop a trailing comment and an unknown zone name, then try again.
	if i := strings.IndexByte(v, '('); i > 0 {
		if t, err := mail.ParseDate(strings.TrimSpace(v[:i])); err == nil {
			return t.UTC()
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04 -0700"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
