package classify

import (
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/mailbot/message"
)

// TestExtraStopwordsDistinct checks that each distinctive word of an extra
// language names that language alone: a word listed for two would name
// either at random.
func TestExtraStopwordsDistinct(t *testing.T) {
	seen := map[string]string{}
	for lang, words := range extraStopwords {
		for _, w := range strings.Fields(words) {
			f := message.Fold(w)
			if other, ok := seen[f]; ok && other != lang {
				t.Errorf("extra stopword %q (%s) is also listed for %s", w, lang, other)
			}
			seen[f] = lang
		}
	}
}

// TestGuardWordsFolded checks that the word lists compared with folded
// tokens are folded themselves: an entry with a diacritic ("сайт" with
// й, "innéacs") would never match.
func TestGuardWordsFolded(t *testing.T) {
	sets := map[string][]string{
		"removalStems": removalStems, "blockedStems": blockedStems, "reStems": reStems, "legalStems": legalStems,
		"negatorStops": negatorStops, "listNouns": listNouns, "crawlStems": crawlStems, "siteNouns": siteNouns,
		"autoTexts": autoTexts, "autoSubjects": autoSubjects, "receiptPrefixes": receiptPrefixes,
	}
	maps := map[string]map[string]bool{
		"againWords": againWords, "againNegators": againNegators, "mayWords": mayWords, "backWords": backWords,
		"doubtWords": doubtWords, "ifWords": ifWords, "possibleWords": possibleWords, "askWords": askWords,
		"wishNegators": wishNegators, "negators": negators, "wantWords": wantWords, "deniedWishes": deniedWishes,
		"wishStops": wishStops, "wishThat": wishThat, "andWords": andWords, "askMarkers": askMarkers,
		"refusals": refusals, "blockedWords": blockedWords, "gratefulWords": gratefulWords,
	}
	for name, m := range maps {
		for w := range m {
			sets[name] = append(sets[name], w)
		}
	}
	for name, words := range sets {
		for _, w := range words {
			if f := message.Fold(w); f != w {
				t.Errorf("%s: %q is not folded (%q)", name, w, f)
			}
		}
	}
	for _, p := range doubtPairs {
		for _, w := range p {
			if f := message.Fold(w); f != w {
				t.Errorf("doubtPairs: %q is not folded (%q)", w, f)
			}
		}
	}
}
