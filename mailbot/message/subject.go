package message

import "strings"

// Reply and forward prefixes of common clients, folded and without the
// colon.
var (
	replyPrefixes = map[string]bool{
		"re": true, "aw": true, "sv": true, "vs": true, "r": true, "ref": true, "rif": true, "odp": true,
		"antw": true, "antwort": true, "res": true, "rv": false, "va": true, "vá": true, "v": true, "atb": true,
		"ynt": true, "odg": true, "ats": true, "atbilde": true, "vast": true, "fr": true, "erantzun": true,
		"ateb": true, "svar": true, "odgovor": true, "одг": true, "одговор": true, "ответ": true, "отв": true,
		"відп": true, "відповідь": true, "отг": true, "отговор": true, "përgj": true, "απ": true, "cvp": true,
		"válasz": true,
	}
	forwardPrefixes = map[string]bool{
		"fwd": true, "fw": true, "wg": true, "tr": true, "i": true, "rv": true, "enc": true, "doorst": true,
		"vs": false, "vb": true, "vl": true, "pd": true, "tov": true, "továbbítás": true, "fwd.": true, "wtr": true,
		"trs": true, "inoltro": true, "fs": true, "pers": true, "pārs": true, "edasi": true, "prosl": true,
		"posr": true, "пересл": true, "препр": true, "πρθ": true, "áfr": true,
	}
)

// firstPrefix returns the folded prefix before the first colon of a
// subject ("AW" of "AW: Sperre"), or "".
func firstPrefix(subject string) string {
	s := strings.TrimSpace(subject)
	s = strings.TrimPrefix(s, "[")
	i := strings.IndexByte(s, ':')
	if i <= 0 || i > 12 {
		return ""
	}
	p := strings.ToLower(strings.TrimSpace(s[:i]))
	if j := strings.IndexAny(p, "[("); j > 0 { // "Re[2]"
		p = p[:j]
	}
	return p
}

// IsReplySubject reports whether a subject starts with a reply prefix
// ("Re:", "AW:", "SV:", ...).
// A reply may hide behind a ticket tag ("[Ticket #4821] Re: …") or an
// auto-reply prefix ("Away: Re: …"): the prefixes are read in a chain.
func IsReplySubject(subject string) bool {
	s := subject
	for range 4 {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "[") {
			// A list or ticket tag: "[#12345]", "[Ticket #4821]".
			if j := strings.IndexByte(s, ']'); j > 0 && j < 40 {
				s = s[j+1:]
				continue
			}
		}
		p := firstPrefix(s)
		if p == "" {
			return false
		}
		if replyPrefixes[p] {
			return true
		}
		s = s[strings.IndexByte(s, ':')+1:]
	}
	return false
}

// IsForwardSubject reports whether a subject starts with a forward prefix
// ("Fwd:", "WG:", "TR:", ...).
func IsForwardSubject(subject string) bool { return forwardPrefixes[firstPrefix(subject)] }
