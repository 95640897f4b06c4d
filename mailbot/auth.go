package mailbot

import (
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-msgauth/authres"
)

// parseAuth reads the receiving server's Authentication-Results header
// (RFC 8601). The topmost header is the one our own server added; headers
// further down may have been written by anyone, so one whose authserv-id is
// under lohisoft.com is preferred, and otherwise the topmost is used.
//
// Domain is the DKIM signing domain (d=) of a passing signature, preferring
// one aligned with the From domain, else the SPF-verified MAIL FROM domain
// when SPF passed; "" when nothing passed.
func parseAuth(h message.Header) Auth {
	fields := h.FieldsByKey("Authentication-Results")
	var values []string
	for fields.Next() {
		values = append(values, fields.Value())
	}
	if len(values) == 0 {
		return Auth{}
	}
	chosen := values[0]
	for _, v := range values {
		id, _, _ := authres.Parse(stripComments(v))
		id = strings.ToLower(strings.TrimSuffix(id, "."))
		if id == ownSite || strings.HasSuffix(id, "."+ownSite) {
			chosen = v
			break
		}
	}
	_, results, _ := authres.Parse(stripComments(chosen))

	fromDomain := ""
	if from := fromAddress(h.Get("From")); from != "" {
		fromDomain = from[strings.LastIndexByte(from, '@')+1:]
	}
	var a Auth
	dkimDomain := ""
	for _, r := range results {
		switch r := r.(type) {
		case *authres.DKIMResult:
			v := string(r.Value)
			d := strings.ToLower(strings.TrimSuffix(r.Domain, "."))
			if d == "" && r.Identifier != "" {
				d = strings.ToLower(r.Identifier[strings.LastIndexByte(r.Identifier, '@')+1:])
			}
			// Several signatures: a pass wins, an aligned pass wins over
			// any other.
			switch {
			case a.DKIM == "" || a.DKIM != string(authres.ResultPass) && v == string(authres.ResultPass):
				a.DKIM = v
				if v == string(authres.ResultPass) {
					dkimDomain = d
				}
			case v == string(authres.ResultPass) && aligned(d, fromDomain) && !aligned(dkimDomain, fromDomain):
				dkimDomain = d
			}
		case *authres.SPFResult:
			if a.SPF == "" || a.SPF != string(authres.ResultPass) {
				a.SPF = string(r.Value)
				if r.Value == authres.ResultPass {
					spf := r.From
					if spf == "" {
						spf = r.Helo
					}
					spf = strings.ToLower(spf[strings.LastIndexByte(spf, '@')+1:])
					if a.Domain == "" {
						a.Domain = spf // replaced by DKIM below when it passed
					}
				}
			}
		case *authres.DMARCResult:
			if a.DMARC == "" || a.DMARC != string(authres.ResultPass) {
				a.DMARC = string(r.Value)
			}
		}
	}
	if dkimDomain != "" {
		a.Domain = dkimDomain
	}
	a.Domain = strings.Trim(a.Domain, "<>. ")
	return a
}

// aligned says whether two domains share their registrable domain, in the
// relaxed sense of DMARC alignment.
func aligned(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	return a == b || strings.HasSuffix(a, "."+b) || strings.HasSuffix(b, "."+a)
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
