package classify

import (
	"fmt"
	"slices"
	"strings"
)

// The guards below are independent readings of a message that an
// exclusion must agree with before it is applied without a human. Each
// looks for a category of meaning, in every language the mailbox sees,
// rather than for the phrases of one message: words of a block or
// exclusion list next to a removal, a return ("back", "re-"), doubt, and
// legal vocabulary. Any of them sends the exclusion to staff.

// removalStems (folded) are verbs of taking something off or out.
var removalStems = []string{
	"remov", "delet", "drop", "take", "taking", "took", "erase", "entfern", "losch", "streich",
	"austrag", "herausnehm", "raus", "retir", "supprim", "enlev", "sort", "rimuov", "togli", "cancell", "elimin",
	"levat", "quit", "sac", "borr", "tir", "verwijder", "haal", "fjern", "tag", "ta", "odstran", "vyjm",
	"vyrad", "vymaz", "smaz", "usun", "wykresl", "zdejm", "zdjac", "torol", "eltavolit", "vegy", "poist",
	"scoat", "scos", "sterg", "uklon", "makn", "izbris", "αφαιρ", "kikerul", "βγαλ", "διαγραψ", "kaldir",
	"cikar", "sil", "премахн", "махн", "изтри", "извад", "видал", "вилуч", "прибер", "прибра", "зніміть",
	"pasalin", "isbrauk", "istrin", "iznem", "dzes", "nonem", "svitro", "eemalda", "kustuta", "bain",
	"bhaint", "scrios", "nehh", "neħħ", "hassr", "ħassr", "trai", "trei", "esborr", "kendu", "ezabatu",
	"tynn", "dilew", "fjarlaeg", "eydid", "takid", "obris", "skinite", "отстран", "избриш", "обриш",
	"уклон", "скин", "удал", "убер", "вычеркн", "hiqni", "fshin", "largon",
}

// blockedStems (folded) are the nouns and participles of a block or an
// exclusion that already exists: "blocklist", "excluded sites",
// "Sperrliste", "bloqués", "esclusi", "izključenih", "изключени".
// A removal aimed at one of them asks to be crawled again.
var blockedStems = []string{
	"blocklist", "blacklist", "denylist", "banlist", "blocked", "banned", "excluded", "exclusions",
	"blacklisted", "sperrlist", "ausschlusslist", "negativlist", "gesperrt", "ausgeschlossen",
	"blockiert", "exclus", "bloque", "interdit", "esclus", "bloccat", "nera", "excluid", "bloquead",
	"exclusoes", "negra", "uitgesloten", "geblokkeerd", "zwarte", "blokkeerlijst", "uitsluitingslijst",
	"sortlist", "svartelist", "svartlist", "udelukked", "blokered", "blokkert", "uteslutn", "blockerad",
	"sparrlist", "sparrad", "vyloucen", "vylucen", "blokovan", "zablokovan", "cerne", "cierne",
	"zakazan", "wykluczon", "zablokowan", "czarn", "kizart", "letiltott", "tiltott", "feketelist",
	"tiltolist", "estetty", "estetyt", "poissuljet", "mustalist", "blocat", "neagra",
	"iskljucen", "blokiran", "zabranjen", "crn", "izkljucen", "prepovedan", "crno", "αποκλεισμεν",
	"μπλοκαρισμεν", "μαυρη", "engellen", "yasakli", "kara", "изключен", "блокиран", "забранен",
	"черен", "черния", "виключен", "заблокован", "заборонен", "чорн",
	"uzblokuot", "draudziam", "juodoj", "juodaj", "isimciu", "blokuojam", "bloket", "izslegt", "aizliegt",
	"melnaj", "blokeeritud", "keelatud", "valistatud", "mustast", "blocailte", "eisiata", "imblukkat",
	"sewda", "eskluz", "bloquejat", "exclosos", "excloses", "blokeatu", "baztertu", "beltz",
	"waharddedig", "gwaharddedig", "blociedig", "eithriedig", "bannlist", "svort", "utilokad",
	"izuzet", "забрањен", "забранет", "црн", "искључен", "исклучен", "заблокирован", "исключенн",
	"запрещенн", "bllokuar", "ndaluar", "perjashtuar", "zeze", "blokesan", "blokavim", "blokeerimis",
	"blocal", "svart", "исключении", "bllokim", "blocio", "blokeo", "blokowan", "blocare", "αποκλεισμου",
	"αποκλεισμων", "виключень",
}

