package mailbot

// Keyword rules, per language. A rule is a phrase of steps; each step lists
// alternative words separated by "|", where a trailing "*" matches any word
// starting with the stem. Between two steps up to 3 other words may come
// (sentences and paragraphs are never crossed); "~N" before a step sets
// that gap to N. HOST stands for a host name or URL. {NAME} expands to a
// macro below. Words are compared folded (lowercase, no diacritics), so
// rules may be written with or without them.
//
// Phases run in order, and a word used by one rule is not used again:
//
//	phaseUndo: strong re-inclusion phrases ("lift the block", "re-include"),
//	           which often contain exclusion words themselves;
//	phaseExclude: exclusion requests ("stop crawling", "remove … from your list");
//	phaseAgain: weaker re-inclusion phrases ("crawl us again").
//
// A rule whose first step has a short word ("no", "ne", "pas", "ta") is
// only tried when its language is plausible for the text (see
// plausibleLangs), so the Spanish "no … indexar" does not fire on the
// English "no problem with indexing". English rules are always tried:
// English words turn up in mail in every language.
//
// Weights: 3 strong, 2 enough on its own, 1 supporting. A message is an
// exclusion when its exclusion weight reaches 2 and beats re-inclusion; a
// re-inclusion when its re-inclusion weight reaches 2 and is at least the
// exclusion weight (a re-inclusion request usually recalls the exclusion).
const (
	phaseThanks = iota // weight 0: "thanks for excluding …" asks nothing
	phaseUndo
	phaseExclude
	phaseAgain
)

// keywordMacros are shared word lists.
var keywordMacros = map[string]string{
	// What a bot does to a site, in all the languages.
	"CRAWLV": "crawl*|index*|indeks*|indicizz*|scan*|scrap*|spider*|rastre*|explor*|procház*|prechádz*|" +
		"prohledáv*|prehľadáv*|feltérképez*|besuch*|besøg*|besök*|bezoek*|visit*|odwiedz*|látogat*|" +
		"navštěv*|navštev*|acced*|access*|acess*|aced*|zugreif*|zugriff*|abgras*|durchsuch*|skann*|" +
		"indexier*|indexel*|indexov*|indeksow*|aspir*|harvest*|robotol*",
	// The bot itself.
	"BOT": "robot*|robo|robos|robô|robôs|bot|bots|lohisoftbot*|crawler*|spider*|lohisoft",
	// What a site is removed from.
	// Nouns only: a verb here would be taken from a re-inclusion phrase
	// ("fjernet …, men I må gerne crawle … igen").
	"LIST": "list*|liste*|lijst*|seznam*|zoznam*|index|indexes|indices|indexu|indexe|indexben|indexből|" +
		"indice|índice|indeks|indeksu|indeksie|database*|datenbank*|databas*|adatbázis*|baz*|robot*|robo|" +
		"bot|bots|lohisoftbot*|crawler*|crawllist*|crawllijst*|scansion*|rastreament*|rastreador*|rastreo|" +
		"suchindex*|motor*|moteur*|zoekmachine*|sökmotor*|søgemaskine*|vyhledáv*|vyhľadáv*|" +
		"wyszukiw*|elenc*|archivi*|registr*|procházení|prechádzani*|indexován*|indexovani*|indeksowani*|" +
		"feltérképezés*|exploration*|scope|crawling|indexing|indexierung|indexation|indicizzazione|" +
		"indexación|indexação|indexering|indeksering|indexelés*",
}

// keywordRule is one rule of the table below.
type keywordRule struct {
	lang    string
	phase   int
	weight  int
	pattern string
}

