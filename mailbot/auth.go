package mailbot

import (
	"net/netip"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-msgauth/authres"

	"github.com/lohisoft/lohibot/policy"
)

// parseAuth reads the Authentication-Results headers (RFC 8601) that the
// receiving server identified by authservID added, and no others. With no
// authservID nothing is trusted and the message is unauthenticated.
//
// Anyone can write an Authentication-Results header, with any server's id,
// into the message they send; RFC 8601 §5 asks the receiving server to
// remove such copies of its own id, but not every setup does. What our
// servers add always stands above what the message brought, so only the
// headers of the trusted zone are read (trustedAuth): from the top down to
// the first Received header that a server other than ours added. Within
// it, each method (dkim, spf, dmarc) is taken from the topmost header that
// reports it: a header of our id further down that reports the method
// again came with the message, and is ignored.
//
// Domain is the DKIM signing domain (d=) of a passing signature, preferring
// one aligned with the From domain, else the SPF-verified MAIL FROM domain
// when SPF passed; "" when nothing passed.
func parseAuth(h message.Header, authservID string) Auth {
	values := trustedAuth(h, authservID)
	if len(values) == 0 {
		return Auth{}
	}
	var results []authres.Result
	reported := map[string]bool{} // methods reported by a header above
	for _, v := range values {
		_, rs, _ := authres.Parse(stripComments(v))
		here := map[string]bool{}
		for _, r := range rs {
			m := methodOf(r)
			if reported[m] {
				continue
			}
			here[m] = true
			results = append(results, r)
		}
		for m := range here {
			reported[m] = true
		}
	}

	fromDomain := ""
	if from := fromAddress(h.Get("From")); from != "" {
		fromDomain = normID(from[strings.LastIndexByte(from, '@')+1:])
	}
	var a Auth
	var dkimPass []string // the d= of every passing signature
	spfDomain := ""
	for _, r := range results {
		switch r := r.(type) {
		case *authres.DKIMResult:
			v := string(r.Value)
			d := normID(r.Domain)
			if d == "" && r.Identifier != "" {
				d = normID(r.Identifier[strings.LastIndexByte(r.Identifier, '@')+1:])
			}
			if a.DKIM == "" || a.DKIM != string(authres.ResultPass) && v == string(authres.ResultPass) {
				a.DKIM = v
			}
			if r.Value == authres.ResultPass && d != "" {
				dkimPass = append(dkimPass, d)
			}
		case *authres.SPFResult:
			if a.SPF == "" || a.SPF != string(authres.ResultPass) {
				a.SPF = string(r.Value)
			}
			if r.Value == authres.ResultPass && spfDomain == "" {
				spf := r.From
				if spf == "" {
					spf = r.Helo
				}
				spfDomain = normID(spf[strings.LastIndexByte(spf, '@')+1:])
			}
		case *authres.DMARCResult:
			if a.DMARC == "" || a.DMARC != string(authres.ResultPass) {
				a.DMARC = string(r.Value)
			}
		}
	}
	// Domain: an aligned DKIM pass, else any DKIM pass, else SPF.
	// Aligned: the first of DKIM, then SPF, that is aligned with From.
	for _, d := range dkimPass {
		if aligned(d, fromDomain) {
			a.Domain, a.Aligned = d, d
			break
		}
	}
	if a.Domain == "" && len(dkimPass) > 0 {
		a.Domain = dkimPass[0]
	}
	if a.Domain == "" {
		a.Domain = spfDomain
	}
	if a.Aligned == "" && aligned(spfDomain, fromDomain) {
		a.Aligned = spfDomain
	}
	a.Domain = strings.Trim(a.Domain, "<>. ")
	a.Aligned = strings.Trim(a.Aligned, "<>. ")
	return a
}

// trustedAuth returns, top first, the values of the Authentication-Results
// headers that authservID's server added: walking the header from the top,
// it takes those whose authserv-id is authservID, and stops at the first
// Received header added by a server other than ours (ourReceived). Our own
// Received headers, the hand-over from outside included ("from <sender> by
// <our MX>", above or below which MTAs write their results), do not end
// it. What stands below a foreign server's Received was written before our
// server received the message.
func trustedAuth(h message.Header, authservID string) []string {
	own := normID(authservID)
	if own == "" {
		return nil
	}
	var trusted []string
	fields := h.Fields()
	for fields.Next() {
		switch strings.ToLower(fields.Key()) {
		case "received":
			if !ourReceived(fields.Value(), own) {
				return trusted
			}
		case "authentication-results":
			v := fields.Value()
			id, _, _ := authres.Parse(stripComments(v))
			if normID(id) == own {
				trusted = append(trusted, v)
			}
		}
	}
	return trusted
}

