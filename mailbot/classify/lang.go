package classify

import (
	"strings"
	"unicode"

	"github.com/lohisoft/lohibot/mailbot/message"
)

// Languages detected, as ISO 639-1 codes.
var languages = []string{"en", "de", "fr", "it", "es", "pt", "nl", "da", "sv", "hu", "cs", "sk", "pl"}

// stopwords are each language's most common short words (lowercase, with
// diacritics), plus a few words typical of this mailbox. A word listed for
// several languages counts for each, divided among them.
var stopwords = map[string]string{
	"en": "the and to of you your our we is are please from for this that with it not be have has would " +
		"thanks thank regards hi hello dear us my i on been will can do don't any if about by an at as " +
		"remove site cheers best kind sincerely was were which there their them " +
		"they what when could should out all no yes just also but or so here want like sorry email mail",
	"de": "der die das und ist nicht sie ich wir ihr ihre ihren ihrer ihrem unsere unser unseren unserer bitte " +
		"mit von zu auf für den dem des ein eine einen einem auch mehr wieder sehr geehrte geehrter damen herren " +
		"grüße grüßen gruß freundlichen vielen dank hallo guten tag seite webseite uns es aus bei noch wird werden " +
		"haben möchte möchten diese dass oder aber sind nur wurde am nachricht betreff gelesen keine kein " +
		"liebe zusammen ihnen mich meine meiner sich hat habe hatten gebeten",
	"fr": "le la les de des du et est nous vous votre vos notre nos pour pas ne que qui une un sur avec dans " +
		"ce cette merci bonjour cordialement madame monsieur plus site au aux être avons sont par je mon ma mes " +
		"leur tout très sans ni il elle été fait souhaitons demande d'avance salutations veuillez ou où",
	"it": "il lo la i gli le di del della dei delle e è che non per con un una sono siamo vostro vostra nostro " +
		"nostra nostri vi ci grazie buongiorno cordiali saluti gentile gentili sito dal dalla al alla anche più " +
		"come questo questa ho abbiamo prego chiedo chiediamo mille ma se sua suo nel nella ad gentilissimi " +
		"dallo della degli sul",
	"es": "el la los las de del y que en es por para con no su sus nuestro nuestra nuestros nuestras un una se " +
		"lo al gracias hola saludos buenos días usted ustedes les sitio web este esta muy más pero como sin ya he " +
		"han hemos queremos solicito favor estimados atentamente mi nos vuestro vuestra vuestros podéis hace",
	"pt": "o a os as de do da dos das e é que em no na nos nas por para com não um uma seu sua nosso nossa " +
		"nossos nossas obrigado obrigada olá cumprimentos senhores vocês você site mais ao aos pelo pela se muito " +
		"também já foi são pessoal melhores solicitamos queremos favor meu minha vosso vossa vossos domínio agora",
	"nl": "de het een en van is niet wij we ons onze jullie u uw met voor op te dat die dit graag bedankt groeten " +
		"vriendelijke groet hoi beste geachte zijn hebben kunnen willen meer weer ook maar naar uit bij wordt " +
		"worden heeft geen alstublieft mogen ik mijn hebt wilt groetjes inmiddels",
	"da": "og i at det er en et den til af på for med ikke vi jeg vores jeres jer har som fra de om kan vil skal " +
		"hej tak venlig hilsen mvh også eller men efter mere ingen hjemmeside side siden være blive deres " +
		"venligst meget gerne hos vores lille igen må",
	"sv": "och i att det är en ett den till av på för med inte vi jag vår våra vårt er ni har som från de om " +
		"kan vill ska hej tack vänliga hälsningar mvh också eller men efter mer ingen webbplats sidan oss " +
		"hälsning förhand får gärna igen",
	"hu": "a az és hogy nem is egy van meg de ha mi ön önök kérem kérjük köszönöm köszönettel üdvözlettel " +
		"tisztelt jó napot oldal oldalt weboldal honlap ezt azt már még csak vagy el le ki be fel maguk tovább " +
		"minket nekünk robotjuk azonnal többet",
	"cs": "a je se na že to v ve z ze do o s k pro jsme jsem jste prosím děkuji dobrý den naše naši našeho vaše " +
		"vám vás které který která by bych byste nebo také ale jako už tak aby stránky doménu pozdravem od při " +
		"chtěli mohli díky žádost vyřazení domén si váš náš jaké používá můžete nepřejeme",
	"sk": "a je sa na že to v vo z zo do o s k pre sme som ste prosím ďakujem dobrý deň naša našu nášho vaše " +
		"vám vás ktoré ktorý ktorá by alebo tiež ale ako už tak aby stránky stránku pozdravom od pri nie nás " +
		"žiadosť vyradenie vaším si váš náš aké používa môžete neželáme",
	"pl": "i w na z że się nie do to jest o od jak za po proszę prosimy dziękuję dzień dobry nasz nasza naszej " +
		"naszą naszych państwa pozdrawiam poważaniem strony stronę oraz czy by być ale przez dla tylko także " +
		"również jestem jesteśmy sklepu domeny prośba",
}