// blockedWords (folded) are participles whose stem would also catch the
// noun or the verb ("exclusion", "bloquez"): they count only whole.
var blockedWords = map[string]bool{
	"exclus": true, "exclues": true, "exclusa": true, "excluse": true, "exclusi": true, "esclusi": true,
	"escluse": true, "escluso": true, "esclusa": true, "bloque": true, "bloques": true, "bloquee": true,
	"bloquees": true,
}

// hasStem reports whether the folded word starts with one of the stems.
// Stems of three bytes or fewer ("ta", "sil") must be the whole word.
func hasStem(w string, stems []string) bool {
	for _, s := range stems {
		if len(s) <= 3 {
			if w == s {
				return true
			}
			continue
		}
		if strings.HasPrefix(w, s) {
			return true
		}
	}
	return false
}

// listConflict returns the removal and block words that stand in one
// sentence with an exclusion hit ("remove example.bg from your list of
// excluded sites"): a removal aimed at a block or exclusion list asks to
// be crawled again, so the exclusion is not applied alone. "" when none.
func listConflict(sc *scored, toks []token) string {
	sentence := sentences(toks)
	for _, h := range sc.hits {
		if h.phase != phaseExclude {
			continue
		}
		s := sentence[h.first]
		removal, blocked := "", ""
		for k := range toks {
			if sentence[k] != s {
				continue
			}
			w := toks[k].folded
			if removal == "" && hasStem(w, removalStems) {
				removal = toks[k].lower
			}
			if blocked == "" && (hasStem(w, blockedStems) || blockedWords[w]) {
				blocked = toks[k].lower
			}
		}
		if removal != "" && blocked != "" {
			return fmt.Sprintf("'%s' … '%s'", removal, blocked)
		}
	}
	return ""
}

// listNouns (folded stems) are the nouns of a list in the languages the
// LIST macro does not spell: "sąrašas", "saraksts", "nimekiri", "liosta",
// "llista", "zerrenda", "rhestr", "popis", "spisak", "список", "листа".
var listNouns = []string{
	"saras", "sarakst", "nimekir", "loend", "liosta", "llist", "zerrenda", "rhestr", "popis", "spis",
	"спис", "лист", "λιστ", "listen", "listan", "listy", "liste", "lijst",
}

// crawlStems (folded) are verbs of crawling in the languages the CRAWLV
// macro does not spell, and the Cyrillic ones.
var crawlStems = []string{
	"rastrex", "rastreja", "indekse", "indeksuo", "kulasta", "inneacs", "arakat", "gropian",
	"cropian", "skrid", "posjec", "posec", "apmekl", "vizit", "zvarrit", "tindicj", "scansion", "lanky",
	"индекс", "сканир", "посещ", "посеща", "обход", "обхожда", "краул", "індекс", "скану", "відвіду", "посећ",
}

// siteNouns (folded stems) are the nouns of a site in the languages the
// SITE macro does not spell.
var siteNouns = []string{
	"sajt", "svetain", "vietn", "sait", "suiomh", "gwefan", "webgune", "vefsid", "vefi", "stranic", "faqe",
	"lloc", "webs", "саит", "сајт", "страниц", "ιστοτοπ", "ιστοσελιδ",
}

// siteOnlyWords are the words of the SITE macro: a site, not the crawler.
var siteOnlyWords = macroStep("SITE", "HOST")

// crawlWords are the words of the CRAWLV macro.
var crawlWords = macroStep("CRAWLV")