// methodOf names the method of an authentication result.
func methodOf(r authres.Result) string {
	switch r.(type) {
	case *authres.DKIMResult:
		return "dkim"
	case *authres.SPFResult:
		return "spf"
	case *authres.DMARCResult:
		return "dmarc"
	case *authres.AuthResult:
		return "auth"
	case *authres.IPRevResult:
		return "iprev"
	case *authres.DomainKeysResult:
		return "domainkeys"
	}
	return "other"
}

// ValidAuthservID reports whether id can be the authserv-id of our
// receiving server: a token in the sense of RFC 8601 2.2 (RFC 2045 5.1), such
// as mx1.lohisoft.com, with no blanks, control characters or specials. An id
// with them matches no header and would silently trust nothing.
func ValidAuthservID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?=`, r) {
			return false
		}
	}
	return true
}

// normID is an authserv-id or host name as compared: lowercase, without a
// trailing dot or surrounding space.
func normID(id string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(id), "."))
}

// ourReceived reports whether a Received header was added by our server:
// its "by" names our server (the authserv-id's host, or another host of
// its registrable domain: mx1 and mx2.lohisoft.com are one MTA cluster),
// or it records a hop inside the receiving system, with no "from" clause
// and "by" an address rather than a name (Gmail's "Received: by
// 2002:a05:...  with SMTP id"). A foreign server names itself by host
// name, even for mail submitted on it ("Received: by mail.example.net
// (Postfix, from userid 1000)"), so that one ends the trusted zone. The
// "from" part proves nothing: it is the sender's HELO.
func ourReceived(v, own string) bool {
	words := strings.Fields(strings.NewReplacer(";", " ; ").Replace(stripComments(v)))
	by, from := "", false
	for i, w := range words {
		switch strings.ToLower(w) {
		case ";":
			// The date follows.
			return by != "" && (sameServer(by, own) || !from && isAddress(by))
		case "by":
			if by == "" && i+1 < len(words) {
				by = normID(words[i+1])
			}
		case "from":
			from = true
		}
	}
	return by != "" && (sameServer(by, own) || !from && isAddress(by))
}

// isAddress reports whether host is an IP address (bare or as a literal)
// rather than a name.
func isAddress(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	_, err := netip.ParseAddr(strings.TrimPrefix(host, "ipv6:"))
	return err == nil
}

// sameServer reports whether host belongs to the server named by own: the
// same name, or a host of the same registrable domain when own is a domain
// name (mx1 and mx2.lohisoft.com are one MTA cluster).
func sameServer(host, own string) bool {
	if host == own {
		return true
	}
	a, err1 := policy.SiteOfHost(host)
	b, err2 := policy.SiteOfHost(own)
	return err1 == nil && err2 == nil && a == b
}

// aligned says whether two domains share their registrable domain, in the
// relaxed sense of DMARC alignment (RFC 7489 §3.1).
func aligned(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	sa, err1 := policy.SiteOfHost(a)
	sb, err2 := policy.SiteOfHost(b)
	return err1 == nil && err2 == nil && sa == sb
}

// stripComments removes RFC 5322 comments "(...)" (nested, with quoted
// pairs) outside quoted strings: authres splits results at ";" without
// knowing comments, and "(2048-bit key; unprotected)" would break it.
func stripComments(v string) string {
	if !strings.Contains(v, "(") {
		return v
	}
	var b strings.Builder
	depth := 0
	inQuote := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && (depth > 0 || inQuote) && i+1 < len(v):
			if depth == 0 {
				b.WriteByte(c)
				b.WriteByte(v[i+1])
			}
			i++
		case inQuote:
			b.WriteByte(c)
			if c == '"' {
				inQuote = false
			}
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteByte(' ')
			}
		case depth > 0:
		case c == '"':
			inQuote = true
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
