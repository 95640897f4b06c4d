package classify

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/lohisoft/lohibot/mailbot/message"
)

// maxClassifyBytes bounds the text the keyword rules read, so a long
// message cannot slow anything down; requests come first anyway.
const maxClassifyBytes = 64 << 10

// Intent is what a message asks for (see testdata/mail/README.md).
type Intent string

// The intents.
const (
	IntentExclude   Intent = "exclude"   // stop crawling one or more sites
	IntentReinclude Intent = "reinclude" // crawl again, undo an exclusion
	IntentOther     Intent = "other"     // a human should read it
	IntentAuto      Intent = "auto"      // machine-generated: auto-reply, bounce, receipt, bulk
)

// Result is the classification of one message.
type Result struct {
	Intent  Intent
	Domains []string // sorted, de-duplicated sites the message names
	Lang    string   // ISO 639-1 code of the new text, "" when unknown
	// Reasons names the phrases and signals that decided, one short
	// string each, such as `exclude (en): "stop crawling"` or
	// `auto: header Auto-Submitted: auto-replied`. Nil when there is
	// nothing to say.
	Reasons []string
	// Action is what may be done without a human (see act): apply only
	// for an exclusion that passes the act-alone rule.
	Action Action
}

// Classify decides what a decoded message asks for. It does no I/O, keeps
// no state and is safe for concurrent use.
func Classify(m *message.Message) *Result {
	res := &Result{Intent: IntentOther}
	ev := &evidence{}
	classify(res, m, ev)
	act(res, ev)
	return res
}

// classify fills res from the decoded message.
func classify(res *Result, m *message.Message, ev *evidence) {
	h := m.Header
	subject := m.Subject
	text := m.New

	// A hosting provider or a colleague may forward the request as an
	// attached message: when the message's own text names no site, the
	// attached ones are read (and for the intent, when its own text asks
	// for nothing).
	var fwdText string
	for _, f := range m.Forwards {
		fwdText += f.Subject + "\n\n" + f.New + "\n\n"
	}

	res.Domains, ev.providers = sitesAndProviders(subject + "\n\n" + text)
	ev.sites = fromBoth

	// The words: the subject counts unless it is a reply's ("Re: ..."),
	// which only repeats what we wrote.
	intentSubject := subject
	if message.IsReplySubject(subject) {
		intentSubject = ""
	}
	toks := tokenize(clip(intentSubject), nil)
	toks = appendBarrier(toks)
	toks = appendBarrier(append(toks, token{folded: tokBarrier}))
	bodyStart := len(toks)
	toks = tokenize(clip(blankEmails(deobfuscate(blankRobotsLines(text)))), toks)

	// Language: of the new text, else of the subject, else the header.
	lang := scriptLang(text)
	if lang == "" {
		lang = refineLang(toksAfterSubject(toks), text, detectLang(toksAfterSubject(toks), text))
	}
	if lang == "" {
		lang = detectLang(tokenize(blankEmails(subject), nil), subject)
	}
	if lang == "" && fwdText != "" {
		lang = detectLang(tokenize(blankEmails(fwdText), nil), fwdText)
	}
	if lang == "" {
		lang = headerLang(h.Get("Content-Language"))
	}
	res.Lang = lang

	if reason := autoReason(m, subject); reason != "" {
		res.Intent = IntentAuto
		res.Reasons = append(res.Reasons, "auto: "+reason)
		return
	}

	ev.ourReply = repliesToOurs(m)
	ev.reply = h.Get("In-Reply-To") != "" || h.Get("References") != "" || message.IsReplySubject(subject)
	sc := scoreIntent(toks, plausibleLangs(toks, subject+"\n"+text))
	attached := false
	if sc.ex == 0 && sc.re == 0 && fwdText != "" {
		ftoks := tokenize(clip(blankEmails(deobfuscate(fwdText))), nil)
		if fsc := scoreIntent(ftoks, plausibleLangs(ftoks, fwdText)); fsc.ex > 0 || fsc.re > 0 {
			sc, toks, attached = fsc, ftoks, true
		}
	}
	for _, h := range sc.hits {
		r := h.reason()
		if attached {
			r = "attached message: " + r
		}
		res.Reasons = append(res.Reasons, r)
	}
	if m.QuotedLines > 0 {
		res.Reasons = append(res.Reasons, fmt.Sprintf("quoted: ignored %d lines", m.QuotedLines))
	}
	if res.Lang == "" {
		// Too few words to tell ("pls stop crawling example.com"): the
		// language of the request phrase itself.
		res.Lang = ruleLangOf(sc.lang, toks, subject+"\n"+text)
	}
	decide(res, m, &sc, toks, text, ev)
	switch {
	case attached:
		ev.cue = fromAttached
	case ev.cue != "":
		// A short agreement to our quoted question (agreed).
	case res.Intent == IntentExclude && sc.ex >= 2:
		for _, h := range sc.hits {
			if h.phase != phaseExclude {
				continue
			}
			if h.first >= bodyStart {
				ev.cue = fromText
				break
			}
			ev.cue = fromSubject
		}
	}
	if res.Intent == IntentExclude && ev.cue == fromSubject && !repeatedInBody(&sc, bodyStart) {
		if l := legalIn(&sc, toks[bodyStart:]); l != "" {
			// A lawyer's letter that threatens and asks for information,
			// its only request words in its subject ("Diffida – accessi
			// al sito …"): staff decide what is asked.
			res.Intent = IntentOther
			res.Reasons = append(res.Reasons, fmt.Sprintf("unclear: a legal letter ('%s') whose only request is its subject", l))
		}
	}
	if res.Intent == IntentExclude {
		ev.opposite = opposite(sc.hits, phaseUndo, phaseAgain, phaseGoOn)
		if !attached {
			ev.opposite = append(ev.opposite, againCues(&sc, toks)...)
			ev.opposite = append(ev.opposite, returnCues(&sc, toks)...)
			ev.conflict = listConflict(&sc, toks)
			if ev.conflict == "" {
				ev.conflict = negatedListConflict(&sc, toks)
			}
			if ev.cue != fromAgreement {
				ev.doubts = doubts(&sc, toks, bodyStart)
			}
			if ev.cue != fromAgreement {
				ev.outside = uncovered(res.Domains, &sc, toks, bodyStart)
			}
		}
		if intentSubject == "" && subject != "" {
			// A reply's subject is not read for the intent, but words
			// of the other direction there still call for a human.
			st := tokenize(clip(blankEmails(deobfuscate(subject))), nil)
			ssc := scoreIntent(st, plausibleLangs(st, subject))
			ev.opposite = append(ev.opposite, opposite(ssc.hits, phaseUndo, phaseAgain, phaseGoOn)...)
		}
	}
	if res.Intent == IntentOther && sc.ex < 2 && sc.re < 2 {
		// Automatic mail without the headers that say so: a ticket
		// system's receipt, a vacation notice. Only when the new text
		// asks for nothing itself; the phrase may be anywhere at the top
		// (a ticket system's "reply above this line" looks like a quote).
		if p := autoText(m.Text); p != "" {
			res.Intent = IntentAuto
			res.Reasons = append(res.Reasons, fmt.Sprintf("auto: text %q", p))
			return
		}
	}
	request := res.Intent == IntentExclude || res.Intent == IntentReinclude
	if ev.ourReply != "" && !request {
		res.Reasons = append(res.Reasons, "reply to our automatic reply <"+ev.ourReply+">: it asks nothing new, so what we did stands")
	}
	switch {
	case len(res.Domains) > 0:
		if request && !slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "domain: ") }) {
			res.Reasons = append(res.Reasons, "domain: text")
		}
	case fwdText != "" && len(sitesIn(fwdText)) > 0:
		var dropped []string
		res.Domains, dropped = sitesAndProviders(fwdText)
		ev.sites, ev.providers = fromAttached, append(ev.providers, dropped...)
		if request {
			res.Reasons = append(res.Reasons, "domain: attached message")
		}
	case request && m.Signature != "":
		// "Please stop crawling our site", and the site only in the
		// signature below.
		var dropped []string
		res.Domains, dropped = sitesAndProviders(m.Signature)
		ev.providers = append(ev.providers, dropped...)
		if len(res.Domains) > 0 {
			ev.sites = fromSignature
			res.Reasons = append(res.Reasons, "domain: signature")
		}
	}
	if len(ev.providers) > 0 && request {
		res.Reasons = append(res.Reasons, "not a site: mail provider "+strings.Join(ev.providers, " "))
	}
}

