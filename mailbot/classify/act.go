package classify

import (
	"fmt"
	"strings"
)

// Action is what lohibot dares to do about a message without a human.
type Action string

// The actions.
const (
	ActionApply  Action = "apply"  // applied at once, no human asked
	ActionReview Action = "review" // queued for staff
	ActionIgnore Action = "ignore" // machine mail: stored and dropped
)

// Where a request's words or sites were found.
const (
	fromText      = "the new text"
	fromSubject   = "the subject"
	fromAgreement = "the new text (a short agreement to our quoted question)"
	fromBoth      = "the new text or the subject"
	fromAttached  = "an attached message"
	fromSignature = "the signature"
	fromQuote     = "our quoted message"
)

// evidence is what the act-alone rule looks at, gathered while
// classifying.
type evidence struct {
	cue       string   // where the request's own words are (fromText, ...); "" when none
	opposite  []string // the opposite direction's words in the new text or the subject
	sites     string   // where the sites came from (fromText, ...)
	providers []string // mail providers' domains named and not taken as sites
	outside   []string // sites named outside the request (see uncovered)
	ourReply  string   // the Message-ID of our reply this message answers, "" when none
	conflict  string   // removal and block-list words in the request's sentence (see listConflict)
	doubts    []string // why the request is not plain (see doubts)
	reply     bool     // the message answers another (In-Reply-To or References)
}

// act decides the action by the act-alone rule: an exclusion is applied
// without a human only when its words are in the sender's new text (or
// subject), no re-inclusion words are there too, no question, doubt,
// condition or other unclear reading turned it into something else
// (those are intent other), and its sites are named in the new text or
// the subject and are not mail providers'. Re-inclusion always waits for
// staff. It appends a reason saying which part of the rule held or failed.
func act(res *Result, ev *evidence) {
	switch res.Intent {
	case IntentAuto:
		res.Action = ActionIgnore
		res.Reasons = append(res.Reasons, "ignore: machine mail")
		return
	case IntentReinclude:
		res.Action = ActionReview
		res.Reasons = append(res.Reasons, "review: re-inclusion waits for a staff member")
		return
	case IntentOther:
		res.Action = ActionReview
		res.Reasons = append(res.Reasons, "review: no clear request to apply")
		return
	}
	var failed []string
	switch ev.cue {
	case fromText, fromSubject, fromAgreement:
	case "":
		failed = append(failed, "no exclusion words of the sender's own")
	default:
		failed = append(failed, "the exclusion words are in "+ev.cue+", not in the new text")
	}
	if ev.cue == fromSubject && ev.reply {
		failed = append(failed, "the exclusion words are only in the subject of a reply")
	}
	if len(ev.opposite) > 0 {
		failed = append(failed, "re-inclusion words too: "+strings.Join(ev.opposite, ", "))
	}
	if ev.conflict != "" {
		failed = append(failed, "removal words aimed at a block or exclusion list: "+ev.conflict)
	}
	if len(ev.doubts) > 0 {
		failed = append(failed, "not a plain request: "+strings.Join(ev.doubts, "; "))
	}
	switch {
	case len(res.Domains) == 0 && len(ev.providers) > 0:
		failed = append(failed, "no site named: mail providers' domains are not sites ("+strings.Join(ev.providers, " ")+")")
	case len(res.Domains) == 0:
		failed = append(failed, "no site named")
	case ev.sites != fromBoth:
		failed = append(failed, "the sites come from "+ev.sites+", not from the new text or the subject")
	case len(ev.outside) > 0:
		failed = append(failed, "named outside the request, in a sentence that asks nothing: "+strings.Join(ev.outside, " "))
	}
	if len(failed) > 0 {
		res.Action = ActionReview
		for _, f := range failed {
			res.Reasons = append(res.Reasons, "review: "+f)
		}
		return
	}
	res.Action = ActionApply
	held := fmt.Sprintf("apply: exclusion words in %s, no re-inclusion words, sites from %s", ev.cue, ev.sites)
	if len(ev.providers) > 0 {
		held += "; mail providers' domains left out (" + strings.Join(ev.providers, " ") + ")"
	}
	res.Reasons = append(res.Reasons, held)
}

