package reply

import (
	"bufio"
	"bytes"
	"net/mail"
	"strings"

	"github.com/emersion/go-message/textproto"
)

// Skip reasons: why a message gets no reply (RFC 3834 section 2).
const (
	SkipAutomatic   = "automatic message"
	SkipList        = "mailing list or bulk mail"
	SkipBounce      = "bounce (empty envelope sender or delivery report)"
	SkipNoAddress   = "no usable sender address"
	SkipRoleAddress = "address does not take replies (noreply, mailer-daemon, postmaster, ...)"
	SkipOwnAddress  = "our own address"
	SkipRecent      = "a reply about these sites went to this sender in the last 24 hours"
	SkipNothing     = "nothing to acknowledge"
	// SkipUnauthenticated: our receiving server did not authenticate the
	// sender (no DKIM or SPF pass aligned with From) for the reply
	// address: the address may be forged, and a reply would be
	// backscatter.
	SkipUnauthenticated = "sender not authenticated by our mail server (no backscatter)"
	SkipRecipientLimit  = "this address had its replies for the last 24 hours"
	SkipDailyLimit      = "the daily limit of replies is reached"
)

// Envelope is what the header of a received message says about replying
// to it.
type Envelope struct {
	// To is the address a reply goes to: the envelope sender (Return-Path)
	// or else the From address; "" when there is none.
	To string
	// From is the address of the From field, lowercase, "" when it has
	// none that can be written to.
	From string
	// MessageID is the received message's Message-ID with angle brackets
	// when it is a well-formed msg-id (RFC 5322 3.6.4), else "".
	MessageID string
	// References is the well-formed msg-ids of the received message's
	// References (or In-Reply-To) field, space-separated.
	References string
	// Subject is the decoded subject.
	Subject string
	// Skip says why no reply may be sent ("" when one may).
	Skip string
}

// roleLocalParts are local parts that never take automatic replies.
var roleLocalParts = map[string]bool{
	"mailer-daemon": true, "postmaster": true, "noreply": true, "no-reply": true, "no_reply": true,
	"donotreply": true, "do-not-reply": true, "do_not_reply": true, "nobody": true, "bounce": true,
	"bounces": true, "listserv": true, "majordomo": true, "daemon": true, "root": true, "mailerdaemon": true,
}

// isRoleAddress reports whether addr (lowercase) is one that must not be
// answered automatically: no-reply and daemon addresses, list owners and
// request addresses, bounce addresses (VERP).
func isRoleAddress(addr string) bool {
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 {
		return true
	}
	local := addr[:at]
	if i := strings.IndexByte(local, '+'); i > 0 {
		local = local[:i]
	}
	if roleLocalParts[local] {
		return true
	}
	for _, p := range []string{"noreply", "no-reply", "no_reply", "donotreply", "do-not-reply", "bounce", "owner-", "mailer-daemon"} {
		if strings.HasPrefix(local, p) {
			return true
		}
	}
	for _, s := range []string{"-request", "-bounces", "-owner", "-noreply", "-no-reply", "-daemon"} {
		if strings.HasSuffix(local, s) {
			return true
		}
	}
	return false
}

