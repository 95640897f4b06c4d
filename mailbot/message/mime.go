package message

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/charset"
	"github.com/emersion/go-message/textproto"
	"golang.org/x/text/encoding/charmap"

	"github.com/lohisoft/lohibot/internal/termsafe"
)

// body is what the MIME tree of a message holds for the classifier.
type body struct {
	text      string       // the readable text of the message, in order
	forwards  []forwarded  // attached messages (message/rfc822)
	report    string       // report-type of a top-level multipart/report
	reportSub bool         // a delivery-status or disposition-notification part was seen
	attached  []Attachment // attachments skipped
	errs      []string     // what could not be decoded
	fatal     string       // why the message cannot be read at all
}

// forwarded is an attached message/rfc822: a forward as attachment.
type forwarded struct {
	subject string
	text    string
}

// walker walks the MIME tree of one message.
type walker struct {
	b     *body
	parts int
}

// extractBody reads the body of a message whose header has been read.
func extractBody(h message.Header, r io.Reader) *body {
	b := &body{}
	w := &walker{b: b}
	mt, params := contentType(h)
	if mt == "multipart/report" {
		b.report = strings.ToLower(params["report-type"])
	}
	var sb strings.Builder
	w.entity(&sb, h, r, 0)
	b.text = sb.String()
	return b
}

// contentType returns the media type (lowercase; text/plain when missing
// or unparsable, as RFC 2045 says) and its parameters.
func contentType(h message.Header) (string, map[string]string) {
	if !h.Has("Content-Type") {
		return "text/plain", map[string]string{}
	}
	mt, params, err := h.ContentType()
	if err != nil || mt == "" {
		// A broken parameter list still has a usable media type.
		v := h.Get("Content-Type")
		if i := strings.IndexByte(v, ';'); i >= 0 {
			v = v[:i]
		}
		mt = strings.ToLower(strings.TrimSpace(v))
		if params == nil {
			params = map[string]string{}
		}
		if b := paramValue(h.Get("Content-Type"), "boundary"); b != "" {
			params["boundary"] = b
		}
		if c := paramValue(h.Get("Content-Type"), "charset"); c != "" {
			params["charset"] = c
		}
		if !strings.Contains(mt, "/") {
			mt = "text/plain"
		}
	}
	return mt, params
}

// paramValue finds name=value in a header value by hand, for parameter
// lists that mime.ParseMediaType refuses.
func paramValue(v, name string) string {
	lv := strings.ToLower(v)
	i := strings.Index(lv, name+"=")
	if i < 0 {
		return ""
	}
	s := v[i+len(name)+1:]
	if strings.HasPrefix(s, `"`) {
		if j := strings.IndexByte(s[1:], '"'); j >= 0 {
			return s[1 : j+1]
		}
		return strings.TrimPrefix(s, `"`)
	}
	if j := strings.IndexAny(s, "; \t"); j >= 0 {
		s = s[:j]
	}
	return s
}

// isAttachment says whether a part is an attachment rather than text to
// read: a Content-Disposition of attachment, or a file name.
func isAttachment(h message.Header, params map[string]string) bool {
	disp, dparams, _ := h.ContentDisposition()
	if disp == "attachment" {
		return true
	}
	if dparams["filename"] != "" || params["name"] != "" {
		return true
	}
	return false
}

// entity appends the readable text of one entity to sb.
func (w *walker) entity(sb *strings.Builder, h message.Header, r io.Reader, depth int) {
	w.parts++
	if w.parts > maxParts {
		w.errorf("more than %d MIME parts; the rest is skipped", maxParts)
		return
	}
	if depth > maxDepth {
		w.errorf("MIME parts nested deeper than %d; skipped", maxDepth)
		return
	}
	mt, params := contentType(h)
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		w.multipart(sb, mt, params, r, depth)
	case mt == "message/rfc822" || mt == "message/global":
		w.attachedMessage(r, depth)
	case mt == "message/delivery-status" || mt == "message/global-delivery-status" ||
		mt == "message/disposition-notification" || mt == "message/global-disposition-notification":
		w.b.reportSub = true
	case mt == "text/plain" || mt == "text/html" || mt == "text/enriched" || mt == "text/markdown" || mt == "text/x-markdown":
		if isAttachment(h, params) {
			w.attach(h, mt, params)
			return
		}
		text := w.decodePart(h, params, r)
		switch mt {
		case "text/html":
			text = htmlToText(text)
		case "text/enriched":
			text = htmlToText(text) // its <bold> and such are dropped the same way
		default:
			if strings.EqualFold(params["format"], "flowed") {
				text = unflow(text, strings.EqualFold(params["delsp"], "yes"))
			}
		}
		appendBlock(sb, text)
	default:
		w.attach(h, mt, params)
	}
}