// stopwordIndex maps a word to the languages listing it. Never modified.
var stopwordIndex = func() map[string][]string {
	idx := map[string][]string{}
	for _, lang := range languages {
		for _, w := range strings.Fields(stopwords[lang]) {
			if !containsString(idx[w], lang) {
				idx[w] = append(idx[w], lang)
			}
		}
	}
	return idx
}()

// commonWords are the folded stopwords of every language: words that are
// never the first label of an obfuscated domain ("the dot com era").
var commonWords = func() map[string]bool {
	m := map[string]bool{}
	for w := range stopwordIndex {
		m[message.Fold(w)] = true
	}
	return m
}()

func isCommonWord(w string) bool { return commonWords[message.Fold(w)] }

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// letterHints are letters that belong to few of the languages; each
// occurrence adds a little to those languages' scores.
var letterHints = map[rune][]string{
	'ě': {"cs"}, 'ř': {"cs"}, 'ů': {"cs"},
	'ľ': {"sk"}, 'ĺ': {"sk"}, 'ŕ': {"sk"}, 'ô': {"sk", "fr"},
	'ł': {"pl"}, 'ą': {"pl"}, 'ę': {"pl"}, 'ś': {"pl"}, 'ź': {"pl"}, 'ż': {"pl"}, 'ć': {"pl"}, 'ń': {"pl"},
	'ő': {"hu"}, 'ű': {"hu"},
	'æ': {"da"}, 'ø': {"da"},
	'å': {"da", "sv"},
	'ä': {"sv", "de", "sk"}, 'ö': {"sv", "de", "hu"}, 'ü': {"de", "hu"}, 'ß': {"de"},
	'ñ': {"es"}, '¿': {"es"}, '¡': {"es"},
	'ã': {"pt"}, 'õ': {"pt"}, 'ç': {"pt", "fr"},
	'è': {"fr", "it"}, 'ê': {"fr", "pt"}, 'œ': {"fr"}, 'ë': {"fr", "nl"}, 'î': {"fr"}, 'û': {"fr"},
	'ò': {"it"}, 'ù': {"it", "fr"}, 'ì': {"it"},
	'č': {"cs", "sk"}, 'š': {"cs", "sk"}, 'ž': {"cs", "sk"}, 'ý': {"cs", "sk"}, 'ť': {"cs", "sk"}, 'ď': {"cs", "sk"}, 'ň': {"cs", "sk"},
}

// detectLang returns the ISO 639-1 code of the dominant language of the
// tokens' words, or "" when there is too little to tell.
func detectLang(toks []token, text string) string {
	score := langScores(toks, text)
	best, bestScore := "", 0.0
	for _, l := range languages { // fixed order: ties resolve the same way every time
		if score[l] > bestScore {
			best, bestScore = l, score[l]
		}
	}
	if bestScore < 1 {
		return ""
	}
	return best
}

