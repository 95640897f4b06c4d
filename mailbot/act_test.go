package mailbot_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lohisoft/lohibot/mailbot"
)

// actCorpora are every corpus of the project with expected
// classifications: the act-alone rule is checked on all of them.
var actCorpora = []string{
	"../testdata/mail", "../testdata/mail-extra", "../testdata/mail-hard", "../testdata/mail-holdout",
	"../testdata/mail-hard-shared", "../testdata/mail-act", "../testdata/mail-fresh",
	"../testdata/mail-fresh2", "../testdata/mail-fresh3",
	"../testdata/mail-fresh4",
}

// heldOut are the corpora no rule has been tuned on: they measure how the
// rules read mail written by people who never saw them. No wrong apply is
// allowed on them either, but their intent accuracy is what it is, so it
// is logged, not held to the 90% the tuned corpora must keep.
var heldOut = map[string]bool{"mail-fresh2": true, "mail-fresh4": true}

// TestActAlone checks the act-alone rule on every corpus: no message is
// applied without a human unless it is an exclusion of exactly the right
// sites (a message whose expected intent is "exclude" with the sites it
// names) and, where the corpus lists safe_actions, "apply" is among them;
// no action falls outside safe_actions; Parse's action is what Decide
// says, and the intent is right on at least 90% of each corpus but the
// held-out ones. It logs, per corpus, the intent accuracy,
// the wrong applies and the share of clear exclusions (an exclusion with
// its sites named) that are applied.
func TestActAlone(t *testing.T) {
	for _, dir := range actCorpora {
		name := filepath.Base(dir)
		var n, right, wrongApply, clear, clearApplied, applied int
		for _, want := range loadExpected(t, dir) {
			raw, err := os.ReadFile(filepath.Join(dir, want.File))
			if err != nil {
				t.Fatal(err)
			}
			m := mailbot.Parse(raw)
			n++
			got := string(m.Intent)
			if got == want.Intent || slices.Contains(want.Accept, got) {
				right++
			}
			if want.Action != "" && string(m.Action) != want.Action {
				t.Errorf("%s/%s: action %q, want %q\nreasons: %q", name, want.File, m.Action, want.Action, m.Reasons)
			}
			if d := mailbot.Decide(m); d.Action != m.Action {
				t.Errorf("%s/%s: Parse says action %q, Decide says %q", name, want.File, m.Action, d.Action)
			}
			wantDomains := want.Domains
			if wantDomains == nil {
				wantDomains = []string{}
			}
			isClear := want.Intent == "exclude" && len(wantDomains) > 0
			if want.Clear != nil {
				isClear = isClear && *want.Clear
			}
			if want.SafeActions != nil && !slices.Contains(want.SafeActions, string(m.Action)) {
				t.Errorf("%s/%s: action %q is not among the safe actions %q\nreasons: %q", name, want.File, m.Action, want.SafeActions, m.Reasons)
			}
			if isClear {
				clear++
			}
			if m.Action != mailbot.ActionApply {
				continue
			}
			applied++
			safe := want.SafeActions == nil || slices.Contains(want.SafeActions, "apply")
			if !isClear || !safe || got != "exclude" || !slices.Equal(m.Domains, wantDomains) {
				wrongApply++
				t.Errorf("%s/%s applied without a human: intent %s %q, want %s %q (%s)\nreasons: %q",
					name, want.File, got, m.Domains, want.Intent, wantDomains, want.Note, m.Reasons)
				continue
			}
			clearApplied++
		}
		t.Logf("%s: intent %d/%d, applied %d, wrong applies %d, clear exclusions applied %d/%d",
			name, right, n, applied, wrongApply, clearApplied, clear)
		if right*10 < n*9 && !heldOut[name] {
			t.Errorf("%s: intent right on %d/%d, want at least 90%%", name, right, n)
		}
	}
}
