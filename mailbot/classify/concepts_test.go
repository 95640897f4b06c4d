package classify_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/mailbot/classify"
)

// TestConceptPhrases reads every line of testdata/mail-phrases/concepts.tsv
// (language, intent, one message body) and checks the intent: exclusion,
// re-inclusion, and the look-alikes that ask nothing (a negated stop, a
// threat of what the writer will do) in each language the mailbox sees.
// Each exclusion (plain, its site named) must be applied without a human,
// automatic mail ignored, and everything else sent to staff.
func TestConceptPhrases(t *testing.T) {
	f, err := os.Open("../../testdata/mail-phrases/concepts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	perLang := map[string]map[classify.Intent]int{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.SplitN(text, "\t", 3)
		if len(cols) != 3 {
			t.Fatalf("concepts.tsv:%d: want 3 tab-separated columns", line)
		}
		// "exclude/review": an exclusion that is not plain enough to apply.
		intent, review := strings.CutSuffix(cols[1], "/review")
		lang, want, body := cols[0], classify.Intent(intent), strings.ReplaceAll(cols[2], `\n`, "\n")
		r := classifyText("", body)
		if intent == "review" {
			// Whatever it reads, it must go to staff.
			if r.Action != classify.ActionReview {
				t.Errorf("concepts.tsv:%d (%s) %q: action %s, want review\nreasons: %q", line, lang, body, r.Action, r.Reasons)
			}
			continue
		}
		if r.Intent != want {
			t.Errorf("concepts.tsv:%d (%s) %q: intent %s, want %s\nreasons: %q", line, lang, body, r.Intent, want, r.Reasons)
		}
		// Every exclusion of the table is plain and names its site, so it
		// is applied without a human; nothing else ever is.
		wantAction := classify.ActionReview
		switch want {
		case classify.IntentExclude:
			if !review {
				wantAction = classify.ActionApply
			}
		case classify.IntentAuto:
			wantAction = classify.ActionIgnore
		}
		if r.Action != wantAction {
			t.Errorf("concepts.tsv:%d (%s) %q: action %s, want %s\nreasons: %q", line, lang, body, r.Action, wantAction, r.Reasons)
		}
		if perLang[lang] == nil {
			perLang[lang] = map[classify.Intent]int{}
		}
		perLang[lang][want]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Each language the rules were written for has both directions and a
	// look-alike in the table.
	for _, lang := range []string{"lt", "lv", "et", "ga", "mt", "ca", "eu", "gl", "is", "hr", "sr", "ru", "sq", "ro", "tr"} {
		n := perLang[lang]
		if n[classify.IntentExclude] == 0 || n[classify.IntentReinclude] == 0 || n[classify.IntentOther] == 0 {
			t.Errorf("concepts.tsv: %s lacks an exclusion, a re-inclusion or a look-alike: %v", lang, n)
		}
	}
}
