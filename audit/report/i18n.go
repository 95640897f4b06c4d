package report

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ErrUnknownLanguage is wrapped by the error the writers return for a
// language they do not speak.
var ErrUnknownLanguage = errors.New("report: unknown language")

// Languages lists the languages of the report's own words: those of the bot
// page. English is the default.
func Languages() []string { return []string{"en", "it", "da", "hu"} }

// checkLang normalises lang ("" means English) or fails with
// ErrUnknownLanguage.
func checkLang(lang string) (string, error) {
	l := strings.ToLower(strings.TrimSpace(lang))
	if l == "" {
		return "en", nil
	}
	if !slices.Contains(Languages(), l) {
		return "", fmt.Errorf("%w %q (want one of %s)", ErrUnknownLanguage, lang, strings.Join(Languages(), ", "))
	}
	return l, nil
}

// words returns the report's words in lang, falling back to English for a
// word a language lacks.
func words(lang string) func(key string) string {
	return func(key string) string {
		if w, ok := catalog[key][lang]; ok && w != "" {
			return w
		}
		if w, ok := catalog[key]["en"]; ok {
			return w
		}
		return key
	}
}

// outcomeWord is a request's outcome in the report's words; an outcome the
// catalogue does not know is shown as stored.
func outcomeWord(t func(string) string, outcome string) string {
	if _, ok := catalog["oc_"+outcome]; ok {
		return t("oc_" + outcome)
	}
	return outcome
}

// ruleWord is the robots.txt rule column: a rule line as written in the
// file, or, when no line decided, the reason in the report's words.
func ruleWord(t func(string) string, rule string) string {
	if k, ok := ruleKeys[rule]; ok {
		return t(k)
	}
	return rule
}

// ruleKeys maps the reasons robotstxt gives when no line decides (see
// robots.ReasonNoRule and the others) to catalogue keys.
var ruleKeys = map[string]string{
	"no rule matched":           "rr_no_rule",
	"robots.txt always allowed": "rr_robots_txt",
	"unavailable: allow all":    "rr_unavailable",
	"unreachable: disallow all": "rr_unreachable",
}

// mailWord is a stored email's outcome or review status in the report's
// words.
func mailWord(t func(string) string, s string) string {
	if _, ok := catalog["mo_"+s]; ok {
		return t("mo_" + s)
	}
	return s
}

// reasonPatterns translate the reasons the crawler records for a cycle's
// end and for leaving a host; what they do not match is shown as stored.
var reasonPatterns = []struct {
	re  *regexp.Regexp
	key string
}{
	{regexp.MustCompile(`^nothing left to fetch$`), "cr_nothing_left"},
	{regexp.MustCompile(`^budget spent$`), "cr_budget_spent"},
	{regexp.MustCompile(`^excluded while crawling$`), "cr_excluded"},
	{regexp.MustCompile(`^interrupted$`), "cr_interrupted"},
	{regexp.MustCompile(`^host lease lost to another crawler$`), "cr_lease_lost"},
	{regexp.MustCompile(`^login required, HTTP (\d+)$`), "hl_login"},
	{regexp.MustCompile(`^login required \(status (\d+)\)$`), "hl_login"},
	{regexp.MustCompile(`^forbidden, HTTP 403$|^forbidden \(status 403\)$`), "hl_forbidden"},
	{regexp.MustCompile(`^bot protection challenge, HTTP (\d+)$`), "hl_challenge"},
	{regexp.MustCompile(`^bot protection challenge \(status (\d+)\)$`), "hl_challenge"},
	{regexp.MustCompile(`^robots.txt unreachable, so nothing is allowed$|^robots.txt unreachable: disallow all$`), "hl_robots"},
}

// cycleReason is why a cycle ended, in the report's words: the known
// reasons and, for hosts left ("every host left, h: why; h2: why"), each
// host with its reason.
func cycleReason(t func(string) string, reason string) string {
	for _, pre := range []struct{ text, key string }{
		{"every host left, ", "cr_every_host_left"},
		{"every host left: ", "cr_every_host_left"},
		{"nothing left to fetch; left ", "cr_nothing_left_hosts"},
		{"nothing left to fetch; hosts left: ", "cr_nothing_left_hosts"},
		{"no page: left ", "cr_no_page_hosts"},
	} {
		if rest, ok := strings.CutPrefix(reason, pre.text); ok {
			parts := strings.Split(rest, "; ")
			for i, p := range parts {
				if host, why, ok := strings.Cut(p, ": "); ok {
					parts[i] = host + ": " + leftReason(t, why)
				}
			}
			return t(pre.key) + ": " + strings.Join(parts, "; ")
		}
	}
	return leftReason(t, reason)
}

func leftReason(t func(string) string, why string) string {
	for _, p := range reasonPatterns {
		if m := p.re.FindStringSubmatch(why); m != nil {
			w := t(p.key)
			if len(m) > 1 && m[1] != "" {
				w = strings.ReplaceAll(w, "{status}", m[1])
			}
			return strings.ReplaceAll(w, "{status}", "403")
		}
	}
	return why
}