// againWords (folded) say "again" in the languages we read; againAfter
// are those that say it only after a preposition ("di nuovo", "de
// nouveau", "din nou"), where the word alone means "new".
var (
	againWords = map[string]bool{
		"again": true, "wieder": true, "erneut": true, "nuovamente": true, "nuevamente": true, "novamente": true,
		"opnieuw": true, "weer": true, "igjen": true, "atter": true, "ismet": true, "ujra": true, "znovu": true,
		"znova": true, "opet": true, "opat": true, "ponownie": true, "znow": true, "znowu": true, "taas": true,
		"uudelleen": true, "jalleen": true, "ponovno": true, "ponovo": true, "ξανα": true, "παλι": true,
		"tekrar": true, "yeniden": true, "отново": true, "знову": true, "iarasi": true,
		"vel": true, "atkal": true, "uuesti": true, "jalle": true, "aris": true, "berriro": true, "berriz": true,
		"eto": true, "aftur": true, "perseri": true, "serish": true, "rishtazi": true, "снова": true,
		"опять": true, "заново": true, "повторно": true, "поново": true,
	}
	againAfter = map[string]string{
		"nuovo": "di", "nouveau": "de|a", "nuevo": "de", "novo": "de", "nou": "din|de", "naujo": "is",
		"jauna": "no", "gdid": "mill",
	}
	// againNegators make "again" part of a refusal: "never again", "nie
	// wieder", "nikdy znovu".
	againNegators = map[string]bool{
		"never": true, "not": true, "no": true, "nie": true, "nicht": true, "nimmer": true, "jamais": true,
		"plus": true, "mai": true, "nunca": true, "nooit": true, "niet": true, "aldrig": true, "aldri": true,
		"soha": true, "nikdy": true, "nigdy": true, "nu": true, "ne": true, "non": true, "ei": true, "don": true,
		"dont": true, "nao": true, "niekada": true, "nekad": true, "mitte": true, "iial": true, "kunagi": true,
		"riamh": true, "choiche": true, "qatt": true, "inoiz": true, "byth": true, "aldrei": true, "ekki": true,
		"nikad": true, "nikada": true, "никад": true, "никада": true, "никогаш": true, "никогда": true,
		"не": true, "kurre": true, "mos": true, "nuk": true, "ddim": true, "peidiwch": true, "arge": true,
		"nemojte": true, "немојте": true, "alkaa": true,
	}
)

// mayWords (folded) ask for or allow something: "you may", "we would
// like", "dürfen", "pouvez", "graag", "gärna", "lütfen", "моля".
var mayWords = map[string]bool{
	"please": true, "may": true, "can": true, "could": true, "like": true, "want": true, "wish": true,
	"allowed": true, "welcome": true, "free": true, "durfen": true, "darf": true, "konnen": true, "mochten": true,
	"gerne": true, "gern": true, "bitte": true, "pouvez": true, "pouvoir": true, "peut": true, "souhaitons": true,
	"voudrions": true, "merci": true, "potete": true, "puo": true, "vorremmo": true, "desideriamo": true,
	"pueden": true, "puede": true, "podeis": true, "queremos": true, "deseamos": true, "podem": true, "pode": true,
	"gostariamos": true, "mag": true, "mogen": true, "kunt": true, "willen": true, "graag": true, "ma": true,
	"kan": true, "gjerne": true, "garna": true, "far": true, "vil": true, "vill": true, "muzete": true,
	"mozete": true, "chceme": true, "chteli": true, "chceli": true, "prosim": true, "mozecie": true,
	"chcemy": true, "prosimy": true, "kerjuk": true, "kerem": true, "lehet": true, "szeretnenk": true,
	"voitte": true, "saatte": true, "haluamme": true, "pyydamme": true, "puteti": true, "dorim": true,
	"vrem": true, "rugam": true, "lahko": true, "zelimo": true, "molimo": true, "prosimo": true,
	"μπορειτε": true, "θελουμε": true, "παρακαλουμε": true, "παρακαλω": true, "lutfen": true,
	"istiyoruz": true, "можете": true, "искаме": true, "моля": true, "хочемо": true, "ласка": true,
	"prasome": true, "prasau": true, "galite": true, "ludzu": true, "ludzam": true, "varat": true,
	"palun": true, "soovime": true, "dtoil": true, "joghgbok": true, "podeu": true, "volem": true,
	"plau": true, "mesedez": true, "nahi": true, "gwelwch": true, "vinsamlegast": true, "viljum": true,
	"molim": true, "молам": true, "молиме": true, "пожалуиста": true, "просим": true, "прошу": true,
	"хотим": true, "lutem": true, "duam": true, "jogħgbok": true,
}