// repeatedInBody reports whether an exclusion phrase first met in the
// subject is said again in the new text.
func repeatedInBody(sc *scored, bodyStart int) bool {
	for _, h := range sc.repeats {
		if h.phase == phaseExclude && h.first >= bodyStart {
			return true
		}
	}
	return false
}

// opposite returns the reasons of the hits of the given phases.
func opposite(hits []hit, phases ...int) []string {
	var out []string
	for _, h := range hits {
		if slices.Contains(phases, h.phase) {
			out = append(out, fmt.Sprintf("'%s' (%s)", strings.Join(h.words, " "), h.lang))
		}
	}
	return out
}

// decide sets the intent from the scored words and the signals: a request
// that is a question, about part of a site, about something other than a
// site, negated, or in both directions is unclear and goes to staff as
// other; a short reply agreeing to our quoted proposal takes the
// proposal's direction.
func decide(res *Result, m *message.Message, sc *scored, toks []token, text string, ev *evidence) {
	sentence := sentences(toks)
	sameSentence := func(phase int) *hit {
		for i := range sc.signals {
			sg := &sc.signals[i]
			if sg.phase != phase {
				continue
			}
			for _, h := range sc.hits {
				if sentence[sg.first] == sentence[h.first] {
					return sg
				}
			}
		}
		return nil
	}
	first := func(phase int) *hit {
		for i := range sc.signals {
			if sc.signals[i].phase == phase {
				return &sc.signals[i]
			}
		}
		return nil
	}
	unclear := func(why string, sg *hit) {
		res.Intent = IntentOther
		if sg != nil {
			why += fmt.Sprintf(": '%s' (%s)", strings.Join(sg.words, " "), sg.lang)
		}
		res.Reasons = append(res.Reasons, "unclear: "+why)
	}

	request := sc.ex >= 2 || sc.re >= 2
	switch {
	case !request:
		if neg := first(phaseNegated); neg != nil {
			unclear("negation", neg)
			return
		}
		if agreed(res, m, sc, toks, ev) {
			return
		}
		res.Intent = IntentOther
		if strings.TrimSpace(text) == "" && strings.TrimSpace(m.Subject) == "" {
			res.Reasons = append(res.Reasons, "empty message")
		} else if len(sc.hits) == 0 {
			res.Reasons = append(res.Reasons, "no request recognised")
		}
		return
	}
	reinclude := sc.re >= 2 && sc.re >= sc.ex
	for _, neg := range sc.signals {
		// "Do not remove us" contradicts an exclusion, not a
		// re-inclusion ("you removed us, please crawl us again").
		if neg.phase == phaseNegated && (!reinclude || neg.orig != phaseExclude) {
			unclear("negation", &neg)
			return
		}
	}
	if !reinclude {
		if w := deniedRemoval(toks); w != "" {
			unclear("negation: a removal that is not wished ('"+w+"')", nil)
			return
		}
	}
	if sg := sameSentence(phaseDoubt); sg != nil {
		unclear("question", sg)
		return
	}
	if sg := sameSentence(phaseAsk); sg != nil && questionAt(toks, sg.first) {
		unclear("question", sg)
		return
	}
	if sg := first(phaseUndecided); sg != nil {
		unclear("question", sg)
		return
	}
	if questionOnly(sc, toks, sentence) {
		unclear("question", nil)
		return
	}
	if sg := conditionalOnly(sc, toks, sentence); sg != "" {
		unclear("conditional: '"+sg+"'", nil)
		return
	}
	if sg := partial(sc, toks, sentence); sg != nil {
		unclear("part of a site", sg)
		return
	}
	if p := pathIn(text); p != "" {
		unclear("part of a site: path '"+p+"'", nil)
		return
	}
	if sg := first(phaseObject); sg != nil && len(res.Domains) == 0 && !siteDirected(sc) {
		unclear("not a site", sg)
		return
	}
	if sc.ex >= 2 && sc.re >= 2 && bothDirections(sc, toks, sentence) {
		unclear("both directions", nil)
		return
	}
	if reinclude {
		res.Intent = IntentReinclude
	} else {
		res.Intent = IntentExclude
	}
}