// catalog holds the report's words: key → language → text. It is never
// modified. The tone follows the bot page (shared/seeds): plain, formal in
// Italian and Hungarian, direct in Danish.
var catalog = map[string]map[string]string{
	"title":        {"en": "Crawl report", "it": "Rapporto di scansione", "da": "Crawlrapport", "hu": "Feltérképezési jelentés"},
	"generated":    {"en": "Generated", "it": "Generato il", "da": "Oprettet", "hu": "Készült"},
	"from_records": {"en": "Everything below is derived from LohiSoftBot's stored records: the request log, the robots.txt files it saw, the index and the emails received.", "it": "Tutto quanto segue è ricavato dai registri conservati da LohiSoftBot: il registro delle richieste, i file robots.txt visti, l'indice e le e-mail ricevute.", "da": "Alt nedenfor er udledt af LohiSoftBots gemte registreringer: forespørgselsloggen, de robots.txt-filer den har set, indekset og de modtagne e-mails.", "hu": "Az alábbiak mindegyike a LohiSoftBot tárolt nyilvántartásaiból származik: a kérésnaplóból, a látott robots.txt fájlokból, az indexből és a beérkezett e-mailekből."},
	"verdict_ok":   {"en": "Every promise checked was kept for this site.", "it": "Tutti gli impegni verificati sono stati rispettati per questo sito.", "da": "Alle kontrollerede løfter blev overholdt for dette site.", "hu": "Minden ellenőrzött vállalás teljesült ennél a webhelynél."},
	"verdict_fail": {"en": "Some promises were not kept: see the audit below.", "it": "Alcuni impegni non sono stati rispettati: si veda la verifica più sotto.", "da": "Nogle løfter blev ikke overholdt: se kontrollen nedenfor.", "hu": "Egyes vállalások nem teljesültek: lásd az alábbi ellenőrzést."},
	"contents":     {"en": "Contents", "it": "Indice", "da": "Indhold", "hu": "Tartalom"},

	"status":          {"en": "Status of the site", "it": "Stato del sito", "da": "Sitets status", "hu": "A webhely állapota"},
	"site":            {"en": "Site", "it": "Sito", "da": "Site", "hu": "Webhely"},
	"listed":          {"en": "On the crawl list", "it": "Nell'elenco di scansione", "da": "På crawlelisten", "hu": "A feltérképezési listán"},
	"listed_since":    {"en": "Listed since", "it": "In elenco dal", "da": "På listen siden", "hu": "Listán ekkortól"},
	"start_url":       {"en": "Start URL", "it": "URL di partenza", "da": "Start-URL", "hu": "Kezdő URL"},
	"yes":             {"en": "yes", "it": "sì", "da": "ja", "hu": "igen"},
	"no":              {"en": "no", "it": "no", "da": "nej", "hu": "nem"},
	"crawled":         {"en": "Crawled", "it": "Scansionato", "da": "Crawlet", "hu": "Feltérképezve"},
	"cycles_n":        {"en": "Crawl cycles", "it": "Cicli di scansione", "da": "Crawlcyklusser", "hu": "Feltérképezési ciklusok"},
	"requests_n":      {"en": "Requests (robots.txt included)", "it": "Richieste (robots.txt compreso)", "da": "Forespørgsler (robots.txt medregnet)", "hu": "Kérések (a robots.txt-vel együtt)"},
	"page_requests_n": {"en": "Page requests", "it": "Richieste di pagine", "da": "Sideforespørgsler", "hu": "Oldalkérések"},
	"first_request":   {"en": "First request", "it": "Prima richiesta", "da": "Første forespørgsel", "hu": "Első kérés"},
	"last_request":    {"en": "Last request", "it": "Ultima richiesta", "da": "Seneste forespørgsel", "hu": "Utolsó kérés"},
	"excluded":        {"en": "Excluded", "it": "Escluso", "da": "Udelukket", "hu": "Kizárva"},
	"excluded_since":  {"en": "Excluded since", "it": "Escluso dal", "da": "Udelukket siden", "hu": "Kizárás kezdete"},
	"asked_by":        {"en": "Asked by", "it": "Richiesto da", "da": "Anmodet af", "hu": "Kérelmező"},
	"reason":          {"en": "Reason", "it": "Motivo", "da": "Begrundelse", "hu": "Indok"},
	"evidence":        {"en": "Evidence", "it": "Prova", "da": "Dokumentation", "hu": "Bizonyíték"},
	"via":             {"en": "Received via", "it": "Ricevuto tramite", "da": "Modtaget via", "hu": "Beérkezés módja"},
	"index_now":       {"en": "Index", "it": "Indice", "da": "Indeks", "hu": "Index"},
	"policy_version":  {"en": "Policy version", "it": "Versione della policy", "da": "Policyversion", "hu": "Szabályzatverzió"},
	"exclusion_mail":  {"en": "The email that asked for it", "it": "L'e-mail che l'ha richiesta", "da": "Den e-mail, der bad om det", "hu": "A kérelmező e-mail"},
	"since_exclusion": {"en": "Requests sent after the exclusion", "it": "Richieste inviate dopo l'esclusione", "da": "Forespørgsler sendt efter udelukkelsen", "hu": "A kizárás után küldött kérések"},

	"log_head":        {"en": "Transparency log", "it": "Registro di trasparenza", "da": "Gennemsigtighedslog", "hu": "Átláthatósági napló"},
	"log_records":     {"en": "records", "it": "registri", "da": "registreringer", "hu": "nyilvántartás"},
	"log_root":        {"en": "root hash", "it": "hash radice", "da": "rodhash", "hu": "gyökérhash"},
	"log_check":       {"en": "To prove these records against a signed checkpoint", "it": "Per provare questi registri rispetto a un checkpoint firmato", "da": "Sådan bevises registreringerne mod et signeret checkpoint", "hu": "A nyilvántartások igazolása egy aláírt ellenőrzőponttal szemben"},
	"log_none":        {"en": "empty", "it": "vuoto", "da": "tom", "hu": "üres"},
	"rule_integrity":  {"en": "Integrity: the records (policy events, requests, robots.txt snapshots, emails) are as the transparency log committed to them: nothing changed, deleted, inserted or reordered since.", "it": "Integrità: i registri (eventi di policy, richieste, copie di robots.txt, email) sono come il registro di trasparenza li ha fissati: nulla è stato modificato, cancellato, inserito o riordinato.", "da": "Integritet: registreringerne (politikhændelser, forespørgsler, robots.txt-kopier, e-mails) er som gennemsigtighedsloggen fastlagde dem: intet er ændret, slettet, indsat eller omordnet siden.", "hu": "Sértetlenség: a nyilvántartások (szabályzati események, kérések, robots.txt-másolatok, e-mailek) olyanok, amilyennek az átláthatósági napló rögzítette őket: azóta semmit nem módosítottak, töröltek, szúrtak be vagy rendeztek át."},
	"audit":           {"en": "Audit of the promises", "it": "Verifica degli impegni", "da": "Kontrol af løfterne", "hu": "A vállalások ellenőrzése"},
	"audit_note":      {"en": "Each rule is checked again from the records, not taken from the crawler's own log entries.", "it": "Ogni regola è verificata di nuovo a partire dai registri, senza fidarsi delle annotazioni del crawler stesso.", "da": "Hver regel kontrolleres igen ud fra registreringerne, ikke ud fra crawlerens egne notater.", "hu": "Minden szabályt újra ellenőrzünk a nyilvántartásokból, nem a webrobot saját bejegyzései alapján."},
	"rule":            {"en": "Promise", "it": "Impegno", "da": "Løfte", "hu": "Vállalás"},
	"result":          {"en": "Result", "it": "Esito", "da": "Resultat", "hu": "Eredmény"},
	"checked":         {"en": "Checked", "it": "Verificati", "da": "Kontrolleret", "hu": "Ellenőrizve"},
	"kept":            {"en": "kept", "it": "rispettato", "da": "overholdt", "hu": "teljesült"},
	"broken":          {"en": "NOT kept", "it": "NON rispettato", "da": "IKKE overholdt", "hu": "NEM teljesült"},
	"violations":      {"en": "Violations", "it": "Violazioni", "da": "Overtrædelser", "hu": "Szabálysértések"},
	"rule_robots":     {"en": "robots.txt: every page request was allowed by a robots.txt fetched at most 24 hours before it (RFC 9309).", "it": "robots.txt: ogni richiesta di pagina era consentita da un robots.txt scaricato al massimo 24 ore prima (RFC 9309).", "da": "robots.txt: hver sideforespørgsel var tilladt af en robots.txt hentet højst 24 timer før (RFC 9309).", "hu": "robots.txt: minden oldalkérést engedélyezett egy legfeljebb 24 órával korábban letöltött robots.txt (RFC 9309)."},
	"rule_budget":     {"en": "Budget: at most 20 pages per site and cycle, redirects and retries included.", "it": "Budget: al massimo 20 pagine per sito e per ciclo, reindirizzamenti e nuovi tentativi compresi.", "da": "Budget: højst 20 sider pr. site og cyklus, omdirigeringer og genforsøg medregnet.", "hu": "Keret: webhelyenként és ciklusonként legfeljebb 20 oldal, az átirányításokat és az ismételt próbálkozásokat is beleértve."},
	"rule_politeness": {"en": "Politeness: one request per host at a time, with the delay in force between requests; Retry-After honoured; nothing more after a login, paywall or bot protection.", "it": "Cortesia: una sola richiesta per host alla volta, con il ritardo previsto tra le richieste; Retry-After rispettato; nessuna richiesta dopo un login, un paywall o una protezione anti-bot.", "da": "Hensyn: én forespørgsel pr. host ad gangen, med den gældende forsinkelse imellem; Retry-After respekteret; intet mere efter login, betalingsmur eller botbeskyttelse.", "hu": "Udvariasság: hostonként egyszerre egy kérés, a kérések között az előírt késleltetéssel; a Retry-After betartva; bejelentkezés, fizetőfal vagy botvédelem után nincs további kérés."},
	"rule_exclusions": {"en": "Exclusions: no request after the site was excluded.", "it": "Esclusioni: nessuna richiesta dopo l'esclusione del sito.", "da": "Udelukkelser: ingen forespørgsler efter at sitet blev udelukket.", "hu": "Kizárások: a webhely kizárása után nincs kérés."},
	"rule_storage":    {"en": "Storage: the index keeps only title, meta description, h1–h3, URL and link text, and nothing of pages marked noindex.", "it": "Memorizzazione: l'indice conserva solo titolo, meta description, titoli h1–h3, URL e testo dei link, e nulla delle pagine contrassegnate noindex.", "da": "Lagring: indekset gemmer kun titel, meta description, h1–h3, URL og linktekst, og intet fra sider markeret noindex.", "hu": "Tárolás: az index csak a címet, a meta descriptiont, a h1–h3 címsorokat, az URL-t és a linkszöveget tárolja, a noindex jelölésű oldalakból semmit."},
	"rule_signatures": {"en": "Signatures: while the crawler signed (Web Bot Auth), every request carried a signature by a key published at the time, sent within its validity.", "it": "Firme: mentre il crawler firmava (Web Bot Auth), ogni richiesta portava una firma di una chiave pubblicata in quel momento, inviata entro la sua validità.", "da": "Signaturer: mens crawleren signerede (Web Bot Auth), bar hver forespørgsel en signatur fra en nøgle, der var offentliggjort på det tidspunkt, sendt inden for dens gyldighed.", "hu": "Aláírások: amíg a webrobot aláírt (Web Bot Auth), minden kérés az akkor közzétett kulccsal készült aláírást viselt, és annak érvényességén belül ment el."},

	"timeline":        {"en": "Requests over time, per host", "it": "Richieste nel tempo, per host", "da": "Forespørgsler over tid, pr. host", "hu": "Kérések időben, hostonként"},
	"timeline_note":   {"en": "Each bar is one request, from sending to completion. The grey line after a bar is the minimum delay before the next request to that host; a hatched area is a wait asked for by Retry-After.", "it": "Ogni barra è una richiesta, dall'invio al completamento. La linea grigia dopo una barra è il ritardo minimo prima della richiesta successiva allo stesso host; un'area tratteggiata è un'attesa richiesta da Retry-After.", "da": "Hver bjælke er én forespørgsel, fra afsendelse til afslutning. Den grå linje efter en bjælke er den mindste forsinkelse før næste forespørgsel til samme host; et skraveret område er en ventetid, som Retry-After bad om.", "hu": "Minden sáv egy kérés a küldéstől a befejezésig. A sáv utáni szürke vonal a következő, ugyanarra a hostra küldött kérésig tartó minimális késleltetés; a sraffozott terület a Retry-After által kért várakozás."},
	"legend_ok":       {"en": "page fetched", "it": "pagina scaricata", "da": "side hentet", "hu": "oldal letöltve"},
	"legend_redirect": {"en": "redirect", "it": "reindirizzamento", "da": "omdirigering", "hu": "átirányítás"},
	"legend_retry":    {"en": "429 or 5xx: slowed down", "it": "429 o 5xx: rallentato", "da": "429 eller 5xx: sænket tempo", "hu": "429 vagy 5xx: lassítás"},
	"legend_stop":     {"en": "login, paywall or bot protection: host left", "it": "login, paywall o protezione anti-bot: host abbandonato", "da": "login, betalingsmur eller botbeskyttelse: host forladt", "hu": "bejelentkezés, fizetőfal vagy botvédelem: host elhagyva"},
	"legend_robots":   {"en": "robots.txt", "it": "robots.txt", "da": "robots.txt", "hu": "robots.txt"},
	"legend_noindex":  {"en": "noindex: not indexed", "it": "noindex: non indicizzata", "da": "noindex: ikke indekseret", "hu": "noindex: nem indexelve"},
	"legend_error":    {"en": "error or no answer", "it": "errore o nessuna risposta", "da": "fejl eller intet svar", "hu": "hiba vagy nincs válasz"},
	"legend_delay":    {"en": "minimum delay", "it": "ritardo minimo", "da": "mindste forsinkelse", "hu": "minimális késleltetés"},
	"legend_wait":     {"en": "Retry-After wait", "it": "attesa Retry-After", "da": "Retry-After-ventetid", "hu": "Retry-After várakozás"},

	"cycles":            {"en": "Crawl cycles and requests", "it": "Cicli di scansione e richieste", "da": "Crawlcyklusser og forespørgsler", "hu": "Feltérképezési ciklusok és kérések"},
	"cycle":             {"en": "Cycle", "it": "Ciclo", "da": "Cyklus", "hu": "Ciklus"},
	"no_cycle":          {"en": "Requests outside any crawl cycle", "it": "Richieste al di fuori di un ciclo di scansione", "da": "Forespørgsler uden for en crawlcyklus", "hu": "Cikluson kívüli kérések"},
	"started":           {"en": "Started", "it": "Iniziato", "da": "Startet", "hu": "Kezdete"},
	"finished":          {"en": "Finished", "it": "Terminato", "da": "Afsluttet", "hu": "Vége"},
	"node":              {"en": "Crawler", "it": "Crawler", "da": "Crawler", "hu": "Webrobot"},
	"state":             {"en": "State", "it": "Stato", "da": "Tilstand", "hu": "Állapot"},
	"state_running":     {"en": "in progress", "it": "in corso", "da": "i gang", "hu": "folyamatban"},
	"state_done":        {"en": "completed", "it": "completato", "da": "afsluttet", "hu": "befejezve"},
	"state_stopped":     {"en": "interrupted", "it": "interrotto", "da": "afbrudt", "hu": "megszakítva"},
	"delay":             {"en": "Delay between requests", "it": "Ritardo tra le richieste", "da": "Forsinkelse mellem forespørgsler", "hu": "Késleltetés a kérések között"},
	"pages_budget":      {"en": "Page requests / budget", "it": "Richieste di pagine / budget", "da": "Sideforespørgsler / budget", "hu": "Oldalkérések / keret"},
	"col_sent":          {"en": "Sent (UTC)", "it": "Inviata (UTC)", "da": "Sendt (UTC)", "hu": "Elküldve (UTC)"},
	"col_url":           {"en": "URL", "it": "URL", "da": "URL", "hu": "URL"},
	"col_kind":          {"en": "Kind", "it": "Tipo", "da": "Type", "hu": "Típus"},
	"col_status":        {"en": "HTTP status", "it": "Stato HTTP", "da": "HTTP-status", "hu": "HTTP-állapot"},
	"col_outcome":       {"en": "Outcome", "it": "Esito", "da": "Udfald", "hu": "Kimenet"},
	"col_rule":          {"en": "robots.txt rule", "it": "Regola robots.txt", "da": "robots.txt-regel", "hu": "robots.txt szabály"},
	"col_bytes":         {"en": "Bytes", "it": "Byte", "da": "Bytes", "hu": "Bájt"},
	"col_duration":      {"en": "Duration", "it": "Durata", "da": "Varighed", "hu": "Időtartam"},
	"kind_page":         {"en": "page", "it": "pagina", "da": "side", "hu": "oldal"},
	"kind_robots":       {"en": "robots.txt", "it": "robots.txt", "da": "robots.txt", "hu": "robots.txt"},
	"retry":             {"en": "retry", "it": "nuovo tentativo", "da": "genforsøg", "hu": "újrapróbálás"},
	"signed":            {"en": "signed", "it": "firmata", "da": "signeret", "hu": "aláírva"},
	"redirect_of":       {"en": "redirect from request", "it": "reindirizzamento dalla richiesta", "da": "omdirigering fra forespørgsel", "hu": "átirányítás a kérésből:"},
	"no_answer":         {"en": "no answer", "it": "nessuna risposta", "da": "intet svar", "hu": "nincs válasz"},
	"robots_refused":    {"en": "URLs robots.txt refused, not requested", "it": "URL rifiutati da robots.txt, non richiesti", "da": "URL'er robots.txt afviste, ikke hentet", "hu": "A robots.txt által tiltott, le nem kért URL-ek"},
	"cycle_no_requests": {"en": "No request in this cycle.", "it": "Nessuna richiesta in questo ciclo.", "da": "Ingen forespørgsler i denne cyklus.", "hu": "Ebben a ciklusban nem volt kérés."},
	"no_requests":       {"en": "LohiSoftBot has sent no request to this site.", "it": "LohiSoftBot non ha inviato alcuna richiesta a questo sito.", "da": "LohiSoftBot har ikke sendt nogen forespørgsel til dette site.", "hu": "A LohiSoftBot egyetlen kérést sem küldött erre a webhelyre."},
	"robots":            {"en": "robots.txt files seen", "it": "File robots.txt visti", "da": "Sete robots.txt-filer", "hu": "Látott robots.txt fájlok"},
	"origin":            {"en": "Origin", "it": "Origine", "da": "Origin", "hu": "Origin"},
	"fetched":           {"en": "Fetched (UTC)", "it": "Scaricato (UTC)", "da": "Hentet (UTC)", "hu": "Letöltve (UTC)"},
	"read_as":           {"en": "Read as", "it": "Interpretato come", "da": "Tolket som", "hu": "Értelmezés"},
	"out_parsed":        {"en": "its rules apply", "it": "si applicano le sue regole", "da": "dens regler gælder", "hu": "a szabályai érvényesek"},
	"out_allow-all":     {"en": "unavailable: everything allowed", "it": "non disponibile: tutto consentito", "da": "ikke tilgængelig: alt tilladt", "hu": "nem elérhető: minden engedélyezett"},
	"out_disallow-all":  {"en": "unreachable: nothing allowed", "it": "non raggiungibile: nulla consentito", "da": "kunne ikke nås: intet tilladt", "hu": "elérhetetlen: semmi sem engedélyezett"},
	"hash":              {"en": "SHA-256", "it": "SHA-256", "da": "SHA-256", "hu": "SHA-256"},
	"hash_ok":           {"en": "matches the stored body", "it": "corrisponde al contenuto conservato", "da": "svarer til det gemte indhold", "hu": "egyezik a tárolt tartalommal"},
	"hash_bad":          {"en": "does NOT match the stored body", "it": "NON corrisponde al contenuto conservato", "da": "svarer IKKE til det gemte indhold", "hu": "NEM egyezik a tárolt tartalommal"},
	"truncated":         {"en": "shown up to 100 KiB; the hash covers the whole body", "it": "mostrato fino a 100 KiB; l'hash copre l'intero contenuto", "da": "vist op til 100 KiB; hashen dækker hele indholdet", "hu": "legfeljebb 100 KiB látható; a hash a teljes tartalomra vonatkozik"},
	"empty":             {"en": "(empty)", "it": "(vuoto)", "da": "(tom)", "hu": "(üres)"},
	"no_robots":         {"en": "No robots.txt was fetched for this site.", "it": "Per questo sito non è stato scaricato alcun robots.txt.", "da": "Der er ikke hentet nogen robots.txt for dette site.", "hu": "Ehhez a webhelyhez nem töltöttünk le robots.txt fájlt."},
	"size":              {"en": "Size", "it": "Dimensione", "da": "Størrelse", "hu": "Méret"},

	"index":          {"en": "What the index keeps", "it": "Cosa conserva l'indice", "da": "Hvad indekset gemmer", "hu": "Mit tárol az index"},
	"index_note":     {"en": "These are all the columns the index has; the text of pages is never stored.", "it": "Queste sono tutte le colonne dell'indice; il testo delle pagine non viene mai memorizzato.", "da": "Dette er alle indeksets kolonner; sidernes tekst gemmes aldrig.", "hu": "Ezek az index összes oszlopa; az oldalak szövegét soha nem tároljuk."},
	"col_title":      {"en": "Title", "it": "Titolo", "da": "Titel", "hu": "Cím"},
	"col_desc":       {"en": "Meta description", "it": "Meta description", "da": "Meta description", "hu": "Meta description"},
	"col_headings":   {"en": "Headings h1–h3", "it": "Titoli h1–h3", "da": "Overskrifter h1–h3", "hu": "Címsorok h1–h3"},
	"anchors":        {"en": "Text of links pointing to the site", "it": "Testo dei link che puntano al sito", "da": "Tekst i links, der peger på sitet", "hu": "A webhelyre mutató linkek szövege"},
	"col_from":       {"en": "Link on", "it": "Link presente in", "da": "Link på", "hu": "A link helye"},
	"col_to":         {"en": "Points to", "it": "Punta a", "da": "Peger på", "hu": "Cél"},
	"col_text":       {"en": "Link text", "it": "Testo del link", "da": "Linktekst", "hu": "Linkszöveg"},
	"nothing_stored": {"en": "Nothing is stored.", "it": "Non è memorizzato nulla.", "da": "Intet er gemt.", "hu": "Semmit nem tárolunk."},

	"mail":             {"en": "Emails about the site", "it": "E-mail relative al sito", "da": "E-mails om sitet", "hu": "A webhellyel kapcsolatos e-mailek"},
	"col_received":     {"en": "Received (UTC)", "it": "Ricevuta (UTC)", "da": "Modtaget (UTC)", "hu": "Beérkezett (UTC)"},
	"col_sender":       {"en": "From", "it": "Mittente", "da": "Afsender", "hu": "Feladó"},
	"col_subject":      {"en": "Subject", "it": "Oggetto", "da": "Emne", "hu": "Tárgy"},
	"col_msgid":        {"en": "Message-ID", "it": "Message-ID", "da": "Message-ID", "hu": "Message-ID"},
	"col_handled":      {"en": "Handled", "it": "Gestione", "da": "Behandling", "hu": "Kezelés"},
	"intent_exclude":   {"en": "exclusion request", "it": "richiesta di esclusione", "da": "anmodning om udelukkelse", "hu": "kizárási kérelem"},
	"intent_reinclude": {"en": "request to be crawled again", "it": "richiesta di nuova scansione", "da": "anmodning om at blive crawlet igen", "hu": "újrafeltérképezési kérelem"},
	"intent_other":     {"en": "other (read by staff)", "it": "altro (letta dal personale)", "da": "andet (læses af personalet)", "hu": "egyéb (munkatárs olvassa)"},
	"intent_auto":      {"en": "automatic message", "it": "messaggio automatico", "da": "automatisk besked", "hu": "automatikus üzenet"},
	"no_mail":          {"en": "No email names this site.", "it": "Nessuna e-mail cita questo sito.", "da": "Ingen e-mail nævner dette site.", "hu": "Egyetlen e-mail sem említi ezt a webhelyet."},
	"replies":          {"en": "Replies sent to the webmaster", "it": "Risposte inviate al webmaster", "da": "Svar sendt til webmasteren", "hu": "A webmesternek küldött válaszok"},
	"no_replies":       {"en": "No reply was sent about this site.", "it": "Nessuna risposta è stata inviata per questo sito.", "da": "Der er ikke sendt noget svar om dette site.", "hu": "Erről a webhelyről nem küldtünk választ."},
	"reply_ack":        {"en": "acknowledgement of the exclusion", "it": "conferma dell'esclusione", "da": "bekræftelse af udelukkelsen", "hu": "a kizárás visszaigazolása"},
	"reply_received":   {"en": "receipt: a person will read it", "it": "ricevuta: la leggerà una persona", "da": "kvittering: et menneske læser den", "hu": "átvételi értesítés: egy munkatárs elolvassa"},
	"reply_sent":       {"en": "sent", "it": "inviata", "da": "sendt", "hu": "elküldve"},
	"reply_queued":     {"en": "waiting to be sent", "it": "in attesa di invio", "da": "venter på at blive sendt", "hu": "küldésre vár"},
	"reply_failed":     {"en": "could not be sent", "it": "non è stato possibile inviarla", "da": "kunne ikke sendes", "hu": "nem sikerült elküldeni"},

	"events":            {"en": "Policy log", "it": "Registro delle decisioni", "da": "Policylog", "hu": "Szabályzati napló"},
	"col_version":       {"en": "Version", "it": "Versione", "da": "Version", "hu": "Verzió"},
	"col_when":          {"en": "When (UTC)", "it": "Quando (UTC)", "da": "Hvornår (UTC)", "hu": "Időpont (UTC)"},
	"col_event":         {"en": "Event", "it": "Evento", "da": "Hændelse", "hu": "Esemény"},
	"col_by":            {"en": "By", "it": "Da", "da": "Af", "hu": "Ki"},
	"ev_exclude":        {"en": "excluded", "it": "escluso", "da": "udelukket", "hu": "kizárva"},
	"ev_exclude-repeat": {"en": "exclusion asked for again", "it": "esclusione richiesta di nuovo", "da": "udelukkelse anmodet igen", "hu": "ismételt kizárási kérés"},
	"ev_reinclude":      {"en": "re-included by staff", "it": "reincluso dal personale", "da": "genoptaget af personalet", "hu": "munkatárs által visszavéve"},
	"ev_site-add":       {"en": "added to the crawl list", "it": "aggiunto all'elenco di scansione", "da": "føjet til crawlelisten", "hu": "felvéve a feltérképezési listára"},
	"ev_site-update":    {"en": "start URL changed", "it": "URL di partenza modificato", "da": "start-URL ændret", "hu": "kezdő URL módosítva"},
	"ev_site-remove":    {"en": "removed from the crawl list", "it": "rimosso dall'elenco di scansione", "da": "fjernet fra crawlelisten", "hu": "eltávolítva a feltérképezési listáról"},
	"index_purged":      {"en": "index purged: %d pages, %d link texts", "it": "indice svuotato: %d pagine, %d testi di link", "da": "indeks ryddet: %d sider, %d linktekster", "hu": "index törölve: %d oldal, %d linkszöveg"},
	"index_kept":        {"en": "unverified: pages kept, hidden from search, until %s", "it": "non verificata: pagine conservate, nascoste dalla ricerca, fino al %s", "da": "ikke verificeret: sider gemt, skjult for søgning, indtil %s", "hu": "nem ellenőrzött: az oldalak a keresésből rejtve megmaradnak eddig: %s"},
	"no_events":         {"en": "No policy change concerns this site.", "it": "Nessuna modifica della policy riguarda questo sito.", "da": "Ingen policyændring vedrører dette site.", "hu": "Egyetlen szabályzatváltozás sem érinti ezt a webhelyet."},
	"footer":            {"en": "LohiSoftBot/1.0 is operated by LohiSoft s.r.o. Questions, or a request to exclude your domain: message@lohisoft.com", "it": "LohiSoftBot/1.0 è gestito da LohiSoft s.r.o. Per domande o per richiedere l'esclusione del Suo dominio: message@lohisoft.com", "da": "LohiSoftBot/1.0 drives af LohiSoft s.r.o. Spørgsmål, eller ønsker du dit domæne udelukket: message@lohisoft.com", "hu": "A LohiSoftBot/1.0 üzemeltetője a LohiSoft s.r.o. Kérdés vagy a domain kizárásának kérése esetén: message@lohisoft.com"},

	"verdict_none":  {"en": "No verdict: LohiSoftBot has sent no request to this site, so there is nothing to check.", "it": "Nessun esito: LohiSoftBot non ha inviato alcuna richiesta a questo sito, quindi non c'è nulla da verificare.", "da": "Ingen vurdering: LohiSoftBot har ikke sendt nogen forespørgsel til dette site, så der er intet at kontrollere.", "hu": "Nincs értékelés: a LohiSoftBot nem küldött kérést erre a webhelyre, így nincs mit ellenőrizni."},
	"verdict_basis": {"en": "Checked: {requests}, {pages}, in {cycles}.", "it": "Verificate: {requests}, {pages}, in {cycles}.", "da": "Kontrolleret: {requests}, {pages}, i {cycles}.", "hu": "Ellenőrizve: {requests}, {pages}, {cycles}."},
	// The counts of verdict_basis, one form for 1 and one for any other
	// number (Hungarian keeps the singular after a numeral).
	"basis_requests_one": {"en": "1 request", "it": "1 richiesta", "da": "1 forespørgsel", "hu": "1 kérés"},
	"basis_requests":     {"en": "{n} requests", "it": "{n} richieste", "da": "{n} forespørgsler", "hu": "{n} kérés"},
	"basis_pages_one":    {"en": "1 of them a page request", "it": "di cui 1 di pagina", "da": "heraf 1 sideforespørgsel", "hu": "ebből 1 oldalkérés"},
	"basis_pages":        {"en": "{n} of them page requests", "it": "di cui {n} di pagine", "da": "heraf {n} sideforespørgsler", "hu": "ebből {n} oldalkérés"},
	"basis_cycles_one":   {"en": "1 cycle", "it": "1 ciclo", "da": "1 cyklus", "hu": "1 ciklusban"},
	"basis_cycles":       {"en": "{n} cycles", "it": "{n} cicli", "da": "{n} cyklusser", "hu": "{n} ciklusban"},
	// Where an exclusion came from (its source), in words.
	"src_mail":    {"en": "email", "it": "email", "da": "e-mail", "hu": "e-mail"},
	"src_review":  {"en": "email, after staff review", "it": "email, dopo la revisione del personale", "da": "e-mail, efter gennemgang af personalet", "hu": "e-mail, munkatársi ellenőrzés után"},
	"src_cli":     {"en": "command line", "it": "riga di comando", "da": "kommandolinje", "hu": "parancssor"},
	"not_checked": {"en": "nothing to check", "it": "nulla da verificare", "da": "intet at kontrollere", "hu": "nincs mit ellenőrizni"},
	"cycle_id":    {"en": "id", "it": "id", "da": "id", "hu": "azonosító"},

	"oc_ok":                   {"en": "ok", "it": "ok", "da": "ok", "hu": "rendben"},
	"oc_redirect":             {"en": "redirect", "it": "reindirizzamento", "da": "omdirigering", "hu": "átirányítás"},
	"oc_unavailable":          {"en": "unavailable", "it": "non disponibile", "da": "ikke tilgængelig", "hu": "nem elérhető"},
	"oc_unreachable":          {"en": "unreachable", "it": "non raggiungibile", "da": "kunne ikke nås", "hu": "elérhetetlen"},
	"oc_refused":              {"en": "address refused", "it": "indirizzo rifiutato", "da": "adresse afvist", "hu": "cím elutasítva"},
	"oc_timeout":              {"en": "timed out", "it": "tempo scaduto", "da": "tidsgrænse overskredet", "hu": "időtúllépés"},
	"oc_interrupted":          {"en": "interrupted", "it": "interrotta", "da": "afbrudt", "hu": "megszakítva"},
	"oc_error":                {"en": "network error", "it": "errore di rete", "da": "netværksfejl", "hu": "hálózati hiba"},
	"oc_challenge":            {"en": "bot protection: host left", "it": "protezione anti-bot: host abbandonato", "da": "botbeskyttelse: host forladt", "hu": "botvédelem: host elhagyva"},
	"oc_auth":                 {"en": "login required: host left", "it": "accesso richiesto: host abbandonato", "da": "login krævet: host forladt", "hu": "bejelentkezés szükséges: host elhagyva"},
	"oc_forbidden":            {"en": "forbidden: host left", "it": "vietato: host abbandonato", "da": "forbudt: host forladt", "hu": "tiltott: host elhagyva"},
	"oc_retry":                {"en": "retry later", "it": "da riprovare", "da": "prøv igen senere", "hu": "később újra"},
	"oc_retry-after-too-long": {"en": "Retry-After beyond 1 hour: host left", "it": "Retry-After oltre 1 ora: host abbandonato", "da": "Retry-After over 1 time: host forladt", "hu": "Retry-After 1 óránál hosszabb: host elhagyva"},
	"oc_retries-exhausted":    {"en": "retries used up", "it": "tentativi esauriti", "da": "genforsøg opbrugt", "hu": "próbálkozások elfogytak"},
	"oc_server-error":         {"en": "server error", "it": "errore del server", "da": "serverfejl", "hu": "szerverhiba"},
	"oc_not-found":            {"en": "not found", "it": "non trovata", "da": "ikke fundet", "hu": "nem található"},
	"oc_client-error":         {"en": "refused by the server", "it": "rifiutata dal server", "da": "afvist af serveren", "hu": "a szerver elutasította"},
	"oc_not-html":             {"en": "not HTML: not indexed", "it": "non HTML: non indicizzata", "da": "ikke HTML: ikke indekseret", "hu": "nem HTML: nincs indexelve"},
	"oc_unparsable":           {"en": "unreadable HTML", "it": "HTML illeggibile", "da": "ulæselig HTML", "hu": "olvashatatlan HTML"},
	"oc_noindex":              {"en": "noindex: nothing kept", "it": "noindex: nulla conservato", "da": "noindex: intet gemt", "hu": "noindex: semmit nem tároltunk"},
	"oc_withdrawn":            {"en": "withdrawn: not sent", "it": "ritirata: non inviata", "da": "trukket tilbage: ikke sendt", "hu": "visszavonva: nem küldtük el"},

	"rr_no_rule":     {"en": "no rule matched", "it": "nessuna regola applicabile", "da": "ingen regel passede", "hu": "egyik szabály sem illeszkedett"},
	"rr_robots_txt":  {"en": "robots.txt itself is always allowed", "it": "robots.txt stesso è sempre consentito", "da": "selve robots.txt er altid tilladt", "hu": "maga a robots.txt mindig engedélyezett"},
	"rr_unavailable": {"en": "robots.txt unavailable: everything allowed", "it": "robots.txt non disponibile: tutto consentito", "da": "robots.txt ikke tilgængelig: alt tilladt", "hu": "a robots.txt nem elérhető: minden engedélyezett"},
	"rr_unreachable": {"en": "robots.txt unreachable: nothing allowed", "it": "robots.txt non raggiungibile: nulla consentito", "da": "robots.txt kunne ikke nås: intet tilladt", "hu": "a robots.txt elérhetetlen: semmi sem engedélyezett"},

	"mo_excluded":  {"en": "excluded", "it": "escluso", "da": "udelukket", "hu": "kizárva"},
	"mo_queued":    {"en": "queued for staff", "it": "in attesa del personale", "da": "venter på personalet", "hu": "munkatársra vár"},
	"mo_ignored":   {"en": "nothing to do", "it": "nulla da fare", "da": "intet at gøre", "hu": "nincs teendő"},
	"mo_failed":    {"en": "failed, waiting for staff", "it": "non riuscito, in attesa del personale", "da": "mislykkedes, venter på personalet", "hu": "sikertelen, munkatársra vár"},
	"mo_pending":   {"en": "waiting for review", "it": "in attesa di revisione", "da": "venter på gennemgang", "hu": "ellenőrzésre vár"},
	"mo_approved":  {"en": "approved by staff", "it": "approvato dal personale", "da": "godkendt af personalet", "hu": "munkatárs jóváhagyta"},
	"mo_dismissed": {"en": "closed by staff without action", "it": "chiuso dal personale senza azione", "da": "lukket af personalet uden handling", "hu": "munkatárs intézkedés nélkül lezárta"},

	"cr_nothing_left":       {"en": "nothing left to fetch", "it": "nient'altro da scaricare", "da": "intet mere at hente", "hu": "nincs több letöltendő"},
	"cr_budget_spent":       {"en": "budget spent", "it": "budget esaurito", "da": "budget brugt", "hu": "a keret elfogyott"},
	"cr_excluded":           {"en": "excluded while crawling", "it": "escluso durante la scansione", "da": "udelukket under crawlingen", "hu": "feltérképezés közben kizárva"},
	"cr_interrupted":        {"en": "interrupted", "it": "interrotto", "da": "afbrudt", "hu": "megszakítva"},
	"cr_lease_lost":         {"en": "host lease lost to another crawler", "it": "host preso in carico da un altro crawler", "da": "hosten overtaget af en anden crawler", "hu": "a hostot egy másik webrobot vette át"},
	"cr_every_host_left":    {"en": "every host left", "it": "tutti gli host abbandonati", "da": "alle hosts forladt", "hu": "minden host elhagyva"},
	"cr_nothing_left_hosts": {"en": "nothing left to fetch; hosts left", "it": "nient'altro da scaricare; host abbandonati", "da": "intet mere at hente; hosts forladt", "hu": "nincs több letöltendő; elhagyott hostok"},
	"cr_no_page_hosts":      {"en": "no page; hosts left", "it": "nessuna pagina; host abbandonati", "da": "ingen side; hosts forladt", "hu": "nincs oldal; elhagyott hostok"},
	"hl_login":              {"en": "login required, HTTP {status}", "it": "accesso richiesto, HTTP {status}", "da": "login krævet, HTTP {status}", "hu": "bejelentkezés szükséges, HTTP {status}"},
	"hl_forbidden":          {"en": "forbidden, HTTP {status}", "it": "vietato, HTTP {status}", "da": "forbudt, HTTP {status}", "hu": "tiltott, HTTP {status}"},
	"hl_challenge":          {"en": "bot protection challenge, HTTP {status}", "it": "verifica anti-bot, HTTP {status}", "da": "botbeskyttelse, HTTP {status}", "hu": "botvédelmi ellenőrzés, HTTP {status}"},
	"hl_robots":             {"en": "robots.txt unreachable, so nothing is allowed", "it": "robots.txt non raggiungibile, quindi nulla è consentito", "da": "robots.txt kunne ikke nås, så intet er tilladt", "hu": "a robots.txt elérhetetlen, így semmi sem engedélyezett"},
}

// sourceWord is where an exclusion came from in the report's words; a
// source the catalogue does not know is shown as stored.
func sourceWord(t func(string) string, source string) string {
	if _, ok := catalog["src_"+source]; ok {
		return t("src_" + source)
	}
	return source
}

// counted is n with its noun in the report's words: key+"_one" for 1,
// key (with {n}) for any other number.
func counted(t func(string) string, key string, n int) string {
	if n == 1 {
		return t(key + "_one")
	}
	return strings.ReplaceAll(t(key), "{n}", strconv.Itoa(n))
}