// againCues returns the "again" words of toks that stand in a sentence
// about crawling, a list or a site that asks or allows something, with no
// exclusion request of its own and no negation just before ("please crawl
// us again" in words no rule holds): a re-inclusion may be meant, so the
// exclusion is not applied alone. "Never crawl us again", "stop crawling
// us again" and "your bot crawled us again" do not count.
func againCues(sc *scored, toks []token) []string {
	sentence := sentences(toks)
	// Only a sentence that asks or allows something can ask to come
	// back; "your crawler visited example.com again" reports.
	asking := map[int]bool{}
	for _, sg := range sc.signals {
		if sg.phase == phasePolite {
			asking[sentence[sg.first]] = true
		}
	}
	for i, t := range toks {
		if mayWords[t.folded] || asksReader(toks, i) {
			asking[sentence[i]] = true
		}
	}
	var out []string
	for i, t := range toks {
		w := t.folded
		again := againWords[w]
		if prev, ok := againAfter[w]; ok && i > 0 {
			again = strings.Contains("|"+prev+"|", "|"+toks[i-1].folded+"|")
		}
		if !again || afterStop(sc, toks, sentence, i) {
			continue
		}
		negated, about := false, false
		for k := i - 1; k >= 0 && k >= i-4 && sentence[k] == sentence[i]; k-- {
			if againNegators[toks[k].folded] {
				negated = true
			}
		}
		for k := i - 1; k >= 0 && sentence[k] == sentence[i]; k-- {
			if toks[k].folded == tokHost || siteWords.matches(toks[k].folded) {
				about = true
			}
		}
		for k := i + 1; k < len(toks) && sentence[k] == sentence[i]; k++ {
			if toks[k].folded == tokHost || siteWords.matches(toks[k].folded) {
				about = true
			}
		}
		if about && !negated && !wishDenied(toks, i) && asking[sentence[i]] {
			out = append(out, fmt.Sprintf("'%s'", t.lower))
		}
	}
	return out
}

// afterStop reports whether toks[i] follows, within three words, an
// exclusion request that stops, removes or forbids ("stop crawling us
// again", "remove us again", "peidiwch ag ymweld â … eto"): the "again"
// belongs to that request.
func afterStop(sc *scored, toks []token, sentence []int, i int) bool {
	for _, h := range sc.hits {
		if h.phase != phaseExclude || sentence[h.first] != sentence[i] || h.last >= i || i-h.last > 3 {
			continue
		}
		if againNegators[toks[h.first].folded] {
			return true // a negative imperative: "nemojte …", "ärge …"
		}
		for _, v := range negatorStops {
			if strings.HasPrefix(toks[h.first].folded, v) {
				return true
			}
		}
	}
	return false
}

// uncovered returns the sites that the exclusion request does not reach,
// when it names some of them itself: sites named only in sentences of
// their own that ask nothing ("we moved from old.com to new.com. Please
// stop crawling new.com.", "… stop crawling shop.de. Our site was made by
// agency.de."). A site counts as asked about when a sentence names it
// together with exclusion words, in a bare list of sites, or in the
// subject, which names the topic.
func uncovered(sites []string, sc *scored, toks []token, bodyStart int) []string {
	sentence := sentences(toks)
	requested := map[int]bool{}
	for _, h := range append(sc.hits[:len(sc.hits):len(sc.hits)], sc.repeats...) {
		if h.phase == phaseExclude {
			requested[sentence[h.first]] = true
		}
	}
	words := map[int]int{} // words other than hosts, per sentence
	for i, t := range toks {
		if t.folded != tokBarrier && t.folded != tokHost {
			words[sentence[i]]++
		}
	}
	covered := map[string]bool{}
	seen := map[string]bool{}
	for i, t := range toks {
		if t.folded != tokHost {
			continue
		}
		s := siteOfHost(t.host)
		if s == "" {
			continue
		}
		seen[s] = true
		if requested[sentence[i]] || words[sentence[i]] <= 2 || i < bodyStart {
			covered[s] = true
		}
	}
	if len(sites) < 2 || len(covered) == 0 {
		// One site is what "our site" means; and a request that names
		// none of its sites itself ("please stop crawling our sites")
		// refers to those named around it.
		return nil
	}
	var out []string
	for _, s := range sites {
		// A site no token shows is in a reply's subject, which is not
		// read for the intent: the subject names the topic.
		if seen[s] && !covered[s] {
			out = append(out, s)
		}
	}
	return out
}