// attach lists a part that is not read as text.
func (w *walker) attach(h message.Header, mt string, params map[string]string) {
	_, dparams, _ := h.ContentDisposition()
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	w.b.attached = append(w.b.attached, Attachment{Name: termsafe.Line(name, 200), Type: mt})
}

// multipart reads the parts of a multipart entity.
func (w *walker) multipart(sb *strings.Builder, mt string, params map[string]string, r io.Reader, depth int) {
	// A broken top-level structure makes the message unreadable; a broken
	// part inside it only loses that part.
	fail := w.fatalf
	if depth > 0 {
		fail = w.errorf
	}
	boundary := params["boundary"]
	if boundary == "" {
		fail("%s without a boundary", mt)
		return
	}
	mr := textproto.NewMultipartReader(r, boundary)
	type alt struct {
		text  string
		plain bool
	}
	var alts []alt
	first := true
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if first {
				fail("%s: %v", mt, err)
			} else if !errors.Is(err, io.ErrUnexpectedEOF) {
				// A missing closing boundary is common and harmless.
				w.errorf("%s: %v", mt, err)
			}
			break
		}
		ph := message.Header{Header: p.Header}
		switch mt {
		case "multipart/alternative":
			var psb strings.Builder
			pmt, _ := contentType(ph)
			w.entity(&psb, ph, p, depth+1)
			alts = append(alts, alt{psb.String(), pmt == "text/plain"})
		case "multipart/report":
			// The first part is the human-readable report; the others
			// are the machine-readable status and the returned message.
			if first {
				w.entity(sb, ph, p, depth+1)
			} else {
				switch pmt, _ := contentType(ph); pmt {
				case "message/delivery-status", "message/global-delivery-status",
					"message/disposition-notification", "message/global-disposition-notification":
					w.b.reportSub = true
				}
			}
		case "multipart/related":
			// The root part is the message; the others are its images.
			if first {
				w.entity(sb, ph, p, depth+1)
			} else {
				pmt, pparams := contentType(ph)
				w.attach(ph, pmt, pparams)
			}
		default: // mixed, signed, parallel, digest and unknown kinds
			w.entity(sb, ph, p, depth+1)
		}
		first = false
		if w.parts > maxParts {
			break
		}
	}
	if mt == "multipart/alternative" {
		// Prefer the plain text (its quoting is the reliable one), else
		// whatever readable version there is.
		best := -1
		for i, a := range alts {
			if strings.TrimSpace(a.text) == "" {
				continue
			}
			if best < 0 || (a.plain && !alts[best].plain) {
				best = i
			}
		}
		if best >= 0 {
			appendBlock(sb, alts[best].text)
		}
	}
}

// attachedMessage reads an attached message (a forward as attachment).
func (w *walker) attachedMessage(r io.Reader, depth int) {
	h, br, err := readHeader(r)
	if err != nil {
		w.errorf("attached message: %v", err)
		return
	}
	var sb strings.Builder
	sub := &walker{b: &body{}, parts: w.parts}
	sub.entity(&sb, h, br, depth+1)
	w.parts = sub.parts
	w.b.errs = append(w.b.errs, sub.b.errs...)
	if sub.b.fatal != "" {
		w.b.errs = append(w.b.errs, "attached message: "+sub.b.fatal)
	}
	subject := headerText(h.Get("Subject"))
	w.b.attached = append(w.b.attached, Attachment{Name: termsafe.Line(subject, 200), Type: "message/rfc822"})
	w.b.forwards = append(w.b.forwards, forwarded{subject: subject, text: sb.String()})
	w.b.forwards = append(w.b.forwards, sub.b.forwards...)
}

// decodePart returns the text of a leaf part: transfer encoding undone,
// charset converted to UTF-8, with fallbacks for what is mislabelled.
func (w *walker) decodePart(h message.Header, params map[string]string, r io.Reader) string {
	raw, err := io.ReadAll(io.LimitReader(r, MaxSize))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		w.errorf("reading part: %v", err)
	}
	data, err := decodeTransfer(h.Get("Content-Transfer-Encoding"), raw)
	if err != nil {
		w.errorf("%v", err)
	}
	if len(data) > maxTextBytes {
		data = data[:maxTextBytes]
	}
	return decodeText(data, params["charset"])
}

// decodeTransfer undoes a Content-Transfer-Encoding leniently: what can be
// decoded is kept, and the error says what could not.
func decodeTransfer(enc string, raw []byte) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "base64":
		// Decode what is valid: skip line breaks and stray characters, and
		// decode each run between padding separately (some mailers
		// concatenate encoded chunks).
		var out []byte
		var firstErr error
		seg := make([]byte, 0, len(raw))
		decodeSeg := func() {
			if rem := len(seg) % 4; rem == 1 {
				seg = seg[:len(seg)-1]
			}
			if len(seg) == 0 {
				return
			}
			buf := make([]byte, base64.RawStdEncoding.DecodedLen(len(seg)))
			n, err := base64.RawStdEncoding.Decode(buf, seg)
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("base64: %w", err)
			}
			out = append(out, buf[:n]...)
			seg = seg[:0]
		}
		for _, c := range raw {
			switch {
			case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
				seg = append(seg, c)
			case c == '=':
				decodeSeg()
			}
		}
		decodeSeg()
		return out, firstErr
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		if err == nil {
			return out, nil
		}
		return decodeQPLeniently(raw), nil
	default: // 7bit, 8bit, binary, and unknown encodings read as they are
		return raw, nil
	}
}