// macroStep is a rule step of the words of the keyword macro name, but
// for the alternatives in leave out.
func macroStep(name string, leave ...string) ruleStep {
	var st ruleStep
	for _, a := range strings.Split(keywordMacros[name], "|") {
		if !slices.Contains(leave, a) {
			st.alts = append(st.alts, parseAlt(a))
		}
	}
	return st
}

// negatedCrawl reports whether toks[k] denies a crawl: a negator followed
// within two words by a verb of crawling ("don't crawl", "ne pas
// explorer", "nie indeksujecie"), or one word that fuses them
// ("neprocházíte", "neindeksuojamų", "неиндексирани"). It returns the
// position of the crawl word.
func negatedCrawl(toks []token, k int) (int, bool) {
	isCrawl := func(w string) bool {
		return crawlWords.matches(w) || hasStem(w, crawlStems)
	}
	w := toks[k].folded
	for _, p := range []string{"ne", "nie", "не", "ні"} {
		if rest, ok := strings.CutPrefix(w, p); ok && len(rest) >= 4 && isCrawl(rest) {
			return k, true
		}
	}
	if !negators[w] && !wishNegators[w] && w != "no" && w != "non" && w != "ne" && w != "не" {
		return 0, false
	}
	for j := k + 1; j < len(toks) && j <= k+3; j++ {
		if toks[j].folded == tokBarrier {
			break
		}
		if isCrawl(toks[j].folded) {
			return j, true
		}
	}
	return 0, false
}

// andWords (folded) join two requests: "and", "und", "et", "y", "и".
// Words that are also something else in a neighbour language (Czech "a"
// is French "à", Polish "i" is Danish "I") are left out; Hungarian "és"
// and Romanian "și" stay, as "es" and "si" rarely stand inside a list's
// description.
var andWords = map[string]bool{
	"and": true, "und": true, "et": true, "y": true, "e": true, "og": true, "och": true, "oraz": true,
	"agus": true, "eta": true, "ac": true, "ir": true, "и": true, "і": true, "και": true, "ve": true,
	"dhe": true, "es": true, "si": true, "also": true, "too": true, "auch": true, "aussi": true, "anche": true, "tambien": true,
	"ook": true,
}

// fusedImperative reports whether a word that fuses a negation with a verb
// of crawling is an imperative ("neprocházejte", "neindeksuokite"): a
// request of its own, not what a list holds ("neprocházíte").
func fusedImperative(w string) bool {
	return strings.HasSuffix(w, "jte") || strings.HasSuffix(w, "kite")
}

// negatedListConflict returns the removal word and the denied crawl of a
// sentence that asks to take a site off a list of what is not crawled:
// "remove example.com from the list of sites you don't crawl", "take it
// off your do-not-crawl list", "retirer … de la liste des sites à ne pas
// explorer", "odstraňte … ze seznamu webů, které neprocházíte". Such a
// removal asks to be crawled again. "" when none.
func negatedListConflict(sc *scored, toks []token) string {
	sentence := sentences(toks)
	seen := map[int]bool{}
	for _, h := range sc.hits {
		if h.phase != phaseExclude || seen[sentence[h.first]] {
			continue
		}
		s := sentence[h.first]
		seen[s] = true
		removal, list := -1, -1
		for k := range toks {
			if sentence[k] != s {
				continue
			}
			w := toks[k].folded
			if removal < 0 && hasStem(w, removalStems) {
				removal = k
				continue
			}
			if removal >= 0 && list < 0 && (listWords.matches(w) && !crawlWords.matches(w) || hasStem(w, listNouns)) {
				list = k
			}
			if removal < 0 {
				continue
			}
			c, ok := negatedCrawl(toks, k)
			if !ok {
				continue
			}
			// The list, then the sites it holds and what is not done to
			// them ("list of sites you don't crawl", "Liste der nicht zu
			// crawlenden Seiten"); or the denial before its list
			// ("do-not-crawl list", "nem indexelt oldalak listájáról"). A
			// denial joined by "and", or with no sites between, is a
			// request of its own: "remove it from your index and do not
			// crawl it again", "… zo zoznamu a váš robot ju už
			// nenavštevoval".
			isSite := func(w string) bool { return siteOnlyWords.matches(w) || hasStem(w, siteNouns) }
			after := false
			if list >= 0 && list < k && !(c == k && fusedImperative(toks[k].folded)) {
				for j := list + 1; j < k; j++ {
					if isSite(toks[j].folded) {
						after = true
					}
				}
				for j := c + 1; j < len(toks) && j <= c+2 && sentence[j] == s; j++ {
					if isSite(toks[j].folded) {
						after = true
					}
				}
				for j := list + 1; j < k; j++ {
					if andWords[toks[j].folded] {
						after = false
					}
				}
			}
			before := false
			for j := c + 1; j < len(toks) && j <= c+3 && sentence[j] == s; j++ {
				if listWords.matches(toks[j].folded) && !crawlWords.matches(toks[j].folded) || hasStem(toks[j].folded, listNouns) {
					before = true
				}
			}
			if after || before {
				return fmt.Sprintf("'%s' … '%s'", toks[removal].lower, toks[k].lower)
			}
		}
	}
	return ""
}