// ReadEnvelope reads the header of raw and decides, by RFC 3834, whether a
// reply may go to its sender and where. own lists our own addresses (a
// message from one of them is never answered). It does no I/O.
func ReadEnvelope(raw []byte, own []string) *Envelope {
	env := &Envelope{}
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(skipFromLine(raw))))
	if err != nil && h.Len() == 0 {
		env.Skip = SkipNoAddress
		return env
	}
	env.MessageID = msgID(h.Get("Message-Id"))
	env.References = msgIDList(h.Get("References"))
	if env.References == "" {
		env.References = msgIDList(h.Get("In-Reply-To"))
	}
	env.Subject = decodeHeader(h.Get("Subject"))

	if v := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted"))); v != "" && !strings.HasPrefix(v, "no") {
		env.Skip = SkipAutomatic
		return env
	}
	for _, f := range []string{"X-Autoreply", "X-Autorespond", "X-Auto-Response-Suppress"} {
		v := strings.ToLower(h.Get(f))
		if f == "X-Auto-Response-Suppress" {
			if strings.Contains(v, "all") || strings.Contains(v, "autoreply") || strings.Contains(v, "oof") {
				env.Skip = SkipAutomatic
				return env
			}
			continue
		}
		if v != "" {
			env.Skip = SkipAutomatic
			return env
		}
	}
	switch strings.ToLower(strings.TrimSpace(h.Get("Precedence"))) {
	case "bulk", "list", "junk":
		env.Skip = SkipList
		return env
	}
	fields := h.Fields()
	for fields.Next() {
		k := strings.ToLower(fields.Key())
		if strings.HasPrefix(k, "list-") || k == "x-mailing-list" || k == "mailing-list" || k == "x-list" {
			env.Skip = SkipList
			return env
		}
	}
	if ct := strings.ToLower(h.Get("Content-Type")); strings.Contains(ct, "multipart/report") ||
		strings.Contains(ct, "delivery-status") {
		env.Skip = SkipBounce
		return env
	}
	env.From = bareAddress(h.Get("From"))
	to := ""
	if h.Has("Return-Path") {
		rp := strings.TrimSpace(h.Get("Return-Path"))
		if rp == "<>" || rp == "" {
			env.Skip = SkipBounce
			return env
		}
		to = bareAddress(rp)
	}
	if to == "" {
		to = env.From
	}
	if to == "" {
		env.Skip = SkipNoAddress
		return env
	}
	env.To = to
	if isRoleAddress(to) {
		env.Skip = SkipRoleAddress
		return env
	}
	for _, o := range own {
		if strings.EqualFold(strings.TrimSpace(o), to) {
			env.Skip = SkipOwnAddress
			return env
		}
	}
	return env
}

// bareAddress returns the lowercase address of a Return-Path or From
// value, "" when it has none that can be written to.
func bareAddress(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	var addr string
	if a, err := mail.ParseAddress(decodeHeader(v)); err == nil {
		addr = a.Address
	} else if i, j := strings.IndexByte(v, '<'), strings.LastIndexByte(v, '>'); i >= 0 && j > i {
		addr = v[i+1 : j]
	} else {
		addr = v
	}
	addr = strings.ToLower(strings.TrimSpace(addr))
	if strings.ContainsAny(addr, " \t\r\n<>,;\"") || strings.Count(addr, "@") != 1 ||
		strings.HasPrefix(addr, "@") || strings.HasSuffix(addr, "@") {
		return ""
	}
	return addr
}

func skipFromLine(raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte("From ")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			return raw[i+1:]
		}
	}
	return raw
}

// maxReferences is the most msg-ids of the received message's References
// a reply carries on (the last ones: RFC 5322 3.6.4 allows trimming a long
// thread), and maxMsgIDLen the longest msg-id taken: with the received
// message's own, the References line stays under the 998-character limit.
const (
	maxReferences = 3
	maxMsgIDLen   = 200
)

// msgID returns v when it is one well-formed msg-id, "<id-left@id-right>"
// (RFC 5322 3.6.4, without the obsolete forms), with surrounding blanks
// removed; "" otherwise. Nothing it returns holds a CR, LF or blank, so it
// can be written into a header as is.
func msgID(v string) string {
	v = strings.Trim(v, " \t\r\n")
	if !validMsgID(v) {
		return ""
	}
	return v
}

// msgIDList returns the well-formed msg-ids of a References or
// In-Reply-To value, space-separated, at most maxReferences of them (the
// last). Anything else in the field is dropped.
func msgIDList(v string) string {
	var ids []string
	for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' || r == ',' }) {
		if validMsgID(w) {
			ids = append(ids, w)
		}
	}
	if len(ids) > maxReferences {
		ids = ids[len(ids)-maxReferences:]
	}
	return strings.Join(ids, " ")
}

func validMsgID(v string) bool {
	if len(v) < 5 || len(v) > maxMsgIDLen || v[0] != '<' || v[len(v)-1] != '>' {
		return false
	}
	left, right, ok := strings.Cut(v[1:len(v)-1], "@")
	if !ok {
		return false
	}
	if !dotAtomText(left) {
		return false
	}
	if strings.HasPrefix(right, "[") && strings.HasSuffix(right, "]") && len(right) >= 2 {
		// no-fold-literal: dtext only.
		for i := 1; i < len(right)-1; i++ {
			if c := right[i]; c < 33 || c > 126 || c == '[' || c == ']' || c == '\\' {
				return false
			}
		}
		return true
	}
	return dotAtomText(right)
}

// dotAtomText reports whether s is RFC 5322 dot-atom-text: atext runs
// joined by single dots.
func dotAtomText(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.':
		case strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
