package mailbot_test

import (
	"testing"

	"github.com/lohisoft/lohibot/mailbot"
)

// phraseCases are one-sentence requests in every language, each worded
// differently, so the keyword rules are checked on more than the corpus
// wording: exclusions, re-inclusions, and look-alikes that ask for
// nothing.
var phraseCases = []struct {
	lang string
	body string
	want mailbot.Intent
}{
	// English.
	{"en", "Please stop crawling example-shop.com.", mailbot.IntentExclude},
	{"en", "Kindly cease all crawling of example-shop.com.", mailbot.IntentExclude},
	{"en", "I want example-shop.com removed from your index.", mailbot.IntentExclude},
	{"en", "Please add example-shop.com to your do-not-crawl list.", mailbot.IntentExclude},
	{"en", "Please add example-shop.com to your exclusion list.", mailbot.IntentExclude},
	{"en", "Your bot is not welcome on example-shop.com.", mailbot.IntentExclude},
	{"en", "LohiSoftBot is not allowed on example-shop.com, please honour that.", mailbot.IntentExclude},
	{"en", "Please de-index example-shop.com.", mailbot.IntentExclude},
	{"en", "Delist example-shop.com please.", mailbot.IntentExclude},
	{"en", "Blacklist example-shop.com in your crawler.", mailbot.IntentExclude},
	{"en", "Stop scraping example-shop.com immediately.", mailbot.IntentExclude},
	{"en", "Get your crawler off example-shop.com.", mailbot.IntentExclude},
	{"en", "We revoke any permission to crawl example-shop.com.", mailbot.IntentExclude},
	{"en", "You are not authorised to crawl example-shop.com.", mailbot.IntentExclude},
	{"en", "No more crawling of example-shop.com, thanks.", mailbot.IntentExclude},
	{"en", "Exclude example-shop.com please.", mailbot.IntentExclude},
	{"en", "Please don't visit example-shop.com any more.", mailbot.IntentExclude},
	{"en", "Could you stop accessing example-shop.com?", mailbot.IntentExclude},
	{"en", "I'd like my site example-shop.com to be excluded.", mailbot.IntentExclude},
	{"en", "We forbid LohiSoftBot to crawl example-shop.com.", mailbot.IntentExclude},
	{"en", "Please do not include example-shop.com in your index.", mailbot.IntentExclude},
	{"en", "We require that the crawling of example-shop.com stops.", mailbot.IntentExclude},
	{"en", "Please leave example-shop.com out of your crawls.", mailbot.IntentExclude},
	{"en", "We would prefer that you did not index example-shop.com.", mailbot.IntentExclude},
	{"en", "Please crawl example-shop.com again.", mailbot.IntentReinclude},
	{"en", "You may resume crawling example-shop.com.", mailbot.IntentReinclude},
	{"en", "We would like to opt back in: example-shop.com.", mailbot.IntentReinclude},
	{"en", "Please whitelist example-shop.com again.", mailbot.IntentReinclude},
	{"en", "Please cancel our exclusion request for example-shop.com.", mailbot.IntentReinclude},
	{"en", "We withdraw our opt-out for example-shop.com.", mailbot.IntentReinclude},
	{"en", "Put example-shop.com back on your crawl list, please.", mailbot.IntentReinclude},
	{"en", "Feel free to index example-shop.com again.", mailbot.IntentReinclude},
	{"en", "Please re-enable crawling for example-shop.com.", mailbot.IntentReinclude},
	{"en", "How often does your bot visit example-shop.com?", mailbot.IntentOther},
	{"en", "Why is your crawler ignoring the robots.txt on example-shop.com?", mailbot.IntentOther},
	{"en", "Your crawler caused a spike on example-shop.com, can you slow it down?", mailbot.IntentOther},
	{"en", "We offer SEO services for example-shop.com and similar sites.", mailbot.IntentOther},
	{"en", "Is LohiSoftBot yours? It shows up on example-shop.com.", mailbot.IntentOther},

	// Negated wishes that still ask for removal.
	{"en", "We do not want to be crawled, please remove example-shop.com.", mailbot.IntentExclude},
	{"en", "We don't like being crawled; remove example-shop.com.", mailbot.IntentExclude},
	{"fr", "Nous ne voulons pas être indexés, retirez example-shop.fr.", mailbot.IntentExclude},
	{"es", "No queremos que nos rastreen: eliminen example-shop.es.", mailbot.IntentExclude},
	{"de", "Wir möchten nicht, dass Sie unsere Seite crawlen, bitte entfernen Sie example-shop.de.", mailbot.IntentExclude},

	// Italian.
	{"it", "Vi chiedo di non scansionare più example-shop.it.", mailbot.IntentExclude},
	{"it", "Per favore togliete example-shop.it dal vostro crawler.", mailbot.IntentExclude},
	{"it", "Non autorizzo il vostro robot ad accedere a example-shop.it.", mailbot.IntentExclude},
	{"it", "Smettete di visitare example-shop.it.", mailbot.IntentExclude},
	{"it", "Chiedo la rimozione di example-shop.it dal vostro indice.", mailbot.IntentExclude},
	{"it", "Vi prego di escludere example-shop.it.", mailbot.IntentExclude},
	{"it", "Bloccate il vostro bot sul sito example-shop.it, grazie.", mailbot.IntentExclude},
	{"it", "Vi diffidiamo dal proseguire la scansione di example-shop.it.", mailbot.IntentExclude},
	{"it", "Vi vietiamo l'accesso a example-shop.it.", mailbot.IntentExclude},
	{"it", "Potete di nuovo indicizzare example-shop.it.", mailbot.IntentReinclude},
	{"it", "Vi chiediamo di revocare l'esclusione di example-shop.it.", mailbot.IntentReinclude},
	{"it", "Il vostro bot visita troppo spesso example-shop.it, potete rallentare?", mailbot.IntentOther},

	// Danish.
	{"da", "Stop venligst med at crawle example-shop.dk.", mailbot.IntentExclude},
	{"da", "Vi ønsker ikke at blive crawlet: example-shop.dk.", mailbot.IntentExclude},
	{"da", "Fjern example-shop.dk fra jeres indeks.", mailbot.IntentExclude},
	{"da", "I har ikke tilladelse til at crawle example-shop.dk.", mailbot.IntentExclude},
	{"da", "Bloker venligst jeres robot på example-shop.dk.", mailbot.IntentExclude},
	{"da", "Vi forbyder jeres robot at crawle example-shop.dk.", mailbot.IntentExclude},
	{"da", "Hold venligst jeres crawler væk fra example-shop.dk.", mailbot.IntentExclude},
	{"da", "Tilføj venligst example-shop.dk igen.", mailbot.IntentReinclude},
	{"da", "I må gerne crawle example-shop.dk igen.", mailbot.IntentReinclude},
	{"da", "Vil I ophæve blokeringen af example-shop.dk?", mailbot.IntentReinclude},
	{"da", "Hvor tit besøger jeres robot example-shop.dk?", mailbot.IntentOther},

	// Hungarian.
	{"hu", "Kérem, törölje az example-shop.hu oldalt a listájukról.", mailbot.IntentExclude},
	{"hu", "Ne látogassák többet az example-shop.hu oldalt.", mailbot.IntentExclude},
	{"hu", "Nem járulunk hozzá, hogy a robotjuk indexelje az example-shop.hu oldalt.", mailbot.IntentExclude},
	{"hu", "Kérjük, zárják ki az example-shop.hu oldalt.", mailbot.IntentExclude},
	{"hu", "Megtiltjuk, hogy a robotjuk indexelje az example-shop.hu oldalt.", mailbot.IntentExclude},
	{"hu", "Kérjük, ne járjon a robotjuk az example-shop.hu oldalra.", mailbot.IntentExclude},
	{"hu", "Újra indexelhetik az example-shop.hu oldalt.", mailbot.IntentReinclude},
	{"hu", "Kérjük, oldják fel az example-shop.hu tiltását.", mailbot.IntentReinclude},
	{"hu", "Milyen gyakran látogatja a robotjuk az example-shop.hu oldalt?", mailbot.IntentOther},

	// German.
	{"de", "Bitte crawlen Sie example-shop.de nicht mehr.", mailbot.IntentExclude},
	{"de", "Bitte nehmen Sie example-shop.de aus Ihrem Index.", mailbot.IntentExclude},
	{"de", "Ich möchte nicht, dass Ihr Bot example-shop.de besucht.", mailbot.IntentExclude},
	{"de", "Hiermit fordere ich Sie auf, das Crawlen von example-shop.de einzustellen.", mailbot.IntentExclude},
	{"de", "Bitte example-shop.de sperren.", mailbot.IntentExclude},
	{"de", "Ihr Crawler hat auf example-shop.de nichts zu suchen.", mailbot.IntentExclude},
	{"de", "Bitte tragen Sie example-shop.de aus.", mailbot.IntentExclude},
	{"de", "Bitte verzichten Sie künftig auf das Crawlen von example-shop.de.", mailbot.IntentExclude},
	{"de", "Wir verbitten uns jeden Zugriff Ihres Bots auf example-shop.de.", mailbot.IntentExclude},
	{"de", "Bitte halten Sie Ihren Crawler von example-shop.de fern.", mailbot.IntentExclude},
	{"de", "Sie dürfen example-shop.de wieder besuchen.", mailbot.IntentReinclude},
	{"de", "Bitte nehmen Sie example-shop.de wieder in den Index auf.", mailbot.IntentReinclude},
	{"de", "Bitte heben Sie den Ausschluss von example-shop.de auf.", mailbot.IntentReinclude},
	{"de", "Warum besucht Ihr Bot example-shop.de so oft?", mailbot.IntentOther},
	{"de", "Bitte reduzieren Sie die Crawl-Frequenz auf example-shop.de.", mailbot.IntentOther},

	// French.
	{"fr", "Merci de ne plus explorer example-shop.fr.", mailbot.IntentExclude},
	{"fr", "Veuillez retirer example-shop.fr de votre index.", mailbot.IntentExclude},
	{"fr", "Je m'oppose à l'indexation de example-shop.fr.", mailbot.IntentExclude},
	{"fr", "Nous refusons que votre robot visite example-shop.fr.", mailbot.IntentExclude},
	{"fr", "Arrêtez de crawler example-shop.fr.", mailbot.IntentExclude},
	{"fr", "Je vous demande d'exclure example-shop.fr.", mailbot.IntentExclude},
	{"fr", "Bloquez votre robot sur example-shop.fr, s'il vous plaît.", mailbot.IntentExclude},
	{"fr", "Je vous interdis l'accès à example-shop.fr.", mailbot.IntentExclude},
	{"fr", "Merci de vous abstenir d'indexer example-shop.fr.", mailbot.IntentExclude},
	{"fr", "Vous pouvez à nouveau explorer example-shop.fr.", mailbot.IntentReinclude},
	{"fr", "Merci de réintégrer example-shop.fr dans votre index.", mailbot.IntentReinclude},
	{"fr", "Pouvez-vous annuler l'exclusion de example-shop.fr ?", mailbot.IntentReinclude},
	{"fr", "Quelle est la fréquence de passage de votre robot sur example-shop.fr ?", mailbot.IntentOther},

	// Spanish.
	{"es", "Por favor, no rastreen example-shop.es.", mailbot.IntentExclude},
	{"es", "Les pido que eliminen example-shop.es de su índice.", mailbot.IntentExclude},
	{"es", "No autorizo a su robot a acceder a example-shop.es.", mailbot.IntentExclude},
	{"es", "Dejen de indexar example-shop.es.", mailbot.IntentExclude},
	{"es", "Solicito la exclusión de example-shop.es.", mailbot.IntentExclude},
	{"es", "Bloqueen su bot en example-shop.es, por favor.", mailbot.IntentExclude},
	{"es", "Prohibimos el acceso de su robot a example-shop.es.", mailbot.IntentExclude},
	{"es", "Pongan fin al rastreo de example-shop.es.", mailbot.IntentExclude},
	{"es", "Le pido a su robot que deje de rastrear example-shop.es.", mailbot.IntentExclude},
	{"es", "Pueden volver a indexar example-shop.es.", mailbot.IntentReinclude},
	{"es", "Por favor, levanten el bloqueo de example-shop.es.", mailbot.IntentReinclude},
	{"es", "Rastreen otra vez example-shop.es, por favor.", mailbot.IntentReinclude},
	{"es", "¿Con qué frecuencia visita su robot example-shop.es?", mailbot.IntentOther},

	// Portuguese.
	{"pt", "Por favor, não indexem example-shop.pt.", mailbot.IntentExclude},
	{"pt", "Solicito a remoção de example-shop.pt do vosso índice.", mailbot.IntentExclude},
	{"pt", "Parem de rastrear example-shop.com.br.", mailbot.IntentExclude},
	{"pt", "Não autorizo o acesso do vosso robô a example-shop.pt.", mailbot.IntentExclude},
	{"pt", "Bloqueiem o vosso bot no site example-shop.pt.", mailbot.IntentExclude},
	{"pt", "Proibimos o acesso do vosso robô a example-shop.pt.", mailbot.IntentExclude},
	{"pt", "Pedimos que o robô deixe de indexar example-shop.pt.", mailbot.IntentExclude},
	{"pt", "Podem voltar a rastrear example-shop.pt.", mailbot.IntentReinclude},
	{"pt", "Por favor, retirem o bloqueio de example-shop.com.br.", mailbot.IntentReinclude},
	{"pt", "Com que frequência o vosso robô visita example-shop.pt?", mailbot.IntentOther},

	// Dutch.
	{"nl", "Wilt u stoppen met het crawlen van example-shop.nl?", mailbot.IntentExclude},
	{"nl", "Graag example-shop.nl verwijderen uit uw index.", mailbot.IntentExclude},
	{"nl", "Uw bot is niet welkom op example-shop.nl.", mailbot.IntentExclude},
	{"nl", "Wij geven geen toestemming om example-shop.nl te indexeren.", mailbot.IntentExclude},
	{"nl", "Blokkeer uw robot voor example-shop.nl.", mailbot.IntentExclude},
	{"nl", "Wij verbieden uw bot om example-shop.nl te indexeren.", mailbot.IntentExclude},
	{"nl", "We zouden liever niet hebben dat uw bot example-shop.nl crawlt.", mailbot.IntentExclude},
	{"nl", "Wilt u example-shop.nl weer toevoegen?", mailbot.IntentReinclude},
	{"nl", "U mag example-shop.nl weer crawlen.", mailbot.IntentReinclude},
	{"nl", "Kunt u de blokkade van example-shop.nl opheffen?", mailbot.IntentReinclude},
	{"nl", "Hoe vaak bezoekt uw bot example-shop.nl?", mailbot.IntentOther},

	// Czech.
	{"cs", "Prosím, neindexujte example-shop.cz.", mailbot.IntentExclude},
	{"cs", "Žádám o odstranění example-shop.cz z vašeho indexu.", mailbot.IntentExclude},
	{"cs", "Přestaňte prosím procházet example-shop.cz.", mailbot.IntentExclude},
	{"cs", "Nesouhlasíme s procházením webu example-shop.cz.", mailbot.IntentExclude},
	{"cs", "Zablokujte svého robota na example-shop.cz.", mailbot.IntentExclude},
	{"cs", "Zakazujeme vašemu robotovi přístup na example-shop.cz.", mailbot.IntentExclude},
	{"cs", "Chceme, aby váš robot přestal procházet example-shop.cz.", mailbot.IntentExclude},
	{"cs", "Vraťte example-shop.cz zpět do indexu.", mailbot.IntentReinclude},
	{"cs", "Můžete znovu procházet example-shop.cz.", mailbot.IntentReinclude},
	{"cs", "Prosíme o zrušení blokace webu example-shop.cz.", mailbot.IntentReinclude},
	{"cs", "Jak často váš robot navštěvuje example-shop.cz?", mailbot.IntentOther},

	// Slovak.
	{"sk", "Prosím, neindexujte example-shop.sk.", mailbot.IntentExclude},
	{"sk", "Žiadam o odstránenie example-shop.sk z vášho indexu.", mailbot.IntentExclude},
	{"sk", "Prestaňte prosím prechádzať example-shop.sk.", mailbot.IntentExclude},
	{"sk", "Nesúhlasíme s indexovaním stránky example-shop.sk.", mailbot.IntentExclude},
	{"sk", "Môžete opäť indexovať example-shop.sk.", mailbot.IntentReinclude},
	{"sk", "Prosíme o zrušenie blokovania stránky example-shop.sk.", mailbot.IntentReinclude},
	{"sk", "Ako často navštevuje váš robot example-shop.sk?", mailbot.IntentOther},

	// Polish.
	{"pl", "Proszę nie indeksować example-shop.pl.", mailbot.IntentExclude},
	{"pl", "Proszę usunąć example-shop.pl z Państwa indeksu.", mailbot.IntentExclude},
	{"pl", "Nie wyrażam zgody na skanowanie example-shop.pl.", mailbot.IntentExclude},
	{"pl", "Przestańcie odwiedzać example-shop.pl.", mailbot.IntentExclude},
	{"pl", "Zablokujcie swojego bota na example-shop.pl.", mailbot.IntentExclude},
	{"pl", "Zabraniamy Waszemu botowi dostępu do example-shop.pl.", mailbot.IntentExclude},
	{"pl", "Nie życzymy sobie indeksowania example-shop.pl.", mailbot.IntentExclude},
	{"pl", "Prosimy przywrócić example-shop.pl do wyszukiwarki.", mailbot.IntentReinclude},
	{"pl", "Możecie ponownie indeksować example-shop.pl.", mailbot.IntentReinclude},
	{"pl", "Proszę o zdjęcie blokady z example-shop.pl.", mailbot.IntentReinclude},
	{"pl", "Jak często Wasz bot odwiedza example-shop.pl?", mailbot.IntentOther},

	// Swedish.
	{"sv", "Sluta indexera example-shop.se.", mailbot.IntentExclude},
	{"sv", "Vänligen ta bort example-shop.se från ert index.", mailbot.IntentExclude},
	{"sv", "Er bot är inte välkommen på example-shop.se.", mailbot.IntentExclude},
	{"sv", "Ni har inte tillstånd att crawla example-shop.se.", mailbot.IntentExclude},
	{"sv", "Blockera er robot från example-shop.se.", mailbot.IntentExclude},
	{"sv", "Vi förbjuder er bot att indexera example-shop.se.", mailbot.IntentExclude},
	{"sv", "Er bot är välkommen tillbaka till example-shop.se.", mailbot.IntentReinclude},
	{"sv", "Vi vill slippa er crawler på example-shop.se.", mailbot.IntentExclude},
	{"sv", "Ni får indexera example-shop.se igen.", mailbot.IntentReinclude},
	{"sv", "Kan ni häva blockeringen av example-shop.se?", mailbot.IntentReinclude},
	{"sv", "Hur ofta besöker er bot example-shop.se?", mailbot.IntentOther},
}