// askWords (folded) make a question a polite request ("Could you stop
// crawling example.com?", "Potreste toglierlo dal vostro elenco?"):
// the forms of "can you", "would you" in the languages we read.
var askWords = map[string]bool{
	"konnten": true, "konnen": true, "wurden": true,
	"ware": true, "wurde": true, "pourriez": true, "pouvez": true, "voudriez": true, "serait": true,
	"pourrait": true, "potreste": true, "potete": true, "potrebbe": true, "sarebbe": true, "vorreste": true,
	"potrebbero": true, "podrian": true, "pueden": true, "podria": true, "podrias": true, "seria": true,
	"podeis": true, "poderiam": true, "podem": true, "poderia": true, "kunt": true, "zou": true, "zouden": true,
	"wilt": true, "kunnen": true,
	"muzete": true, "mohli": true, "mozete": true, "mohla": true, "mohl": true, "byste": true, "mogliby": true,
	"mozecie": true, "mozna": true, "moglibyscie": true, "tudnak": true, "lehetne": true, "lennenek": true,
	"voisitteko": true, "voitteko": true, "voisitko": true, "voisiko": true, "puteti": true, "putea": true,
	"biste": true, "mogli": true, "lahko": true, "μπορειτε": true, "μπορουσατε": true, "misiniz": true,
	"musunuz": true, "можете": true, "бихте": true, "могли": true,
	// "Is it possible to …?"
	"possible": true, "possibile": true, "moglich": true, "posible": true, "possivel": true, "mogelijk": true,
	"muligt": true, "mojligt": true, "mozne": true, "mozliwe": true, "lehetseges": true, "mahdollista": true,
	"posibil": true, "moguce": true, "mogoce": true, "δυνατον": true, "mumkun": true, "възможно": true,
	"можливо":    true,
	"galetumete": true, "galite": true, "varetu": true, "varat": true, "saaksite": true, "voiksite": true,
	"bhfeadfadh": true, "tistghu": true, "podrieu": true, "podeu": true, "dezakezue": true, "zenezakete": true,
	"poderian": true, "allech": true, "allwch": true, "gaetud": true, "getid": true,
	"mund": true, "iespejams": true, "voimalik": true, "imanoma": true, "feidir": true,
	// "May I ask you to …?"
	"megkerhetnem": true, "megkerhetnenk": true, "kerhetnem": true, "kerhetnenk": true, "megkernem": true,
	"megkernenk": true, "moga": true, "moglaby": true, "durfte": true, "durften": true, "pourrais": true, "pourrions": true, "potrei": true,
	"potremmo": true, "moglbym": true, "moglabym": true, "moglibysmy": true, "voisinko": true, "voisimmeko": true,
}

// askYou are the modal verbs that ask something of the reader only when
// "you" follows ("could you", "kan I", "zou u"): "will removing it be
// enough?" asks nothing of us.
var askYou = map[string]map[string]bool{
	"could": {"you": true}, "would": {"you": true}, "can": {"you": true}, "will": {"you": true},
	"vil": {"i": true, "du": true, "dere": true, "de": true}, "kan": {"i": true, "du": true, "dere": true, "ni": true, "de": true},
	"kunne": {"i": true, "du": true, "dere": true, "de": true}, "kunde": {"ni": true, "du": true},
	"skulle": {"ni": true, "du": true}, "zou": {"u": true, "je": true, "jullie": true},
}

// askModals before "ask you" make it a polite request ("may I ask you to
// …", "could we ask you to …"); "did I ask you to …?" recalls one.
var askModals = map[string]bool{"may": true, "might": true, "could": true, "can": true, "would": true}

// asksReader reports whether toks[k] is a word of a polite request.
func asksReader(toks []token, k int) bool {
	if askWords[toks[k].folded] {
		return true
	}
	if toks[k].folded == "ask" && k+1 < len(toks) && toks[k+1].folded == "you" {
		for j := k - 1; j >= 0 && j >= k-2; j-- {
			if askModals[toks[j].folded] {
				return true
			}
		}
		return false
	}
	you, ok := askYou[toks[k].folded]
	if !ok {
		return false
	}
	for j := k + 1; j < len(toks) && j <= k+2; j++ {
		if you[toks[j].folded] {
			return true
		}
	}
	return false
}

// questionOnly reports whether every request of the message is asked in
// a question ("do we have to email you to be removed from the exclusion
// list?") that is no polite request: no "please" and no "could you" in
// its sentence.
func questionOnly(sc *scored, toks []token, sentence []int) bool {
	if len(sc.hits) == 0 {
		return false
	}
	for _, h := range sc.hits {
		if !questionAt(toks, h.first) {
			return false
		}
		if asksAbout(toks, sentence, h.first) {
			continue // a question about the bot, however polite
		}
		for _, sg := range sc.signals {
			if sg.phase == phasePolite && sentence[sg.first] == sentence[h.first] {
				return false
			}
		}
		for k := h.first; k >= 0 && sentence[k] == sentence[h.first]; k-- {
			if asksReader(toks, k) {
				return false
			}
		}
		for k := h.first; k < len(toks) && sentence[k] == sentence[h.first]; k++ {
			if asksReader(toks, k) {
				return false
			}
		}
	}
	return true
}

// ifWords (folded) open a condition in the languages we read; words
// that are also pronouns or prepositions ("si", "se", "om", "ce") are
// left out.
var ifWords = map[string]bool{
	"if": true, "unless": true, "wenn": true, "falls": true, "hvis": true, "ifall": true, "jesli": true,
	"jezeli": true, "gdyby": true, "pokud": true, "jestli": true, "kdyby": true, "ha": true, "jos": true,
	"daca": true, "ako": true, "αν": true, "eger": true, "ако": true, "якщо": true, "qualora": true,
	"indien": true, "mocht": true, "jei": true, "jeigu": true, "jekk": true, "ef": true, "nese": true,
	"если": true, "ukoliko": true, "baldin": true,
}

// possibleWords follow an "if" that only softens a request: "if possible",
// "wenn möglich", "se possibile".
var possibleWords = map[string]bool{
	"possible": true, "moglich": true, "possibile": true, "posible": true, "mozno": true, "mozne": true,
	"lehetseges": true, "mogelijk": true, "muligt": true, "mojliv": true, "mozliwe": true, "you": true,
	"joghgbok": true, "jogħgbok": true, "imanoma": true, "iespejams": true, "voimalik": true,
	"moguce": true, "возможно": true, "mundur": true,
}

// gratefulWords before an "if" make it a polite request: "we would
// appreciate it if", "wir wären dankbar, wenn".
var gratefulWords = map[string]bool{
	"appreciate": true, "appreciated": true, "grateful": true, "thankful": true, "glad": true, "pleased": true,
	"it": true, "dankbar": true, "froh": true, "dankbaar": true, "blij": true, "taknemmelig": true,
	"tacksam": true, "tacksamma": true, "halas": true, "halasak": true, "vdecni": true, "vdacni": true,
	"vdacna": true, "wdzieczni": true, "wdzieczny": true, "kiitollisia": true, "recunoscatori": true,
	"zahvalni": true, "hvalezni": true, "minnettar": true,
	// "we would like it if", "wir würden uns freuen, wenn", "byli bychom
	// rádi, kdyby": a wish, not a condition.
	"szeretnenk": true, "szeretnem": true, "orulnenk": true, "orulnek": true, "freuen": true, "radi": true,
	"rady": true, "aprecia": true,
}