// backWords (folded) say "back" in the languages we read: "take us back
// into your index", "zurück", "späť", "z powrotem", "vissza", "πίσω".
// reStems are the verbs of putting something back: "re-include",
// "reinstate", "wiederherstellen", "przywrócić", "відновіть".
var (
	backWords = map[string]bool{
		"back": true, "zuruck": true, "retour": true, "terug": true, "tilbage": true, "tilbake": true,
		"tillbaka": true, "zpet": true, "spat": true, "powrotem": true, "takaisin": true, "inapoi": true,
		"natrag": true, "nazad": true, "nazaj": true, "πισω": true, "geri": true, "обратно": true, "назад": true,
		"volta": true, "indietro": true, "vissza": true, "atgal": true, "atpakal": true, "tagasi": true,
		"atzera": true, "lura": true, "prapa": true, "натраг": true, "aftur": true,
	}
	reStems = []string{
		"reinclu", "re-inclu", "reindex", "re-index", "recrawl", "re-crawl", "readd", "re-add", "reinstat",
		"restore", "reintegr", "reinser", "reinsert", "reactiv", "ripristin", "rimett", "remett", "retabl",
		"restablec", "restabelec", "reincorpor", "wiederaufnehm", "wiederherstell", "wiederaufnahm",
		"przywroc", "visszaall", "visszavesz", "visszavenn", "visszatesz", "palauta", "relua", "reincl",
		"readuc", "vrat", "vratit", "vratte", "vrnit", "vrnite", "επαναφ", "επανεντα", "възстанов", "върнет",
		"віднов", "поверн", "grazink", "grazinti", "sugrazin", "atjauno", "taasta", "athchuir", "restabl",
		"reinclo", "readmet", "верните", "восстанов", "вратите", "врати", "riindeks",
	}
)

// returnCues returns the words of a return ("back", "re-…") that stand in
// a sentence about crawling, a list or a site which asks or allows
// something and is not negated: "nehmen Sie uns zurück in Ihren Index",
// "pridajte nás späť", "please re-include example.com". Unlike againCues
// they count in the sentence of the exclusion request itself.
func returnCues(sc *scored, toks []token) []string {
	sentence := sentences(toks)
	asking := askingSentences(sc, toks, sentence)
	var out []string
	for i, t := range toks {
		w := t.folded
		if !backWords[w] && !hasStem(w, reStems) {
			continue
		}
		if w == "back" && i > 0 && (toks[i-1].folded == "get" || toks[i-1].folded == "write" || toks[i-1].folded == "getting" ||
			toks[i-1].folded == "call" || toks[i-1].folded == "reply" || toks[i-1].folded == "hear" || toks[i-1].folded == "come" && i+1 < len(toks) && toks[i+1].folded == "to") {
			continue // "get back to you"
		}
		if w == "volta" && (i == 0 || toks[i-1].folded != "de") {
			continue // only "de volta" means back
		}
		negated, about := false, false
		for k := i - 1; k >= 0 && k >= i-4 && sentence[k] == sentence[i]; k-- {
			if againNegators[toks[k].folded] {
				negated = true
			}
		}
		for k := range toks {
			if sentence[k] == sentence[i] && (toks[k].folded == tokHost || siteWords.matches(toks[k].folded) || listWords.matches(toks[k].folded)) {
				about = true
			}
		}
		if about && !negated && asking[sentence[i]] {
			out = append(out, fmt.Sprintf("'%s'", t.lower))
		}
	}
	return out
}

