package classify

import (
	"slices"
	"strings"

	"github.com/lohisoft/lohibot/mailbot/message"
)

// maxAgreeWords is the longest reply read as a bare agreement ("Yes
// please, go ahead."): a longer one says something of its own.
const maxAgreeWords = 12

// refusals are words that make a short reply a refusal, not an agreement.
var refusals = map[string]bool{
	"no": true, "nope": true, "nein": true, "non": true, "nej": true, "nee": true, "nie": true,
	"nem": true, "ne": true, "nao": true, "not": true, "dont": true, "don": true, "ei": true,
	"nu": true, "нет": true, "не": true, "ні": true, "jo": true, "nei": true, "ez": true, "nil": true,
	"οχι": true, "hayir": true,
}

// agreed handles a short reply that only agrees to what our quoted message
// proposed ("Yes please, go ahead." below "Shall we remove example.com
// from our crawl list?"): the reply takes the direction of the proposal
// and the sites it names. It reports whether it decided.
func agreed(res *Result, m *message.Message, sc *scored, toks []token, ev *evidence) bool {
	var yes *hit
	for i := range sc.signals {
		if p := sc.signals[i].phase; p == phaseAgree || p == phasePolite {
			yes = &sc.signals[i]
			break
		}
	}
	if yes == nil || m.Quoted == "" {
		return false
	}
	words := 0
	for _, t := range toksAfterSubject(toks) {
		if t.folded == tokBarrier {
			continue
		}
		if refusals[t.folded] {
			return false
		}
		words++
	}
	if words > maxAgreeWords {
		return false
	}
	if ev.ourReply != "" {
		// Our automatic reply proposes nothing: a "yes" or "thanks" to
		// it leaves its decision as it is (its "reply if you want to
		// come back" is no question to agree to).
		return false
	}
	ours := ourQuote(m.Quoted)
	if ours == "" {
		return false
	}
	var found *scored
	var intent Intent
	var sites []string
	for _, q := range proposals(ours) {
		qt := tokenize(blankEmails(deobfuscate(q)), nil)
		p := scoreIntent(qt, nil)
		var in Intent
		switch {
		case p.re >= 2 && p.re >= p.ex:
			in = IntentReinclude
		case p.ex >= 2:
			in = IntentExclude
		default:
			continue
		}
		if found != nil {
			if in != intent {
				// "Shall we remove it, or crawl it again?": a yes
				// answers neither.
				res.Reasons = append(res.Reasons, "unclear: our quoted message proposes both directions")
				return false
			}
			continue
		}
		found, intent, sites = &p, in, sitesIn(q)
	}
	if found == nil {
		return false
	}
	res.Intent = intent
	res.Reasons = append(res.Reasons, yes.reason()+" to our quoted proposal")
	for _, h := range found.hits {
		res.Reasons = append(res.Reasons, "proposal: "+h.reason())
	}
	// The agreement is the sender's own word, and it has the direction
	// of the question it answers.
	ev.cue = fromAgreement
	for _, d := range sites {
		if !contains(res.Domains, d) {
			res.Domains = append(res.Domains, d)
			ev.sites = fromQuote
		}
	}
	sortStrings(res.Domains)
	if ev.sites == fromQuote {
		res.Reasons = append(res.Reasons, "domain: quoted proposal")
	}
	return true
}

// ourReplyPrefix starts the Message-ID of every automatic reply lohibot
// sends (package reply).
const ourReplyPrefix = "lohibot-reply."

// repliesToOurs returns the Message-ID of our automatic reply that m
// answers (named in In-Reply-To or References), "" when none.
func repliesToOurs(m *message.Message) string {
	for _, k := range []string{"In-Reply-To", "References"} {
		for _, f := range strings.Fields(m.Header.Get(k)) {
			id := strings.Trim(f, "<>,")
			if strings.HasPrefix(strings.ToLower(id), ourReplyPrefix) && strings.Contains(id, "@") {
				return id
			}
		}
	}
	return ""
}

// ourQuote returns the part of a quote that LohiSoft wrote: the quote when
// its attribution or header block names lohisoft, its first level only
// (deeper levels are what the sender wrote before); "" when the quote is
// someone else's.
func ourQuote(quoted string) string {
	lines := strings.Split(quoted, "\n")
	// The attribution or header block is in the first lines.
	attrib := ""
	for i := 0; i < len(lines) && i < 6; i++ {
		t := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(t, ">") {
			attrib += lines[i] + "\n"
		} else if i < 2 && strings.HasSuffix(t, ":") {
			// A mobile client quotes its own attribution: "> On 30 Nov
			// 2026, at 16:45, LohiSoft <…> wrote:".
			attrib += t + "\n"
		}
	}
	if !strings.Contains(message.Fold(attrib), "lohisoft") {
		return ""
	}
	var b strings.Builder
	for _, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(t, ">") {
			t = strings.TrimPrefix(t[1:], " ")
			if strings.HasPrefix(t, ">") {
				continue // quoted in our message: the sender's own words
			}
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}

// replyWords ask for a reply: a sentence holding one ("Reply YES and we
// will remove example.com") proposes something, as a question does.
var replyWords = []string{
	"reply", "answer", "let us know", "antwort", "repondez", "repondre", "rispond", "respond", "svar",
	"antwoord", "odpovez", "odpovedz", "odpowiedz", "valaszol",
}

// readerWords name the person who will read a reply: a sentence holding
// one invites a request ("If you want a site crawled again, reply to this
// message and say so; a person will read it"), it proposes nothing a
// "yes" could accept. These are the words of our acknowledgement's offer
// in its languages.
var readerWords = []string{
	"a person", "ein mensch", "une personne", "una persona", "uma pessoa", "een medewerker", "et menneske",
	"en manniska", "egy munkatarsunk", "clovek", "czlowiek",
}

// proposals returns the sentences of our quoted text that propose
// something: its questions, then the sentences asking for a reply, but
// not an invitation to write to a person.
func proposals(text string) []string {
	out := questions(text)
	for _, s := range sentencesOf(text) {
		f := message.Fold(s)
		if slices.ContainsFunc(readerWords, func(w string) bool { return strings.Contains(f, w) }) {
			continue
		}
		for _, w := range replyWords {
			if strings.Contains(f, w) {
				out = append(out, strings.TrimSpace(s))
				break
			}
		}
	}
	return out
}

// sentencesOf splits text at a ".", "!" or "?" followed by white space or
// the end, so the dots of host names stay.
func sentencesOf(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\r' || text[i+1] == '\t') {
			if t := strings.TrimSpace(text[start:i]); t != "" {
				out = append(out, t)
			}
			start = i + 1
		}
	}
	if t := strings.TrimSpace(text[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// questions returns the sentences of text that end with a question mark.
func questions(text string) []string {
	var out []string
	for {
		i := strings.IndexAny(text, "?？")
		if i < 0 {
			return out
		}
		q := text[:i]
		_, size := firstRune(text[i:])
		text = text[i+size:]
		// The question starts after the previous sentence or paragraph.
		for j := len(q) - 2; j >= 0; j-- {
			if (q[j] == '.' || q[j] == '!') && (q[j+1] == ' ' || q[j+1] == '\n') {
				q = q[j+1:]
				break
			}
		}
		if j := strings.LastIndex(q, "\n\n"); j >= 0 {
			q = q[j+2:]
		}
		out = append(out, strings.TrimSpace(q))
	}
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
