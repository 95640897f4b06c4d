package classify

// conceptRules carry two concepts into every language the mailbox sees,
// so that a message is read by what it means rather than by the phrases
// one corpus held:
//
//   - re-inclusion: crawl again, unblock, lift the ban, take us off the
//     block/black/exclusion list, whitelist us, we removed the Disallow,
//     we changed our mind. Removal words aimed at a block list ask to be
//     crawled again, so these run in phaseUndo, before the exclusions,
//     and take those words for themselves;
//   - exclusion, for the languages beyond the bot page's thirteen
//     (Finnish, Romanian, Croatian, Slovenian, Greek, Turkish, Bulgarian,
//     Ukrainian, Norwegian), and "go ahead with the removal".
//
// And what keeps a message undecided: "we will decide whether to exclude
// you or not", "before deciding".
var conceptRules = []keywordRule{
	// Block lists, in every language: taking a site off one is a
	// re-inclusion.
	{"en", phaseUndo, 3, "remov*|take|taking|delet*|drop* ~4 blocklist*|blacklist*|denylist*|banlist*|exclusions|ignorelist*"},
	{"en", phaseUndo, 3, "removed|deleted|dropped|lifted|took ~2 disallow*|block|blocking|ban|restriction*"},
	{"en", phaseUndo, 3, "whitelist*|allowlist* ~3 us|our|HOST|site|sites|website*|domain*|it"},
	{"en", phaseAgain, 2, "chang* ~2 mind*"},
	{"en", phaseAgain, 2, "crawl|index|visit|include|scan ~3 us|it|HOST|site|website ~1 again"},
	{"de", phaseUndo, 3, "sperrliste*|blacklist*|blockliste*|ausschlussliste*|negativliste* ~4 entfern*|nehmen|streichen|löschen|austragen"},
	{"de", phaseUndo, 3, "entfern*|nehm*|streich*|lösch*|austrag* ~5 sperrliste*|blacklist*|blockliste*|ausschlussliste*|negativliste*"},
	{"de", phaseUndo, 3, "sperre|sperrung|blockade|disallow* ~4 entfernt|aufgehoben|gelöscht|herausgenommen"},
	{"de", phaseAgain, 2, "anders ~1 überlegt|entschieden"},
	{"fr", phaseUndo, 3, "retir*|supprim*|enlev*|sort* ~6 noire|blacklist*|exclusions|bloqués|blocage*"},
	{"fr", phaseUndo, 3, "lev*|levé|retiré|supprimé ~3 blocage*|interdiction*|disallow*"},
	{"fr", phaseAgain, 2, "chang* ~1 d ~0 avis"},
	{"it", phaseUndo, 3, "rimuov*|togli*|levat*|cancell* ~6 nera|blacklist*|esclusi|bloccati|esclusion*|blocco|blocchi"},
	{"it", phaseUndo, 3, "tolto|rimosso|levato|eliminato ~2 blocco|divieto|disallow*"},
	{"it", phaseAgain, 2, "cambiato ~1 idea"},
	{"es", phaseUndo, 3, "quit*|sac*|elimin*|retir*|borr* ~6 negra|blacklist*|bloqueados|excluidos|exclusiones|bloqueo|bloqueos"},
	{"es", phaseUndo, 3, "quitado|eliminado|retirado|levantado ~2 bloqueo|prohibición|disallow*"},
	{"es", phaseAgain, 2, "cambiado ~1 de ~0 opinión|idea"},
	{"pt", phaseUndo, 3, "remov*|retir*|tir* ~6 negra|blacklist*|bloqueados|excluídos|exclusões|bloqueio|bloqueios"},
	{"pt", phaseUndo, 3, "removemos|retirámos|retiramos|tiramos|levantámos ~2 bloqueio|proibição|disallow*"},
	{"pt", phaseAgain, 2, "mudámos|mudamos ~1 de ~0 ideia|opinião"},
	{"nl", phaseUndo, 3, "verwijder*|haal|halen ~5 zwarte|blacklist*|blokkeerlijst*|uitsluitingslijst*|geblokkeerde"},
	{"nl", phaseUndo, 3, "blokkade|blokkering|disallow* ~3 verwijderd|weggehaald|opgeheven"},
	{"nl", phaseAgain, 2, "gedachten ~1 veranderd|bedacht"},
	{"da", phaseUndo, 3, "fjern*|tag|ta ~5 sortliste*|svarteliste*|blokeringsliste*|blokkeringsliste*|blacklist*"},
	{"da", phaseUndo, 3, "fjernet|ophævet|opphevet ~2 blokering*|blokkering*|sperring*|spærring*|disallow*"},
	{"da", phaseAgain, 2, "ombestemt|ombestemte|ombestemd|fortrudt|angret"},
	{"da", phaseAgain, 2, "crawl|crawle|indeksere|indekser|besøke|med ~4 igjen"},
	{"sv", phaseUndo, 3, "bort ~5 svartlist*|blockeringslist*|spärrlist*|blacklist*"},
	{"sv", phaseUndo, 3, "tagit|tog ~0 bort ~2 disallow*"},
	{"sv", phaseAgain, 2, "ändrat ~1 oss|mig|uppfattning"},
	{"hu", phaseUndo, 3, "töröl*|eltávolít*|vegy*|vegye* ~5 feketelist*|tiltólist*|tiltolist*|kizárási"},
	{"hu", phaseUndo, 3, "tiltás*|tiltast|blokkolás*|letiltás*|disallow* ~3 levettük|levettuk|töröltük|eltávolítottuk|megszüntettük"},
	{"hu", phaseAgain, 2, "meggondol*|meggondult*|meggondoltuk"},
	{"cs", phaseUndo, 3, "odstraň*|odstran*|vyřaď*|vyrad*|vyjm* ~5 blacklist*|černé|čierne|zakázan*|blokovan*"},
	{"cs", phaseUndo, 3, "blokován*|blokovan*|blokac*|blokác*|zákaz*|disallow* ~5 odstranil*|odstránil*|zrušil*|zrusil*"},
	{"cs", phaseUndo, 3, "odstranil*|odstránil*|zrušil*|zrusil* ~3 blokován*|blokovan*|blokac*|blokác*|zákaz*|disallow*"},
	{"cs", phaseAgain, 2, "zařaď*|zaraď*|zarad*|zařad* ~3 zpět|späť|spat|zpet|znovu|znova|opět|opäť"},
	{"cs", phaseAgain, 2, "opět|opäť|znovu|znova ~3 {LIST}"},
	{"cs", phaseAgain, 2, "rozmysleli|rozmysleli|zmenili|změnili ~2 názor"},
	{"pl", phaseUndo, 3, "usuń*|usun*|wykreśl* ~5 czarn*|blacklist*|zablokowanych|wykluczonych"},
	{"pl", phaseUndo, 3, "usunęliśmy|zdjęliśmy|usunelismy ~2 blokad*|disallow*"},
	{"pl", phaseAgain, 2, "zmieniliśmy|zmienilismy ~1 zdanie"},

	// Removing the block itself, in every language: "please remove the
	// block on example.com", "entfernen Sie die Sperre", "премахнете
	// забраната". The removal verb's object is the ban, not the site.
	{"en", phaseUndo, 3, "remov*|lift*|delet*|drop*|undo|revers*|cancel*|revok* ~1 the|this|that|our|your|its|any ~1 block|blocking|blockage|blockade|ban|banning|restriction*|exclusion|disallow*"},
	{"de", phaseUndo, 3, "entfern*|lös*|aufheb*|zurücknehm*|rückgängig ~3 sperre|sperrung|blockade|blockierung|ausschluss|verbot"},
	{"cs", phaseUndo, 3, "odstraň*|odstran*|odstráň*|zruš*|zrus* ~3 blokac*|blokác*|blokován*|blokovan*|zákaz|zákazu|zakaz|zakazu"},
	{"hu", phaseUndo, 3, "szüntess*|szuntess* ~0 meg ~4 tiltás*|tiltas*|blokkolás*|blokkolas*|letiltás*|letiltas*|kizárás*|kizaras*"},
	{"ro", phaseUndo, 3, "eliminati|eliminați|anulati|anulați|ridicati|ridicați ~3 blocarea|blocajul|blocare|interdictia|interdicția|excluderea"},
	{"el", phaseUndo, 3, "αφαιρεστε|αφαιρεσετε|αρετε|καταργηστε|ακυρωστε ~3 αποκλεισμο|αποκλεισμου|φραγη|φραγης|μπλοκαρισμα|απαγορευση"},
	{"bg", phaseUndo, 3, "премахнете|махнете|отменете|премахни|отмени ~3 забрана*|блокиране*|блокировка*|блокажа|изключването"},
	{"is", phaseUndo, 3, "fjarlægið|fjarlaegid|afléttið|aflettid|afnemið|afnemid ~3 bann|bannið|bannid|banninu|lokun*|útilokun*|utilokun*"},

	// Taking a site off a list of blocked or excluded sites, in every
	// language: "remove example.bg from your list of excluded sites".
	{"en", phaseUndo, 3, "remov*|take|taking|delet*|drop* ~6 blocked|excluded|banned|blacklisted|blocklisted"},
	{"de", phaseUndo, 3, "entfern*|streich*|lösch*|austrag*|herausnehm* ~6 gesperrt*|ausgeschlossen*|blockiert*"},
	{"fr", phaseUndo, 3, "retir*|supprim*|enlev*|sort* ~6 exclus|exclues|bloqués|bloquées|interdits"},
	{"it", phaseUndo, 3, "rimuov*|togli*|cancell*|elimin* ~6 esclusi|escluse|bloccati|bloccate|vietati"},
	{"es", phaseUndo, 3, "quit*|elimin*|saq*|borr*|retir* ~6 excluidos|excluidas|bloqueados|bloqueadas|prohibidos"},
	{"pt", phaseUndo, 3, "remov*|retir*|tir* ~6 excluídos|excluídas|bloqueados|bloqueadas"},
	{"nl", phaseUndo, 3, "verwijder*|haal|halen ~6 uitgesloten|geblokkeerde|geblokkeerd"},
	{"da", phaseUndo, 3, "fjern* ~6 blokerede|blokkerte|udelukkede|ekskluderte|spærrede|sperrede"},
	{"sv", phaseUndo, 3, "bort ~6 blockerade|uteslutna|spärrade|exkluderade"},
	{"cs", phaseUndo, 3, "odstraň*|odstran*|vyjm*|vyřaď*|vyrad* ~6 vyloučen*|vylúčen*|blokovan*|zablokovan*|zakázan*"},
	{"pl", phaseUndo, 3, "usuń*|usun*|wykreśl* ~6 zablokowan*|wykluczon*"},
	{"hu", phaseUndo, 3, "töröl*|eltávolít*|vegy* ~6 letiltott*|tiltott*|kizárt*"},
	{"fi", phaseUndo, 3, "poist* ~6 estet*|estolist*|mustalist*|mustalta"},
	{"ro", phaseUndo, 3, "scoate*|elimina*|sterge* ~6 blocat*|exclus*|interzis*"},
	{"hr", phaseUndo, 3, "uklon*|makn*|izbriš*|izbris* ~6 isključen*|iskljucen*|blokiran*|zabranjen*|crn*"},
	{"sl", phaseUndo, 3, "odstran*|izbriš*|izbris* ~6 izključen*|izkljucen*|blokiran*|prepovedan*|črn*|crn*"},
	{"el", phaseUndo, 3, "αφαιρ*|βγαλ*|διαγραψ* ~6 αποκλεισμεν*|μπλοκαρισμεν*|μαυρη"},
	{"tr", phaseUndo, 3, "engellen*|yasakli|kara ~6 cikar*|kaldir*|sil*"},
	{"bg", phaseUndo, 3, "премахн*|махн*|извад*|изтри* ~6 изключен*|блокиран*|забранен*|черн*"},
	{"uk", phaseUndo, 3, "видал*|вилуч*|прибер*|прибра*|зніміть ~6 заблокован*|виключен*|заборонен*|чорн*"},

	// Taking a site back, putting it back, resuming: "nehmen Sie uns
	// zurück in Ihren Index", "pridajte nás späť", "vratite u indeks",
	// "reluați indexarea", "przywrócić do indeksu", "поверніть".
	{"en", phaseAgain, 2, "take|put|add|bring ~3 us|it|HOST|site|website ~2 back"},
	{"en", phaseAgain, 2, "reinclude*|re-include*|reindex*|re-index*|recrawl*|reinstate*"},
	{"de", phaseAgain, 2, "nehm*|setz* ~4 zurück|wieder ~4 {LIST}|auf"},
	{"de", phaseAgain, 2, "crawlen|indexieren|besuchen ~0 sie ~4 wieder"},
	{"fr", phaseAgain, 2, "réintégr*|réinclu*|réindex*|remett* ~4 {LIST}|HOST|site|notre"},
	{"it", phaseAgain, 2, "reinserir*|reinserit*|ripristin*|reintegr*|rimett* ~4 {LIST}|HOST|sito|nostro"},
	{"es", phaseAgain, 2, "reincorpor*|reinclu*|restablec*|reindex* ~4 {LIST}|HOST|sitio|nuestro"},
	{"pt", phaseAgain, 2, "reinclu*|reintegr*|restabelec*|reindex* ~4 {LIST}|HOST|site|nosso"},
	{"nl", phaseAgain, 2, "zet|zetten|neem|nemen ~4 terug ~3 {LIST}|in|op"},
	{"da", phaseAgain, 2, "tilbage|tilbake|tillbaka ~3 {LIST}|i|på"},
	{"cs", phaseAgain, 2, "přidej*|pridaj*|pridej*|vrať*|vrat*|vráť* ~6 zpět|zpet|späť|spat"},
	{"pl", phaseAgain, 2, "przywróć*|przywroc*|przywróci* ~4 {LIST}|indeks*|HOST|stron*"},
	{"pl", phaseAgain, 2, "zmieni* ~1 zdanie"},
	{"hu", phaseAgain, 2, "vissza* ~4 {LIST}|indexbe|listára|listara"},
	{"fi", phaseAgain, 2, "palauta*|palauttak* ~4 {LIST}|hakuun|indeksiin|listalle"},
	{"ro", phaseAgain, 2, "relua*|reluati|reluați ~3 {CRAWLV}|indexa*|scana*|vizita*|accesa*"},
	{"ro", phaseUndo, 3, "scos|eliminat|sters|șters ~4 regul* ~3 bloca*"},
	{"hr", phaseAgain, 2, "vrat*|vratite ~4 indeks*|popis*|pretra*|tražilic*"},
	{"hr", phaseAgain, 2, "ponovno|opet ~4 posjeć*|posjec*|obilaz*"},
	{"hr", phaseAgain, 2, "predomisli*"},
	{"sl", phaseAgain, 2, "premislili|premislila|premislil ~2 si"},
	{"sl", phaseAgain, 2, "spet|znova ~4 obiskuj*|obišč*|indeksir*|{CRAWLV}"},
	{"sl", phaseAgain, 2, "vrni*|vrnite ~4 indeks*|seznam*|iskanj*"},
	{"bg", phaseAgain, 2, "върнете|възстанов* ~4 индекс*|списък*|търсачк*|HOST|сайт*"},
	{"uk", phaseAgain, 2, "поверніть|відновіть|відновити|повернути ~4 індекс*|спис*|пошук*|HOST|сайт*"},

	// Ukrainian exclusions with the infinitive after "прошу" ("I ask
	// to …"), and Portuguese "we do not want … in your index".
	{"uk", phaseExclude, 2, "виключ*|прибрати|видалити|вилучити ~6 сайт*|HOST|списк*|індекс*|скану*|пошук*"},
	{"uk", phaseExclude, 2, "не ~3 сканувати|індексувати|відвідувати|обходити"},
	{"pt", phaseExclude, 2, "não ~1 queremos|quero|desejamos ~6 índice|{BOT}|{CRAWLV}"},
	{"es", phaseExclude, 2, "no ~1 queremos|quiero|deseamos ~6 índice|{BOT}"},

	// Crawling that may go on, somewhere in the message ("the booking
	// pages are fine to crawl", "please keep indexing our shop"): weak
	// alone, but it pulls the other way.
	{"en", phaseGoOn, 1, "continue|keep ~2 crawl*|index*|visit*|scan*"},
	{"en", phaseGoOn, 1, "free|fine|welcome|ok|okay ~1 to ~0 crawl|index|visit|scan"},
	{"de", phaseGoOn, 1, "weiterhin ~3 crawlen|indexieren|besuchen|erfassen"},
	{"de", phaseGoOn, 1, "dürfen|darf|können ~4 weiter|weiterhin ~2 crawlen|indexieren|besuchen"},
	{"fr", phaseGoOn, 1, "continu* ~3 explorer|indexer|crawler|visiter|parcourir"},
	{"it", phaseGoOn, 1, "continu* ~3 scansionare|indicizzare|visitare|crawlare"},
	{"es", phaseGoOn, 1, "seguir|sigan|continuar|continúen ~3 rastreando|indexando|visitando|rastrear|indexar|visitar"},
	{"pt", phaseGoOn, 1, "continuar|continuem ~3 rastreando|indexando|visitando|rastrear|indexar|visitar"},
	{"nl", phaseGoOn, 1, "blijven ~3 crawlen|indexeren|bezoeken"},
	{"da", phaseGoOn, 1, "fortsæt*|fortsätt* ~3 crawl*|indeks*|index*|besøg*|besök*"},
	{"cs", phaseGoOn, 1, "dál|dále|naďalej|nadalej ~3 {CRAWLV}"},
	{"pl", phaseGoOn, 1, "nadal|dalej ~3 {CRAWLV}"},
	{"hu", phaseGoOn, 1, "továbbra ~0 is ~3 {CRAWLV}"},

	// Finnish.
	{"fi", phaseUndo, 3, "purk*|purka*|poist* ~4 esto*|eston|estot|kielto*|kiellon|disallow*"},
	{"fi", phaseUndo, 3, "esto*|eston|kielto* ~3 purk*|purettu|poistettu|poistimme"},
	{"fi", phaseUndo, 3, "perua|perukaa|peruisitte|peruatte|peruttu|perutaan|peruuttakaa|peruuta*|kumota|kumotkaa|kumoaisitte|kumottu ~4 esto*|eston|estot|kielto*|kiellon|disallow*"},
	{"fi", phaseUndo, 3, "esto*|eston|kielto*|kiellon ~3 perua|perukaa|peruisitte|peruatte|peruttu|perutaan|peruuttakaa|peruuta*|kumota|kumotkaa|kumoaisitte|kumottu"},
	{"fi", phaseAgain, 2, "taas|uudelleen|jälleen ~2 käydä|käymään|vierailla|vierailemaan|indeksoimaan"},
	{"fi", phaseAgain, 2, "indeksoisi|indeksoisivat|kävisi|vierailisi ~4 taas|uudelleen|jälleen"},
	{"fi", phaseAgain, 2, "taas|uudelleen|jälleen|takaisin ~4 mukaan|indeksoi*|indeksointi*|listalle|hakuun|crawl*|ryömi*"},
	{"fi", phaseAgain, 2, "mukaan ~3 taas|uudelleen|jälleen"},
	{"fi", phaseAgain, 2, "muutimme|muuttaneet ~1 mielemme|mieltämme|mielen"},
	{"fi", phaseExclude, 2, "poistakaa|poistatte|poistaisitte ~8 {LIST}|HOST|sivusto*|indeksoin*|listalt*"},
	{"fi", phaseExclude, 2, "älkää ~3 indeksoi*|vieraill*|crawl*|ryömi*"},

	// Romanian (typed with or without diacritics; folding makes them one).
	{"ro", phaseUndo, 3, "deblocat*|deblocare|debloca*|reindexa*|reincludet*|reinclude*|reactivat*"},
	{"ro", phaseUndo, 3, "scoate*|elimina*|sterge* ~5 neagra|blacklist*|blocate|excludere"},
	{"ro", phaseUndo, 3, "ridicat|ridicati|ridicam|eliminat|scos ~2 blocare*|blocajul|blocarea|interdicti*|disallow*"},
	{"ro", phaseAgain, 2, "din ~0 nou ~3 indexa*|vizita*|scana*|include*|crawl*|lista"},
	{"ro", phaseAgain, 2, "indexa*|vizita*|include*|scana*|indexeze|viziteze|scaneze|includa ~3 din ~0 nou"},
	{"ro", phaseAgain, 2, "razgandit"},
	{"ro", phaseExclude, 2, "scoate*|eliminati|elimina*|sterge*|stergeti|excludeti|exclude* ~8 {LIST}|HOST|site*"},
	{"ro", phaseExclude, 2, "nu ~3 mai ~2 {CRAWLV}|indexati|indexa*|vizitati|vizita*|scanati|accesati"},
	{"ro", phaseExclude, 2, "opriti|opri*|incetati|inceta* ~4 {CRAWLV}|indexa*|scana*|{BOT}"},
	{"ro", phaseExclude, 2, "blocati|blocheaza ~3 {BOT}"},

	// Croatian.
	{"hr", phaseUndo, 3, "deblokir*|odblokir*"},
	{"hr", phaseUndo, 3, "uklon*|makn* ~3 blokad*|zabran*|disallow*"},
	{"hr", phaseAgain, 2, "ponovno|opet ~4 indeksir*|uključ*|dodaj*|{CRAWLV}|popis*"},
	{"hr", phaseExclude, 2, "uklon*|izbriš*|makni*|maknite|isključ* ~8 {LIST}|HOST|popis*|stranic*|domen*"},
	{"hr", phaseExclude, 2, "prestan*|zaustav* ~4 {CRAWLV}|indeksir*|posjeć*|pretraž*|{BOT}"},
	{"hr", phaseExclude, 2, "ne ~3 indeksir*|posjećuj*|pretražuj*"},

	// Slovenian.
	{"sl", phaseUndo, 3, "odblokir*"},
	{"sl", phaseUndo, 3, "odstran* ~3 blokad*|prepoved*|disallow*"},
	{"sl", phaseAgain, 2, "ponovno ~4 indeksir*|vključ*|dodaj*|{CRAWLV}|obisk*|seznam*"},
	{"sl", phaseExclude, 2, "odstran*|izbriš*|izključ* ~8 {LIST}|HOST|seznam*|stran*|spletn*"},
	{"sl", phaseExclude, 2, "prenehaj*|prenehamo|prenehate|prenehati|ustavi*|ustavimo ~4 {CRAWLV}|indeksir*|obiskov*|pregled*|{BOT}"},
	{"sl", phaseExclude, 2, "ne ~3 indeksir*|obiskuj*"},

	// Greek (folded: no tonos).
	{"el", phaseUndo, 3, "ξεμπλοκ*|αρση|αρετε|αρουμε ~3 αποκλεισ*|μπλοκ*|φραγ*"},
	{"el", phaseUndo, 3, "αφαιρεσαμε|καταργησαμε|βγαλαμε ~3 αποκλεισ*|μπλοκ*|φραγ*|disallow*"},
	{"el", phaseAgain, 2, "ξανα|παλι|νεου ~4 ευρετηρ*|επισκεπτ*|σαρω*|συμπεριλ*|crawl*|λιστα"},
	{"el", phaseAgain, 2, "αλλαξαμε ~1 γνωμη"},
	{"el", phaseExclude, 2, "αφαιρεστε|αφαιρεσ*|διαγραψτε|βγαλτε|εξαιρεστε ~6 λιστα*|ευρετηρι*|HOST|ιστοτοπ*|ιστοσελιδ*|σελιδ*"},
	{"el", phaseExclude, 2, "μην ~2 επισκεπτεστε|ευρετηριαζετε|σαρωνετε|συλλεγετε|crawl*"},

	// Turkish (folded: dotless i is i, ş s, ğ g).
	{"tr", phaseUndo, 3, "engel*|yasag* ~3 kaldir*"},
	{"tr", phaseAgain, 2, "fikrimizi ~1 degistirdik"},
	{"tr", phaseExclude, 2, "listeniz*|listeden|indeksiniz*|indeksten ~3 cikar*|kaldir*|sil*"},
	{"tr", phaseExclude, 2, "taramayin|taramayiniz|indekslemeyin|indekslemeyiniz|etmeyin|etmeyiniz"},

	// Bulgarian.
	{"bg", phaseUndo, 3, "отблокир*|деблокир*"},
	{"bg", phaseUndo, 3, "премахнахме|махнахме|отменихме ~3 блокир*|забран*|disallow*"},
	{"bg", phaseAgain, 2, "отново ~4 индексир*|обхожда*|посеща*|включ*|добав*|crawl*"},
	{"bg", phaseAgain, 2, "индексир*|обхожда*|посеща*|включ* ~3 отново"},
	{"bg", phaseAgain, 2, "размислихме|променихме ~1 мнението"},
	{"bg", phaseExclude, 2, "спрете|спрет*|спрат|спре|спрем|спрели|преустанов* ~4 индексир*|обхожда*|сканир*|посеща*|crawl*|{BOT}|робот*"},
	{"bg", phaseExclude, 2, "премахнете|премахн*|изтрийте|изтри*|извадете|изключете|изключите|махнете|махнат ~6 списък*|списъка|индекс*|обхождане*|HOST|сайт*|страниц*"},
	{"bg", phaseExclude, 2, "не ~0 искаме|искам|желаем|желая ~4 обхождате|индексирате|посещавате|сканирате|{BOT}|робот*"},
	{"bg", phaseExclude, 2, "не ~3 индексирайте|посещавайте|обхождайте|сканирайте"},

	// Ukrainian.
	{"uk", phaseUndo, 3, "розблок*"},
	{"uk", phaseUndo, 3, "прибрали|видалили|зняли|скасували ~3 блокув*|заборон*|disallow*"},
	{"uk", phaseUndo, 3, "зняти|зніміть|скасуйте|скасувати|приберіть|видаліть ~3 блокування|блокуванню|заборону"},
	{"uk", phaseAgain, 2, "знову|повторно ~4 індексу*|скану*|відвіду*|включ*|дода*|crawl*"},
	{"uk", phaseAgain, 2, "передумали"},
	{"uk", phaseExclude, 2, "припиніть|припинит*|припинили|припинимо|зупиніть|зупинит*|зупинили|зупинимо|перестаньте ~4 індексу*|скану*|обход*|відвіду*|crawl*|{BOT}|робот*"},
	{"uk", phaseExclude, 2, "видаліть|видалит*|вилучіть|вилучит*|приберіть ~6 списк*|індекс*|HOST|сайт*"},
	{"uk", phaseExclude, 2, "не ~3 індексуйте|скануйте|відвідуйте"},

	// Norwegian (Danish rules read most of it).
	{"da", phaseExclude, 2, "ta|tas ~4 ut ~1 av ~3 {LIST}|crawleliste*|crawlliste*|indeks*"},
	{"da", phaseExclude, 2, "slutt*|slut* ~3 {CRAWLV}|{BOT}"},

	// "Go ahead with the removal": an exclusion asked for.
	{"en", phaseExclude, 2, "ahead|proceed ~3 removal|exclusion|deletion|delisting"},
	{"it", phaseExclude, 2, "procedete|procedere|proceda|procedi ~3 rimozion*|esclusion*|cancellazion*"},
	{"es", phaseExclude, 2, "procedan|proceder|proceda|adelante ~3 eliminación|exclusión|baja|retirada"},
	{"fr", phaseExclude, 2, "procédez|procéder ~3 retrait|suppression|exclusion|désindexation"},
	{"pt", phaseExclude, 2, "prossigam|prosseguir|procedam|proceder ~3 remoção|exclusão|retirada"},

	// A request reported in the past asks nothing now: "last month I
	// asked you to stop crawling example.com; was it done?".
	{"en", phaseThanks, 0, "asked|requested|told ~3 stop|remov*|exclud*|delet*|opt|block"},
	{"fr", phaseThanks, 0, "avions|avais ~0 demandé ~4 retir*|supprim*|exclu*|arrêt*|cess*|bloqu*|ne"},
	{"it", phaseThanks, 0, "avevamo|avevo ~0 chiesto ~4 rimuov*|esclud*|togli*|smett*|cancell*|blocc*|non"},
	{"es", phaseThanks, 0, "habíamos|había ~0 pedido|solicitado ~4 elimin*|exclu*|quit*|retir*|dej*|bloque*|no"},
	{"nl", phaseThanks, 0, "hadden|had ~3 gevraagd ~4 verwijder*|uit*|stop*|blokk*|niet"},

	// What the writer may do on their own side asks nothing of us: "we
	// might block LohiSoftBot", "wir werden Ihren Bot sperren".
	{"en", phaseThanks, 0, "we|i ~1 might|will|could|shall|plan|planning|consider*|thinking|going|intend* ~3 block*|ban*|disallow*|firewall*"},
	{"de", phaseThanks, 0, "wir|ich ~1 werden|werde|könnten|würden|müssten|überlegen ~6 sperren|blockieren|aussperren"},
	{"fr", phaseThanks, 0, "nous|je ~1 allons|vais|pourrions|pourrons|devrons|devrions|envisageons ~3 bloquer|interdire"},
	{"it", phaseThanks, 0, "potremmo|dovremo|dovremmo|bloccheremo|valutiamo ~3 bloccare|blocc*"},
	{"es", phaseThanks, 0, "podríamos|tendremos|vamos|bloquearemos ~3 bloquear|a"},

	// German: "von Ihrer Liste entfernen", the verb last.
	{"de", phaseExclude, 2, "von|aus ~3 {LIST}|HOST ~4 entfernen|nehmen|streichen|löschen|austragen|herausnehmen"},

	// Undecided: "we will decide whether to exclude you or not".
	{"en", phaseUndecided, 0, "decid* ~6 or ~0 not"},
	{"fr", phaseUndecided, 0, "décid* ~6 ou ~0 non|pas"},
	{"fr", phaseUndecided, 0, "avant ~1 décider|décision"},
	{"de", phaseUndecided, 0, "entscheid* ~6 oder ~0 nicht"},
	{"de", phaseUndecided, 0, "bevor ~3 entscheid*"},
	{"it", phaseUndecided, 0, "decid* ~6 o ~0 meno|no"},
	{"it", phaseUndecided, 0, "prima ~1 di ~0 decidere"},
	{"es", phaseUndecided, 0, "decid* ~6 o ~0 no"},
	{"es", phaseUndecided, 0, "antes ~1 de ~0 decidir"},
	{"pt", phaseUndecided, 0, "decid* ~6 ou ~0 não"},
	{"nl", phaseUndecided, 0, "voordat|alvorens ~3 beslissen|besluiten"},
	{"da", phaseUndecided, 0, "inden|innan|før ~3 beslut*|bestemme*"},
	{"cs", phaseUndecided, 0, "než|předtím|skôr ~3 rozhodn*"},
	{"pl", phaseUndecided, 0, "zanim ~3 zdecyduj*"},
	{"hu", phaseUndecided, 0, "mielőtt ~3 döntünk|döntenénk|eldöntjük|döntünk"},
}
