package reply

// text holds the words of the replies in one language. The tone is that of
// the bot page: plain, polite, for a webmaster rather than a developer.
type text struct {
	Hello    string // the greeting line
	Ack      string // an exclusion was applied: the list of sites follows
	When     string // %s is the time of the exclusion
	After    string // what that means
	Robots   string // robots.txt is the other way
	Back     string // how to ask to come back
	Received string // the message waits for a person
	Log      string // %s is the URL of the log's checkpoint
	Quote    string // introduces the quoted message
}

// texts are the replies' words in the 13 languages the classifier reads.
// English is the fallback.
var texts = map[string]text{
	"en": {
		Hello:    "Hello,",
		Ack:      "Thank you for your message. We have removed these sites from the crawl list of LohiSoftBot:",
		When:     "Removed on: %s",
		After:    "From now on LohiSoftBot will not request any of their pages.",
		Robots:   "robots.txt is the other way to keep LohiSoftBot out, of a whole site or only of some pages: the bot reads it before every visit.",
		Back:     "If you want a site crawled again, reply to this message and say so; a person will read it.",
		Received: "Thank you for your message. A person at LohiSoft will read it and answer if needed. Nothing has been changed yet.",
		Log:      "Every exclusion is a record of our public transparency log. The signed checkpoint that includes this one is published within a minute at %s (the status page then gives its leaf index), so you can check later that it was never changed.",
		Quote:    "Your message:",
	},
	"de": {
		Hello:    "Guten Tag,",
		Ack:      "vielen Dank für Ihre Nachricht. Wir haben diese Websites von der Crawl-Liste des LohiSoftBot entfernt:",
		When:     "Entfernt am: %s",
		After:    "LohiSoftBot ruft ab sofort keine ihrer Seiten mehr ab.",
		Robots:   "Der andere Weg, LohiSoftBot fernzuhalten – von der ganzen Website oder nur von einzelnen Seiten –, ist die robots.txt: Der Bot liest sie vor jedem Besuch.",
		Back:     "Soll eine Website wieder erfasst werden, antworten Sie bitte auf diese Nachricht; ein Mensch wird sie lesen.",
		Received: "vielen Dank für Ihre Nachricht. Ein Mitarbeiter von LohiSoft wird sie lesen und bei Bedarf antworten. Bisher wurde nichts geändert.",
		Log:      "Jeder Ausschluss ist ein Eintrag in unserem öffentlichen Transparenz-Log. Der signierte Checkpoint, der diesen enthält, wird innerhalb einer Minute unter %s veröffentlicht (die Statusseite nennt dann seinen Leaf-Index), so dass Sie später prüfen können, dass er nie geändert wurde.",
		Quote:    "Ihre Nachricht:",
	},
	"fr": {
		Hello:    "Bonjour,",
		Ack:      "merci pour votre message. Nous avons retiré ces sites de la liste d'exploration de LohiSoftBot :",
		When:     "Retirés le : %s",
		After:    "Désormais, LohiSoftBot ne demandera plus aucune de leurs pages.",
		Robots:   "L'autre moyen d'écarter LohiSoftBot, de tout un site ou de certaines pages seulement, est le fichier robots.txt : le robot le lit avant chaque visite.",
		Back:     "Si vous souhaitez qu'un site soit de nouveau exploré, répondez à ce message pour le demander ; une personne le lira.",
		Received: "merci pour votre message. Une personne de LohiSoft le lira et vous répondra si nécessaire. Rien n'a encore été modifié.",
		Log:      "Chaque exclusion est un enregistrement de notre journal de transparence public. Le checkpoint signé qui l'inclut est publié dans la minute à l'adresse %s (la page d'état donne alors son index de feuille) : vous pourrez vérifier plus tard qu'elle n'a jamais été modifiée.",
		Quote:    "Votre message :",
	},
	"it": {
		Hello:    "Buongiorno,",
		Ack:      "grazie per il messaggio. Abbiamo tolto questi siti dall'elenco di scansione di LohiSoftBot:",
		When:     "Data della rimozione: %s",
		After:    "Da ora in poi LohiSoftBot non richiederà più nessuna delle loro pagine.",
		Robots:   "L'altro modo per tenere lontano LohiSoftBot, da tutto il sito o solo da alcune pagine, è il file robots.txt: il bot lo legge prima di ogni visita.",
		Back:     "Se desidera che un sito venga di nuovo scansionato, risponda a questo messaggio e ce lo chieda: lo leggerà una persona.",
		Received: "grazie per il messaggio. Lo leggerà una persona di LohiSoft, che risponderà se necessario. Per ora non è stato modificato nulla.",
		Log:      "Ogni esclusione è un record del nostro registro di trasparenza pubblico. Il checkpoint firmato che la include è pubblicato entro un minuto su %s (la pagina di stato ne indica poi l'indice di foglia): potrà verificare in seguito che non è mai stata modificata.",
		Quote:    "Il suo messaggio:",
	},
	"es": {
		Hello:    "Buenos días:",
		Ack:      "Gracias por su mensaje. Hemos retirado estos sitios de la lista de rastreo de LohiSoftBot:",
		When:     "Retirados el: %s",
		After:    "A partir de ahora, LohiSoftBot no solicitará ninguna de sus páginas.",
		Robots:   "La otra forma de mantener alejado a LohiSoftBot, de todo un sitio o solo de algunas páginas, es el archivo robots.txt: el bot lo lee antes de cada visita.",
		Back:     "Si desea que un sitio vuelva a rastrearse, responda a este mensaje y pídalo; lo leerá una persona.",
		Received: "Gracias por su mensaje. Una persona de LohiSoft lo leerá y le responderá si es necesario. Por ahora no se ha cambiado nada.",
		Log:      "Cada exclusión es un registro de nuestro registro de transparencia público. El checkpoint firmado que la incluye se publica en menos de un minuto en %s (la página de estado da luego su índice de hoja), para que pueda comprobar más adelante que nunca se modificó.",
		Quote:    "Su mensaje:",
	},
	"pt": {
		Hello:    "Bom dia,",
		Ack:      "obrigado pela sua mensagem. Retirámos estes sites da lista de rastreio do LohiSoftBot:",
		When:     "Retirados em: %s",
		After:    "A partir de agora, o LohiSoftBot não pedirá nenhuma das suas páginas.",
		Robots:   "A outra forma de manter o LohiSoftBot afastado, de todo um site ou só de algumas páginas, é o ficheiro robots.txt: o robô lê-o antes de cada visita.",
		Back:     "Se quiser que um site volte a ser rastreado, responda a esta mensagem e peça-o; uma pessoa irá lê-la.",
		Received: "obrigado pela sua mensagem. Uma pessoa da LohiSoft irá lê-la e responderá se for necessário. Por enquanto nada foi alterado.",
		Log:      "Cada exclusão é um registo do nosso registo de transparência público. O checkpoint assinado que a inclui é publicado dentro de um minuto em %s (a página de estado indica depois o seu índice de folha), para que possa verificar mais tarde que nunca foi alterada.",
		Quote:    "A sua mensagem:",
	},
	"nl": {
		Hello:    "Goedendag,",
		Ack:      "dank u voor uw bericht. We hebben deze sites van de crawllijst van LohiSoftBot verwijderd:",
		When:     "Verwijderd op: %s",
		After:    "LohiSoftBot vraagt vanaf nu geen enkele pagina van deze sites meer op.",
		Robots:   "De andere manier om LohiSoftBot te weren, van een hele site of alleen van sommige pagina's, is robots.txt: de bot leest het bestand vóór elk bezoek.",
		Back:     "Wilt u dat een site weer wordt gecrawld, beantwoord dan dit bericht met dat verzoek; een medewerker leest het.",
		Received: "dank u voor uw bericht. Een medewerker van LohiSoft leest het en antwoordt zo nodig. Er is nog niets gewijzigd.",
		Log:      "Elke uitsluiting is een record in ons openbare transparantielogboek. Het ondertekende checkpoint dat deze bevat, wordt binnen een minuut gepubliceerd op %s (de statuspagina geeft daarna de leaf-index), zodat u later kunt controleren dat er nooit iets aan is veranderd.",
		Quote:    "Uw bericht:",
	},
	"da": {
		Hello:    "Hej,",
		Ack:      "tak for din besked. Vi har fjernet disse sites fra LohiSoftBots crawlliste:",
		When:     "Fjernet: %s",
		After:    "LohiSoftBot henter fra nu af ingen af deres sider.",
		Robots:   "Den anden måde at holde LohiSoftBot ude på – fra et helt site eller kun fra nogle sider – er robots.txt: botten læser filen før hvert besøg.",
		Back:     "Vil du have et site crawlet igen, så svar på denne besked og bed om det; et menneske læser den.",
		Received: "tak for din besked. En medarbejder hos LohiSoft læser den og svarer, hvis det er nødvendigt. Intet er ændret endnu.",
		Log:      "Hver udelukkelse er en post i vores offentlige gennemsigtighedslog. Det signerede checkpoint, der indeholder den, offentliggøres inden for et minut på %s (statussiden viser derefter dens leaf-indeks), så De senere kan kontrollere, at den aldrig er ændret.",
		Quote:    "Din besked:",
	},
	"sv": {
		Hello:    "Hej,",
		Ack:      "tack för ditt meddelande. Vi har tagit bort de här webbplatserna från LohiSoftBots crawllista:",
		When:     "Borttagna: %s",
		After:    "Från och med nu hämtar LohiSoftBot inga av deras sidor.",
		Robots:   "Det andra sättet att hålla LohiSoftBot borta – från en hel webbplats eller bara vissa sidor – är robots.txt: boten läser filen före varje besök.",
		Back:     "Om du vill att en webbplats crawlas igen, svara på det här meddelandet och be om det; en människa läser det.",
		Received: "tack för ditt meddelande. En medarbetare på LohiSoft läser det och svarar vid behov. Ingenting har ändrats ännu.",
		Log:      "Varje uteslutning är en post i vår offentliga transparenslogg. Den signerade checkpoint som innehåller den publiceras inom en minut på %s (statussidan visar sedan dess lövindex), så att du senare kan kontrollera att den aldrig har ändrats.",
		Quote:    "Ditt meddelande:",
	},
	"hu": {
		Hello:    "Jó napot kívánunk!",
		Ack:      "Köszönjük levelét. Ezeket a webhelyeket töröltük a LohiSoftBot feltérképezési listájáról:",
		When:     "A törlés időpontja: %s",
		After:    "A LohiSoftBot mostantól egyetlen oldalukat sem kéri le.",
		Robots:   "A LohiSoftBot távoltartásának másik módja – a teljes webhelyről vagy csak egyes oldalakról – a robots.txt fájl: a robot minden látogatás előtt elolvassa.",
		Back:     "Ha szeretné, hogy egy webhelyet újra feltérképezzünk, válaszoljon erre a levélre, és kérje; egy munkatársunk elolvassa.",
		Received: "Köszönjük levelét. A LohiSoft egyik munkatársa elolvassa, és szükség esetén válaszol. Egyelőre semmi sem változott.",
		Log:      "Minden kizárás egy bejegyzés nyilvános átláthatósági naplónkban. Az ezt tartalmazó aláírt ellenőrzőpontot egy percen belül közzétesszük itt: %s (az állapotoldal ezután megadja a levélindexét), így később ellenőrizheti, hogy soha nem módosult.",
		Quote:    "Az Ön levele:",
	},
	"cs": {
		Hello:    "Dobrý den,",
		Ack:      "děkujeme za Vaši zprávu. Tyto weby jsme odstranili ze seznamu procházení robota LohiSoftBot:",
		When:     "Odstraněno: %s",
		After:    "LohiSoftBot od této chvíle nebude stahovat žádnou z jejich stránek.",
		Robots:   "Druhou cestou, jak LohiSoftBot nepustit na celý web nebo jen na některé stránky, je soubor robots.txt: robot ho čte před každou návštěvou.",
		Back:     "Pokud chcete, aby byl web znovu procházen, odpovězte na tuto zprávu a požádejte o to; přečte ji člověk.",
		Received: "děkujeme za Vaši zprávu. Přečte ji pracovník LohiSoft a v případě potřeby odpoví. Zatím se nic nezměnilo.",
		Log:      "Každé vyloučení je záznamem v našem veřejném transparentním logu. Podepsaný checkpoint, který jej obsahuje, je do minuty zveřejněn na %s (stavová stránka pak uvede jeho index listu), takže můžete později ověřit, že nebylo nikdy změněno.",
		Quote:    "Vaše zpráva:",
	},
	"sk": {
		Hello:    "Dobrý deň,",
		Ack:      "ďakujeme za Vašu správu. Tieto weby sme odstránili zo zoznamu prehľadávania robota LohiSoftBot:",
		When:     "Odstránené: %s",
		After:    "LohiSoftBot odteraz nebude sťahovať žiadnu z ich stránok.",
		Robots:   "Druhou cestou, ako LohiSoftBot nepustiť na celý web alebo len na niektoré stránky, je súbor robots.txt: robot ho číta pred každou návštevou.",
		Back:     "Ak chcete, aby bol web znova prehľadávaný, odpovedzte na túto správu a požiadajte o to; prečíta ju človek.",
		Received: "ďakujeme za Vašu správu. Prečíta ju pracovník LohiSoft a v prípade potreby odpovie. Zatiaľ sa nič nezmenilo.",
		Log:      "Každé vylúčenie je záznamom v našom verejnom transparentnom logu. Podpísaný checkpoint, ktorý ho obsahuje, sa do minúty zverejní na %s (stavová stránka potom uvedie jeho index listu), takže môžete neskôr overiť, že nebolo nikdy zmenené.",
		Quote:    "Vaša správa:",
	},
	"pl": {
		Hello:    "Dzień dobry,",
		Ack:      "dziękujemy za wiadomość. Usunęliśmy te witryny z listy indeksowania LohiSoftBot:",
		When:     "Usunięto: %s",
		After:    "Od teraz LohiSoftBot nie będzie pobierał żadnej z ich stron.",
		Robots:   "Drugim sposobem na zablokowanie LohiSoftBot, na całej witrynie lub tylko na niektórych stronach, jest plik robots.txt: robot czyta go przed każdą wizytą.",
		Back:     "Jeśli chcą Państwo, aby witryna była znowu indeksowana, prosimy odpowiedzieć na tę wiadomość z taką prośbą; przeczyta ją człowiek.",
		Received: "dziękujemy za wiadomość. Przeczyta ją pracownik LohiSoft i w razie potrzeby odpowie. Na razie nic nie zostało zmienione.",
		Log:      "Każde wykluczenie jest wpisem w naszym publicznym dzienniku przejrzystości. Podpisany checkpoint, który je zawiera, zostanie opublikowany w ciągu minuty pod adresem %s (strona stanu poda wtedy jego indeks liścia), aby mogli Państwo później sprawdzić, że nigdy nie zostało zmienione.",
		Quote:    "Państwa wiadomość:",
	},
}

// Languages lists the languages replies are written in.
func Languages() []string {
	return []string{"en", "de", "fr", "it", "es", "pt", "nl", "da", "sv", "hu", "cs", "sk", "pl"}
}

// textFor returns the words in lang, English when lang is not one of
// Languages, and the language used.
func textFor(lang string) (text, string) {
	if t, ok := texts[lang]; ok {
		return t, lang
	}
	return texts["en"], "en"
}
