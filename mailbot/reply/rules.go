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
)

// Envelope is what the header of a received message says about replying
// to it.
type Envelope struct {
	// To is the address a reply goes to: the envelope sender (Return-Path)
	// or else the From address; "" when there is none.
	To string
	// MessageID is the received message's Message-ID with angle brackets,
	// "" when it has none.
	MessageID string
	// References is the received message's References (or In-Reply-To)
	// field, unfolded.
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
	env.MessageID = strings.TrimSpace(h.Get("Message-Id"))
	env.References = strings.Join(strings.Fields(h.Get("References")), " ")
	if env.References == "" {
		env.References = strings.Join(strings.Fields(h.Get("In-Reply-To")), " ")
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
		to = bareAddress(h.Get("From"))
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
