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
	phaseUndo = iota
	phaseExclude
	phaseAgain
)

// keywordMacros are shared word lists.
var keywordMacros = map[string]string{
	// What a bot does to a site, in all the languages.
	"CRAWLV": "crawl*|index*|indeks*|indicizz*|scan*|scrap*|spider*|rastre*|explor*|procház*|prechádz*|" +
		"prohledáv*|prehľadáv*|feltérképez*|besuch*|besøg*|besök*|bezoek*|visit*|odwiedz*|látogat*|" +
		"navštěv*|navštev*|acced*|access*|acess*|zugreif*|zugriff*|abgras*|durchsuch*|skann*|" +
		"indexier*|indexel*|indexov*|indeksow*|aspir*|harvest*|robotol*",
	// The bot itself.
	"BOT": "robot*|bot|bots|lohisoftbot*|crawler*|spider*|lohisoft",
	// What a site is removed from.
	"LIST": "list*|liste*|lijst*|seznam*|zoznam*|index*|indeks*|database*|datenbank*|databas*|adatbázis*|" +
		"baz*|robot*|bot|bots|lohisoftbot*|crawler*|crawl*|scan*|scansion*|rastre*|suchindex*|search*|" +
		"motor*|moteur*|zoekmachine*|sökmotor*|søgemaskine*|vyhledáv*|vyhľadáv*|wyszukiw*|elenc*|archivi*|" +
		"registr*|procház*|prechádz*|indexov*|indeksow*|feltérképez*|exploration*|scope",
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
	// English.
	{"en", phaseUndo, 3, "re ~0 include*|index*|crawl*|enable*|add*|list*|activat*|allow*|admit*"},
	{"en", phaseUndo, 3, "reinclu*|reindex*|recrawl*|reenabl*|readd*|reactivat*|reallow*|relist*|readmit*|unblock*|unban*|unexclud*|whitelist*|allowlist*"},
	{"en", phaseUndo, 3, "lift*|undo*|undone|revers*|revert*|cancel*|withdraw*|rescind* ~3 block|blocking|blocks|ban|banned|exclusion*|opt|optout*|restriction*|blacklist*|blocklist*"},
	{"en", phaseUndo, 3, "remov*|take|delet* ~3 from|off ~3 exclusion*|exclude*|block|blocklist*|blacklist*|ban|opt|optout*"},
	{"en", phaseExclude, 2, "stop|cease|quit|halt|discontinue ~3 {CRAWLV}|{BOT}|hitting|fetch*|collect*"},
	{"en", phaseExclude, 2, "remov*|delet*|drop*|erase*|purge*|strike|exclud* ~8 {LIST}|HOST"},
	{"en", phaseExclude, 2, "take ~3 off|out ~4 {LIST}|HOST"},
	{"en", phaseExclude, 2, "take ~3 HOST|site|sites|website*|domain*|us|me|it ~3 off|out"},
	{"en", phaseExclude, 2, "remov*|delet*|exclud* ~3 HOST|site|sites|website*|domain*|us|me|page*|url*|shop*|blog*"},
	{"en", phaseExclude, 2, "exclud*|exclusion*"},
	{"en", phaseExclude, 2, "opt|opting|opted ~0 out"},
	{"en", phaseExclude, 2, "optout*|optingout"},
	{"en", phaseExclude, 2, "not|don|dont|never|doesn ~2 crawl|crawled|crawling|index|indexed|indexing|scan|scanned|scanning|scrape*|scraping|visit|visited|access|accessed|spider*|harvest*"},
	{"en", phaseExclude, 2, "not|don|dont|never ~1 want|wish|like|allow*|permit*|consent*|agree* ~5 {CRAWLV}|{BOT}|search*|database*"},
	{"en", phaseExclude, 2, "no ~0 longer ~3 {CRAWLV}|want|wish|welcome|allow*|permit*|consent*"},
	{"en", phaseExclude, 2, "withdraw*|revok*|rescind* ~3 permission*|consent*|authori*"},
	{"en", phaseExclude, 2, "unsubscrib* ~4 HOST|site*|domain*|website*|{CRAWLV}|{BOT}"},
	{"en", phaseExclude, 1, "unsubscrib*"},
	{"en", phaseExclude, 1, "block*|ban ~3 {BOT}|you|your|lohisoft*"},
	{"en", phaseExclude, 1, "leave ~3 alone"},
	{"en", phaseExclude, 1, "disallow*"},
	{"en", phaseAgain, 2, "crawl|index|include|list|visit|scan|add|crawled|indexed|included|listed|visited|scanned|back ~4 again"},
	{"en", phaseAgain, 2, "start|resume|restart|begin ~3 crawl*|index*|visit*|scan*|includ*"},
	{"en", phaseAgain, 2, "back ~1 in|into|on ~3 {LIST}"},
	{"en", phaseAgain, 1, "allow|permit|welcome ~4 {BOT}|crawl*|index*"},
	{"en", phaseAgain, 1, "chang* ~2 mind*"},

	// Italian.
	{"it", phaseUndo, 3, "riattiv*|ripristin*|riammett*|reinser*|reinclu*|riabilit*|sbloc*|reindicizz*"},
	{"it", phaseUndo, 3, "rimuov*|togli*|revoc*|annull*|elimin* ~3 blocco|blocchi|esclusione|divieto"},
	{"it", phaseExclude, 2, "esclud*|esclus*"},
	{"it", phaseExclude, 2, "rimuov*|rimozion*|elimin*|cancell*|togli*|toglier*|depenn* ~8 {LIST}|HOST"},
	{"it", phaseExclude, 2, "rimozion*|rimuov*|cancellazion* ~3 sito|siti|dominio|domini|HOST"},
	{"it", phaseExclude, 2, "non ~3 {CRAWLV}|scansiona*|scansion*"},
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
	{"fr", phaseExclude, 2, "retrait|suppression|désindex*|désinscri* ~3 site*|domaine*|HOST|{LIST}"},
	{"fr", phaseExclude, 2, "désindex*|deindex*|désinscri*"},
	{"fr", phaseExclude, 2, "ne ~0 plus ~3 {CRAWLV}|parcour*|moissonn*"},
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
	{"es", phaseExclude, 2, "dar|den|des ~1 baja"},
	{"es", phaseExclude, 2, "no ~3 {CRAWLV}"},
	{"es", phaseExclude, 2, "no ~1 quer*|dese* ~4 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 1, "opon* ~3 {CRAWLV}"},
	{"es", phaseAgain, 2, "volver|vuelvan|vuelva|volváis ~2 {CRAWLV}|incluir|indexar"},
	{"es", phaseAgain, 2, "nuevo|nuevamente ~3 rastrear|indexar|incluir|rastreen|indexen|incluyan|visitar|rastreada|indexada|indexado|rastreado|incluida|incluido"},
	{"es", phaseAgain, 2, "rastrear|indexar|incluir|rastreen|indexen|incluyan|visitar ~3 nuevo|nuevamente"},
	{"es", phaseAgain, 1, "permit*|autoriz* ~4 {BOT}|{CRAWLV}"},

	// Portuguese.
	{"pt", phaseUndo, 3, "desbloque*|reindex*|reativ*|readmit*|reinclu*|reincorpor*"},
	{"pt", phaseUndo, 3, "levant*|anul*|retir*|remov*|revert*|cancel*|desfaz* ~3 bloqueio*|exclusão|proibição|restrição"},
	{"pt", phaseExclude, 2, "exclu*"},
	{"pt", phaseExclude, 2, "remov*|remoção|retir*|elimin*|apag*|tirem|tirar|tire|tirarem ~8 {LIST}|HOST"},
	{"pt", phaseExclude, 2, "remoção|remov*|descadastr* ~3 site*|domínio*|HOST"},
	{"pt", phaseExclude, 2, "descadastr*"},
	{"pt", phaseExclude, 2, "não ~3 {CRAWLV}|autoriz*"},
	{"pt", phaseExclude, 2, "não ~1 quer*|desej* ~4 {BOT}|{CRAWLV}"},
	{"pt", phaseExclude, 2, "parem|parar|pare|deixem|deixar|deixe|cessem|cessar ~3 {CRAWLV}|{BOT}"},
	{"pt", phaseAgain, 2, "volt* ~2 {CRAWLV}|inclu*|indexar"},
	{"pt", phaseAgain, 2, "novamente|novo ~3 rastrear|indexar|incluir|rastreado|indexado|incluído|incluída|visitar"},
	{"pt", phaseAgain, 2, "rastrear|indexar|incluir|visitar ~3 novamente|novo"},
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
	{"nl", phaseExclude, 1, "blokk* ~3 {BOT}"},
	{"nl", phaseAgain, 2, "weer|opnieuw ~3 {CRAWLV}|opnem*|opgenomen|toelat*"},
	{"nl", phaseAgain, 1, "toestaan|toelaten ~4 {BOT}|{CRAWLV}"},

	// German.
	{"de", phaseUndo, 3, "entsperr*|reaktivier*|wiederaufnahm*|wiederaufnehm*|freischalt*"},
	{"de", phaseUndo, 3, "sperre|sperrung|ausschluss|blockierung|blockade ~4 wieder ~1 auf"},
	{"de", phaseUndo, 3, "sperre|sperrung|ausschluss|blockierung|blockade ~4 aufheben|aufzuheben|aufgehoben|rückgängig|zurücknehmen|zurückzunehmen"},
	{"de", phaseUndo, 3, "aufheb*|aufhebung ~3 sperre|sperrung|ausschluss|blockierung|blockade"},
	{"de", phaseUndo, 3, "nehmen|nehmt ~6 wieder ~5 auf"},
	{"de", phaseExclude, 2, "ausschließ*|ausschluss|ausgeschlossen|ausnehm*|austrag*"},
	{"de", phaseExclude, 2, "schließen|schließt|tragen ~9 aus"},
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
	{"hu", phaseExclude, 2, "ne ~3 {CRAWLV}|jöjjenek|pörget*"},
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
	{"cs", phaseExclude, 2, "nesouhlas*|nesúhlas* ~5 {CRAWLV}|{BOT}"},
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
	{"pl", phaseExclude, 2, "przestańcie|przestać|zaprzestać|zaprzestanie|zatrzymajcie|wstrzymajcie|wstrzymać ~4 {CRAWLV}|{BOT}"},
	{"pl", phaseExclude, 1, "zablok* ~3 {BOT}"},
	{"pl", phaseAgain, 2, "znów|znowu|ponownie ~4 {CRAWLV}|włącz*|uwzględni*"},
}