// askingSentences returns the sentences that ask or allow something: a
// "please", a "you may", a "could you", or an exclusion or re-inclusion
// request (which is an imperative or a wish).
func askingSentences(sc *scored, toks []token, sentence []int) map[int]bool {
	asking := map[int]bool{}
	for _, sg := range sc.signals {
		if sg.phase == phasePolite {
			asking[sentence[sg.first]] = true
		}
	}
	for _, h := range sc.hits {
		asking[sentence[h.first]] = true
	}
	for i, t := range toks {
		if mayWords[t.folded] || asksReader(toks, i) {
			asking[sentence[i]] = true
		}
	}
	return asking
}

// listWords are the words of the LIST macro: what a site is removed from.
var listWords = macroStep("LIST")

// doubtWords (folded) say that the writer is weighing something, has not
// decided or is not sure, in the languages we read; doubtPairs are the
// same said in two words ("not sure", "nous demandons si").
var (
	doubtWords = map[string]bool{
		"whether": true, "wondering": true, "considering": true, "unsure": true, "undecided": true,
		"hesitate": true, "hesitating": true, "hesitant": true, "maybe": true, "perhaps": true, "debating": true,
		"ob": true, "uberlegen": true, "uberlegt": true, "zogern": true, "unsicher": true, "unentschlossen": true,
		"vielleicht": true, "eventuell": true, "hesite": true, "hesitons": true, "hesitent": true,
		"envisageons": true, "reflechissons": true, "tranche": true, "forse": true, "indecisi": true,
		"valutando": true, "quizas": true, "quiza": true, "dudamos": true, "dudando": true, "talvez": true,
		"ponderando": true, "misschien": true, "twijfelen": true, "overwegen": true, "maske": true,
		"kanskje": true, "kanske": true, "overvejer": true, "funderar": true, "overvager": true, "zda": true,
		"zdali": true, "zvazujeme": true, "uvazujeme": true, "premyslime": true, "premyslame": true,
		"zastanawiamy": true, "rozwazamy": true, "vajon": true, "talan": true, "gondolkodunk": true,
		"fontolgatjuk": true, "ehka": true, "mietimme": true, "harkitsemme": true, "poate": true,
		"ezitam": true, "mozda": true, "razmisljamo": true, "ισως": true,
		"σκεφτομαστε": true, "belki": true, "dusunuyoruz": true, "дали": true, "обмисляме": true,
		"чудим": true, "колебаем": true, "можливо": true, "вагаємося": true, "розглядаємо": true, "думаємо": true,
		"galbut": true, "svarstome": true, "varbut": true, "apsveram": true, "kaalume": true, "fheidir": true,
		"forsi": true, "potser": true, "plantegem": true, "agian": true, "beharbada": true, "quizais": true,
		"efallai": true, "kannski": true, "hugsanlega": true, "ihugum": true, "mozebi": true, "можеби": true,
		"раздумываем": true, "сомневаемся": true, "ndoshta": true,
	}
	doubtPairs = [][2]string{
		{"not", "sure"}, {"not", "decided"}, {"thinking", "about"}, {"thinking", "of"}, {"nicht", "sicher"},
		{"demandons", "si"}, {"demandons", "s"}, {"demande", "si"}, {"pas", "sur"}, {"sans", "doute"},
		{"non", "sicuri"}, {"chiediamo", "se"}, {"preguntamos", "si"}, {"no", "seguros"}, {"perguntamos", "se"},
		{"nao", "sabemos"}, {"niet", "zeker"}, {"ikke", "sikre"}, {"inte", "saker"}, {"nie", "jestesmy"},
		{"nejsme", "si"}, {"nie", "sme"}, {"nem", "vagyunk"}, {"emme", "ole"}, {"nu", "suntem"},
		{"nismo", "sigurni"}, {"nismo", "odlucili"}, {"emin", "degiliz"}, {"не", "сме"}, {"не", "впевнені"},
		{"може", "би"}, {"не", "уверены"}, {"может", "быть"}, {"nesame", "tikri"}, {"neesam", "parliecinati"},
		{"estem", "segurs"}, {"gaude", "ziur"}, {"ekki", "viss"},
	}
)