// conditionalOnly returns the conditional word when every request of the
// message is made under a condition ("If LohiSoftBot keeps ignoring our
// Crawl-delay, we may have to ask you to stop crawling"), with no
// "please" in its sentence; "" otherwise. "If you do not stop crawling, …"
// (a negated condition) and "if possible" are demands, not conditions.
func conditionalOnly(sc *scored, toks []token, sentence []int) string {
	word := ""
	for _, h := range sc.hits {
		found := ""
		for k := h.first - 1; k >= 0 && sentence[k] == sentence[h.first]; k-- {
			if !ifWords[toks[k].folded] {
				continue
			}
			demand := false
			for j := k + 1; j < len(toks) && j <= k+3; j++ {
				if negators[toks[j].folded] || possibleWords[toks[j].folded] {
					demand = true
				}
			}
			for j := k - 1; j >= 0 && j >= k-3; j-- {
				if gratefulWords[toks[j].folded] {
					demand = true // "we would appreciate it if …"
				}
			}
			if !demand {
				found = toks[k].lower
			}
			break
		}
		if found == "" {
			return ""
		}
		for _, sg := range sc.signals {
			if sg.phase == phasePolite && sentence[sg.first] == sentence[h.first] {
				return ""
			}
		}
		word = found
	}
	return word
}

// wholeWords mark a scope word that means everything: "all subdomains".
var wholeWords = map[string]bool{
	"all": true, "every": true, "any": true, "including": true, "incl": true, "alle": true, "allen": true,
	"samt": true, "tous": true, "toutes": true, "tutti": true, "tutte": true, "todos": true, "todas": true,
	"wszystkie": true, "vsechny": true, "vsetky": true, "osszes": true, "minden": true, "inklusive": true,
	"its": true, "their": true, "and": true, "with": true, "plus": true, "und": true, "mit": true, "seine": true,
	"ihre": true, "et": true, "avec": true, "ses": true, "con": true, "sus": true, "suoi": true, "og": true,
	"och": true, "en": true, "es": true, "oraz": true, "vcetne": true,
}

// restWords start the scope phrases that speak of the rest of a site.
var restWords = map[string]bool{
	"rest": true, "reste": true, "resto": true, "resten": true, "zbytek": true, "zvysok": true,
	"ostatni": true, "reszta": true, "reszte": true, "tobbi": true,
}

// partial returns the first scope signal that limits the request to part
// of a site, nil when none does ("and all its subdomains" does not).
func partial(sc *scored, toks []token, sentence []int) *hit {
	for i := range sc.signals {
		sg := &sc.signals[i]
		if sg.phase != phaseScope {
			continue
		}
		// A scope word counts in the sentence of the request ("stop
		// crawling the /members/ section"); "the rest of the site"
		// anywhere.
		near := restWords[message.Fold(sg.words[0])]
		for _, h := range sc.hits {
			if sentence[h.first] == sentence[sg.first] {
				near = true
			}
		}
		if !near {
			continue
		}
		whole := false
		for k := sg.first - 1; k >= 0 && k >= sg.first-3; k-- {
			if wholeWords[toks[k].folded] {
				whole = true
			}
		}
		if !whole {
			return sg
		}
	}
	return nil
}

// questionAt reports whether the sentence holding toks[pos] ends with a
// question mark.
func questionAt(toks []token, pos int) bool {
	for k := pos; k < len(toks); k++ {
		if toks[k].folded == tokBarrier {
			return toks[k].lower == "?"
		}
	}
	return false
}

// siteWords are the words of the macros for crawling, bots and sites.
var siteWords = func() ruleStep {
	var st ruleStep
	for _, m := range []string{"CRAWLV", "BOT", "SITE"} {
		for _, a := range strings.Split(keywordMacros[m], "|") {
			if a != "HOST" {
				st.alts = append(st.alts, parseAlt(a))
			}
		}
	}
	return st
}()

// siteDirected reports whether a request hit speaks of crawling, the bot
// or a site ("stop crawling our website and delete our data"), so that an
// object such as "our data" does not make it a request about something
// else.
func siteDirected(sc *scored) bool {
	for _, h := range sc.hits {
		for _, w := range h.words {
			if w == "HOST" || siteWords.matches(message.Fold(w)) {
				return true
			}
		}
	}
	return false
}

// sentences returns, for each token, the number of its sentence.
func sentences(toks []token) []int {
	out := make([]int, len(toks))
	n := 0
	for i, t := range toks {
		if t.folded == tokBarrier {
			n++
		}
		out[i] = n
	}
	return out
}

// bothDirections reports whether the exclusion and the re-inclusion are
// about different sites ("stop crawling old.com and crawl new.com
// again"), not one re-inclusion that recalls its exclusion.
func bothDirections(sc *scored, toks []token, sentence []int) bool {
	sitesOf := func(phases ...int) map[string]bool {
		out := map[string]bool{}
		for _, h := range sc.hits {
			if !slices.Contains(phases, h.phase) {
				continue
			}
			// The object of the request: the first host after its first
			// word in the sentence, else the last one before it.
			obj := ""
			for k := h.first + 1; k < len(toks) && sentence[k] == sentence[h.first]; k++ {
				if toks[k].folded == tokHost {
					obj = toks[k].host
					break
				}
			}
			for k := h.first - 1; obj == "" && k >= 0 && sentence[k] == sentence[h.first]; k-- {
				if toks[k].folded == tokHost {
					obj = toks[k].host
				}
			}
			out[siteOfHost(obj)] = true
		}
		delete(out, "")
		return out
	}
	ex, re := sitesOf(phaseExclude), sitesOf(phaseUndo, phaseAgain, phaseGoOn)
	if len(ex) == 0 || len(re) == 0 {
		return false
	}
	for s := range ex {
		if re[s] {
			return false
		}
	}
	return true
}

// siteOfHost returns the site a host token names, "" when none.
func siteOfHost(h string) string {
	if s := sitesIn(h); len(s) > 0 {
		return s[0]
	}
	return ""
}

