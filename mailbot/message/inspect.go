package message

import (
	"bytes"
	"io"
	"mime"
	"strings"

	gomessage "github.com/emersion/go-message"
)

// Inspection is a message laid out for staff (lohibot mail show):
// the header fields that matter, the text the classifier read as the
// sender's own, the rest of the text (quotes, signatures), and the
// attachments.
type Inspection struct {
	From      string   `json:"from"`
	To        string   `json:"to"`
	Cc        string   `json:"cc,omitempty"`
	ReplyTo   string   `json:"reply_to,omitempty"`
	Date      string   `json:"date"`
	Subject   string   `json:"subject"`
	MessageID string   `json:"message_id"`
	AuthRes   []string `json:"authentication_results"`
	// NewText is the decoded text the sender wrote in this message (what
	// the classifier reads).
	NewText string `json:"new_text"`
	// Quoted is the rest of the decoded text: quoted earlier messages,
	// signatures, forwarded headers; never read as the request.
	Quoted      string         `json:"quoted"`
	Attachments []AttachedFile `json:"attachments"`
}

// AttachedFile is one attached file or message, as Inspect lists it.
type AttachedFile struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"` // decoded bytes
}

// Inspect lays out raw for staff. It never fails: what cannot be decoded is
// left out. It does no I/O and is safe for concurrent use.
func Inspect(raw []byte) *Inspection {
	in := &Inspection{AuthRes: []string{}, Attachments: []AttachedFile{}}
	defer func() {
		if r := recover(); r != nil {
			in.Quoted = "(the message could not be decoded)"
		}
	}()
	if bytes.HasPrefix(raw, []byte("From ")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw = raw[i+1:]
		}
	}
	if len(raw) > MaxSize {
		raw = raw[:MaxSize]
	}
	h, br, err := readHeader(bytes.NewReader(raw))
	if err != nil && h.Len() == 0 {
		return in
	}
	in.From = headerText(capLen(h.Get("From"), 4000))
	in.To = headerText(capLen(h.Get("To"), 4000))
	in.Cc = headerText(capLen(h.Get("Cc"), 4000))
	in.ReplyTo = headerText(capLen(h.Get("Reply-To"), 4000))
	in.Date = headerText(capLen(h.Get("Date"), 200))
	in.Subject = headerText(capLen(h.Get("Subject"), 16000))
	in.MessageID = strings.TrimSpace(capLen(h.Get("Message-Id"), 2000))
	for _, v := range h.Values("Authentication-Results") {
		in.AuthRes = append(in.AuthRes, strings.Join(strings.Fields(capLen(v, 4000)), " "))
	}
	if err != nil {
		return in
	}
	b := extractBody(h, br)
	full := strings.TrimSpace(b.text)
	in.NewText, _ = NewText(full, IsForwardSubject(in.Subject))
	in.Quoted = remainder(full, in.NewText)
	in.Attachments = attachmentsOf(raw)
	return in
}

// remainder returns the lines of full that are not part of newText (a
// subsequence of full's lines), trimmed: the quoted and signature text.
func remainder(full, newText string) string {
	want := strings.Split(newText, "\n")
	if newText == "" {
		want = nil
	}
	var out []string
	j := 0
	for _, l := range strings.Split(full, "\n") {
		l = strings.TrimRight(l, "\r")
		if j < len(want) && strings.TrimRight(l, " \t") == strings.TrimRight(want[j], " \t") {
			j++
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// attachmentsOf lists the attachments of a message: parts with a file name
// or an attachment disposition, attached messages, and parts that are not
// text.
func attachmentsOf(raw []byte) []AttachedFile {
	out := []AttachedFile{}
	e, err := gomessage.Read(bytes.NewReader(raw))
	if e == nil || (err != nil && !gomessage.IsUnknownCharset(err) && !gomessage.IsUnknownEncoding(err)) {
		return out
	}
	parts := 0
	_ = e.Walk(func(path []int, ent *gomessage.Entity, err error) error {
		parts++
		if err != nil || parts > maxParts {
			return nil
		}
		mt, params, _ := ent.Header.ContentType()
		mt = strings.ToLower(mt)
		if strings.HasPrefix(mt, "multipart/") {
			return nil
		}
		disp, dparams, _ := ent.Header.ContentDisposition()
		name := dparams["filename"]
		if name == "" {
			name = params["name"]
		}
		if name != "" {
			if d, err := headerWords.DecodeHeader(name); err == nil {
				name = d
			}
		}
		isText := mt == "" || mt == "text/plain" || mt == "text/html" || mt == "text/enriched"
		if len(path) == 0 && isText {
			return nil // a single-part message's own text
		}
		if disp != "attachment" && name == "" && isText {
			return nil
		}
		if mt == "" {
			mt = "text/plain"
		}
		n, _ := io.Copy(io.Discard, io.LimitReader(ent.Body, MaxSize))
		out = append(out, AttachedFile{Name: name, Type: mime.FormatMediaType(mt, nil), Size: n})
		return nil
	})
	return out
}
