package message

import (
	"regexp"
	"strings"
)

// Quote is what NewText left out of a message's text.
type Quote struct {
	Text      string // the quoted reply text, as it was
	Lines     int    // non-empty lines of Text
	Signature string // the signature
}

// NewText returns the part of a message body its sender wrote: without
// quoted reply text (lines starting with ">", and everything below an
// attribution such as "On … wrote:" or a separator such as "-----Original
// Message-----" or an Outlook "From: … Sent: …" block), and without the
// signature (everything after a line that is exactly "-- "). Text
// forwarded inline ("---------- Forwarded message ---------", "Begin
// forwarded message:", or an Outlook header block when the subject says
// it is a forward) does count: a colleague forwarding a request asks us
// to act on it. Text after a quoted block (a bottom-posted or interleaved
// reply) counts too.
func NewText(text string, forward bool) (string, Quote) {
	lines := strings.Split(text, "\n")
	var quoted, sig []string
	const (
		modeNew = iota // the sender's own text
		modeSig        // a signature: skipped until a forward starts
		modeCut        // below a reply attribution: skipped to the end
	)
	mode := modeNew
	var out []string
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r")
		t := strings.TrimSpace(l)
		if mode == modeCut {
			quoted = append(quoted, lines[i:]...)
			break
		}
		if isQuoteLine(l) {
			if mode == modeNew {
				// An unrecognised attribution line right above the quote
				// ("Le 3 mars, X a écrit :" in a client we do not know).
				var att string
				out, att = dropAttribution(out)
				if att != "" {
					quoted = append(quoted, att)
				}
			}
			quoted = append(quoted, l)
			continue
		}
		if isForwardMarker(t) {
			mode = modeNew
			i = skipHeaderLines(lines, i+1) - 1
			continue
		}
		if forward {
			// Outlook forwards look like its replies; the subject tells.
			switch {
			case isSeparator(t), isUnderscoreSeparator(lines, i):
				mode = modeNew
				i = skipHeaderLines(lines, i+1) - 1
				continue
			case headerBlockAt(lines, i):
				mode = modeNew
				i = skipHeaderLines(lines, i) - 1
				continue
			}
		}
		if mode == modeSig {
			sig = append(sig, l)
			continue
		}
		if l == "-- " || t == "--" || l == "-- \u00a0" {
			mode = modeSig
			continue
		}
		if isSeparator(t) || headerBlockAt(lines, i) || isUnderscoreSeparator(lines, i) {
			mode = modeCut
			quoted = append(quoted, l)
			continue
		}
		if n := attributionAt(lines, i); n > 0 {
			next := i + n
			for next < len(lines) && strings.TrimSpace(lines[next]) == "" {
				next++
			}
			quoted = append(quoted, lines[i:next]...)
			if next < len(lines) && isQuoteLine(lines[next]) {
				// Its quote is skipped line by line; a reply below it
				// (bottom posting) still counts.
				i = next - 1
				continue
			}
			mode = modeCut
			i = next - 1
			continue
		}
		out = append(out, l)
	}
	q := Quote{Text: strings.TrimSpace(strings.Join(quoted, "\n")), Signature: strings.TrimSpace(strings.Join(sig, "\n"))}
	for _, l := range quoted {
		if strings.TrimSpace(l) != "" {
			q.Lines++
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n")), q
}

func isQuoteLine(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return strings.HasPrefix(t, ">") || strings.HasPrefix(t, "&gt;")
}

// dropAttribution removes the last non-empty line of out when it looks like
// an attribution (it ends with a colon and holds a date or an address) and
// returns it.
func dropAttribution(out []string) ([]string, string) {
	k := len(out) - 1
	for k >= 0 && strings.TrimSpace(out[k]) == "" {
		k--
	}
	if k < 0 {
		return out, ""
	}
	t := strings.TrimSpace(out[k])
	if strings.HasSuffix(t, ":") && (strings.ContainsAny(t, "0123456789@") || len(t) > 40) {
		return out[:k], out[k]
	}
	return out, ""
}

// normLine folds a line for marker matching: lowercase ASCII, without
// the dashes, underscores, stars and colons that decorate markers.
func normLine(t string) string {
	if len(t) > 120 {
		return ""
	}
	f := Fold(t)
	f = strings.Trim(f, "-_=*~<>[]() :\t")
	return strings.Join(strings.Fields(f), " ")
}

// forwardMarkers are the lines that open an inline forward, in the common
// clients' languages (folded).
var forwardMarkers = []string{
	"forwarded message", "begin forwarded message", "forwarded email", "forwarded e-mail", "forwarded mail",
	"weitergeleitete nachricht", "anfang der weitergeleiteten nachricht", "weitergeleitete e-mail",
	"messaggio inoltrato", "inizio messaggio inoltrato", "messaggio inoltrato da",
	"message transfere", "debut du message reexpedie", "message reexpedie", "courriel transfere",
	"mensaje reenviado", "comienzo del mensaje reenviado", "inicio del mensaje reenviado",
	"mensagem encaminhada", "inicio da mensagem reencaminhada", "mensagem reencaminhada", "mensagem encaminhada por",
	"doorgestuurd bericht", "begin doorgestuurd bericht", "doorgestuurde e-mail",
	"videresendt meddelelse", "videresendt besked", "start pa videresendt besked", "videresendt e-mail",
	"vidarebefordrat meddelande", "vidarebefordrat mejl", "vidarebefordrat brev", "borjan pa vidarebefordrat meddelande",
	"borjan pa vidarebefordrat brev",
	"tovabbitott uzenet", "tovabbitott level",
	"preposlana zprava", "preposlany e-mail", "preposlana sprava", "preposlany email", "zacatek preposilane zpravy",
	"zaciatok preposlanej spravy",
	"przekazana wiadomosc", "wiadomosc przekazana dalej", "poczatek przekazanej wiadomosci", "poczatek przekazywanej wiadomosci",
}

func isForwardMarker(t string) bool {
	if t == "" || len(t) > 120 {
		return false
	}
	decorated := strings.HasPrefix(t, "-") || strings.HasPrefix(t, "=") || strings.HasPrefix(t, "_") ||
		strings.HasPrefix(t, "*") || strings.HasSuffix(t, ":")
	n := normLine(t)
	for _, m := range forwardMarkers {
		if n == m || decorated && strings.HasPrefix(n, m) {
			return true
		}
	}
	// Gmail writes its forward marker, in every language, between runs
	// of eight or more dashes and spaces ("---------- Proslijeđena
	// poruka ---------"); Outlook's "-----Original Message-----" has
	// five and no spaces.
	return gmailMarkerRe.MatchString(t)
}

// gmailMarkerRe matches Gmail's forward marker in any language.
var gmailMarkerRe = regexp.MustCompile(`^-{8,} [^-]+(?: [^-]+){0,4} -{8,}$`)

// separatorWords mark the start of a quoted original below a reply.
var separatorWords = []string{
	"original message", "ursprungliche nachricht", "originalnachricht", "original-nachricht",
	"message d'origine", "message original", "messaggio originale", "mensaje original", "mensagem original",
	"oorspronkelijk bericht", "origineel bericht", "oprindelig meddelelse", "oprindelig besked",
	"ursprungligt meddelande", "ursprungligt mejl", "eredeti uzenet", "puvodni zprava", "povodna sprava",
	"oryginalna wiadomosc", "wiadomosc oryginalna", "reply above this line", "antworten sie oberhalb",
	"originalmeddelande", "opprinnelig melding", "alkuperainen viesti", "izvorna poruka", "izvirno sporocilo",
	"mesaj original", "orijinal mesaj", "arxiko minyma", "αρχικο μηνυμα",
}

func isSeparator(t string) bool {
	if t == "" || len(t) > 120 {
		return false
	}
	if !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "_") && !strings.HasPrefix(t, "=") &&
		!strings.HasPrefix(t, "*") && !strings.HasPrefix(t, "#") {
		return false
	}
	n := normLine(t)
	for _, w := range separatorWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// isUnderscoreSeparator recognises Outlook's line of underscores followed
// by a header block.
func isUnderscoreSeparator(lines []string, i int) bool {
	t := strings.TrimSpace(lines[i])
	if len(t) < 10 || strings.Trim(t, "_—–-") != "" {
		return false
	}
	j := i + 1
	for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
		j++
	}
	return j < len(lines) && headerBlockAt(lines, j)
}