// pathIn returns the first path written on its own ("the /members/
// section", "/area-riservata/"), or "".
func pathIn(text string) string {
	for _, f := range strings.Fields(text) {
		f = strings.Trim(f, ".,;:!?()\"'«»“”")
		if len(f) < 3 || f[0] != '/' || f[1] == '/' || !unicode.IsLower(rune(f[1])) ||
			strings.Count(f, "/") < 2 {
			continue
		}
		letters := 0
		for _, r := range f[1:] {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters >= 2 {
			return f
		}
	}
	return ""
}

// toksAfterSubject returns the body's tokens (after the subject and its
// barriers); all of them when there is no subject.
func toksAfterSubject(toks []token) []token {
	for i, t := range toks {
		if t.folded == tokBarrier && i+1 < len(toks) && toks[i+1].folded == tokBarrier {
			return toks[i+2:]
		}
	}
	return toks
}

func clip(s string) string {
	if len(s) <= maxClassifyBytes {
		return s
	}
	s = s[:maxClassifyBytes]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

// autoReason says why a message is machine-generated, or "".
func autoReason(m *message.Message, subject string) string {
	h := m.Header
	if v := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted"))); v != "" && v != "no" {
		return "header Auto-Submitted: " + v
	}
	for _, k := range []string{"X-Autoreply", "X-Autorespond", "X-Auto-Reply", "X-Autoresponder", "X-Vacation"} {
		if v := strings.ToLower(strings.TrimSpace(h.Get(k))); h.Has(k) && v != "no" && v != "false" && v != "0" {
			return "header " + k
		}
	}
	prec := strings.ToLower(strings.TrimSpace(h.Get("Precedence")))
	if prec == "" {
		prec = strings.ToLower(strings.TrimSpace(h.Get("X-Precedence")))
	}
	switch prec {
	case "bulk", "junk", "auto_reply", "auto-reply":
		return "header Precedence: " + prec
	case "list":
		if h.Has("List-Unsubscribe") || h.Has("List-Id") {
			return "header Precedence: list"
		}
	}
	if h.Has("List-Unsubscribe") && (h.Has("List-Id") || h.Has("List-Unsubscribe-Post") || h.Has("Feedback-Id")) {
		return "mailing list (List-Unsubscribe)"
	}
	if m.Report != "" {
		return "multipart/report; report-type=" + m.Report
	}
	if m.ReportPart {
		return "delivery or read report part"
	}
	if h.Has("X-Failed-Recipients") {
		return "header X-Failed-Recipients"
	}
	from := strings.ToLower(message.Address(h.Get("From")))
	local := from
	if i := strings.IndexByte(from, '@'); i >= 0 {
		local = from[:i]
	}
	if local == "mailer-daemon" || local == "mailerdaemon" {
		return "sender MAILER-DAEMON"
	}
	if local == "postmaster" && len(m.Forwards) > 0 {
		return "sender postmaster, with a returned message attached"
	}
	rp := strings.TrimSpace(h.Get("Return-Path"))
	if rp == "<>" {
		return "null Return-Path (bounce or receipt)"
	}
	if p := autoSubject(subject); p != "" {
		return fmt.Sprintf("subject %q", p)
	}
	if h.Has("Disposition-Notification-To") && strings.HasPrefix(message.Fold(subject), "read:") {
		return "read receipt"
	}
	return ""
}

// autoTexts are phrases (folded) of automatic mail found in its text.
var autoTexts = []string{
	"this is an automated", "this is an automatic", "automatically generated", "automated response",
	"automated reply", "automated message", "auto-generated", "please type your reply above this line",
	"on annual leave", "on vacation until", "on holiday until", "out of the office until",
	"limited access to email", "limited access to e-mail", "limited access to my email",
	"diese nachricht wurde automatisch", "automatisch erstellt", "automatisch generiert", "automatische antwort",
	"ceci est un message automatique", "ceci est une reponse automatique", "message genere automatiquement",
	"messaggio generato automaticamente", "questo e un messaggio automatico", "risposta automatica",
	"mensaje automatico", "respuesta automatica", "mensagem automatica", "resposta automatica",
	"automatisch gegenereerd", "dit is een automatisch", "automatiskt meddelande", "automatisk besked",
	"automaticka odpoved", "automaticky generovan", "automatyczna odpowiedz", "wiadomosc wygenerowana automatycznie",
	"automatikus valasz", "automatikusan generalt",
	"nicht im buro", "eingeschrankten zugriff", "je suis absent", "absent du bureau", "fuori ufficio",
	"fuera de la oficina", "fora do escritorio", "niet op kantoor", "ikke pa kontoret", "inte pa kontoret",
	"nie ma mnie w biurze", "mimo kancelar", "nem vagyok az irodaban", "szabadsagon vagyok",
	"olen lomalla", "poissa toimistolta", "sunt in concediu", "in afara biroului", "na godisnjem odmoru",
	"izven pisarne", "na dopustu", "ofis disindayim", "izindeyim", "εκτος γραφειου", "извън офиса",
	"в отпуск", "у відпустці", "поза офісом", "er pa ferie",
	"esu atostogose", "nesu biure", "esmu atvalinajuma", "neesmu biroja", "olen puhkusel", "kontorist eemal",
	"ar saoire", "as an oifig", "estic de vacances", "fora de l'oficina", "oporretan nago", "bulegotik kanpo",
	"estou de vacacions", "fora da oficina", "ar wyliau", "allan o'r swyddfa", "er i frii", "fjarverandi",
	"na odmoru", "на одмор", "van kancelarije", "izvan ureda", "вне офиса", "нет на месте", "jam me pushime",
	"jashte zyres", "это автоматическое сообщение", "sis laiskas sugeneruotas automatiskai",
	"automatiska atbilde", "automaatvastus", "erantzun automatikoa", "ateb awtomatig", "sjalfvirkt svar",
	"автоматическии ответ", "pergjigje automatike",
}

// autoText returns the phrase of automatic mail that text holds (in its
// first lines), or "".
func autoText(text string) string {
	if len(text) > 1000 {
		text = text[:1000]
	}
	f := strings.Join(strings.Fields(message.Fold(text)), " ")
	for _, p := range autoTexts {
		if strings.Contains(f, p) {
			return p
		}
	}
	return ""
}

// autoSubjects are subject phrases of auto-replies and bounces (folded);
// receiptPrefixes start the subject of read receipts.
var (
	autoSubjects = []string{
		"out of office", "out of the office", "automatic reply", "auto reply", "autoreply", "auto-reply",
		"auto response", "autoresponse", "vacation reply", "away from the office",
		"undeliverable", "undelivered mail", "delivery status notification", "mail delivery failed",
		"returned mail", "delivery failure", "message not delivered", "nondeliverable", "non-deliverable",
		"could not be delivered", "away:", "failure notice", "delivery has failed", "mail delivery system",
		"abwesenheitsnotiz", "automatische antwort", "abwesend", "abwesenheit:", "unzustellbar", "nicht zustellbar",
		"reponse automatique", "reponse d'absence", "absence du bureau", "non remis",
		"risposta automatica", "fuori ufficio", "fuori sede", "non recapitabile", "mancato recapito",
		"respuesta automatica", "fuera de la oficina", "no se puede entregar",
		"resposta automatica", "fora do escritorio", "ausente do escritorio", "nao entregue",
		"automatisch antwoord", "afwezig", "onbestelbaar", "niet afgeleverd",
		"automatisk svar", "autosvar", "fravaerende", "kunne ikke leveres", "ej levererat", "franvaro",
		"automatikus valasz", "hazon kivul", "szabadsagon", "nem kezbesitheto",
		"automaticka odpoved", "mimo kancelar", "nedorucitelne", "nedorucitelna",
		"automaticka odpoved", "mimo kancelarie", "nedorucitelna",
		"automatyczna odpowiedz", "odpowiedz automatyczna", "poza biurem", "nieobecnosc", "niedostarczona",
		"automaattinen vastaus", "poissa toimistolta", "raspuns automat", "in afara biroului",
		"automatski odgovor", "odsutan iz ureda", "samodejni odgovor", "odsoten", "otomatik yanit",
		"ofis disinda", "αυτοματη απαντηση", "εκτος γραφειου", "автоматичен отговор", "извън офиса",
		"автоматична відповідь", "поза офісом", "fravaer:",
		"automatinis atsakymas", "nesu biure", "automatiska atbilde", "neesmu biroja", "automaatvastus",
		"automaatne vastus", "freagra uathoibrioch", "as an oifig", "twegiba awtomatika", "risposta awtomatika",
		"barra mill-ufficcju", "fora de l'oficina", "erantzun automatikoa", "bulegotik kanpo", "fora da oficina",
		"ateb awtomatig", "allan o'r swyddfa", "sjalfvirkt svar", "fjarverandi", "van kancelarije", "izvan ureda",
		"аутоматски одговор", "автоматски одговор", "ван канцеларије", "надвор од канцеларија",
		"автоматическии ответ", "автоответ", "нет на месте", "вне офиса", "pergjigje automatike", "jashte zyres",
		"odsotnost", "автовідповідь",
	}
	receiptPrefixes = []string{
		"read:", "gelesen:", "lu :", "lu:", "letto:", "leido:", "lido:", "gelezen:", "laest:", "last:",
		"olvasott:", "olvasva:", "precteno:", "precitane:", "przeczytane:", "przeczytano:", "read receipt",
		"lesebestatigung", "accuse de lecture", "conferma di lettura", "confirmacion de lectura",
		"confirmacao de leitura", "leesbevestiging", "laesekvittering", "lasbekraftelse",
		"perskaityta:", "izlasits:", "loetud:", "llegit:", "прочитано:", "procitano:", "prebrano:", "citit:",
		"luettu:", "okundu:", "прочетено:", "lesid:", "irakurrita:", "lexuar:",
	}
)

// autoSubject returns the auto-reply or bounce phrase the subject starts
// with (or, for the longer phrases, contains), or "".
func autoSubject(subject string) string {
	s := message.Fold(strings.TrimSpace(subject))
	for _, p := range autoSubjects {
		if strings.HasPrefix(s, p) || len(p) >= 12 && strings.Contains(s, p) {
			return p
		}
	}
	if strings.HasPrefix(s, "auto:") || strings.HasPrefix(s, "autosvar:") {
		return "auto:"
	}
	for _, p := range receiptPrefixes {
		if strings.HasPrefix(s, p) && p != "read:" && p != "last:" {
			return p
		}
	}
	return ""
}

// ruleLangOf returns the language of the first request phrase found, for
// text too short to detect its language otherwise: Czech and Slovak share
// their rules, and the letters of the text choose between them.
func ruleLangOf(lang string, toks []token, text string) string {
	if lang == "cs" {
		if score := langScores(toks, text); score["sk"] > score["cs"] {
			return "sk"
		}
	}
	return lang
}

// hit is one keyword rule matched in the text.
type hit struct {
	phase       int
	weight      int
	lang        string
	words       []string // the matched words, HOST for a host name
	first, last int      // token positions of the first and last word
	orig        int      // for phaseNegated, the phase of the negated request
}

// kind names what a hit of this phase says.
func (h *hit) kind() string {
	switch h.phase {
	case phaseExclude:
		return "exclude"
	case phaseUndo, phaseAgain, phaseGoOn:
		return "reinclude"
	case phaseDoubt, phaseUndecided, phaseAsk:
		return "question"
	case phaseScope:
		return "part of a site"
	case phaseObject:
		return "not a site"
	case phaseAgree:
		return "agree"
	case phasePolite:
		return "request"
	}
	return "thanks"
}

// reason is the hit as staff read it: `exclude: 'stop crawling' (en)`.
func (h *hit) reason() string {
	return fmt.Sprintf("%s: '%s' (%s)", h.kind(), strings.Join(h.words, " "), h.lang)
}

// scored is what the keyword rules found in a text.
type scored struct {
	ex, re  int   // exclusion and re-inclusion weights
	hits    []hit // exclusion and re-inclusion hits, in order of rule phase
	repeats []hit // later matches of a rule already counted (weight 0)
	signals []hit // doubt, scope, object, agreement and politeness hits
	lang    string
}

// scoreIntent runs the keyword rules over the tokens and returns the
// exclusion and re-inclusion weights with their hits, the signals, and the
// language of the first rule that counted. Rules tied to a language are
// tried only when langs holds it; a nil langs allows every language.
func scoreIntent(toks []token, langs map[string]bool) scored {
	var sc scored
	rs := compiledRules()
	type cand struct{ rule, pos int }
	var cands []cand
	for i, t := range toks {
		if t.folded == tokBarrier {
			continue
		}
		for _, r := range rs.firstMatches(t.folded) {
			if cr := &rs.rules[r]; langs == nil || cr.anyLang || langs[cr.lang] {
				cands = append(cands, cand{r, i})
			}
		}
		if t.alt != "" {
			for _, r := range rs.firstMatches(t.alt) {
				if cr := &rs.rules[r]; langs == nil || cr.anyLang || langs[cr.lang] {
					cands = append(cands, cand{r, i})
				}
			}
		}
	}
	if len(cands) == 0 {
		return sc
	}
	sort.SliceStable(cands, func(a, b int) bool {
		ra, rb := &rs.rules[cands[a].rule], &rs.rules[cands[b].rule]
		if ra.phase != rb.phase {
			return ra.phase < rb.phase
		}
		if cands[a].pos != cands[b].pos {
			return cands[a].pos < cands[b].pos
		}
		// The text's own language first, so the reason names it.
		return langs[ra.lang] && !langs[rb.lang]
	})
	used := make([]bool, len(toks))
	counted := map[int]bool{}
	for _, c := range cands {
		r := &rs.rules[c.rule]
		signal := r.phase >= phaseDoubt
		if used[c.pos] {
			continue
		}
		pos, ok := r.matchFrom(toks, used, c.pos)
		if !ok {
			continue
		}
		if counted[c.rule] && !signal {
			// A phrase said twice counts once, but its words stay its
			// own: "remove us from your block list … remove example.com
			// from your exclusion list" is no exclusion the second time.
			for _, p := range pos {
				used[p] = true
			}
			sc.repeats = append(sc.repeats, hit{phase: r.phase, weight: r.weight, lang: r.lang, first: pos[0], last: pos[len(pos)-1]})
			continue
		}
		counted[c.rule] = true
		if r.phase == phaseThanks || r.phase == phaseGoOn && wishNegated(toks, pos[0]) || r.phase == phaseAgain && wishDenied(toks, pos[0]) {
			for _, p := range pos {
				used[p] = true
			}
			continue
		}
		words := make([]string, len(pos))
		for k, p := range pos {
			used[p] = true
			words[k] = toks[p].lower
			if words[k] == "" {
				words[k] = "HOST"
			}
		}
		h := hit{phase: r.phase, weight: r.weight, lang: r.lang, words: words, first: pos[0], last: pos[len(pos)-1]}
		if signal {
			sc.signals = append(sc.signals, h)
			continue
		}
		if negated(toks, used, h.first, h.last) {
			// "please do not remove …", "nem kérjük, hogy töröljék":
			// a negated removal asks for the opposite, or for nothing.
			h.phase, h.orig = phaseNegated, r.phase
			sc.signals = append(sc.signals, h)
			continue
		}
		if r.phase == phaseExclude {
			sc.ex += r.weight
		} else {
			sc.re += r.weight
		}
		sc.hits = append(sc.hits, h)
		if sc.lang == "" {
			sc.lang = r.lang
		}
	}
	reportedAgain(&sc, toks)
	return sc
}

// botWords are the words of the BOT macro: the crawler itself.
var botWords = macroStep("BOT")

// reportedAgain takes the weight from the "again" hits that report what
// the crawler did rather than ask for anything: "your bot crawled
// example.com again last night", "jūsu robots atkal apmeklēja …". Such a
// sentence names the crawler and holds no word that asks or allows
// ("please", "may", "could you"). The hit stays among the hits, so the
// message is still never applied without a human.
func reportedAgain(sc *scored, toks []token) {
	sentence := sentences(toks)
	for i := range sc.hits {
		h := &sc.hits[i]
		if h.phase != phaseAgain || h.weight == 0 {
			continue
		}
		bot, asking := false, false
		for k := range toks {
			if sentence[k] != sentence[h.first] {
				continue
			}
			w := toks[k].folded
			if botWords.matches(w) {
				bot = true
			}
			if mayWords[w] || asksReader(toks, k) || askMarkers[w] {
				asking = true
			}
		}
		for _, sg := range sc.signals {
			if sg.phase == phasePolite && sentence[sg.first] == sentence[h.first] {
				asking = true
			}
		}
		if bot && !asking {
			sc.re -= h.weight
			h.weight = 0
		}
	}
}

// askMarkers (folded) ask or allow, beyond mayWords: modals of what
// should be, and the request words of the languages we read.
var askMarkers = map[string]bool{
	"should": true, "must": true, "shall": true, "let": true, "sollte": true, "soll": true, "sollen": true,
	"durfen": true, "darf": true, "devrait": true, "doit": true, "dovrebbe": true, "deve": true, "deberia": true,
	"debe": true, "deveria": true, "moet": true, "mag": true, "bor": true, "skal": true, "ska": true,
	"mel": true, "mela": true, "mal": true, "mala": true, "powinien": true, "powinno": true, "kell": true,
	"kellene": true, "pitaisi": true, "ar": true, "trebui": true, "trebuie": true, "treba": true,
	// A wish for what the crawler does: "we would like your robot to
	// visit us again", "toivomme, että …", "am dori ca …".
	"mochten": true, "wunschen": true, "souhaitons": true, "voudrions": true, "aimerions": true,
	"vorremmo": true, "desideriamo": true, "quisieramos": true, "gustaria": true, "deseamos": true,
	"gostariamos": true, "desejamos": true, "chcielibysmy": true, "chteli": true, "chceli": true,
	"szeretnenk": true, "szeretnem": true, "toivomme": true, "haluaisimme": true, "toivoisimme": true,
	"dori": true, "dorim": true, "voljeli": true, "zeljeli": true, "htjeli": true, "zelimo": true,
	"zeleli": true, "θελαμε": true, "θελουμε": true, "istiyoruz": true, "искаме": true, "искали": true,
	"хотіли": true, "хочемо": true, "хотели": true, "хотим": true, "norime": true, "noretume": true,
	"velamies": true, "gribetu": true, "soovime": true, "sooviksime": true, "tahaksime": true,
}

// wishNegators deny the wish that a crawl go on ("je ne souhaite pas que
// votre robot continue", "nechceme, aby ho robot ďalej navštevoval"):
// such crawling is not wanted.
var wishNegators = map[string]bool{
	"not": true, "dont": true, "don": true, "ne": true, "pas": true, "nicht": true, "kein": true, "non": true,
	"no": true, "nao": true, "niet": true, "ikke": true, "inte": true, "nem": true, "nie": true, "nu": true,
	"ei": true, "nechceme": true, "nechcem": true, "nechci": true, "nechceli": true, "nechteli": true,
	"nechcu": true, "ne-": true, "не": true, "nenorime": true, "nenoriu": true, "nevelamies": true,
	"negribam": true, "rridux": true, "ddim": true, "nid": true, "emme": true, "δεν": true,
	"ekki": true, "nuk": true, "mos": true, "nemojte": true, "немојте": true,
}

// wishNegated reports whether a negator stands among the six words before
// pos, in its sentence.
func wishNegated(toks []token, pos int) bool {
	for k := pos - 1; k >= 0 && k >= pos-6; k-- {
		if toks[k].folded == tokBarrier {
			return false
		}
		if wishNegators[toks[k].folded] {
			return true
		}
	}
	return false
}

// wantWords (folded) say "want" or "wish": after a negation they deny the
// wish ("we do not want", "no volem", "non vogliamo", "wir wollen nicht").
var wantWords = map[string]bool{
	"want": true, "wish": true, "like": true, "wollen": true, "mochten": true, "will": true, "wunschen": true,
	"voulons": true, "veux": true, "souhaitons": true, "souhaite": true, "desirons": true, "vogliamo": true,
	"voglio": true, "desideriamo": true, "desidero": true, "queremos": true, "quiero": true, "deseamos": true,
	"deseo": true, "quero": true, "desejamos": true, "willen": true, "wil": true, "wensen": true,
	"onsker": true, "vil": true, "vill": true, "onskar": true, "chceme": true, "chcemy": true, "chce": true,
	"akarjuk": true, "szeretnenk": true, "volem": true, "vull": true, "desitgem": true, "desexamos": true,
	"haluamme": true, "halua": true, "zelimo": true, "zelim": true, "zelime": true, "dorim": true, "vrem": true,
	"хотим": true, "желаем": true, "искаме": true, "хочемо": true, "сакаме": true, "желимо": true,
	"θελουμε": true, "istemiyoruz": true, "norime": true, "velamies": true, "soovi": true, "viljum": true,
	"duam": true, "nahi": true, "eisiau": true,
}

// deniedWishes (folded) deny a wish in one word: "nechceme", "nenorime".
var deniedWishes = map[string]bool{
	"nechceme": true, "nechcem": true, "nechci": true, "nenorime": true, "nenoriu": true, "nevelamies": true,
	"negribam": true, "rridux": true, "nixtiequx": true, "istemiyoruz": true, "nolen": true,
}

// wishStops end the reach of a denied wish: a new request ("please",
// "bitte") or a contrast ("but", "aber") starts after them.
var wishStops = map[string]bool{
	"please": true, "pls": true, "kindly": true, "bitte": true, "but": true, "however": true, "aber": true,
	"sondern": true, "mais": true, "pero": true, "ma": true, "mas": true, "maar": true, "men": true,
	"ale": true, "але": true, "но": true, "али": true, "mutta": true, "dar": true, "ali": true, "toda": true,
}

// wishThat (folded) introduce what is wished: "that", "to", "dass", "que",
// "che", "aby", "kad", "lai", "чтобы".
var wishThat = map[string]bool{
	"that": true, "to": true, "dass": true, "que": true, "qu": true, "che": true, "aby": true, "zeby": true,
	"by": true, "kad": true, "lai": true, "et": true, "da": true, "att": true, "at": true, "ad": true,
	"ki": true, "qe": true, "чтобы": true, "щоб": true, "щоби": true, "да": true, "ut": true, "li": true,
	"ca": true, "sa": true, "etta": true, "hogy": true, "να": true, "dat": true,
}

// deniedRemoval returns the removal word that a denied wish governs ("we
// do not want example.com removed", "no queremos que … sea eliminado",
// "не искаме … да бъде премахнат"): such a sentence asks us to keep the
// site, whatever else it names; "" when none.
func deniedRemoval(toks []token) string {
	for k := range toks {
		if hasStem(toks[k].folded, removalStems) && wishDenied(toks, k) && !crawlBetween(toks, k) {
			return toks[k].lower
		}
	}
	return ""
}

// crawlBetween reports whether the denied wish before pos governs a verb
// of crawling (within three words of its "that"), not the removal at
// pos: "no queremos que nos rastreen: eliminen …" denies the crawl, and
// the removal after it is a request of its own.
func crawlBetween(toks []token, pos int) bool {
	that := -1
	for k := pos - 1; k >= 0 && k >= pos-8; k-- {
		w := toks[k].folded
		if w == tokBarrier || wantWords[w] || deniedWishes[w] {
			break
		}
		if wishThat[w] {
			that = k
		}
	}
	if that < 0 {
		return false
	}
	for k := that + 1; k < pos && k <= that+3; k++ {
		if crawlWords.matches(toks[k].folded) || hasStem(toks[k].folded, crawlStems) {
			return true
		}
	}
	return false
}

// wishDenied reports whether pos stands in what a denied wish governs,
// among the eight words before it in its sentence: "no volem que el
// vostre robot torni a indexar", "we do not want your bot to crawl it
// again" forbid the crawl, they do not ask for it. A "please" or a "but"
// in between starts a request of its own.
func wishDenied(toks []token, pos int) bool {
	for k := pos - 1; k >= 0 && k >= pos-8; k-- {
		w := toks[k].folded
		if w == tokBarrier || wishStops[w] {
			return false
		}
		denied := deniedWishes[w]
		if !denied && wantWords[w] {
			for j := k - 1; j >= 0 && j >= k-2; j-- {
				if wishNegators[toks[j].folded] {
					denied = true
				}
			}
			if j := k + 1; j < pos && (toks[j].folded == "nicht" || toks[j].folded == "niet" || toks[j].folded == "ikke" || toks[j].folded == "inte") {
				denied = true // "wir wollen nicht", "wij willen niet"
			}
		}
		if !denied {
			continue
		}
		for j := k + 1; j < pos && j <= k+4; j++ {
			if wishThat[toks[j].folded] {
				return true
			}
		}
		return false
	}
	return false
}

// negators are the words that negate a request placed just before it
// (folded). Words that also mean something else ("no" in English answers)
// are left out.
var negators = map[string]bool{
	"not": true, "dont": true, "don": true, "never": true, "nicht": true, "keine": true, "nie": true,
	"niet": true, "ikke": true, "inte": true, "ej": true, "nem": true, "non": true, "nao": true,
	"ne": true, "pas": true, "nunca": true, "ekki": true, "nemojte": true, "немојте": true, "arge": true,
	"不": true, "不要": true, "別": true, "别": true, "勿": true,
}

// conditionals open a condition: a negation inside one ("if you do not
// stop") is a demand, not a refusal.
var conditionals = map[string]bool{
	"if": true, "unless": true, "wenn": true, "falls": true, "si": true, "se": true, "als": true,
	"om": true, "hvis": true, "jesli": true, "jezeli": true, "pokud": true, "jestli": true, "ha": true,
}

// conditionalBefore reports whether a conditional word stands within the
// three words before pos, in the same sentence.
func conditionalBefore(toks []token, pos int) bool {
	for k := pos - 1; k >= 0 && k >= pos-3; k-- {
		if toks[k].folded == tokBarrier {
			return false
		}
		if conditionals[toks[k].folded] {
			return true
		}
	}
	return false
}

// negatorStops are verbs of removal and stopping: negated, they ask for
// the crawling to go on ("do not remove", "don't stop"). Verbs of crawling
// are not among them: "do not crawl" is an exclusion.
var negatorStops = []string{
	"remov", "exclud", "delet", "stop", "block", "ban", "drop", "delist", "take", "entfern", "losch",
	"sperr", "ausschl", "aufhor", "beend", "retir", "supprim", "exclu", "bloqu", "arret", "cess",
	"rimuov", "esclud", "cancell", "blocc", "smett", "interromp", "togli", "elimin", "quit", "borr",
	"bloque", "dej", "parar", "par", "remov", "verwijder", "blokk", "fjern", "blok", "sluta", "ta",
	"vyrad", "odstran", "smaz", "prestan", "zablok", "usun", "wyklucz", "przesta", "torol", "kizar",
	"eltavolit", "tilt", "kerj", "ker", "ask", "want", "wish", "request", "demand", "chied", "vogli",
	"will", "wil", "wollen", "mochten", "veux", "voul", "quer", "quier", "onsk", "vill", "erase", "purge",
	"wipe", "unlist",
}

// negated reports whether the word at pos is negated: a negator among the
// three words before it or among the next words of the phrase (up to
// last+1), in the same sentence and not part of a rule, when the word is a
// verb of removal, stopping or asking.
func negated(toks []token, used []bool, pos, last int) bool {
	w := toks[pos].folded
	stop := false
	for _, v := range negatorStops {
		if strings.HasPrefix(w, v) {
			stop = true
			break
		}
	}
	if !stop {
		return false
	}
	for k := pos - 1; k >= 0 && k >= pos-3; k-- {
		if toks[k].folded == tokBarrier {
			break
		}
		if !used[k] && negators[toks[k].folded] {
			// "if you do not stop crawling, …" demands it.
			return !conditionalBefore(toks, k)
		}
	}
	// After the verb, as Germanic languages put it ("sluta inte",
	// "entfernen Sie uns nicht", "fjern ikke").
	for k := pos + 1; k < len(toks) && k <= last+1 && k <= pos+3; k++ {
		if toks[k].folded == tokBarrier {
			break
		}
		if !used[k] && negators[toks[k].folded] && toks[k].folded != "ne" && toks[k].folded != "nie" {
			return true
		}
	}
	return false
}
