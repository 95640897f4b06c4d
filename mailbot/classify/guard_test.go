package classify_test

import (
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/mailbot/classify"
)

// TestActGuards checks each guard of the act-alone rule on its own: an
// exclusion that one independent reading doubts goes to staff, with that
// reading among its reasons, and a plain request beside the same
// vocabulary is still applied.
func TestActGuards(t *testing.T) {
	tests := []struct {
		name, subject, body string
		action              classify.Action
		reason              string // a reason containing it; "" when any will do
	}{
		{"removal from a list of excluded sites", "x", "Please remove example.com from your list of excluded sites.", classify.ActionReview, ""},
		{"removal aimed at blocked sites, Croatian", "x", "Molimo uklonite primjer.hr s popisa blokiranih stranica.", classify.ActionReview, ""},
		{"back into the index", "x", "Bitte nehmen Sie beispiel.de zurück in Ihren Index.", classify.ActionReview, ""},
		{"again in the request's sentence", "x", "Bitte crawlen Sie beispiel.de wieder und nehmen Sie die Seite in Ihren Index.", classify.ActionReview, ""},
		{"stop … again stays a stop", "x", "Please stop crawling example.com again.", classify.ActionApply, ""},
		{"doubt beside the request", "x", "We are not sure yet. Maybe you could remove example.com from your index", classify.ActionReview, "not a plain request"},
		{"doubt with a plain request elsewhere", "x", "We wondered about it for a while. Please stop crawling example.com.", classify.ActionApply, ""},
		{"question subject, question body", "Removal?", "Will removing example.com from your index also delete the cached pages?", classify.ActionReview, ""},
		{"legal words, request only in the subject", "Stop crawling example.it", "Our lawyer will contact you about damages.", classify.ActionReview, "legal"},
		{"legal words, a polite question is a request", "x", "Our lawyer asks: will you stop crawling example.it?", classify.ActionApply, ""},
		{"legal words with a plain request", "x", "I am the company's lawyer. Please stop crawling example.it.", classify.ActionApply, ""},
		{"robots.txt lines ask nothing", "robots.txt", "Is this right?\n\nUser-agent: LohiSoftBot\nDisallow: /\n\nfor example.com", classify.ActionReview, ""},
		{"denied continuing is no re-inclusion", "x", "Nous ne voulons pas que votre robot continue à visiter exemple.fr. Merci de retirer exemple.fr de votre index.", classify.ActionApply, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := classifyText(tt.subject, tt.body)
			if res.Action != tt.action {
				t.Fatalf("action %q, want %q (intent %s)\nreasons: %q", res.Action, tt.action, res.Intent, res.Reasons)
			}
			if tt.reason == "" {
				return
			}
			for _, r := range res.Reasons {
				if strings.Contains(r, tt.reason) {
					return
				}
			}
			t.Errorf("no review reason with %q\nreasons: %q", tt.reason, res.Reasons)
		})
	}
}
