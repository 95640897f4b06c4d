package mailbot_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

var processTests = []struct {
	name         string
	file         string
	outcome      mailbot.Outcome
	reviewStatus string
	excluded     []string
}{
	{"exclude one site", "exclude-one.eml", mailbot.OutcomeExcluded, "", []string{"bakery-example.com"}},
	{"exclude two sites", "exclude-two.eml", mailbot.OutcomeExcluded, "", []string{"garden-example.org", "toys-example.co.uk"}},
	{"exclude naming no site", "exclude-nosite.eml", mailbot.OutcomeQueued, mailbot.ReviewPending, nil},
	{"reinclude", "reinclude.eml", mailbot.OutcomeQueued, mailbot.ReviewPending, nil},
	{"other", "other.eml", mailbot.OutcomeQueued, mailbot.ReviewPending, nil},
	{"auto", "auto.eml", mailbot.OutcomeIgnored, "", nil},
	{"no Message-ID", "no-message-id.eml", mailbot.OutcomeExcluded, "", []string{"oldschool-example.com"}},
}

func TestProcess(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		proc, pol, store := newProcessor(t, dsn)
		ctx := context.Background()
		for _, tt := range processTests {
			t.Run(tt.name, func(t *testing.T) {
				raw := readTestdata(t, tt.file)
				res, err := proc.Process(ctx, raw, tt.file)
				if err != nil {
					t.Fatalf("Process(%s): %v", tt.file, err)
				}
				if res.Duplicate {
					t.Errorf("Process(%s).Duplicate = true, want false", tt.file)
				}
				if res.Outcome != tt.outcome {
					t.Errorf("Process(%s).Outcome = %q, want %q", tt.file, res.Outcome, tt.outcome)
				}
				if res.ReviewStatus != tt.reviewStatus {
					t.Errorf("Process(%s).ReviewStatus = %q, want %q", tt.file, res.ReviewStatus, tt.reviewStatus)
				}
				if tt.reviewStatus != "" && res.ReviewReason == "" {
					t.Errorf("Process(%s).ReviewReason is empty for a queued message", tt.file)
				}
				if diff := cmp.Diff(tt.excluded, res.Excluded); diff != "" {
					t.Errorf("Process(%s).Excluded (-want +got):\n%s", tt.file, diff)
				}
				var row db.MailMessage
				if err := dbtest.Gorm(store).Where("id = ?", res.ID).Take(&row).Error; err != nil {
					t.Fatalf("stored row: %v", err)
				}
				sum := sha256.Sum256(raw)
				if string(row.Raw) != string(raw) || row.Sha256 != hex.EncodeToString(sum[:]) || row.Size != int64(len(raw)) {
					t.Errorf("stored raw/sha256/size do not match the message")
				}
				if row.Outcome != string(tt.outcome) || row.ReviewStatus != tt.reviewStatus || row.Source != tt.file {
					t.Errorf("stored outcome %q review %q source %q, want %q %q %q", row.Outcome, row.ReviewStatus, row.Source,
						tt.outcome, tt.reviewStatus, tt.file)
				}
				// Processing the same message again changes nothing.
				events := countRows(t, store, &db.PolicyEvent{}, "")
				again, err := proc.Process(ctx, raw, "again")
				if err != nil {
					t.Fatalf("Process again: %v", err)
				}
				if !again.Duplicate || again.ID != res.ID || again.Outcome != tt.outcome {
					t.Errorf("Process again = {Duplicate %v ID %d Outcome %q}, want {true %d %q}", again.Duplicate, again.ID, again.Outcome, res.ID, tt.outcome)
				}
				if n := countRows(t, store, &db.PolicyEvent{}, ""); n != events {
					t.Errorf("policy events after processing again = %d, want %d", n, events)
				}
			})
		}
		want := []string{"bakery-example.com", "garden-example.org", "oldschool-example.com", "toys-example.co.uk"}
		if diff := cmp.Diff(want, excludedSites(t, pol)); diff != "" {
			t.Errorf("exclusions (-want +got):\n%s", diff)
		}
		if n := countRows(t, store, &db.MailMessage{}, ""); n != int64(len(processTests)) {
			t.Errorf("stored messages = %d, want %d", n, len(processTests))
		}
	})
}

