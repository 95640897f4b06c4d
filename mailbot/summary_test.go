package mailbot_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/mailbot"
)

// TestImportSummaryCount: one tally for Import and the watcher's summary.
func TestImportSummaryCount(t *testing.T) {
	var sum mailbot.ImportSummary
	for _, m := range []struct {
		res *mailbot.Result
		err error
	}{
		{&mailbot.Result{Outcome: mailbot.OutcomeExcluded}, nil},
		{&mailbot.Result{Outcome: mailbot.OutcomeExcluded, Duplicate: true}, nil},
		{&mailbot.Result{Outcome: mailbot.OutcomeQueued}, nil},
		{&mailbot.Result{Outcome: mailbot.OutcomeIgnored}, nil},
		{&mailbot.Result{Outcome: mailbot.OutcomeFailed}, nil},
		{nil, errors.New("not stored")},
	} {
		sum.Count(m.res, m.err)
	}
	want := mailbot.ImportSummary{Messages: 6, Excluded: 1, Queued: 1, Ignored: 1, Failed: 2, Duplicates: 1}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}