// decodeQPLeniently decodes quoted-printable that the standard decoder
// refuses: a bad escape is kept as it is.
func decodeQPLeniently(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '=' {
			out = append(out, c)
			continue
		}
		rest := raw[i+1:]
		switch {
		case len(rest) >= 2 && rest[0] == '\r' && rest[1] == '\n':
			i += 2
		case len(rest) >= 1 && rest[0] == '\n':
			i++
		case len(rest) >= 2 && isHex(rest[0]) && isHex(rest[1]):
			out = append(out, unhex(rest[0])<<4|unhex(rest[1]))
			i += 2
		default:
			// Soft line break with trailing space, or a stray "=".
			j := 0
			for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t') {
				j++
			}
			if j < len(rest) && (rest[j] == '\n' || rest[j] == '\r') {
				i += j
				if rest[j] == '\r' && j+1 < len(rest) && rest[j+1] == '\n' {
					i++
				}
				i++
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// decodeText converts text in the named charset to UTF-8. Text labelled
// UTF-8 or US-ASCII (or not labelled) that is not valid UTF-8 is read as
// windows-1252, the usual truth behind such labels; ISO-8859-1 is read as
// its superset windows-1252, as browsers do. An unknown charset falls back
// the same way.
func decodeText(data []byte, cs string) string {
	name := strings.ToLower(strings.Trim(strings.TrimSpace(cs), `"'`))
	switch name {
	case "", "us-ascii", "ascii", "utf-8", "utf8", "unicode-1-1-utf-8", "x-unknown", "unknown-8bit", "unknown", "default", "iso-8859-1", "latin1", "iso8859-1", "iso_8859-1", "windows-1252", "cp1252", "x-user-defined":
		if name != "iso-8859-1" && name != "latin1" && name != "iso8859-1" && name != "iso_8859-1" && name != "windows-1252" && name != "cp1252" && utf8.Valid(data) {
			return string(data)
		}
		if isASCII(data) {
			return string(data)
		}
		out, err := charmap.Windows1252.NewDecoder().Bytes(data)
		if err != nil {
			return strings.ToValidUTF8(string(data), "\uFFFD")
		}
		return string(out)
	}
	r, err := charset.Reader(name, bytes.NewReader(data))
	if err != nil {
		return decodeText(data, "")
	}
	out, err := io.ReadAll(r)
	if err != nil && len(out) == 0 {
		return decodeText(data, "")
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// charsetReader is the mime.WordDecoder hook for RFC 2047 words.
func charsetReader(cs string, input io.Reader) (io.Reader, error) {
	data, err := io.ReadAll(input)
	if err != nil {
		return nil, err
	}
	return strings.NewReader(decodeText(data, cs)), nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// unflow undoes format=flowed (RFC 3676): a line ending in a space joins
// the next one at the same quote depth; space-stuffing is removed.
func unflow(text string, delsp bool) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []string
	var cur strings.Builder
	curDepth, open := 0, false
	flush := func() {
		if open {
			out = append(out, strings.Repeat(">", curDepth)+prefixSpace(curDepth)+cur.String())
			cur.Reset()
			open = false
		}
	}
	for _, l := range lines {
		depth := 0
		for depth < len(l) && l[depth] == '>' {
			depth++
		}
		content := l[depth:]
		content = strings.TrimPrefix(content, " ") // space-stuffing
		if open && depth != curDepth {
			flush()
		}
		soft := strings.HasSuffix(content, " ") && content != "-- "
		if soft && delsp {
			content = content[:len(content)-1]
		}
		cur.WriteString(content)
		curDepth, open = depth, true
		if !soft {
			flush()
		}
	}
	flush()
	return strings.Join(out, "\n")
}

func prefixSpace(depth int) string {
	if depth > 0 {
		return " "
	}
	return ""
}

// appendBlock appends a block of text, separated from the previous one.
func appendBlock(sb *strings.Builder, text string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	if strings.TrimSpace(text) == "" {
		return
	}
	if sb.Len() > 0 {
		sb.WriteString("\n\n")
	}
	sb.WriteString(text)
}

func (w *walker) errorf(format string, args ...any) {
	if len(w.b.errs) < 10 {
		w.b.errs = append(w.b.errs, fmt.Sprintf(format, args...))
	}
}

func (w *walker) fatalf(format string, args ...any) {
	if w.b.fatal == "" {
		w.b.fatal = fmt.Sprintf(format, args...)
	}
}
