package mailbot_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

func TestReview(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		proc, pol, store := newProcessor(t, dsn)
		ctx := context.Background()
		ids := map[string]int64{}
		for _, f := range []string{"exclude-one.eml", "exclude-nosite.eml", "reinclude.eml", "other.eml", "auto.eml"} {
			res, err := proc.Process(ctx, readTestdata(t, f), f)
			if err != nil {
				t.Fatal(err)
			}
			ids[f] = res.ID
		}

		items, err := proc.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, it := range items {
			got = append(got, it.ID)
			if it.Reason == "" || it.From == "" || it.Date.IsZero() || it.Domains == nil {
				t.Errorf("Pending item %+v lacks reason, from, date or domains", it)
			}
		}
		want := []int64{ids["exclude-nosite.eml"], ids["reinclude.eml"], ids["other.eml"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Pending ids (-want +got):\n%s", diff)
		}

		// An exclusion that names no site needs the sites.
		if _, err := proc.Approve(ctx, ids["exclude-nosite.eml"], "anna", nil); !errors.Is(err, mailbot.ErrNeedSites) {
			t.Errorf("Approve(no site, no --site) = %v, want ErrNeedSites", err)
		}
		ap, err := proc.Approve(ctx, ids["exclude-nosite.eml"], "anna", []string{"https://www.annoyed-example.com/"})
		if err != nil {
			t.Fatalf("Approve(no site, --site) = %v", err)
		}
		if ap.Action != "exclude" || !cmp.Equal(ap.Sites, []string{"annoyed-example.com"}) {
			t.Errorf("Approve = %+v, want exclude annoyed-example.com", ap)
		}
		_, ex, err := pol.Check(ctx, "annoyed-example.com")
		if err != nil || ex == nil || ex.Actor != "anna" || ex.Source != "review" || ex.Evidence != "exclude-nosite.20260303080000@mail.gmail.com" {
			t.Errorf("Check(annoyed-example.com) = %+v, %v; want excluded by anna from review with the Message-ID", ex, err)
		}

		// Approving a re-inclusion re-includes, with the staff member as actor.
		ap, err = proc.Approve(ctx, ids["reinclude.eml"], "bob", nil)
		if err != nil {
			t.Fatalf("Approve(reinclude) = %v", err)
		}
		if ap.Action != "reinclude" || !cmp.Equal(ap.Sites, []string{"bakery-example.com"}) || len(ap.NotExcluded) != 0 {
			t.Errorf("Approve(reinclude) = %+v, want reinclude bakery-example.com", ap)
		}
		if _, ex, _ := pol.Check(ctx, "bakery-example.com"); ex != nil {
			t.Errorf("bakery-example.com still excluded after approving the re-inclusion")
		}
		hist, _ := pol.History(ctx, "bakery-example.com")
		if last := hist[len(hist)-1]; last.Kind != db.EventReinclude || last.Actor != "bob" {
			t.Errorf("last event = %s by %s, want reinclude by bob", last.Kind, last.Actor)
		}

		// Twice is refused; unknown ids and non-queued messages too.
		if _, err := proc.Approve(ctx, ids["reinclude.eml"], "bob", nil); !errors.Is(err, mailbot.ErrNotPending) {
			t.Errorf("Approve twice = %v, want ErrNotPending", err)
		}
		if err := proc.Dismiss(ctx, ids["auto.eml"], "bob"); !errors.Is(err, mailbot.ErrNotPending) {
			t.Errorf("Dismiss(auto) = %v, want ErrNotPending", err)
		}
		if err := proc.Dismiss(ctx, 99999, "bob"); !errors.Is(err, mailbot.ErrNoMessage) {
			t.Errorf("Dismiss(99999) = %v, want ErrNoMessage", err)
		}
		if err := proc.Dismiss(ctx, ids["other.eml"], ""); !errors.Is(err, policy.ErrNoActor) {
			t.Errorf("Dismiss without by = %v, want ErrNoActor", err)
		}
		if _, err := proc.Approve(ctx, ids["other.eml"], "bob", []string{"co.uk"}); !errors.Is(err, policy.ErrBadSite) {
			t.Errorf("Approve(--site co.uk) = %v, want ErrBadSite", err)
		}
		if err := proc.Dismiss(ctx, ids["other.eml"], "bob"); err != nil {
			t.Errorf("Dismiss(other) = %v", err)
		}
		var row db.MailMessage
		dbtest.Gorm(store).Where("id = ?", ids["other.eml"]).Take(&row)
		if row.ReviewStatus != mailbot.ReviewDismissed || row.ReviewedBy != "bob" || row.ReviewedAt == nil {
			t.Errorf("dismissed row = {%q %q %v}, want dismissed by bob with a time", row.ReviewStatus, row.ReviewedBy, row.ReviewedAt)
		}
		if items, _ := proc.Pending(ctx); len(items) != 0 {
			t.Errorf("Pending after review = %d items, want 0", len(items))
		}
	})
}

// Re-including a site that is not excluded is not an error: it is reported.
func TestApproveReincludeNotExcluded(t *testing.T) {
	proc, _, _ := newSQLiteProcessor(t)
	ctx := context.Background()
	res, err := proc.Process(ctx, readTestdata(t, "reinclude.eml"), "t")
	if err != nil {
		t.Fatal(err)
	}
	ap, err := proc.Approve(ctx, res.ID, "anna", nil)
	if err != nil {
		t.Fatalf("Approve = %v", err)
	}
	if !cmp.Equal(ap.NotExcluded, []string{"bakery-example.com"}) {
		t.Errorf("Approve.NotExcluded = %v, want [bakery-example.com]", ap.NotExcluded)
	}
}