// doubtIn returns the first word of doubt in toks, "" when none.
func doubtIn(toks []token) string {
	for i, t := range toks {
		if doubtWords[t.folded] {
			return t.lower
		}
		if i+1 < len(toks) {
			for _, p := range doubtPairs {
				if t.folded == p[0] && toks[i+1].folded == p[1] {
					return t.lower + " " + toks[i+1].lower
				}
			}
		}
	}
	return ""
}

// legalStems (folded) are the words of a legal warning or a complaint: a
// lawyer, a cease-and-desist letter, damages, a court. Such a letter may
// threaten without asking anything of us.
var legalStems = []string{
	"lawyer", "attorney", "solicitor", "counsel", "cease", "legal", "lawsuit", "litigat", "damages", "court",
	"anwalt", "rechtsanw", "abmahn", "kanzlei", "klage", "gericht", "schadenersatz", "avocat",
	"mise en demeure", "demeure", "tribunal", "poursuit", "avvocat", "avv", "diffid", "legale", "giudizi",
	"giudiziar", "tutela", "risarciment", "abogad", "demanda", "juzgad", "judicial", "advogad", "judici",
	"advocaat", "ingebrekestelling", "sommatie", "rechter", "advokat", "sagsanlag", "stamning", "soksmal",
	"pravni", "pravnik", "zaloba", "zalobu", "soud", "adwokat", "pozew", "sad", "ugyved", "ugyvedi",
	"birosag", "asianajaja", "oikeus", "instanta", "odvjetni", "tuzb", "odvetni", "δικηγορ",
	"δικαστ", "avukat", "mahkeme", "ihtarname", "адвокат", "съдебн", "съда", "юрист", "судов", "суду", "позов",
	"teism", "advokaa", "kohtu", "dliodoir", "cuirt", "qorti", "advocat", "abokatu", "auzi",
	"avogad", "cyfreith", "llys", "logmad", "logfraed", "domstol", "avokat", "gjykat", "судебн",
}

// legalIn returns the first legal word in toks that is not a word of a
// request ("cease access", "diffida dalla scansione" ask), "" when none.
func legalIn(sc *scored, toks []token) string {
	inHit := map[int]bool{}
	for _, h := range append(sc.hits[:len(sc.hits):len(sc.hits)], sc.repeats...) {
		for k := h.first; k <= h.last; k++ {
			inHit[k] = true
		}
	}
	for i, t := range toks {
		if t.folded == tokBarrier || t.folded == tokHost || inHit[i] {
			continue
		}
		if hasStem(t.folded, legalStems) {
			return t.lower
		}
	}
	return ""
}

