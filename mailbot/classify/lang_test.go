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