// keywordRules is the rule table. It is never modified.
var keywordRules = []keywordRule{
	// Thanks for what was done: these words ask for nothing.
	{"en", phaseThanks, 0, "thank*|thx ~1 for ~3 exclud*|remov*|block*|opt*|stop*|taking|process*|handl*|delet*|quick*"},
	{"de", phaseThanks, 0, "danke|dank ~4 entfern*|ausschl*|ausschluss|sperr*|lösch*|erledig*|schnelle"},
	{"fr", phaseThanks, 0, "merci ~0 d ~0 avoir ~3 retiré*|supprimé*|exclu*|bloqué*|traité*"},
	{"it", phaseThanks, 0, "grazie ~1 per ~1 aver|avere ~3 rimoss*|esclus*|bloccat*|tolt*|gestit*"},
	{"es", phaseThanks, 0, "gracias ~1 por ~3 eliminar|excluir|quitar|retirar|bloquear|borrar|haber"},
	{"pt", phaseThanks, 0, "obrigad* ~1 por ~3 remover|excluir|retirar|bloquear|ter"},
	{"nl", phaseThanks, 0, "bedankt|dank ~1 voor ~3 verwijder*|uitsluit*|blokk*|snelle"},
	{"da", phaseThanks, 0, "tak|tack ~1 for|för ~3 fjern*|blok*|ta|hurtig*|snabb*"},
	{"cs", phaseThanks, 0, "děkuj*|ďakuj*|dziękuj*|köszön* ~3 vyřaz*|vyrad*|vyřízení|odstran*|usunię*|wyłącz*|törl*|kizár*"},
	// The footers of sales mail and the threats of complaints ask nothing
	// of the crawler either: "reply STOP to opt out of these emails", "we
	// will remove you from our list", "otherwise we will block your bot".
	{"en", phaseThanks, 0, "opt|opting ~0 out ~3 email*|e|messages|mailing*|communication*|newsletter*|future|further"},
	{"en", phaseThanks, 0, "remov*|take|delet*|unsubscrib* ~2 you|yourself ~4 {LIST}|mailing*|email*|newsletter*|our|this"},
	{"en", phaseThanks, 0, "unsubscrib* ~3 email*|e|mailing*|newsletter*|messages|here|link|below|click|this|future"},
	{"en", phaseThanks, 0, "no ~0 longer ~2 wish|want|like ~3 receive|hear|get"},
	{"en", phaseThanks, 0, "stop ~2 receiving|getting|hearing|these|emails|email"},
	{"en", phaseThanks, 0, "otherwise|else|or ~2 we|i ~2 will|ll|shall|must|have|would ~2 block*|ban*|firewall*"},
	{"de", phaseThanks, 0, "sonst|andernfalls|ansonsten ~4 sperr*|blockier*"},
	// No objection to being indexed: these words ask for nothing either.
	{"en", phaseThanks, 0, "no|nothing ~0 problem*|objection*|issue*|against ~3 {CRAWLV}|{BOT}|with|to"},
	{"de", phaseThanks, 0, "nichts|kein|keine|keinerlei ~0 gegen|problem|einwände|einwand|bedenken ~3 {CRAWLV}|{BOT}|die|das|den"},
	{"nl", phaseThanks, 0, "geen|niets ~0 bezwaar|probleem|tegen ~3 {CRAWLV}|{BOT}|tegen|met"},
	{"fr", phaseThanks, 0, "rien ~1 contre"},
	{"fr", phaseThanks, 0, "pas ~1 d ~0 objection|opposition"},
	{"it", phaseThanks, 0, "niente|nulla|nessun|nessuna ~1 contro|problema|obiezione"},
	{"es", phaseThanks, 0, "nada ~1 en ~0 contra"},
	{"es", phaseThanks, 0, "no ~1 nos|me ~0 importa|molesta ~3 {CRAWLV}|que"},
	{"es", phaseThanks, 0, "ningún|ninguna ~0 problema|objeción|inconveniente"},
	{"pt", phaseThanks, 0, "nada ~0 contra"},
	{"pt", phaseThanks, 0, "nenhum|nenhuma ~0 problema|objeção|objecção|inconveniente"},
	{"da", phaseThanks, 0, "intet|ikke ~1 noget ~0 imod"},
	{"sv", phaseThanks, 0, "inget|inga ~1 emot|problem|invändning*"},
	{"hu", phaseThanks, 0, "nincs ~2 kifogás*|ellen|probléma"},
	{"cs", phaseThanks, 0, "nic|nič ~1 proti|nemáme|nemame|nemáte"},
	{"cs", phaseThanks, 0, "nevadí|nevadi ~3 {CRAWLV}|že|ze"},
	{"pl", phaseThanks, 0, "nic ~1 przeciwko"},
	{"pl", phaseThanks, 0, "nie ~1 mamy ~1 nic|zastrzeżeń|problemu"},

	// English.
	{"en", phaseUndo, 3, "re ~0 include*|index*|crawl*|enable*|add*|list*|activat*|allow*|admit*"},
	{"en", phaseUndo, 3, "reinclu*|reindex*|recrawl*|reenabl*|readd*|reactivat*|reallow*|relist*|readmit*|unblock*|unban*|unexclud*"},
	{"en", phaseUndo, 3, "lift*|undo*|undone|revers*|revert*|cancel*|withdraw*|rescind* ~3 block|blocking|blocks|ban|banned|exclusion*|opt|optout*|restriction*|blacklist*|blocklist*"},
	{"en", phaseUndo, 3, "remov*|take|delet* ~3 from|off ~3 exclusion*|excluded|block|blocked|blocklist*|blacklist*|ban|banned|opt|optout*"},
	{"en", phaseExclude, 2, "stop|cease|quit|halt|discontinue ~3 {CRAWLV}|{BOT}|hitting|fetch*|collect*"},
	{"en", phaseExclude, 2, "remov*|delet*|drop*|erase*|purge*|strike|exclud* ~8 {LIST}|HOST"},
	{"en", phaseExclude, 2, "take ~3 off|out ~4 {LIST}|HOST"},
	{"en", phaseExclude, 2, "take ~3 HOST|site|sites|website*|domain*|us|me|it ~3 off|out"},
	{"en", phaseExclude, 2, "remov*|delet*|exclud* ~3 HOST|site|sites|website*|domain*|us|me|it|them|page*|url*|shop*|blog*"},
	{"en", phaseExclude, 2, "object* ~4 {CRAWLV}|{BOT}"},
	{"en", phaseExclude, 1, "stop ~1 it|them"},
	{"en", phaseExclude, 2, "exclud*|exclusion*"},
	{"en", phaseExclude, 2, "opt|opting|opted ~0 out"},
	{"en", phaseExclude, 2, "optout*|optingout"},
	{"en", phaseExclude, 2, "not|don|dont|never|doesn ~2 crawl|crawled|crawling|index|indexed|indexing|scan|scanned|scanning|scrape*|scraping|visit|visited|access|accessed|spider*|harvest*"},
	{"en", phaseExclude, 2, "not|don|dont|never ~1 want|wish|like|allow*|permit*|consent*|agree* ~5 {CRAWLV}|{BOT}|search*|database*"},
	{"en", phaseExclude, 2, "no ~0 longer ~3 {CRAWLV}|want|wish|welcome|allow*|permit*|consent*"},
	{"en", phaseExclude, 2, "withdraw*|revok*|rescind* ~3 permission*|consent*|authori*"},
	{"en", phaseExclude, 2, "unsubscrib* ~4 HOST|site*|domain*|website*|{CRAWLV}|{BOT}"},
	{"en", phaseExclude, 1, "unsubscrib*"},
	{"en", phaseExclude, 2, "block*|ban ~3 {BOT}"},
	{"en", phaseExclude, 1, "block*|ban ~3 you|your|lohisoft*"},
	{"en", phaseExclude, 1, "leave ~3 alone"},
	{"en", phaseExclude, 1, "disallow*"},
	{"en", phaseAgain, 2, "crawl|index|include|list|visit|scan|add|crawled|indexed|included|listed|visited|scanned|back ~4 again"},
	{"en", phaseAgain, 2, "start|resume|restart|begin ~3 crawl*|index*|visit*|scan*|includ*"},
	{"en", phaseAgain, 2, "back ~1 in|into|on ~3 {LIST}"},
	{"en", phaseAgain, 1, "allow|permit|welcome ~4 {BOT}|crawl*|index*"},
	{"en", phaseAgain, 1, "chang* ~2 mind*"},
	{"en", phaseAgain, 2, "want*|like|wish ~3 be|get ~0 included|indexed|crawled|listed|visible|found"},
	{"en", phaseAgain, 2, "revers*|undo|revert* ~1 that|this|it"},

	// Italian.
	{"it", phaseUndo, 3, "riattiv*|ripristin*|riammett*|reinser*|reinclu*|riabilit*|sbloc*|reindicizz*"},
	{"it", phaseUndo, 3, "rimuov*|togli*|revoc*|annull*|elimin* ~3 blocco|blocchi|esclusione|divieto"},
	{"it", phaseExclude, 2, "esclud*|esclus*"},
	{"it", phaseExclude, 2, "rimuov*|rimozion*|elimin*|cancell*|togli*|toglier*|depenn* ~8 {LIST}|HOST"},
	{"it", phaseExclude, 2, "rimozion*|rimuov*|cancellazion* ~3 sito|siti|dominio|domini|HOST"},
	{"it", phaseExclude, 2, "non ~3 {CRAWLV}|scansiona*|scansion*"},
	{"it", phaseExclude, 2, "non ~1 voglio|vogliamo|desidero|desideriamo ~5 {CRAWLV}|{BOT}|scansion*"},
	{"it", phaseExclude, 2, "smett*|interromp*|ferma*|fermate|cessa* ~3 {CRAWLV}|scansion*|{BOT}"},
	{"it", phaseExclude, 1, "opposizion*|oppongo|opponiamo ~4 {CRAWLV}|scansion*|trattamento"},
	{"it", phaseAgain, 2, "nuovamente|nuovo ~3 scansionare|scansionarci|scansionato|indicizzare|indicizzarci|indicizzato|indicizzati|includere|inclusi|incluso|visitare|crawlare"},
	{"it", phaseAgain, 2, "scansionare|scansionarci|indicizzare|indicizzarci|includere|visitare|crawlare|inclusi|incluso|indicizzati ~3 nuovamente|nuovo"},
	{"it", phaseAgain, 2, "torn* ~3 {CRAWLV}|scansion*"},
	{"it", phaseAgain, 1, "consent*|permett*|autorizz* ~4 {CRAWLV}|scansion*|{BOT}"},

	// French.
	{"fr", phaseUndo, 3, "réindex*|reindex*|réintégr*|reintegr*|réinclu*|reinclu*|débloqu*|debloqu*|réactiv*|reactiv*"},
	{"fr", phaseUndo, 3, "lever|levez|levée|annul*|retir*|supprim* ~3 exclusion*|blocage*|interdiction*|opposition"},
	{"fr", phaseExclude, 2, "exclu*"},
	{"fr", phaseExclude, 2, "retir*|supprim*|suppression|enlev*|radier|radiez|radiation|effac* ~8 {LIST}|HOST"},
	{"fr", phaseExclude, 2, "retrait|suppression|désindex*|désinscri* ~3 site*|domaine*|HOST|{LIST}|{BOT}"},
	{"fr", phaseExclude, 2, "désindex*|deindex*"},
	{"fr", phaseExclude, 2, "ne ~2 plus ~3 {CRAWLV}|parcour*|moissonn*"},
	{"fr", phaseExclude, 2, "pas ~2 {CRAWLV}|parcour*"},
	{"fr", phaseExclude, 2, "arrêt*|cess*|stopp*|interromp* ~3 {CRAWLV}|{BOT}|collect*|parcour*"},
	{"fr", phaseExclude, 1, "oppos* ~4 {CRAWLV}|collect*"},
	{"fr", phaseAgain, 2, "nouveau|nouveaux|nouvelle ~3 indexer|indexés|indexé|indexée|indexées|explorer|exploré|crawler|crawlé|référencer|référencés|référencé|inclure|inclus|visiter|visité|parcourir"},
	{"fr", phaseAgain, 2, "indexer|indexés|indexé|explorer|crawler|référencer|inclure|inclus|visiter|parcourir ~3 nouveau"},
	{"fr", phaseAgain, 2, "repren*|reprise ~3 {CRAWLV}"},
	{"fr", phaseAgain, 1, "autoris* ~4 {BOT}|{CRAWLV}"},

	// Spanish.
	{"es", phaseUndo, 3, "desbloque*|reindex*|reactiv*|readmit*|reinclu*|reincorpor*"},
	{"es", phaseUndo, 3, "levant*|anul*|quit*|retir*|elimin*|revert*|deshac* ~3 bloqueo*|exclusión|veto|prohibición|restricción"},
	{"es", phaseExclude, 2, "exclu*"},
	{"es", phaseExclude, 2, "dejen|dejar|dejad|deje|paren|parar|parad|pare|detengan|detener|cesen|cesar ~3 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 2, "elimin*|borr*|quit*|retir*|sacar|saquen|saque|saquéis ~8 {LIST}|HOST|buscador*|rastreador*"},
	{"es", phaseExclude, 2, "dar|den|des ~1 baja ~4 HOST|{LIST}|{BOT}|web|sitio|dominio|página"},
	{"es", phaseExclude, 2, "no ~3 {CRAWLV}"},
	{"es", phaseExclude, 2, "no ~1 quier*|quer*|dese* ~4 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 1, "opon* ~3 {CRAWLV}"},
	{"es", phaseAgain, 2, "volver|vuelvan|vuelva|volváis ~2 {CRAWLV}|incluir|indexar"},
	{"es", phaseAgain, 2, "nuevo|nuevamente ~3 rastrear|indexar|incluir|rastreen|indexen|incluyan|visitar|rastreada|indexada|indexado|rastreado|incluida|incluido"},
	{"es", phaseAgain, 2, "rastrear|indexar|incluir|rastreen|indexen|incluyan|visitar|rastreado|rastreada|indexado|indexada|incluido|incluida ~3 nuevo|nuevamente"},
	{"es", phaseAgain, 1, "permit*|autoriz* ~4 {BOT}|{CRAWLV}"},

	// Portuguese.
	{"pt", phaseUndo, 3, "desbloque*|reindex*|reativ*|readmit*|reinclu*|reincorpor*"},
	{"pt", phaseUndo, 3, "levant*|anul*|retir*|remov*|revert*|cancel*|desfaz* ~3 bloqueio*|exclusão|proibição|restrição"},
	{"pt", phaseExclude, 2, "exclu*"},
	{"pt", phaseExclude, 2, "remov*|remoção|retir*|elimin*|apag*|tirem|tirar|tire|tirarem ~8 {LIST}|HOST"},
	{"pt", phaseExclude, 2, "remoção|remov*|descadastr* ~3 site*|domínio*|HOST|{BOT}|{LIST}"},
	{"pt", phaseExclude, 1, "descadastr*"},
	{"pt", phaseExclude, 2, "não ~3 {CRAWLV}|autoriz*"},
	{"pt", phaseExclude, 2, "não ~1 quer*|desej* ~4 {BOT}|{CRAWLV}"},
	{"pt", phaseExclude, 2, "parem|parar|pare|deixem|deixar|deixe|cessem|cessar ~3 {CRAWLV}|{BOT}"},
	{"pt", phaseAgain, 2, "volt* ~2 {CRAWLV}|inclu*|indexar"},
	{"pt", phaseAgain, 2, "novamente|novo ~3 rastrear|indexar|incluir|rastreado|rastreada|indexado|indexada|incluído|incluída|visitar"},
	{"pt", phaseAgain, 2, "rastrear|indexar|incluir|visitar|rastreado|rastreada|indexado|indexada|incluído|incluída ~3 novamente|novo"},
	{"pt", phaseAgain, 1, "permit*|autoriz* ~4 {BOT}|{CRAWLV}"},

	// Dutch.
	{"nl", phaseUndo, 3, "deblokk*|herindex*|heropn*|heractiv*|reactiv*"},
	{"nl", phaseUndo, 3, "opheff*|ophef|opgeheven|intrekk*|ongedaan|verwijder* ~3 blokkade*|blokkering*|uitsluiting*|ban|verbod"},
	{"nl", phaseUndo, 3, "blokkade*|blokkering*|uitsluiting*|verbod ~3 opheff*|opheft|opgeheven|intrekk*|ongedaan"},
	{"nl", phaseExclude, 2, "uitsluit*|uitgesloten|uitsluiting*"},
	{"nl", phaseExclude, 2, "verwijder*|haal|halen|schrap*|wis ~8 {LIST}|HOST"},
	{"nl", phaseExclude, 2, "uit ~3 {LIST}"},
	{"nl", phaseExclude, 2, "niet|nooit|geen ~2 {CRAWLV}|gecrawld|geïndexeerd"},
	{"nl", phaseExclude, 2, "willen|wil|wensen ~1 niet|geen ~4 {CRAWLV}|{BOT}"},
	{"nl", phaseExclude, 2, "stop* ~3 {CRAWLV}|{BOT}"},
	{"nl", phaseExclude, 2, "HOST|site|website|domein ~3 verwijderen|blokkeren|uitsluiten|schrappen"},
	{"nl", phaseExclude, 1, "blokk* ~3 {BOT}"},
	{"nl", phaseAgain, 2, "weer|opnieuw ~3 {CRAWLV}|opnem*|opgenomen|toelat*"},
	{"nl", phaseAgain, 1, "toestaan|toelaten ~4 {BOT}|{CRAWLV}"},

	// German.
	{"de", phaseUndo, 3, "entsperr*|reaktivier*|wiederaufnahm*|wiederaufnehm*|freischalt*"},
	{"de", phaseUndo, 3, "sperre|sperrung|ausschluss|blockierung|blockade ~4 wieder ~1 auf"},
	{"de", phaseUndo, 3, "sperre|sperrung|ausschluss|blockierung|blockade ~4 aufheben|aufzuheben|aufgehoben|rückgängig|zurücknehmen|zurückzunehmen"},
	{"de", phaseUndo, 3, "aufheb*|aufhebung ~3 sperre|sperrung|ausschluss|blockierung|blockade"},
	{"de", phaseUndo, 3, "nehmen|nehmt ~6 wieder ~5 auf"},
	{"de", phaseUndo, 3, "geben|gebt ~6 wieder ~3 frei"},
	{"de", phaseUndo, 3, "freigeb*|freizugeben"},
	{"de", phaseExclude, 2, "ausschließ*|ausschluss|ausgeschlossen|ausnehm*|austrag*"},
	{"de", phaseExclude, 2, "schließen|schließt|tragen ~9 aus"},
	{"de", phaseExclude, 2, "aus ~3 {LIST} ~3 nehmen|entfernen|löschen|streichen|raus|herausnehmen|austragen"},
	{"de", phaseExclude, 2, "HOST|seite|website|webseite|domain|homepage ~3 sperren|blockieren|ausschließen|entfernen|löschen|austragen"},
	{"de", phaseExclude, 2, "widersprech*|widerspreche|widerspruch|untersag*|verbiete*|verbieten ~6 {CRAWLV}|{BOT}|crawling|erfassung|speicherung|verarbeitung"},
	{"de", phaseExclude, 2, "entfern*|lösch*|herausnehm*|nehm*|streich*|raus ~8 {LIST}|HOST|verzeichnis*"},
	{"de", phaseExclude, 2, "nicht|kein|keine|niemals ~4 {CRAWLV}|gecrawlt|indexiert|erfass*"},
	{"de", phaseExclude, 2, "hör*|stopp*|stop|beend*|unterlass*|einstellen|einzustellen ~6 {CRAWLV}|{BOT}|abgras*"},
	{"de", phaseExclude, 1, "sperr*|blockier* ~3 {BOT}"},
	{"de", phaseAgain, 2, "wieder ~3 crawlen|indexieren|aufnehmen|aufgenommen|besuchen|gefunden|finden|erfassen|zulassen|listen|gelistet|durchsuchen|gecrawlt|indexiert"},
	{"de", phaseAgain, 2, "gerne ~4 crawlen|indexieren|besuchen|aufnehmen"},

	// Danish.
	{"da", phaseUndo, 3, "ophæv*|fjern* ~3 blokering*|spærring*|udelukkelse*"},
	{"da", phaseUndo, 3, "blokering*|spærring*|udelukkelse* ~3 ophæv*|fjern*"},
	{"da", phaseExclude, 2, "fjern*|slet*|tag ~8 {LIST}|HOST"},
	{"da", phaseExclude, 2, "stop*|ophør* ~4 {CRAWLV}|{BOT}"},
	{"da", phaseExclude, 2, "ikke ~4 {CRAWLV}|crawlet|database*|indeks*"},
	{"da", phaseExclude, 2, "udeluk*|udelad*|fravælg*"},
	{"da", phaseAgain, 2, "crawl|crawle|indeksere|indekser|besøge|besøg|med ~4 igen"},
	{"da", phaseAgain, 2, "gerne ~3 crawl*|indeks*|besøg*"},

	// Swedish.
	{"sv", phaseUndo, 3, "häv|häva|hävs|upphäv* ~3 blockering*|spärr*|uteslutning*"},
	{"sv", phaseUndo, 3, "blockering*|spärr*|uteslutning* ~3 hävs|upphävs|upphäv*"},
	{"sv", phaseUndo, 3, "avblock*"},
	{"sv", phaseExclude, 2, "ta|tas ~0 bort ~8 {LIST}|HOST|oss"},
	{"sv", phaseExclude, 2, "radera|stryk ~6 {LIST}|HOST"},
	{"sv", phaseExclude, 2, "sluta|stoppa|stopp|upphör ~4 {CRAWLV}|{BOT}"},
	{"sv", phaseExclude, 2, "inte ~4 {CRAWLV}|crawlas|indexeras"},
	{"sv", phaseExclude, 2, "undanta*|exkluder*|utesl*"},
	{"sv", phaseExclude, 1, "blocker* ~3 {BOT}"},
	{"sv", phaseAgain, 2, "crawla|indexera|besöka|besök|skanna|ta|med ~4 igen"},
	{"sv", phaseAgain, 2, "gärna ~3 crawla|indexera|besöka"},

	// Hungarian.
	{"hu", phaseUndo, 3, "felold*|visszavon*|megszüntet* ~3 tiltás*|kizárás*|blokkol*|letiltás*"},
	{"hu", phaseUndo, 3, "tiltás*|kizárás*|blokkolás*|letiltás* ~3 felold*|visszavon*|megszüntet*"},
	{"hu", phaseUndo, 3, "újraindex*|újraenged*"},
	{"hu", phaseExclude, 2, "töröl*|törölj*|törlés*|eltávolít*|kivesz*|kivenni|vegy*|távolíts* ~8 {LIST}|HOST|oldal*|honlap*|weboldal*"},
	{"hu", phaseExclude, 2, "kizár*"},
	{"hu", phaseExclude, 2, "HOST|oldal*|weboldal*|honlap* ~4 töröl*|törölj*|eltávolít*|kivesz*|kivegyék"},
	{"hu", phaseExclude, 2, "ne ~3 {CRAWLV}|jöjjenek|pörget*"},
	{"hu", phaseExclude, 2, "nem ~1 szeretn*|kér*|akar*|kíván* ~6 {CRAWLV}|{BOT}"},
	{"hu", phaseExclude, 1, "tilt* ~3 {BOT}"},
	{"hu", phaseAgain, 2, "újra|ismét ~3 index*|feltérképez*|látogat*|felvesz*|felvenni|bejár*|crawl*"},
	{"hu", phaseAgain, 2, "index*|feltérképez*|látogas*|bejár* ~3 újra|ismét"},
	{"hu", phaseAgain, 1, "engedélyez* ~4 {BOT}|{CRAWLV}"},

	// Czech and Slovak (their stems fold alike).
	{"cs", phaseUndo, 3, "opětovn*|opätovn* ~3 zařaz*|zarad*|index*|procház*|prechádz*|povol*"},
	{"cs", phaseUndo, 3, "zruš*|zrušen* ~3 vyřazen*|vyraden*|blokac*|blokován*|blokovan*|zákaz*"},
	{"cs", phaseUndo, 3, "odblok*"},
	{"cs", phaseExclude, 2, "vyřaď*|vyřad*|vyřaz*|vyraď*|vyrad*"},
	{"cs", phaseExclude, 2, "odstraň*|odstran*|smaž*|smazat|vymaž*|vymaz*|zmaž*|odeber*|odebrat|odober* ~8 {LIST}|HOST|domén*|stránk*|web*"},
	{"cs", phaseExclude, 2, "neprocház*|neindex*|nenavštěv*|neprechádz*|nenavštev*|nesbír*|nezbier*"},
	{"cs", phaseExclude, 2, "přestaň*|přestat|zastav*|prestaň*|prestať ~4 {CRAWLV}|{BOT}"},
	{"cs", phaseExclude, 2, "nesouhlas*|nesúhlas*|nepřej*|neprej*|nechceme|nechci|nechcem|neželá*|nezela* ~6 {CRAWLV}|{BOT}"},
	{"cs", phaseExclude, 1, "zakáz*|zablok* ~3 {BOT}"},
	{"cs", phaseAgain, 2, "znovu|opět|opäť|znova ~4 {CRAWLV}|zařad*|zarad*"},
	{"cs", phaseAgain, 2, "zpět|späť ~3 zařad*|zarad*|index*"},
	{"cs", phaseAgain, 1, "povol* ~4 {BOT}|{CRAWLV}"},

	// Polish.
	{"pl", phaseUndo, 3, "ponown* ~3 indeks*|włącz*|dodan*|dodać|odwiedz*|skan*|uwzględni*"},
	{"pl", phaseUndo, 3, "odblok*"},
	{"pl", phaseUndo, 3, "cofn*|anul*|znieś*|zniesien*|usun* ~3 blokad*|wyłączeni*|wykluczeni*"},
	{"pl", phaseExclude, 2, "wyłącz*|wyklucz*|usun*|usuń*|usunięc*|wykreśl*|wycofa* ~8 {LIST}|HOST|domen*|stron*"},
	{"pl", phaseExclude, 2, "wyklucz*"},
	{"pl", phaseExclude, 2, "nie ~3 {CRAWLV}|zbier*"},
	{"pl", phaseExclude, 2, "niezbier*|nieindeks*"},
	{"pl", phaseExclude, 2, "nie ~1 chcemy|chcę|chce|życzymy|zgadzamy|wyrażamy ~6 {CRAWLV}|{BOT}"},
	{"pl", phaseExclude, 2, "przestańcie|przestać|zaprzestać|zaprzestanie|zatrzymajcie|wstrzymajcie|wstrzymać ~4 {CRAWLV}|{BOT}"},
	{"pl", phaseExclude, 1, "zablok* ~3 {BOT}"},
	{"pl", phaseAgain, 2, "znów|znowu|ponownie ~4 {CRAWLV}|włącz*|uwzględni*"},
}
