package mailbot_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

// TestProcessUnclearGoesToStaff processes messages whose direction or
// scope is unclear: each is queued for staff, nothing is excluded, and the
// reasons that decided are stored with the message. An agreement to our
// proposal is applied.
func TestProcessUnclearGoesToStaff(t *testing.T) {
	tests := []struct {
		file     string
		unclear  string // a stored reason starting with it
		outcome  mailbot.Outcome
		excluded []string
	}{
		{"605-en-part-of-site-section.eml", "unclear: part of a site", mailbot.OutcomeQueued, nil},
		{"609-en-question-undecided.eml", "unclear: question", mailbot.OutcomeQueued, nil},
		{"613-en-negation-do-not-remove.eml", "unclear: negation", mailbot.OutcomeQueued, nil},
		{"616-en-not-a-site-email-address.eml", "unclear: not a site", mailbot.OutcomeQueued, nil},
		{"663-en-both-directions.eml", "unclear: both directions", mailbot.OutcomeQueued, nil},
		{"619-en-agree-yes-please.eml", "agree: 'yes' (en) to our quoted proposal", mailbot.OutcomeExcluded, []string{"greenfield-farm.co.uk"}},
	}
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		pol := policy.New(store, nil)
		proc := mailbot.New(pol, &mailbot.Options{Logger: quietLogger()}) // the real parser
		for _, tt := range tests {
			raw, err := os.ReadFile(filepath.Join(hardDir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := proc.Process(ctx, raw, tt.file)
			if err != nil {
				t.Fatalf("Process(%s): %v", tt.file, err)
			}
			if tt.outcome == mailbot.OutcomeQueued && !strings.HasPrefix(res.ReviewReason, tt.unclear) {
				t.Errorf("Process(%s).ReviewReason = %q, want it to start with %q", tt.file, res.ReviewReason, tt.unclear)
			}
			if res.Outcome != tt.outcome || !slices.Equal(res.Excluded, tt.excluded) {
				t.Errorf("Process(%s) = outcome %q, excluded %q; want %q, %q", tt.file, res.Outcome, res.Excluded, tt.outcome, tt.excluded)
			}
			var row db.MailMessage
			if err := dbtest.Gorm(store).WithContext(ctx).Where("message_id = ?", mailbot.Parse(raw).MessageID).First(&row).Error; err != nil {
				t.Fatalf("stored row of %s: %v", tt.file, err)
			}
			var reasons []string
			if err := json.Unmarshal([]byte(row.Reasons), &reasons); err != nil {
				t.Fatalf("stored reasons of %s = %q: %v", tt.file, row.Reasons, err)
			}
			if !slices.ContainsFunc(reasons, func(r string) bool { return strings.HasPrefix(r, tt.unclear) }) {
				t.Errorf("stored reasons of %s = %q, want one starting with %q", tt.file, reasons, tt.unclear)
			}
		}
		got := excludedSites(t, pol)
		if !slices.Equal(got, []string{"greenfield-farm.co.uk"}) {
			t.Errorf("excluded sites = %q, want only the agreed one", got)
		}
	})
}
