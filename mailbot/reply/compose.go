package reply

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// maxQuoteLines is how many lines of the sender's text a reply quotes.
const maxQuoteLines = 6

// draft is one reply to write.
type draft struct {
	kind      string // db.ReplyAck or db.ReplyReceived
	from      string
	to        string
	env       *Envelope
	sites     []string
	at        time.Time // when the sites were excluded
	lang      string
	quote     string // the sender's own text
	messageID string // the reply's Message-ID, without angle brackets
	date      time.Time
	logURL    string // the transparency log's base URL; "" leaves it out
}

// newMessageID returns a unique Message-ID (without angle brackets) in the
// domain of from.
func newMessageID(from string, now time.Time) string {
	domain := "lohisoft.com"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && at < len(from)-1 {
		domain = from[at+1:]
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("lohibot-reply.%d.%s@%s", now.UnixNano(), hex.EncodeToString(b[:]), domain)
}

// body returns the reply's text: greeting, what was done, robots.txt, how to
// come back, and a short quote of the sender's message.
func (d *draft) body() string {
	t, _ := textFor(d.lang)
	var b strings.Builder
	para := func(s string) {
		b.WriteString(wrap(s, 72))
		b.WriteString("\n\n")
	}
	b.WriteString(t.Hello + "\n\n")
	if d.kind == db.ReplyAck {
		para(t.Ack)
		for _, s := range d.sites {
			b.WriteString("    " + s + "\n")
		}
		b.WriteString("\n")
		para(fmt.Sprintf(t.When, d.at.UTC().Format("2006-01-02 15:04 UTC")))
		para(t.After)
		if d.logURL != "" {
			para(fmt.Sprintf(t.Log, strings.TrimSuffix(d.logURL, "/")+"/checkpoint"))
		}
		para(t.Robots)
		para(t.Back)
	} else {
		para(t.Received)
	}
	b.WriteString("LohiSoft\nhttps://lohisoft.com/bot\n")
	if q := quoteOf(d.quote, d.env.Subject); q != "" {
		b.WriteString("\n" + t.Quote + "\n" + q)
	}
	return b.String()
}

// quoteOf returns the first lines of the sender's text (or the subject when
// the text is empty), each prefixed "> ".
func quoteOf(text, subject string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.TrimRight(l, "\r"))
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > 200 {
			l = string(r[:199]) + "…"
		}
		lines = append(lines, "> "+l)
		if len(lines) == maxQuoteLines {
			lines = append(lines, "> […]")
			break
		}
	}
	if len(lines) == 0 && subject != "" {
		lines = append(lines, "> "+subject)
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// wrap breaks s into lines of at most width runes at spaces.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := len([]rune(w))
		if i > 0 {
			if n+1+l > width {
				b.WriteString("\n")
				n = 0
			} else {
				b.WriteString(" ")
				n++
			}
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

// headerSafe replaces the characters that may not appear in a header
// value we write.
var headerSafe = strings.NewReplacer("\r", " ", "\n", " ", "\x00", "")

// bytes returns the whole reply message: RFC 5322 header with the RFC 3834
// fields, and the body as UTF-8 quoted-printable text.
func (d *draft) bytes() []byte {
	_, lang := textFor(d.lang)
	subject := d.env.Subject
	if subject == "" {
		subject = "LohiSoftBot"
	}
	if !strings.HasPrefix(strings.ToLower(subject), "re:") {
		subject = "Re: " + subject
	}
	var h bytes.Buffer
	// No value may break the header: a CR or LF (which every value
	// here is already free of) would start a field of the sender's
	// choosing.
	field := func(k, v string) { fmt.Fprintf(&h, "%s: %s\r\n", k, headerSafe.Replace(v)) }
	field("From", "LohiSoft <"+d.from+">")
	field("To", "<"+d.to+">")
	field("Subject", mime.QEncoding.Encode("utf-8", subject))
	field("Date", d.date.Format(time.RFC1123Z))
	field("Message-ID", "<"+d.messageID+">")
	if d.env.MessageID != "" {
		field("In-Reply-To", d.env.MessageID)
		refs := strings.TrimSpace(d.env.References + " " + d.env.MessageID)
		field("References", refs)
	}
	field("Auto-Submitted", "auto-replied")
	field("X-Auto-Response-Suppress", "All")
	field("Content-Language", lang)
	field("MIME-Version", "1.0")
	field("Content-Type", "text/plain; charset=utf-8")
	field("Content-Transfer-Encoding", "quoted-printable")
	h.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&h)
	body := strings.ReplaceAll(d.body(), "\n", "\r\n")
	_, _ = qp.Write([]byte(body))
	_ = qp.Close()
	return h.Bytes()
}
