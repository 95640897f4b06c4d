package classify

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
//	phaseAgain: weaker re-inclusion phrases ("crawl us again");
//	phaseGoOn: crawling that may go on ("fine to crawl"), weight 1.
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
	phaseGoOn // weak: crawling that may go on ("fine to crawl"); after phaseAgain, so it never takes its words
	// Signals: matched after the requests, weight 0; they do not ask for
	// anything but say how to read what was asked (see signals.go).
	phaseDoubt     // "whether we should block you": a question, not a request
	phaseUndecided // "we are trying to decide": unclear wherever it stands
	phaseAsk       // "should we block you?": doubt in a sentence ending with "?"
	phaseScope     // "the /members/ section": part of a site
	phaseObject    // "my e-mail address": something other than a site
	phaseAgree     // "yes please", "ok, do it": agrees to what we proposed
	phasePolite    // "please", "bitte": what follows is a request
	phaseNegated   // a request hit negated by the word before it (set, not matched)
)

// keywordMacros are shared word lists.
var keywordMacros = map[string]string{
	// What a bot does to a site, in all the languages.
	"CRAWLV": "crawl*|index*|indeks*|indicizz*|scan*|scrap*|spider*|rastre*|explor*|procház*|prechádz*|" +
		"prohledáv*|prehľadáv*|feltérképez*|besuch*|besøg*|besök*|bezoek*|visit*|odwiedz*|látogat*|" +
		"navštěv*|navštev*|acced*|access*|acess*|aced*|zugreif*|zugriff*|abgras*|durchsuch*|skann*|" +
		"indexier*|indexel*|indexov*|indeksow*|aspir*|harvest*|robotol*|stahov*|sťahov*|stáhn*|skanow*|skanuj*|" +
		"skenov*|skenuj*|ausles*|insaml*|látogas*",
	// The bot itself.
	"BOT": "robot*|robo|robos|robô|robôs|bot|bots|bota|boty|botem|botów|botu|boten|botten|botok|botot|botjuk|" +
		"botowi|lohisoftbot*|crawler*|spider*|lohisoft",
	// A site, in all the languages (nouns a removal verb takes).
	"SITE": "HOST|site|sites|website*|webside*|hjemmeside*|side|siden|sider|domain*|domæne*|domän*|domein*|" +
		"domaine*|dominio*|domínio*|doména|domény|doménu|doménou|domen*|seite|seiten|webseite*|homepage*|" +
		"sito|siti|sitio*|sítio*|página*|webbplats*|webbsida*|webbsidor*|hemsida*|oldal*|honlap*|weboldal*|" +
		"stránk*|stránok|web|webu|weby|webov*|stron*|witryn*|serwis*|webshop*|shop|blog|portal*",
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
	{"en", phaseThanks, 0, "reply|respond|answer|text ~1 opt|stop|unsubscrib*|remove"},
	{"en", phaseThanks, 0, "otherwise|else|or ~2 we|i ~2 will|ll|shall|must|have|would ~2 block*|ban*|firewall*"},
	{"de", phaseThanks, 0, "sonst|andernfalls|ansonsten ~4 sperr*|blockier*"},
	{"fr", phaseThanks, 0, "sinon|autrement ~4 bloqu*"},
	{"it", phaseThanks, 0, "altrimenti ~4 blocc*"},
	{"es", phaseThanks, 0, "contrario|sino|caso ~4 bloque*"},
	{"pt", phaseThanks, 0, "contrário|senão|caso ~4 bloque*"},
	{"nl", phaseThanks, 0, "anders|zoniet ~4 blokk*"},
	{"da", phaseThanks, 0, "ellers ~4 blok*"},
	{"sv", phaseThanks, 0, "annars ~4 block*"},
	{"cs", phaseThanks, 0, "jinak|inak|opačném|opačnom ~4 zablok*|blok*"},
	{"pl", phaseThanks, 0, "inaczej|przeciwnym ~4 zablok*|blok*"},
	{"hu", phaseThanks, 0, "különben|ellenkező* ~4 letilt*|blokkol*|tilt*"},
	// Not wanting to be removed, or not wanting the crawling to stop, asks
	// for nothing either ("we don't want to be removed, just slow down").
	// Only a removal or stop word right after the negated wish counts, so
	// "we don't want your bot on our site" stays an exclusion.
	{"en", phaseThanks, 0, "not|don|dont|never ~1 want*|wish*|need*|like|mean|ask*|asking|request* ~3 be|being|get|getting ~0 remov*|exclud*|delet*|block*|taken|drop*|ban*|delist*|opted"},
	{"en", phaseThanks, 0, "no ~0 want*|wish*|need*|desire ~3 be|being|get|getting ~0 remov*|exclud*|delet*|block*|taken|drop*|ban*|delist*|opted"},
	{"en", phaseThanks, 0, "not|don|dont|never|no ~1 want*|wish*|need*|like|mean|ask*|asking|request* ~2 to ~0 remov*|exclud*|delet*|block*|stop*|drop*|ban*|delist*|opt"},
	{"en", phaseThanks, 0, "not|don|dont|never|no ~1 want*|wish*|need*|ask*|asking|request*|looking ~2 removal|exclusion|deletion|delisting"},
	// A stop or removal verb under a negation asks to go on ("please don't
	// stop crawling us, just slow down"): it is no exclusion.
	{"en", phaseThanks, 0, "don|dont|never ~1 stop*|block*|ban*|remov*|exclud*|delist*|cease|quit|halt ~2 crawl*|index*|visit*|scan*|spider*|us|it|our|the"},
	{"de", phaseThanks, 0, "nicht|keinesfalls ~2 aufhör*|einstell*|stopp*|sperr*|blockier*|entfern*"},
	{"de", phaseThanks, 0, "hör*|hoer* ~3 nicht|keinesfalls ~0 auf"},
	{"it", phaseThanks, 0, "non ~1 smett*|fermat*|interromp*|blocc*|rimuov* ~3 scansion*|indicizz*|visit*|crawl*|sito|noi|ci"},
	{"es", phaseThanks, 0, "no ~1 dej*|par*|deteng*|bloque*|elimin* ~3 rastre*|index*|visit*|crawl*|sitio|nos"},
	{"nl", phaseThanks, 0, "niet ~1 stopp*|blokk*|verwijder* ~0 met"},
	{"fr", phaseThanks, 0, "ne|n ~0 souhait*|voul*|veux|veut|désir*|demand* ~0 pas|aucunement|nullement ~0 être ~0 retiré*|supprimé*|exclu*|désindexé*|bloqué*"},
	{"fr", phaseThanks, 0, "ne|n ~0 souhait*|voul*|veux|veut|désir* ~0 pas|aucunement|nullement ~0 que|qu ~2 retir*|supprim*|exclu*|désindex*|bloqu*|arrêt*|cess*"},
	{"fr", phaseThanks, 0, "ne|n ~0 souhait*|voul*|veux|veut|désir*|demand* ~0 pas|aucunement|nullement ~1 la|le|l|d|de ~0 suppression|retrait|exclusion|désindexation|blocage|arrêt"},
	{"it", phaseThanks, 0, "non ~1 vogli*|desider*|chied* ~0 essere|venire ~0 rimoss*|esclus*|cancellat*|tolt*|eliminat*|bloccat*"},
	{"it", phaseThanks, 0, "non ~1 vogli*|desider* ~1 che ~2 smett*|interromp*|ferm*|rimuov*|esclud*|cancell*|blocc*|togli*"},
	{"it", phaseThanks, 0, "non ~1 chied*|vogli*|desider* ~1 la|il|l ~0 rimozione|esclusione|cancellazione|blocco"},
	{"es", phaseThanks, 0, "no ~1 quer*|quier*|dese*|pretend* ~1 ser|sean ~0 excluid*|eliminad*|retirad*|borrad*|bloquead*|sacad*|quitad*"},
	{"es", phaseThanks, 0, "no ~1 quer*|quier*|dese*|pretend* ~0 que ~1 dejen|dejéis|deje|paren|pare|excluy*|elimin*|borr*|quit*|retir*|bloque*|saqu*"},
	{"es", phaseThanks, 0, "no ~1 quer*|quier*|dese*|pid*|solicit* ~1 la|el ~0 exclusión|eliminación|baja|retirada|bloqueo"},
	{"pt", phaseThanks, 0, "não ~1 quer*|desej* ~1 ser ~0 removid*|excluíd*|retirad*|bloquead*|apagad*"},
	{"pt", phaseThanks, 0, "não ~1 quer*|desej* ~0 que ~1 parem|deixem|remov*|exclu*|retir*|bloque*|apag*"},
	{"pt", phaseThanks, 0, "não ~1 quer*|desej*|ped*|solicit* ~1 a|o ~0 remoção|exclusão|retirada|bloqueio"},
	{"de", phaseThanks, 0, "möcht*|woll*|will|wünsch*|bitten ~1 nicht|keinesfalls|keineswegs ~3 entfernt|ausgeschlossen|gelöscht|gesperrt|blockiert|ausgetragen ~0 werden"},
	{"de", phaseThanks, 0, "möcht*|woll*|will|wünsch* ~1 nicht|keinesfalls|keineswegs ~0 dass ~3 aufhör*|aufhört|entfern*|ausschließ*|sperr*|einstell*"},
	{"de", phaseThanks, 0, "möcht*|woll*|will|wünsch* ~1 nicht|keinesfalls|keineswegs ~0 dass ~5 entfernt|gelöscht|ausgeschlossen|gesperrt ~0 wird|werden"},
	{"nl", phaseThanks, 0, "willen|wil|wensen ~1 niet ~3 verwijderd|uitgesloten|geblokkeerd ~0 worden"},
	{"nl", phaseThanks, 0, "willen|wil|wensen ~1 niet ~0 dat ~3 stopt|stoppen|verwijdert|verwijderen|blokkeert|uitsluit"},
	{"da", phaseThanks, 0, "ønsk*|vil ~1 ikke ~3 at ~1 blive|i ~0 fjernet|udelukket|blokeret|slettet|stopper|fjerner"},
	{"sv", phaseThanks, 0, "vill|önskar ~1 inte|ej ~1 bli|tas ~0 borttagna|borttagen|bort|uteslutna|utesluten|blockerade|blockerad"},
	{"sv", phaseThanks, 0, "vill|önskar ~1 inte|ej ~0 att ~1 ni ~0 slutar|stoppar|tar|blockerar|utesluter"},
	{"pl", phaseThanks, 0, "nie ~1 chcemy|chcę|chce|życzymy ~1 być ~0 usunię*|wyklucz*|zablokowan*|wyłączon*"},
	{"pl", phaseThanks, 0, "nie ~1 chcemy|chcę|chce ~1 żeby*|aby*|by|byście ~1 przesta*|usun*|usuwa*|wyklucz*|zablok*|wyłącz*"},
	{"cs", phaseThanks, 0, "nechceme|nechci|nechcem|nepřejeme|neprajeme ~1 být|byť ~0 vyřaz*|vyraz*|vyrad*|odstran*|odstrán*|zablok*|smaz*"},
	{"cs", phaseThanks, 0, "nechceme|nechci|nechcem|nepřejeme|neprajeme ~0 aby* ~2 přesta*|presta*|vyřad*|vyrad*|odstran*|odstrán*|zablok*"},
	{"cs", phaseThanks, 0, "nežádáme|nežiadame ~1 o ~0 vyřaz*|vyrad*|odstran*|odstrán*|zablok*"},
	{"hu", phaseThanks, 0, "nem ~1 szeretn*|akar*|kér* ~2 töröl*|törlés*|eltávolít*|kizár*|letilt*|tilt*|abbahagy*"},
	// Nor does a negated objection ("we do not object to indexing") or a
	// request about speed ("please don't crawl faster than 1 page/s").
	{"en", phaseThanks, 0, "not|don|dont|never ~1 mind|object*|oppose*|opposed|hesitate"},
	{"en", phaseThanks, 0, "not|don|dont ~2 {CRAWLV} ~1 faster|more|so|too ~0 than|often|frequently|fast|much|quickly"},
	{"de", phaseThanks, 0, "nicht ~1 so|zu ~0 oft|häufig|schnell|viel"},
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
	{"en", phaseUndo, 3, "opt|opting|opted ~1 back ~0 in|into"},
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
	{"en", phaseExclude, 2, "block|ban|blocking ~3 {BOT}"},
	{"en", phaseExclude, 1, "blocks|blocked|banned ~3 {BOT}"},
	{"en", phaseExclude, 2, "{CRAWLV} ~4 cease|ceases|stop|stops|halt|halts|terminate|terminates|discontinue|discontinued"},
	{"en", phaseExclude, 2, "put ~1 an ~0 end ~3 {CRAWLV}|{BOT}"},
	{"en", phaseExclude, 2, "we|i ~1 forbid|prohibit ~4 {CRAWLV}|{BOT}"},
	{"en", phaseExclude, 2, "exempt* ~3 {SITE}|us|me|it"},
	{"en", phaseExclude, 2, "leave|left ~3 {SITE}|us|me|it|them ~4 out"},
	{"en", phaseExclude, 2, "mustn ~2 {CRAWLV}|{BOT}"},
	{"en", phaseExclude, 2, "prefer* ~3 not|didn|wouldn ~2 {CRAWLV}"},
	{"en", phaseExclude, 2, "not|don|dont|never ~2 include|included|store|stored|archive|archived|cache|cached"},
	{"en", phaseExclude, 1, "block*|ban ~3 you|your|lohisoft*"},
	{"en", phaseExclude, 1, "leave ~3 alone"},
	{"en", phaseExclude, 2, "keep|get ~2 {BOT}|yourselves|it|them ~2 away|out|off"},
	{"en", phaseExclude, 2, "not|never ~1 welcome"},
	{"en", phaseExclude, 2, "{BOT}|you ~2 not|never ~1 allowed|permitted|authori*|authoriz*"},
	{"en", phaseExclude, 2, "no ~0 permission|consent ~4 {CRAWLV}|{BOT}"},
	{"en", phaseExclude, 2, "refuse*|deny|denies ~4 {CRAWLV}|{BOT}|permission|consent"},
	{"en", phaseExclude, 2, "no ~0 more ~2 {CRAWLV}"},
	{"en", phaseExclude, 2, "de ~0 index*|list*"},
	{"en", phaseExclude, 2, "deindex*|delist*|blacklist*|blocklist*|denylist*"},
	{"en", phaseExclude, 2, "stay ~1 away|off|out ~1 from|of"},
	{"en", phaseExclude, 2, "refrain ~2 {CRAWLV}|{BOT}"},
	{"en", phaseExclude, 2, "opt ~3 HOST|site|sites|website*|domain*|us|me|it|them ~1 out"},
	{"en", phaseExclude, 1, "disallow*"},
	{"en", phaseAgain, 2, "crawl|index|include|list|visit|scan|add|crawled|indexed|included|listed|visited|scanned|back ~4 again"},
	{"en", phaseAgain, 2, "start|resume|restart|begin ~3 crawl*|index*|visit*|scan*|includ*"},
	{"en", phaseAgain, 2, "back ~1 in|into|on ~3 {LIST}"},
	{"en", phaseAgain, 1, "allow|permit|welcome ~4 {BOT}|crawl*|index*"},
	{"en", phaseAgain, 1, "chang* ~2 mind*"},
	{"en", phaseAgain, 2, "want*|like|wish ~3 be|get ~0 included|indexed|crawled|listed|visible|found"},
	{"en", phaseAgain, 2, "revers*|undo|revert* ~1 that|this|it"},
	{"en", phaseAgain, 2, "whitelist*|allowlist* ~3 again|back"},
	{"en", phaseAgain, 2, "opt ~0 in ~3 again"},
	{"en", phaseAgain, 2, "welcome ~1 back|again"},
	{"en", phaseAgain, 2, "remov*|delet*|lift* ~2 block|blocking|ban|disallow"},

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
	{"it", phaseExclude, 2, "non ~1 autorizz*|consent*|permett* ~5 {CRAWLV}|scansion*|{BOT}"},
	{"it", phaseExclude, 2, "non ~2 gradit*|benvenut*"},
	{"it", phaseExclude, 2, "rifiut* ~4 {CRAWLV}|scansion*|{BOT}"},
	{"it", phaseExclude, 2, "bloccate|blocchiate|bloccare ~3 {BOT}"},
	{"it", phaseExclude, 2, "non ~2 passare|passate|entrare|entrate|venire|venite ~2 più"},
	{"it", phaseExclude, 2, "non ~1 più ~2 passare|passate|entrare|entrate|venire|venite"},
	{"it", phaseExclude, 2, "porre|mettere|ponete|mettete ~0 fine ~3 {CRAWLV}|scansion*|{BOT}"},
	{"it", phaseExclude, 2, "astener*|astenervi|astenetevi|astenersi ~3 {CRAWLV}|scansion*"},
	{"it", phaseExclude, 2, "diffid*|vietiamo|vieto|vietato|vietata ~5 {CRAWLV}|scansion*|{BOT}|accesso"},
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
	{"fr", phaseExclude, 2, "ne|n ~1 {CRAWLV}|parcour* ~0 plus|pas|jamais"},
	{"fr", phaseExclude, 2, "arrêt*|cess*|stopp*|interromp* ~3 {CRAWLV}|{BOT}|collect*|parcour*"},
	{"fr", phaseExclude, 1, "oppos* ~4 {CRAWLV}|collect*"},
	{"fr", phaseExclude, 2, "m|nous ~0 oppose|opposons ~4 {CRAWLV}|collect*|{BOT}"},
	{"fr", phaseExclude, 2, "refus* ~4 {CRAWLV}|{BOT}|collect*"},
	{"fr", phaseExclude, 2, "n|ne ~1 autoris*|permet* ~1 pas|plus|aucunement ~4 {CRAWLV}|{BOT}"},
	{"fr", phaseExclude, 2, "pas|plus|jamais ~1 bienvenu*"},
	{"fr", phaseExclude, 2, "bloquez|bloquer ~3 {BOT}"},
	{"fr", phaseExclude, 2, "mettre|mettez|mettiez|mette ~0 fin ~3 {CRAWLV}|{BOT}|collect*|parcour*"},
	{"fr", phaseExclude, 2, "absten*|abstien* ~3 {CRAWLV}|parcour*|collect*"},
	{"fr", phaseExclude, 2, "interdi* ~4 {CRAWLV}|{BOT}|accès|acces|parcour*"},
	{"fr", phaseAgain, 2, "nouveau|nouveaux|nouvelle ~3 indexer|indexés|indexé|indexée|indexées|explorer|exploré|crawler|crawlé|référencer|référencés|référencé|inclure|inclus|visiter|visité|parcourir"},
	{"fr", phaseAgain, 2, "indexer|indexés|indexé|explorer|crawler|référencer|inclure|inclus|visiter|parcourir ~3 nouveau"},
	{"fr", phaseAgain, 2, "repren*|reprise ~3 {CRAWLV}"},
	{"fr", phaseAgain, 1, "autoris* ~4 {BOT}|{CRAWLV}"},

	// Spanish.
	{"es", phaseUndo, 3, "desbloque*|reindex*|reactiv*|readmit*|reinclu*|reincorpor*"},
	{"es", phaseUndo, 3, "levant*|anul*|quit*|retir*|elimin*|revert*|deshac* ~3 bloqueo*|exclusión|veto|prohibición|restricción"},
	{"es", phaseExclude, 2, "exclu*"},
	{"es", phaseExclude, 2, "dejen|dejar|dejad|deje|paren|parar|parad|pare|detengan|detener|cesen|cesar ~3 {CRAWLV}|{BOT}"},
	// "dejar de" in the infinitive, imperative and subjunctive ("que su
	// robot dejara de visitar"); the indicative "dejan de" only reports.
	{"es", phaseExclude, 2, "dejar|dejen|deje|dejad|dejéis|dejara|dejaran|dejase|dejasen|cesar|cesen|cese|cesara|cesaran ~0 de ~1 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 2, "elimin*|borr*|quit*|retir*|sacar|saquen|saque|saquéis ~8 {LIST}|HOST|buscador*|rastreador*"},
	{"es", phaseExclude, 2, "dar|den|des ~1 baja ~4 HOST|{LIST}|{BOT}|web|sitio|dominio|página"},
	{"es", phaseExclude, 2, "no ~3 {CRAWLV}"},
	{"es", phaseExclude, 2, "no ~1 quier*|quer*|dese* ~4 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 1, "opon* ~3 {CRAWLV}"},
	{"es", phaseExclude, 2, "no ~1 autoriz*|permit*|consient*|consentimos ~5 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 2, "no ~2 bienvenid*"},
	{"es", phaseExclude, 2, "rechaz*|niego|negamos ~4 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 2, "bloqueen|bloquee|bloquear ~3 {BOT}"},
	{"es", phaseExclude, 2, "poner|pongan|ponga ~0 fin|término ~3 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 2, "absten*|abstengan|abstenga ~3 {CRAWLV}|{BOT}"},
	{"es", phaseExclude, 2, "prohibimos|prohíbo|prohibo|prohíban|prohibido|prohibida ~4 {CRAWLV}|{BOT}|acceso"},
	{"es", phaseAgain, 2, "volver|vuelvan|vuelva|volváis ~2 {CRAWLV}|incluir|indexar"},
	{"es", phaseAgain, 2, "nuevo|nuevamente|vez ~3 rastrear|indexar|incluir|rastreen|indexen|incluyan|visitar|rastreada|indexada|indexado|rastreado|incluida|incluido"},
	{"es", phaseAgain, 2, "rastrear|indexar|incluir|rastreen|indexen|incluyan|visitar|rastreado|rastreada|indexado|indexada|incluido|incluida ~3 nuevo|nuevamente|vez"},
	{"es", phaseAgain, 1, "permit*|autoriz* ~4 {BOT}|{CRAWLV}"},
	{"es", phaseAgain, 2, "liber* ~5 acceso|{BOT}|{CRAWLV}|nuevo|nuevamente"},

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
	{"pt", phaseExclude, 2, "deixar|deixem|deixe|deixasse|deixassem|deixarem|cessar|cessem|cesse|cessasse|cessassem ~0 de ~1 {CRAWLV}|{BOT}"},
	{"pt", phaseExclude, 2, "não ~1 autoriz*|permit*|consent* ~5 {CRAWLV}|{BOT}|acesso"},
	{"pt", phaseExclude, 2, "recus* ~4 {CRAWLV}|{BOT}"},
	{"pt", phaseExclude, 2, "bloqueiem|bloqueie|bloquear ~3 {BOT}"},
	{"pt", phaseExclude, 2, "pôr|por|ponham|ponha ~0 fim ~3 {CRAWLV}|{BOT}"},
	{"pt", phaseExclude, 2, "absten*|abstenham ~3 {CRAWLV}|{BOT}"},
	{"pt", phaseExclude, 2, "proibimos|proíbo|proibo|proíbam|proibido|proibida ~4 {CRAWLV}|{BOT}|acesso"},
	{"pt", phaseAgain, 2, "volt* ~2 {CRAWLV}|inclu*|indexar"},
	{"pt", phaseAgain, 2, "novamente|novo|vez ~3 rastrear|indexar|incluir|rastreado|rastreada|indexado|indexada|incluído|incluída|visitar"},
	{"pt", phaseAgain, 2, "rastrear|indexar|incluir|visitar|rastreado|rastreada|indexado|indexada|incluído|incluída ~3 novamente|novo|vez"},
	{"pt", phaseAgain, 1, "permit*|autoriz* ~4 {BOT}|{CRAWLV}"},
	{"pt", phaseAgain, 2, "liber* ~5 acesso|{BOT}|{CRAWLV}|novo|novamente"},

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
	{"nl", phaseExclude, 2, "blokkeer|blokkeren ~3 {BOT}"},
	{"nl", phaseExclude, 2, "verbied*|verboden ~4 {CRAWLV}|{BOT}|toegang"},
	{"nl", phaseExclude, 2, "liever ~0 niet ~5 {CRAWLV}|{BOT}|gecrawld|geïndexeerd"},
	{"nl", phaseExclude, 2, "houd|hou|houdt ~3 {BOT} ~3 weg"},
	{"nl", phaseExclude, 2, "niet|nooit ~1 welkom"},
	{"nl", phaseExclude, 2, "geen ~0 toestemming|permissie ~5 {CRAWLV}|{BOT}"},
	{"nl", phaseAgain, 2, "weer|opnieuw ~3 {CRAWLV}|opnem*|opgenomen|toelat*|toevoeg*|toegevoegd"},
	{"nl", phaseAgain, 1, "toestaan|toelaten ~4 {BOT}|{CRAWLV}"},
	{"nl", phaseAgain, 2, "weer ~1 welkom"},
	{"nl", phaseAgain, 2, "welkom ~1 terug"},

	// German.
	{"de", phaseUndo, 3, "entsperr*|reaktivier*|wiederaufnahm*|wiederaufnehm*|freischalt*"},
	{"de", phaseUndo, 3, "sperre|sperrung|ausschluss|blockierung|blockade ~4 wieder ~1 auf"},
	{"de", phaseUndo, 3, "sperre|sperrung|ausschluss|blockierung|blockade ~4 aufheben|aufzuheben|aufgehoben|rückgängig|zurücknehmen|zurückzunehmen"},
	{"de", phaseUndo, 3, "aufheb*|aufhebung ~3 sperre|sperrung|ausschluss|blockierung|blockade"},
	{"de", phaseUndo, 3, "heben|hebt ~3 sperre|sperrung|ausschluss|blockierung|blockade ~4 auf"},
	{"de", phaseUndo, 3, "nehmen|nehmt ~6 wieder ~5 auf"},
	{"de", phaseUndo, 3, "geben|gebt ~6 wieder ~3 frei"},
	{"de", phaseUndo, 3, "freigeb*|freizugeben"},
	{"de", phaseExclude, 2, "ausschließ*|ausschluss|ausgeschlossen|ausnehm*|austrag*"},
	{"de", phaseExclude, 2, "schließen|schließt|tragen ~9 aus"},
	{"de", phaseExclude, 2, "aus ~3 {LIST} ~3 nehmen|entfernen|löschen|streichen|raus|herausnehmen|austragen"},
	{"de", phaseExclude, 2, "HOST|seite|website|webseite|domain|homepage ~3 sperren|blockieren|ausschließen|entfernen|löschen|austragen"},
	{"de", phaseExclude, 2, "widersprech*|widerspreche|widerspruch|untersag*|verbiete*|verbieten ~6 {CRAWLV}|{BOT}|crawling|erfassung|speicherung|verarbeitung|nutzung|verwendung|sammlung"},
	{"de", phaseExclude, 2, "entfern*|lösch*|herausnehm*|nehm*|streich*|raus ~8 {LIST}|HOST|verzeichnis*"},
	{"de", phaseExclude, 2, "nicht|kein|keine|niemals ~4 {CRAWLV}|gecrawlt|indexiert|erfass*"},
	{"de", phaseExclude, 2, "hör*|stopp*|stop|beend*|unterlass*|einstellen|einzustellen ~6 {CRAWLV}|{BOT}|abgras*"},
	{"de", phaseExclude, 1, "sperr*|blockier* ~3 {BOT}"},
	{"de", phaseExclude, 1, "ruhe ~1 lass*"},
	{"de", phaseExclude, 2, "{CRAWLV} ~0 sie ~4 nicht|keinesfalls"},
	{"de", phaseExclude, 2, "{CRAWLV} ~3 nicht ~0 mehr|länger|weiter"},
	{"de", phaseExclude, 2, "{CRAWLV}|{BOT}|crawling|indexierung ~6 einstellen|einzustellen|beenden|unterlassen|stoppen"},
	{"de", phaseExclude, 2, "verbitt* ~6 {CRAWLV}|{BOT}"},
	{"de", phaseExclude, 2, "verzicht* ~4 {CRAWLV}|crawling|indexierung"},
	{"de", phaseExclude, 2, "lass*|lasst ~1 {SITE} ~6 aus"},
	{"de", phaseExclude, 2, "halt*|haltet ~4 {BOT} ~4 fern"},
	{"de", phaseExclude, 2, "nichts ~1 zu ~0 suchen"},
	{"de", phaseExclude, 2, "nicht ~1 willkommen|erwünscht|erwuenscht"},
	{"de", phaseExclude, 2, "keine|keinerlei ~0 erlaubnis|genehmigung|zustimmung|einwilligung ~5 {CRAWLV}|{BOT}"},
	{"de", phaseExclude, 2, "verweiger* ~4 {CRAWLV}|{BOT}|zustimmung|einwilligung"},
	{"de", phaseExclude, 1, "lass* ~5 ruhe"},
	{"de", phaseAgain, 2, "wieder ~3 crawlen|indexieren|aufnehmen|aufgenommen|besuchen|gefunden|finden|erfassen|zulassen|listen|gelistet|durchsuchen|gecrawlt|indexiert"},
	{"de", phaseAgain, 2, "gerne ~4 crawlen|indexieren|besuchen|aufnehmen"},
	{"de", phaseAgain, 2, "wieder ~1 willkommen"},

	// Danish.
	{"da", phaseUndo, 3, "ophæv*|fjern* ~3 blokering*|spærring*|udelukkelse*"},
	{"da", phaseUndo, 3, "blokering*|spærring*|udelukkelse* ~3 ophæv*|fjern*"},
	{"da", phaseExclude, 2, "fjern*|slet*|tag ~8 {LIST}|HOST"},
	{"da", phaseExclude, 2, "stop*|ophør* ~4 {CRAWLV}|{BOT}"},
	{"da", phaseExclude, 2, "ikke ~4 {CRAWLV}|crawlet|database*|indeks*"},
	{"da", phaseExclude, 2, "udeluk*|udelad*|fravælg*"},
	{"da", phaseExclude, 2, "fjern*|slet*|bloker* ~3 {SITE}|os"},
	{"da", phaseExclude, 2, "undlad* ~4 {CRAWLV}|{BOT}"},
	{"da", phaseExclude, 2, "bloker ~3 {BOT}"},
	{"da", phaseExclude, 2, "frabed* ~6 {CRAWLV}|{BOT}"},
	{"da", phaseExclude, 2, "forbyd*|forbud ~4 {CRAWLV}|{BOT}|adgang"},
	{"da", phaseExclude, 2, "hold* ~3 {BOT} ~1 væk"},
	{"da", phaseExclude, 2, "ikke ~1 velkommen*"},
	{"da", phaseExclude, 2, "ikke ~2 tilladelse ~4 {CRAWLV}"},
	{"da", phaseAgain, 2, "crawl|crawle|indeksere|indekser|besøge|besøg|med ~4 igen"},
	{"da", phaseAgain, 2, "gerne ~3 crawl*|indeks*|besøg*"},
	{"da", phaseAgain, 2, "velkom* ~1 tilbage|igen"},
	{"da", phaseAgain, 2, "sæt*|tilføj* ~6 igen|tilbage"},

	// Swedish.
	{"sv", phaseUndo, 3, "häv|häva|hävs|upphäv* ~3 blockering*|spärr*|uteslutning*"},
	{"sv", phaseUndo, 3, "blockering*|spärr*|uteslutning* ~3 hävs|upphävs|upphäv*"},
	{"sv", phaseUndo, 3, "avblock*"},
	{"sv", phaseUndo, 3, "tagit|tog|ta|tar ~0 bort ~2 blockering*|spärr*"},
	{"sv", phaseExclude, 2, "ta|tas|tar ~0 bort ~8 {LIST}|HOST|oss"},
	{"sv", phaseExclude, 2, "ta|tas|tar ~3 {SITE}|oss ~1 bort"},
	{"sv", phaseExclude, 2, "undanb* ~6 {CRAWLV}|{BOT}|HOST"},
	{"sv", phaseExclude, 2, "radera|stryk ~6 {LIST}|HOST"},
	{"sv", phaseExclude, 2, "sluta|stoppa|stopp|upphör ~4 {CRAWLV}|{BOT}|hämta*"},
	{"sv", phaseExclude, 2, "inte ~4 {CRAWLV}|crawlas|indexeras"},
	{"sv", phaseExclude, 2, "undanta*|exkluder*|utesl*"},
	{"sv", phaseExclude, 1, "blocker* ~3 {BOT}"},
	{"sv", phaseExclude, 2, "blockera ~3 {BOT}"},
	{"sv", phaseExclude, 2, "motsätt* ~6 {CRAWLV}|{BOT}|hämta*"},
	{"sv", phaseExclude, 2, "förbjud* ~4 {CRAWLV}|{BOT}|åtkomst"},
	{"sv", phaseExclude, 2, "slippa|slipper ~5 {CRAWLV}|{BOT}"},
	{"sv", phaseExclude, 2, "håll|håller ~3 {BOT} ~1 borta"},
	{"sv", phaseExclude, 2, "inte ~1 välkom*"},
	{"sv", phaseAgain, 2, "crawla|indexera|besöka|besök|skanna|ta|med ~4 igen"},
	{"sv", phaseAgain, 2, "gärna ~3 crawla|indexera|besöka"},
	{"sv", phaseAgain, 2, "välkom* ~1 tillbaka|igen|åter"},

	// Hungarian.
	{"hu", phaseUndo, 3, "felold*|visszavon*|megszüntet* ~3 tiltás*|kizárás*|blokkol*|letiltás*"},
	{"hu", phaseUndo, 3, "tiltás*|kizárás*|blokkolás*|letiltás* ~3 felold*|visszavon*|megszüntet*"},
	{"hu", phaseUndo, 3, "újraindex*|újraenged*"},
	{"hu", phaseUndo, 3, "old* ~0 fel ~3 tiltás*|kizárás*|blokkol*|letiltás*"},
	{"hu", phaseUndo, 3, "vegy* ~0 vissza"},
	{"hu", phaseUndo, 3, "visszave*"},
	{"hu", phaseExclude, 2, "töröl*|törölj*|törlés*|eltávolít*|kivesz*|kivenni|vegy*|távolíts* ~8 {LIST}|HOST|oldal*|honlap*|weboldal*"},
	{"hu", phaseExclude, 2, "kizár*"},
	{"hu", phaseExclude, 2, "hagy* ~0 abba ~5 {CRAWLV}|{BOT}|HOST"},
	{"hu", phaseExclude, 2, "abbahagy* ~5 {CRAWLV}|{BOT}|HOST"},
	{"hu", phaseExclude, 2, "zár* ~1 ki"},
	{"hu", phaseExclude, 2, "vegy* ~1 ki|le ~4 {LIST}|HOST|oldal*"},
	{"hu", phaseExclude, 2, "nem ~1 járul* ~1 hozzá"},
	{"hu", phaseExclude, 2, "mellőz* ~4 {CRAWLV}|{BOT}|HOST"},
	{"hu", phaseExclude, 2, "megtilt* ~4 {CRAWLV}|{BOT}|hozzáférés*"},
	{"hu", phaseExclude, 2, "HOST|oldal*|weboldal*|honlap* ~4 töröl*|törölj*|eltávolít*|kivesz*|kivegyék"},
	{"hu", phaseExclude, 2, "ne ~3 {CRAWLV}|jöjjenek|pörget*|járj*|jöjj*"},
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
	{"cs", phaseExclude, 2, "neprocház*|neindex*|nenavštěv*|neprechádz*|nenavštev*|nesbír*|nezbier*|nestahuj*|nesťahuj*|neskenuj*|neskenov*"},
	{"cs", phaseExclude, 2, "přesta*|presta*|zastav*|ukonč*|ukonc*|zastaven*|přeruš*|preruš* ~4 {CRAWLV}|{BOT}|chod*"},
	{"cs", phaseExclude, 2, "nesouhlas*|nesúhlas*|nepřej*|neprej*|nechceme|nechci|nechcem|neželá*|nezela* ~6 {CRAWLV}|{BOT}"},
	{"cs", phaseExclude, 1, "zakáz*|zablok* ~3 {BOT}"},
	{"cs", phaseExclude, 2, "zablokujte ~3 {BOT}"},
	{"cs", phaseExclude, 2, "zakazujeme|zakazuji|zakazuju|zakazujem ~4 {BOT}|{CRAWLV}|přístup*|prístup*"},
	{"cs", phaseExclude, 2, "není|nie ~2 vítán*|vítan*"},
	{"cs", phaseAgain, 2, "znovu|opět|opäť|znova ~4 {CRAWLV}|zařad*|zarad*"},
	{"cs", phaseAgain, 2, "zpět|späť ~3 zařad*|zarad*|index*"},
	{"cs", phaseAgain, 2, "vrať*|vrát*|vráť* ~4 zpět|späť"},
	{"cs", phaseAgain, 1, "povol* ~4 {BOT}|{CRAWLV}"},

	// Polish.
	{"pl", phaseUndo, 3, "ponown* ~3 indeks*|włącz*|dodan*|dodać|odwiedz*|skan*|uwzględni*"},
	{"pl", phaseUndo, 3, "odblok*"},
	{"pl", phaseUndo, 3, "zdję*|zdjąć|zdejm* ~3 blokad*"},
	{"pl", phaseUndo, 3, "cofn*|anul*|znieś*|zniesien*|usun* ~3 blokad*|wyłączeni*|wykluczeni*"},
	{"pl", phaseExclude, 2, "wyłącz*|wyklucz*|usun*|usuń*|usunięc*|wykreśl*|wycofa* ~8 {LIST}|HOST|domen*|stron*"},
	{"pl", phaseExclude, 2, "wyklucz*"},
	{"pl", phaseExclude, 2, "nie ~3 {CRAWLV}|zbier*"},
	{"pl", phaseExclude, 2, "niezbier*|nieindeks*"},
	{"pl", phaseExclude, 2, "nie ~1 chc*|życz*|zgadza*|wyraża* ~6 {CRAWLV}|{BOT}"},
	{"pl", phaseExclude, 2, "przestańcie|przestać|zaprzestać|zaprzestanie|zatrzymajcie|wstrzymajcie|wstrzymać ~4 {CRAWLV}|{BOT}|pobier*|ściąga*"},
	{"pl", phaseExclude, 1, "zablok* ~3 {BOT}"},
	{"pl", phaseExclude, 2, "zablokujcie|zablokuj|zablokować ~3 {BOT}"},
	{"pl", phaseExclude, 2, "nie ~1 wyrażam|wyrażamy|udzielam|udzielamy ~1 zgody"},
	{"pl", phaseExclude, 2, "nie ~2 mile ~0 widzian*"},
	{"pl", phaseExclude, 2, "zabrania* ~4 {CRAWLV}|{BOT}|dostęp*"},
	{"pl", phaseAgain, 2, "znów|znowu|ponownie ~4 {CRAWLV}|włącz*|uwzględni*"},
	{"pl", phaseAgain, 2, "przywróć*|przywróc*|przywrac* ~4 {LIST}|{CRAWLV}|HOST|stron*"},
}