// howWords (folded) ask how something is done when they stand just before
// a request's verb ("how to remove", "wie ich … entfernen kann",
// "comment retirer", "come rimuovere", "cómo eliminar", "kaip pašalinti",
// "как удалить"); helpWords offer it ("we can help remove"). Either way
// the words around them describe a procedure, they do not ask for it.
var (
	howWords = map[string]bool{
		"how": true, "wie": true, "comment": true, "come": true, "como": true, "hoe": true, "hvordan": true,
		"hur": true, "jak": true, "ako": true, "hogyan": true, "miten": true, "kuinka": true, "cum": true,
		"kako": true, "πως": true, "nasil": true, "как": true, "як": true, "kaip": true, "ka": true,
		"kuidas": true, "conas": true, "kif": true, "com": true, "nola": true, "sut": true, "hvernig": true,
		"како": true, "qysh": true,
	}
	helpWords = map[string]bool{
		"help": true, "helping": true, "assist": true, "helfen": true, "aider": true, "aiutare": true,
		"aiutarvi": true, "ayudar": true, "ayudarle": true, "ajudar": true, "helpen": true, "hjaelpe": true,
		"hjalpa": true, "pomoci": true, "pomoc": true, "segiteni": true,
	}
)

// otherBots (folded) are other crawlers' names: a request that names one
// and never names ours may be meant for someone else.
var otherBots = map[string]bool{
	"gptbot": true, "chatgpt": true, "searchbot": true, "bytespider": true, "ahrefsbot": true,
	"semrushbot": true, "googlebot": true, "bingbot": true, "ccbot": true, "claudebot": true,
	"anthropic": true, "petalbot": true, "mj12bot": true, "yandexbot": true, "baiduspider": true,
	"dotbot": true, "applebot": true, "amazonbot": true, "facebookexternalhit": true, "externalagent": true,
	"dataforseobot": true, "perplexitybot": true, "blexbot": true, "seznambot": true, "duckduckbot": true,
	"imagesiftbot": true, "diffbot": true, "timpibot": true, "turnitinbot": true, "serpstatbot": true,
	"barkrowler": true, "mojeekbot": true, "exabot": true, "sogou": true, "megaindex": true,
}

// otherBot returns another crawler's name when the text names one and
// never names ours (LohiSoft, LohiSoftBot), "" otherwise.
func otherBot(toks []token) string {
	other := ""
	for _, t := range toks {
		w := t.folded
		if strings.HasPrefix(w, "lohisoft") {
			return ""
		}
		if other == "" && otherBots[w] {
			other = t.lower
		}
	}
	return other
}

// howAlsoAs (folded) are the how-words that also mean "as" ("come già
// richiesto", "como propietario"): they count only right before the verb.
var howAlsoAs = map[string]bool{
	"come": true, "como": true, "com": true, "jak": true, "ako": true, "cum": true, "kaip": true, "как": true,
	"як": true, "ka": true, "kako": true, "како": true, "πως": true,
}

// described returns the how- or help-word among the three words before
// the hit's first word (the word right before it, for a how-word that
// also means "as"), in its sentence, or "".
func described(toks []token, sentence []int, first int) string {
	for k := first - 1; k >= 0 && k >= first-3 && sentence[k] == sentence[first]; k-- {
		w := toks[k].folded
		if howAlsoAs[w] && k < first-1 {
			continue
		}
		if howWords[w] || helpWords[w] {
			return toks[k].lower
		}
	}
	return ""
}

// whWords (folded) ask about something ("why", "when", "which"); with
// the how-words that are not also "as", they make a question one about
// the bot, not a request, however politely it is put.
var whWords = map[string]bool{
	"why": true, "when": true, "which": true, "what": true, "warum": true, "wann": true, "welche": true,
	"pourquoi": true, "quand": true, "quel": true, "quelle": true, "perche": true, "quando": true,
	"waarom": true, "wanneer": true, "hvorfor": true, "hvornar": true, "varfor": true, "nar": true,
	"proc": true, "preco": true, "cuando": true, "kdy": true, "kedy": true, "dlaczego": true, "kiedy": true, "miert": true,
	"mikor": true, "miksi": true, "milloin": true, "zasto": true, "kada": true, "zakaj": true, "kdaj": true,
	"neden": true, "защо": true, "кога": true, "чому": true, "коли": true, "почему": true,
	"когда": true, "γιατι": true, "ποτε": true, "kodel": true, "miks": true, "millal": true,
	"cand": true,
}