// Header field names of quoted and forwarded header blocks (folded).
var (
	fromFields = map[string]bool{
		"from": true, "von": true, "de": true, "da": true, "van": true, "fra": true, "fran": true, "od": true,
		"felado": true, "nadawca": true, "remitente": true, "afzender": true, "lahettaja": true, "expediteur": true,
		"mittente": true, "absender": true, "odosielatel": true, "odesilatel": true,
	}
	dateFields = map[string]bool{
		"sent": true, "date": true, "gesendet": true, "datum": true, "envoye": true, "inviato": true, "data": true,
		"enviado": true, "enviada": true, "enviado el": true, "fecha de envio": true, "fecha": true, "verzonden": true, "verstuurd": true, "sendt": true,
		"skickat": true, "odeslano": true, "odoslane": true, "elkuldve": true, "wyslano": true, "wyslane": true,
		"dnia": true, "subject": true, "betreff": true, "objet": true, "oggetto": true, "asunto": true,
		"assunto": true, "onderwerp": true, "emne": true, "amne": true, "predmet": true, "targy": true,
		"temat": true, "to": true, "an": true, "a": true, "para": true, "aan": true, "til": true, "till": true,
		"komu": true, "cimzett": true, "do": true, "cc": true, "kopie": true,
	}
)

// fieldName returns the folded name of a "Name: value" line, "" if the line
// is not one. Outlook's bold "*From:*" and French "De :" are accepted.
func fieldName(l string) string {
	t := strings.TrimSpace(strings.ReplaceAll(l, "*", ""))
	i := strings.IndexByte(t, ':')
	if i <= 0 || i > 25 {
		return ""
	}
	return Fold(strings.TrimSpace(t[:i]))
}