// otherPhrases name a site and talk about the crawler, and even use the
// words of requests ("welcome", "don't crawl faster", "not opposed"),
// without asking for anything.
var otherPhrases = []string{
	"We don't want to be removed from your index, just slow down please. example-shop.com",
	"We don't want you to stop crawling example-shop.com, only to slow down.",
	"Nous ne souhaitons pas que vous arrêtiez d'explorer example-shop.fr, ralentissez seulement.",
	"No queremos ser eliminados de su índice, solo que visiten example-shop.es más despacio.",
	"Wir möchten nicht aus Ihrem Index entfernt werden, nur seltener besucht: example-shop.de.",
	"Non vogliamo che smettiate di visitare example-shop.it, solo di rallentare.",
	"Nie chcemy być usunięci z indeksu, prosimy tylko o wolniejsze skanowanie example-shop.pl.",
	"Nechceme být vyřazeni, jen zpomalte procházení example-shop.cz.",
	"Wij willen niet verwijderd worden, alleen minder vaak bezocht: example-shop.nl.",
	"Vi vill inte bli borttagna, bara att ni crawlar example-shop.se långsammare.",
	"Não queremos ser removidos, só que visitem example-shop.pt com menos frequência.",
	"Nem szeretnénk, ha törölnék az example-shop.hu oldalt, csak lassabban indexeljenek.",
	"Vi ønsker ikke at blive fjernet, bare at I crawler example-shop.dk langsommere.",
	"Your bot is welcome on example-shop.com, but please respect the crawl-delay.",
	"Your bot shouldn't crawl example-shop.com during business hours.",
	"Lassen Sie uns wissen, aus welchem Grund Ihr Bot example-shop.de besucht.",
	"Por qué dejan de visitar example-shop.es los fines de semana?",
	"Our terms prohibit scraping of example-shop.com; is your crawler compliant?",
	"We visited your page at the end of March and saw the bot on example-shop.com.",
	"We don't mind crawling, just not at night. example-shop.com",
	"We do not object to your crawling of example-shop.com.",
	"Our old site example-shop.com is no longer online.",
	"Is there a limit to how often you index example-shop.com?",
	"We are not opposed to indexing, but example-shop.com is slow.",
	"Please do not hesitate to crawl example-shop.com.",
	"You are allowed to crawl example-shop.com, but only at night.",
	"Please don't crawl faster than one page per second on example-shop.com.",
	"I saw your bot on example-shop.com. Not a problem, just curious who you are.",
	"We moved example-shop.com to a new server; the bot can continue as before.",
	"Your crawler keeps getting 403 errors on example-shop.com; that's our firewall, sorry.",
	"Wir haben nichts dagegen, dass Sie example-shop.de crawlen.",
	"Ihr Bot ist auf example-shop.de willkommen.",
	"Nous n'avons rien contre votre robot sur example-shop.fr.",
	"Votre robot est le bienvenu sur example-shop.fr.",
	"Non abbiamo nulla contro il vostro robot su example-shop.it.",
	"Su robot es bienvenido en example-shop.es, pero más despacio.",
	"O vosso robô é bem-vindo em example-shop.pt.",
	"Uw bot is welkom op example-shop.nl, maar iets trager graag.",
	"Jeres robot er velkommen på example-shop.dk.",
	"Er bot är välkommen på example-shop.se.",
	"A robotjuk szívesen látott vendég az example-shop.hu oldalon.",
	"Váš robot je na example-shop.cz vítán.",
	"Wasz bot jest mile widziany na example-shop.pl.",
	"Dlaczego Wasz bot nie respektuje robots.txt na example-shop.pl?",
	"Proč váš robot nerespektuje robots.txt na example-shop.cz?",
	"Warum beachtet Ihr Crawler die robots.txt auf example-shop.de nicht?",
	"Pourquoi votre robot ne respecte-t-il pas le robots.txt de example-shop.fr ?",
	"Perché il vostro crawler non rispetta il robots.txt di example-shop.it?",
	"¿Por qué su robot no respeta el robots.txt de example-shop.es?",
	"Por que o vosso robô não respeita o robots.txt de example-shop.pt?",
	"Waarom respecteert uw bot de robots.txt van example-shop.nl niet?",
	"Hvorfor respekterer jeres robot ikke robots.txt på example-shop.dk?",
	"Varför respekterar er bot inte robots.txt på example-shop.se?",
	"Miért nem tartja be a robotjuk az example-shop.hu robots.txt fájlját?",
	"Prečo váš robot nerešpektuje robots.txt na example-shop.sk?",
}

// TestParsePhrases classifies each phrase as the body of a message with a
// neutral subject.
func TestParsePhrases(t *testing.T) {
	for _, tc := range phraseCases {
		t.Run(tc.lang+"/"+tc.body, func(t *testing.T) {
			m := mailbot.Parse(plain("", tc.body))
			if m.Intent != tc.want {
				t.Errorf("Parse(%q).Intent = %q, want %q\nreasons: %q", tc.body, m.Intent, tc.want, m.Reasons)
			}
		})
	}
	for _, body := range otherPhrases {
		t.Run("other/"+body, func(t *testing.T) {
			if m := mailbot.Parse(plain("", body)); m.Intent != mailbot.IntentOther {
				t.Errorf("Parse(%q).Intent = %q, want other\nreasons: %q", body, m.Intent, m.Reasons)
			}
		})
	}
}
