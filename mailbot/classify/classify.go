package classify

import (
	"fmt"
	"sort"
	"strings"

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
}

// Classify decides what a decoded message asks for. It does no I/O, keeps
// no state and is safe for concurrent use.
func Classify(m *message.Message) *Result {
	res := &Result{Intent: IntentOther}
	classify(res, m)
	return res
}

// classify fills res from the decoded message.
func classify(res *Result, m *message.Message) {
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

	domainText := subject + "\n\n" + text
	res.Domains = sitesIn(domainText)
	if len(res.Domains) == 0 && fwdText != "" {
		res.Domains = sitesIn(fwdText)
	}

	// The words: the subject counts unless it is a reply's ("Re: ..."),
	// which only repeats what we wrote.
	intentSubject := subject
	if message.IsReplySubject(subject) {
		intentSubject = ""
	}
	toks := tokenize(clip(intentSubject), nil)
	toks = appendBarrier(toks)
	toks = appendBarrier(append(toks, token{folded: tokBarrier}))
	toks = tokenize(clip(blankEmails(deobfuscate(text))), toks)

	// Language: of the new text, else of the subject, else the header.
	lang := detectLang(toksAfterSubject(toks), text)
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

	ex, re, hits, ruleLang := scoreIntent(toks, plausibleLangs(toks, subject+"\n"+text))
	if ex == 0 && re == 0 && fwdText != "" {
		ftoks := tokenize(clip(blankEmails(deobfuscate(fwdText))), nil)
		ex, re, hits, ruleLang = scoreIntent(ftoks, plausibleLangs(ftoks, fwdText))
		for i := range hits {
			hits[i] = "attached message: " + hits[i]
		}
	}
	res.Reasons = append(res.Reasons, hits...)
	if res.Lang == "" {
		// Too few words to tell ("pls stop crawling example.com"): the
		// language of the request phrase itself.
		res.Lang = ruleLangOf(ruleLang, toks, subject+"\n"+text)
	}
	switch {
	case re >= 2 && re >= ex:
		res.Intent = IntentReinclude
	case ex >= 2:
		res.Intent = IntentExclude
	default:
		res.Intent = IntentOther
		if strings.TrimSpace(text) == "" && strings.TrimSpace(subject) == "" {
			res.Reasons = append(res.Reasons, "empty message")
		} else if len(hits) == 0 {
			res.Reasons = append(res.Reasons, "no request recognised")
		}
	}
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

// autoSubjects are subject phrases of auto-replies and bounces (folded);
// receiptPrefixes start the subject of read receipts.
var (
	autoSubjects = []string{
		"out of office", "out of the office", "automatic reply", "auto reply", "autoreply", "auto-reply",
		"auto response", "autoresponse", "vacation reply", "away from the office",
		"undeliverable", "undelivered mail", "delivery status notification", "mail delivery failed",
		"returned mail", "delivery failure", "failure notice", "delivery has failed", "mail delivery system",
		"abwesenheitsnotiz", "automatische antwort", "abwesend", "unzustellbar", "nicht zustellbar",
		"reponse automatique", "reponse d'absence", "absence du bureau", "non remis",
		"risposta automatica", "fuori ufficio", "fuori sede", "non recapitabile", "mancato recapito",
		"respuesta automatica", "fuera de la oficina", "no se puede entregar",
		"resposta automatica", "fora do escritorio", "ausente do escritorio", "nao entregue",
		"automatisch antwoord", "afwezig", "onbestelbaar", "niet afgeleverd",
		"automatisk svar", "autosvar", "fravaerende", "kunne ikke leveres", "ej levererat", "frånvaro", "franvaro",
		"automatikus valasz", "hazon kivul", "szabadsagon", "nem kezbesitheto",
		"automaticka odpoved", "mimo kancelar", "nedorucitelne", "nedorucitelna",
		"automaticka odpoved", "mimo kancelarie", "nedorucitelna",
		"automatyczna odpowiedz", "odpowiedz automatyczna", "poza biurem", "nieobecnosc", "niedostarczona",
	}
	receiptPrefixes = []string{
		"read:", "gelesen:", "lu :", "lu:", "letto:", "leido:", "lido:", "gelezen:", "laest:", "last:",
		"olvasott:", "olvasva:", "precteno:", "precitane:", "przeczytane:", "przeczytano:", "read receipt",
		"lesebestatigung", "accuse de lecture", "conferma di lettura", "confirmacion de lectura",
		"confirmacao de leitura", "leesbevestiging", "laesekvittering", "lasbekraftelse",
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

// scoreIntent runs the keyword rules over the tokens and returns the
// exclusion and re-inclusion weights with a reason per matched rule, and
// the language of the first rule that counted. Rules tied to a language
// are tried only when langs holds it; a nil langs allows every language.
func scoreIntent(toks []token, langs map[string]bool) (ex, re int, reasons []string, lang string) {
	rs := compiledRules
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
	}
	if len(cands) == 0 {
		return 0, 0, nil, ""
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
		if counted[c.rule] || used[c.pos] {
			continue
		}
		r := &rs.rules[c.rule]
		pos, ok := r.matchFrom(toks, used, c.pos)
		if !ok {
			continue
		}
		counted[c.rule] = true
		if r.phase == phaseThanks {
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
		kind := "exclude"
		if r.phase != phaseExclude {
			kind = "reinclude"
			re += r.weight
		} else {
			ex += r.weight
		}
		reasons = append(reasons, fmt.Sprintf("%s (%s): %q", kind, r.lang, strings.Join(words, " ")))
		if lang == "" {
			lang = r.lang
		}
	}
	return ex, re, reasons, lang
}