func TestProcessEvidence(t *testing.T) {
	proc, pol, store := newSQLiteProcessor(t)
	ctx := context.Background()
	if _, err := proc.Process(ctx, readTestdata(t, "exclude-two.eml"), "test"); err != nil {
		t.Fatal(err)
	}
	_, ex, err := pol.Check(ctx, "garden-example.org")
	if err != nil || ex == nil {
		t.Fatalf("Check(garden-example.org) = %v, %v; want an exclusion", ex, err)
	}
	const id = "exclude-two.20260302100000@hosting-example.net"
	if ex.Actor != "ops@hosting-example.net" || ex.Evidence != id || ex.Source != "mail" || ex.Reason != "email: Opt out" {
		t.Errorf("exclusion = {Actor %q Evidence %q Source %q Reason %q}, want the sender, the Message-ID, mail, the subject",
			ex.Actor, ex.Evidence, ex.Source, ex.Reason)
	}
	var ev db.PolicyEvent
	if err := dbtest.Gorm(store).Where("id = ?", ex.EventID).Take(&ev).Error; err != nil {
		t.Fatal(err)
	}
	var detail map[string]any
	if err := json.Unmarshal([]byte(ev.Detail), &detail); err != nil {
		t.Fatalf("event detail %q: %v", ev.Detail, err)
	}
	if detail["message_id"] != id || detail["date"] != "2026-03-02T10:00:00Z" || detail["auth_domain_matches_site"] != false {
		t.Errorf("detail = %s, want message_id, date and auth_domain_matches_site false", ev.Detail)
	}
	auth, _ := detail["auth"].(map[string]any)
	if auth["dkim"] != "pass" || auth["domain"] != "hosting-example.net" {
		t.Errorf("detail auth = %v, want dkim pass, domain hosting-example.net", auth)
	}

	// The site's own people: the authenticated domain matches.
	if _, err := proc.Process(ctx, readTestdata(t, "exclude-one.eml"), "test"); err != nil {
		t.Fatal(err)
	}
	hist, err := pol.History(ctx, "bakery-example.com")
	if err != nil || len(hist) != 1 {
		t.Fatalf("History(bakery-example.com) = %d events, %v; want 1", len(hist), err)
	}
	if !strings.Contains(hist[0].Detail, `"auth_domain_matches_site":true`) {
		t.Errorf("detail = %s, want auth_domain_matches_site true", hist[0].Detail)
	}
}