// plausibleLangs returns the languages the text may be written in: those
// scoring at least half the best score (Czech and Slovak go together).
// Nil, meaning any language, when there is too little text to tell.
func plausibleLangs(toks []token, text string) map[string]bool {
	score := langScores(toks, text)
	bestScore := 0.0
	for _, l := range languages {
		bestScore = max(bestScore, score[l])
	}
	if bestScore < 1.5 {
		return nil
	}
	out := map[string]bool{}
	for _, l := range languages {
		if score[l] >= bestScore/2 {
			out[l] = true
		}
	}
	for l := range extraLangs(toks) {
		out[l] = true
	}
	if l := scriptLang(text); l != "" {
		out[l] = true
	}
	if out["cs"] || out["sk"] {
		out["cs"], out["sk"] = true, true
	}
	if out["sr"] {
		out["hr"] = true // Serbian and Bosnian in Latin letters share Croatian's rules
	}
	return out
}

// langScores scores each language by its stopwords and letters in the
// text.
func langScores(toks []token, text string) map[string]float64 {
	score := map[string]float64{}
	for _, t := range toks {
		if t.lower == "" {
			continue
		}
		if langs := stopwordIndex[t.lower]; len(langs) > 0 {
			w := 1 / float64(len(langs))
			for _, l := range langs {
				score[l] += w
			}
		}
	}
	hints := 0
	for _, r := range text {
		if r < 0xA0 {
			continue
		}
		if langs, ok := letterHints[r]; ok {
			hints++
			if hints > 200 {
				break
			}
			w := 0.3 / float64(len(langs))
			for _, l := range langs {
				score[l] += w
			}
		}
	}
	return score
}

// headerLang returns the primary language of a Content-Language header
// ("de-DE" → "de"), or "".
func headerLang(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, ",; "); i >= 0 {
		v = v[:i]
	}
	if i := strings.IndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	v = strings.ToLower(v)
	if len(v) != 2 {
		return ""
	}
	for _, c := range v {
		if c < 'a' || c > 'z' {
			return ""
		}
	}
	return v
}

// scriptLang returns the language a script tells on its own when text is
// mostly written in it: Greek, Cyrillic (Ukrainian, Russian, Serbian, Macedonian or
// Bulgarian), Korean (Hangul), Japanese (kana), Chinese (Han without kana);
// "" otherwise.
func scriptLang(text string) string {
	var greek, cyrillic, hangul, kana, han, letters int
	for _, r := range text {
		switch {
		case r < 0x80:
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				letters++
			}
			continue
		case unicode.Is(unicode.Greek, r):
			greek++
		case unicode.Is(unicode.Cyrillic, r):
			cyrillic++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Han, r):
			han++
		default:
			continue
		}
		letters++
	}
	if letters == 0 {
		return ""
	}
	switch {
	case kana > 0 && (kana+han)*4 >= letters:
		return "ja"
	case hangul*4 >= letters && hangul > 0:
		return "ko"
	case han*4 >= letters && han > 0:
		return "zh"
	case greek*2 >= letters && greek > 0:
		return "el"
	case cyrillic*2 >= letters && cyrillic > 0:
		return cyrillicLang(text)
	}
	return ""
}

// cyrillicLang tells Ukrainian (і, ї, є, ґ), Macedonian (ѓ, ќ, ѕ),
// Serbian (ђ, ћ, and ј, љ, њ, џ without Macedonian's letters), Russian
// (ы, э, ё) and Bulgarian (none of them) apart in Cyrillic text.
func cyrillicLang(text string) string {
	switch {
	case strings.ContainsAny(text, "ѓќѕЃЌЅ"):
		return "mk"
	case strings.ContainsAny(text, "ђћјљњџЂЋЈЉЊЏ"):
		return "sr"
	case strings.ContainsAny(text, "іїєґІЇЄҐ"):
		return "uk"
	case strings.ContainsAny(text, "ыэёЫЭЁ"):
		return "ru"
	}
	return "bg"
}