// headerBlockAt recognises a quoted or forwarded message's header block
// starting at line i: a From line followed closely by Sent/Date/To/Subject
// lines.
func headerBlockAt(lines []string, i int) bool {
	if headerBlockShape(lines, i) {
		return true
	}
	if i >= len(lines) || !fromFields[fieldName(lines[i])] {
		return false
	}
	n := 0
	for j := i + 1; j < len(lines) && j <= i+6; j++ {
		if dateFields[fieldName(lines[j])] {
			n++
		}
	}
	return n >= 2
}

// skipHeaderLines skips the header block of a forward starting at line i
// (blank lines before it, its "Name: value" lines, and the blank line
// after it) and returns the index of the first body line.
func skipHeaderLines(lines []string, i int) int {
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	start := i
	for i < len(lines) {
		t := strings.TrimSpace(lines[i])
		if t == "" {
			break
		}
		if fieldName(t) == "" && i == start {
			return start // no header block
		}
		if fieldName(t) == "" && !strings.HasPrefix(lines[i], " ") && !strings.HasPrefix(lines[i], "\t") {
			break
		}
		i++
	}
	return i
}

// attributionVerbs are the verbs of reply attributions ("wrote"), folded.
var attributionVerbs = []string{
	"wrote", "writes", "schrieb", "schreef", "a ecrit", "ha scritto", "scrisse", "escribio", "escreveu",
	"skrev", "skriver", "napsal", "napisal", "irta", "kirjoitti", "geschreven", "wrote on", "a scris",
	"pisze", "napisana przez", "het volgende geschreven",
}

// attributionAt recognises a reply attribution starting at line i, which
// may be wrapped over up to three lines ("Il giorno … ha\nscritto:"), and
// returns how many lines it spans; 0 if there is none.
func attributionAt(lines []string, i int) int {
	joined := ""
	for n := 1; n <= 3 && i+n-1 < len(lines); n++ {
		l := strings.TrimSpace(lines[i+n-1])
		if l == "" || isQuoteLine(l) {
			return 0
		}
		if n > 1 {
			// A wrapped attribution goes on mid-sentence: a line that
			// ends a sentence, or a long one, is the sender's text above
			// it ("prosím zaraďte example.sk späť.\nut 3. 3. 2026 …
			// napísal(a):").
			prev := strings.TrimSpace(lines[i+n-2])
			if strings.HasSuffix(prev, ".") || strings.HasSuffix(prev, "!") || strings.HasSuffix(prev, "?") || len(prev) > 100 {
				return 0
			}
		}
		if joined != "" {
			joined += " "
		}
		joined += l
		if len(joined) > 400 {
			return 0
		}
		if !strings.HasSuffix(joined, ":") {
			continue
		}
		if !strings.ContainsAny(joined, "0123456789@") {
			return 0
		}
		f := Fold(joined)
		for _, v := range attributionVerbs {
			if strings.Contains(f, v) {
				return n
			}
		}
		if attributionShape(joined) {
			return n
		}
		return 0
	}
	return 0
}