func TestProcessStableIDWithoutMessageID(t *testing.T) {
	proc, _, _ := newSQLiteProcessor(t)
	raw := readTestdata(t, "no-message-id.eml")
	a, err := proc.Process(context.Background(), raw, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := proc.Process(context.Background(), raw, "b")
	if err != nil {
		t.Fatal(err)
	}
	if a.MessageID == "" || a.MessageID != b.MessageID || !b.Duplicate {
		t.Errorf("ids %q, %q (duplicate %v), want one stable id and a duplicate", a.MessageID, b.MessageID, b.Duplicate)
	}
}

func TestProcessReviewFlag(t *testing.T) {
	proc, pol, _ := newSQLiteProcessor(t)
	raw := []byte("Message-ID: <flag@x>\r\nX-Test-Intent: exclude\r\nX-Test-Domains: flagged-example.com\r\nX-Test-Review: too large\r\n\r\nstop\r\n")
	res, err := proc.Process(context.Background(), raw, "t")
	if err != nil {
		t.Fatal(err)
	}
	// A message the parser could not read whole is not acted on alone:
	// its words may not be what the sender wrote.
	if res.Outcome != mailbot.OutcomeQueued || res.ReviewStatus != mailbot.ReviewPending || !strings.Contains(res.ReviewReason, "too large") {
		t.Errorf("Process = {%q %q %q}, want queued, pending, reason with the parser's", res.Outcome, res.ReviewStatus, res.ReviewReason)
	}
	if got := excludedSites(t, pol); len(got) != 0 {
		t.Errorf("exclusions = %v, want none", got)
	}
}

func TestProcessParserPanic(t *testing.T) {
	store := dbtest.Open(t, "sqlite")
	pol := newPolicy(store)
	proc := mailbot.New(pol, &mailbot.Options{Logger: quietLogger(), Parse: func([]byte) *mailbot.Message { panic("boom") }})
	res, err := proc.Process(context.Background(), []byte("Subject: x\r\n\r\nbody\r\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != mailbot.OutcomeQueued || !strings.Contains(res.ReviewReason, "boom") {
		t.Errorf("Process with a panicking parser = {%q %q}, want queued with the reason", res.Outcome, res.ReviewReason)
	}
}

// A message stored concurrently by many workers (or several watchers) is
// applied exactly once.
func TestProcessConcurrent(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		proc, _, store := newProcessor(t, dsn)
		const workers = 8
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			fresh int
			errs  []error
		)
		for i := range workers {
			wg.Go(func() {
				// Two messages each: one shared, one per worker.
				for _, raw := range [][]byte{
					testMessage("shared@x", "exclude", "shared-example.com"),
					testMessage(fmt.Sprintf("own-%d@x", i), "exclude", fmt.Sprintf("own%d-example.com", i)),
				} {
					res, err := proc.Process(context.Background(), raw, "t")
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else if !res.Duplicate && strings.HasPrefix(res.MessageID, "shared") {
						fresh++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("Process errors: %v", errs)
		}
		if fresh != 1 {
			t.Errorf("shared message stored %d times, want 1", fresh)
		}
		if n := countRows(t, store, &db.PolicyEvent{}, "site = ?", "shared-example.com"); n != 1 {
			t.Errorf("policy events for shared-example.com = %d, want 1", n)
		}
		if n := countRows(t, store, &db.MailMessage{}, ""); n != workers+1 {
			t.Errorf("stored messages = %d, want %d", n, workers+1)
		}
	})
}

// Process fails, and stores nothing, when the database is gone: the caller
// keeps the message.
func TestProcessDatabaseDown(t *testing.T) {
	proc, _, store := newSQLiteProcessor(t)
	store.Close()
	_, err := proc.Process(context.Background(), readTestdata(t, "exclude-one.eml"), "t")
	if err == nil {
		t.Fatal("Process on a closed database succeeded, want an error")
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("Process error = %v, want a database error", err)
	}
}

// When the exclusion itself fails but the database works, the message is
// kept as failed and queued for staff: never lost.
func TestProcessExclusionFails(t *testing.T) {
	proc, _, store := newSQLiteProcessor(t)
	if err := dbtest.Gorm(store).Exec("DROP TABLE exclusions").Error; err != nil {
		t.Fatal(err)
	}
	res, err := proc.Process(context.Background(), readTestdata(t, "exclude-two.eml"), "t")
	if err != nil {
		t.Fatalf("Process = %v, want the message stored as failed", err)
	}
	if res.Outcome != mailbot.OutcomeFailed || res.ReviewStatus != mailbot.ReviewPending || !strings.Contains(res.ReviewReason, "exclusion failed") {
		t.Errorf("Process = {%q %q %q}, want failed, pending, exclusion failed", res.Outcome, res.ReviewStatus, res.ReviewReason)
	}
	var row db.MailMessage
	if err := dbtest.Gorm(store).Where("id = ?", res.ID).Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.Outcome != string(mailbot.OutcomeFailed) || row.ReviewStatus != mailbot.ReviewPending {
		t.Errorf("stored row = {%q %q}, want failed, pending", row.Outcome, row.ReviewStatus)
	}
	if n := countRows(t, store, &db.PolicyEvent{}, ""); n != 0 {
		t.Errorf("policy events = %d, want 0 (rolled back)", n)
	}
}

// TestUnverifiedLimit: one sender not verified for the sites excludes at
// most ten of them in 24 hours; the message that would pass the limit goes
// to staff whole, excluding nothing; sites already excluded do not count,
// and the next day the sender may exclude again. Its pages stay kept.
func TestUnverifiedLimit(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		clock := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		now := func() time.Time { return clock }
		pol := policy.New(store, &policy.Options{Now: now})
		proc := mailbot.New(pol, &mailbot.Options{Parse: fakeParse, Logger: quietLogger(), Now: now})
		for i := range 9 {
			res, err := proc.Process(ctx, testMessage(fmt.Sprintf("m%d@x", i), "exclude", fmt.Sprintf("site%d.com", i)), "test")
			if err != nil || res.Outcome != mailbot.OutcomeExcluded {
				t.Fatalf("message %d = %+v, %v; want excluded", i, res, err)
			}
		}
		// Two more sites: eleven in all, over the limit; none applied.
		res, err := proc.Process(ctx, testMessage("m9@x", "exclude", "site9.com site10.com"), "test")
		if err != nil || res.Outcome != mailbot.OutcomeQueued || !res.NeedsReview() || !strings.Contains(res.ReviewReason, "more than the 10 allowed") {
			t.Fatalf("the message over the limit = %+v, %v; want queued for staff", res, err)
		}
		if got := excludedSites(t, pol); len(got) != 9 {
			t.Errorf("%d sites excluded, want 9: %v", len(got), got)
		}
		// A site already excluded does not count; one more new one does.
		if res, _ := proc.Process(ctx, testMessage("m10@x", "exclude", "site0.com site9.com"), "test"); res.Outcome != mailbot.OutcomeExcluded {
			t.Errorf("tenth site with a repeat = %+v; want excluded", res)
		}
		if res, _ := proc.Process(ctx, testMessage("m11@x", "exclude", "site11.com"), "test"); res.Outcome != mailbot.OutcomeQueued {
			t.Errorf("eleventh site = %+v; want queued", res)
		}
		// A sender verified for the site is not limited.
		verified := strings.Replace(string(testMessage("m12@x", "exclude", "example.net")), "\r\n\r\n",
			"\r\nAuthentication-Results: mx1.lohisoft.com; dkim=pass header.d=example.net\r\n\r\n", 1)
		if res, _ := proc.Process(ctx, []byte(verified), "test"); res.Outcome != mailbot.OutcomeExcluded {
			t.Errorf("verified sender's exclusion = %+v; want excluded", res)
		}
		clock = clock.Add(mailbot.UnverifiedWindow + time.Second)
		if res, _ := proc.Process(ctx, testMessage("m13@x", "exclude", "site11.com"), "test"); res.Outcome != mailbot.OutcomeExcluded {
			t.Errorf("the next day = %+v; want excluded", res)
		}
	})
}