// extraStopwords are words distinctive of languages beyond the bot page's
// thirteen (lowercase, with diacritics). They only name the language of a
// message (so an acknowledgement is not sent in a wrong neighbour
// language); the keyword rules still use the thirteen.
var extraStopwords = map[string]string{
	"no": "dere deres vennligst vår vårt takk nettstedet nettsiden nettside ikkje kjære hilsen dykk",
	"fi": "ja että kiitos ystävällisin terveisin pyydämme sivuston olemme meidän voitteko uudelleen emme " +
		"teidän sivustomme listalta nyt myös",
	"ro": "vă rugăm să și mulțumim bună ziua dumneavoastră noastre nostru site-ul îl în din lista pentru " +
		"cu stimă vă mai nu este al sau că",
	"hr": "molimo poštovani lijep pozdrav što kako popisa popis uklonite prestanete stranice naše naših " +
		"srdačan lijepi",
	"sl": "prosimo pozdravljeni lep spletne spletno strani seznama odstranite prenehajte najlepša " +
		"spoštovani lepa",
	"tr": "lütfen ve bir bu için ile sitemizi merhaba teşekkürler listenizden çıkarın durdurun değil sitesini " +
		"saygılarımızla iyi günler sitemizin",
	"lt": "laba diena prašome prašau svetainės svetainę svetainių svetainė ačiū pagarbiai kad " +
		"nenorime robotas sąrašo",
	"lv": "labdien lūdzam lūdzu vietni vietnes paldies cieņu sveiki tīmekļa nevēlamies " +
		"sarakstā saraksta",
	"et": "tere palun meie teie saidi aitäh lugupidamisega parimat soovides ning samuti soovime " +
		"veebilehe lisage",
	"ga": "chara bhur dtoil agaibh raibh oraibh iarraim iarraimid gréasáin suíomh sibh linn",
	"mt": "jekk jogħġbok joghgbok tagħna taghna tagħkom taghkom grazzi bonġu bongu sinjuri huwa hija " +
		"għal ghal ukoll sabiex",
	"ca": "demano demanem gràcies nostre vostre amb els també molt salutacions volem " +
		"atentament",
	"eu": "kaixo eskerrik esker gure zuen webgunea eta dugu agur adeitsu mesedez",
	"gl": "grazas saúdos noso nosa voso vosa tamén unha dende xa agardamos",
	"cy": "diolch annwyl cofion ein eich gwefan gwelwch ydym hefyd mae gyda",
	"is": "góðan daginn kærar kveðja kveðju vinsamlegast okkar ykkar vefinn vefsíðu þið viljum",
	"sr": "poštovanje sajt sajta sajtu molim pretraživača srdačno",
	"sq": "përshëndetje faleminderit lutem tonë tuaj faqen faqes dhe është juaj respekt",
}

// extraStopwordIndex maps a word to its extra language. Never modified.
var extraStopwordIndex = func() map[string]string {
	idx := map[string]string{}
	for lang, words := range extraStopwords {
		for _, w := range strings.Fields(words) {
			// Folded: Romanian and Turkish are often typed without
			// their diacritics ("va rugam sa").
			idx[message.Fold(w)] = lang
		}
	}
	return idx
}()

// extraLangs returns the extra languages whose distinctive words appear at
// least twice in toks.
func extraLangs(toks []token) map[string]bool {
	count := map[string]int{}
	var out map[string]bool
	for _, t := range toks {
		if l := extraStopwordIndex[t.folded]; l != "" {
			if count[l]++; count[l] == 2 {
				if out == nil {
					out = map[string]bool{}
				}
				out[l] = true
			}
		}
	}
	return out
}

// refineLang returns the extra language the words are written in when its
// distinctive words outnumber the stopwords of the detected language, and
// lang otherwise.
func refineLang(toks []token, text, lang string) string {
	count := map[string]int{}
	best, n := "", 0
	for _, t := range toks {
		if l := extraStopwordIndex[t.folded]; l != "" {
			count[l]++
			if count[l] > n {
				best, n = l, count[l]
			}
		}
	}
	if n < 2 {
		return lang
	}
	if float64(n) > langScores(toks, text)[lang] {
		return best
	}
	return lang
}