// asksAbout reports whether a how- or wh-word stands before the hit's
// first word in its sentence ("Can I ask you how your bot decides to
// stop crawling example.com?"), the how-words that also mean "as" only
// right before it.
func asksAbout(toks []token, sentence []int, first int) bool {
	for k := first - 1; k >= 0 && sentence[k] == sentence[first]; k-- {
		w := toks[k].folded
		if howAlsoAs[w] && k < first-1 {
			continue
		}
		if howWords[w] || whWords[w] {
			return true
		}
	}
	return false
}

// plainRequest reports whether an exclusion hit of weight 2 or more in the
// new text stands in a sentence of its own that is a plain request: not a
// question (unless it asks us politely: "could you …?"), no condition
// before it, and no word of doubt in it.
func plainRequest(sc *scored, toks []token, bodyStart int) bool {
	sentence := sentences(toks)
	for _, h := range append(sc.hits[:len(sc.hits):len(sc.hits)], sc.repeats...) {
		if h.phase != phaseExclude || h.weight < 2 || h.first < bodyStart {
			continue
		}
		s := sentence[h.first]
		var words []token
		polite := false
		cond := false
		for k := range toks {
			if sentence[k] != s {
				continue
			}
			words = append(words, toks[k])
			if asksReader(toks, k) || toks[k].folded == "please" {
				polite = true
			}
			if k < h.first && ifWords[toks[k].folded] {
				cond = true
			}
		}
		for _, sg := range sc.signals {
			if sg.phase == phasePolite && sentence[sg.first] == s {
				polite = true
			}
		}
		question := questionAt(toks, h.first)
		if question && (!polite || asksAbout(toks, sentence, h.first)) || cond || doubtIn(words) != "" || described(toks, sentence, h.first) != "" {
			continue
		}
		return true
	}
	return false
}

// doubts returns why the exclusion is not plain enough to apply alone
// (a request word in a question, doubt anywhere in the new text or the
// subject, a subject that asks, legal vocabulary) when no plain request
// in the new text stands on its own; nil when nothing doubts or a plain
// request outweighs it.
func doubts(sc *scored, toks []token, bodyStart int) []string {
	var why []string
	for _, h := range sc.hits {
		if h.phase == phaseExclude && questionAt(toks, h.first) {
			why = append(why, fmt.Sprintf("the request words '%s' stand in a question", strings.Join(h.words, " ")))
			break
		}
	}
	if d := doubtIn(toks); d != "" {
		why = append(why, fmt.Sprintf("a word of doubt: '%s'", d))
	}
	sentence := sentences(toks)
	for _, h := range sc.hits {
		if h.phase != phaseExclude {
			continue
		}
		if w := described(toks, sentence, h.first); w != "" {
			why = append(why, fmt.Sprintf("the request words '%s' describe a procedure ('%s')", strings.Join(h.words, " "), w))
			break
		}
	}
	for i := 0; i < bodyStart && i < len(toks); i++ {
		if toks[i].folded == tokBarrier && toks[i].lower == "?" {
			why = append(why, "the subject is a question")
			break
		}
	}
	if l := legalIn(sc, toks); l != "" {
		why = append(why, fmt.Sprintf("legal words ('%s')", l))
	}
	if b := otherBot(toks); b != "" {
		// Asked of the wrong crawler, however plainly: staff decide.
		return append(why, fmt.Sprintf("another crawler is named ('%s'), not ours", b))
	}
	if len(why) == 0 || plainRequest(sc, toks, bodyStart) {
		return nil
	}
	return append(why, "no plain request in the new text stands on its own")
}

// blankRobotsLines blanks the robots.txt directives written out in a
// message ("User-agent: LohiSoftBot", "Disallow: /"): they show a file,
// they ask nothing, whatever the sentences around them say.
func blankRobotsLines(text string) string {
	if !strings.Contains(strings.ToLower(text), "disallow") {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		t := strings.ToLower(strings.TrimSpace(l))
		for _, d := range []string{"user-agent:", "disallow:", "allow:", "crawl-delay:", "sitemap:"} {
			if strings.HasPrefix(t, d) {
				lines[i] = ""
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}
