package mailbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
)

// ErrNoMessage is returned when a review names a message id that does not
// exist.
var ErrNoMessage = errors.New("mailbot: no such message")

// ErrNotPending is returned when a review names a message that does not
// wait for staff (never queued, or already approved or dismissed).
var ErrNotPending = errors.New("mailbot: message is not waiting for review")

// ErrNeedSites is returned when approving a message that names no site to
// act on: the staff member must name the sites.
var ErrNeedSites = errors.New("mailbot: the message names no site")

// SourceReview is the policy.Change Source of changes approved in review.
const SourceReview = "review"

// ReviewItem is one message waiting for staff.
type ReviewItem struct {
	ID int64 `json:"id"`
	// Date is the message's Date header, or when it was received when it
	// has none.
	Date       time.Time `json:"date"`
	ReceivedAt time.Time `json:"received_at"`
	From       string    `json:"from"`
	Intent     Intent    `json:"intent"`
	Domains    []string  `json:"domains"`
	Subject    string    `json:"subject"`
	Reason     string    `json:"reason"`
	MessageID  string    `json:"message_id"`
	Outcome    Outcome   `json:"outcome"`
	AuthDomain string    `json:"auth_domain"`
	// Text is the first lines of the sender's new text (at most
	// PreviewLines lines), to decide without opening the message.
	Text string `json:"text"`
}

// PreviewLines is how many lines of new text ReviewItem.Text holds.
const PreviewLines = 3

// preview returns the first n non-blank lines of text, each cut to 200
// characters.
func preview(text string, n int) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > 200 {
			l = string(r[:199]) + "…"
		}
		out = append(out, l)
		if len(out) == n {
			break
		}
	}
	return strings.Join(out, "\n")
}

// Pending lists the messages waiting for staff, oldest first. It does I/O.
func (p *Processor) Pending(ctx context.Context) ([]ReviewItem, error) {
	rows, err := p.store.MailMessagesInReview(ctx, ReviewPending)
	if err != nil {
		return nil, fmt.Errorf("mailbot: list review: %w", err)
	}
	out := make([]ReviewItem, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		it := ReviewItem{ID: r.ID, Date: r.ReceivedAt.UTC(), ReceivedAt: r.ReceivedAt.UTC(), From: r.FromAddr,
			Intent: Intent(r.Intent), Domains: strings.Fields(r.Domains), Subject: r.Subject,
			Reason: r.ReviewReason, MessageID: r.MessageID, Outcome: Outcome(r.Outcome), AuthDomain: r.AuthDomain}
		if r.SentDate != nil {
			it.Date = r.SentDate.UTC()
		}
		it.Text = preview(Inspect(r.Raw).NewText, PreviewLines)
		if it.Domains == nil {
			it.Domains = []string{}
		}
		out = append(out, it)
	}
	return out, nil
}

// Approval is what a staff decision on a message did: approving it, or
// correcting what was done with it.
type Approval struct {
	ID        int64  `json:"id"`
	MessageID string `json:"message_id"`
	Intent    Intent `json:"intent"`
	// Action is "exclude", "reinclude" or "dismiss".
	Action string   `json:"action"`
	Sites  []string `json:"sites"`
	// Already lists the sites of an exclusion that were excluded already.
	Already []string `json:"already_excluded,omitempty"`
	// NotExcluded lists the sites of a re-inclusion that were not excluded
	// (nothing to undo).
	NotExcluded []string `json:"not_excluded,omitempty"`
	By          string   `json:"by"`
	// ReviewStatus is the message's review status afterwards.
	ReviewStatus string `json:"review_status"`
}

// Actions of a staff decision (Approval.Action).
const (
	ActionExclude   = "exclude"
	ActionReinclude = "reinclude"
	ActionDismiss   = "dismiss"
)

// Approve applies a queued message on behalf of the staff member by, and
// marks it approved. A re-inclusion re-includes its sites (policy.Reinclude
// with by as the actor); an exclusion (one that named no site, failed, or
// was flagged for review) excludes its sites; any other message is
// treated as an exclusion of the given sites. sites, when not empty,
// replaces the sites named in the message; a message that names none
// needs them (ErrNeedSites). Everything happens in one transaction.
func (p *Processor) Approve(ctx context.Context, id int64, by string, sites []string) (*Approval, error) {
	return p.decide(ctx, id, by, sites, "", true)
}

// Exclude excludes, on behalf of the staff member by, the sites of message
// id (or sites, when not empty), with the message as evidence, whatever
// was decided about it before: a correction of a message read as something
// else. A message waiting for review is marked approved. Everything happens
// in one transaction.
func (p *Processor) Exclude(ctx context.Context, id int64, by string, sites []string) (*Approval, error) {
	return p.decide(ctx, id, by, sites, ActionExclude, false)
}

// Reinclude re-includes, on behalf of the staff member by, the sites of
// message id with the message as evidence: the sites an exclusion from this
// message applied (an exclusion applied by mistake is undone) and the sites
// it names, or sites when not empty. Sites that are not excluded are listed
// in NotExcluded. A message waiting for review is marked approved.
func (p *Processor) Reinclude(ctx context.Context, id int64, by string, sites []string) (*Approval, error) {
	return p.decide(ctx, id, by, sites, ActionReinclude, false)
}

// Dismiss marks a queued message as seen by the staff member by, with no
// action, and records that decision in the policy log (one event per site
// the message names, or one without a site) with the message as evidence.
func (p *Processor) Dismiss(ctx context.Context, id int64, by string) error {
	_, err := p.decide(ctx, id, by, nil, ActionDismiss, true)
	return err
}

// decide applies a staff decision to message id in one transaction. action
// "" means the message's own intent (approve). pendingOnly refuses a
// message that does not wait for review.
func (p *Processor) decide(ctx context.Context, id int64, by string, sites []string, action string, pendingOnly bool) (*Approval, error) {
	if strings.TrimSpace(by) == "" {
		return nil, policy.ErrNoActor
	}
	var override []string
	for _, s := range sites {
		site, err := policy.SiteOf(s)
		if err != nil {
			return nil, err
		}
		override = appendUnique(override, site)
	}
	var ap *Approval
	err := p.store.InTx(ctx, func(tx *db.Tx) error {
		row, err := messageRow(ctx, tx, id, pendingOnly)
		if err != nil {
			return err
		}
		act := action
		if act == "" {
			act = ActionExclude
			if Intent(row.Intent) == IntentReinclude {
				act = ActionReinclude
			}
		}
		ap = &Approval{ID: row.ID, MessageID: row.MessageID, Intent: Intent(row.Intent), Action: act, By: by,
			ReviewStatus: row.ReviewStatus}
		targets := override
		if len(targets) == 0 && act == ActionReinclude {
			// What this message excluded, when it was applied by mistake.
			evs, err := tx.EventsByEvidenceKind(ctx, row.MessageID, db.EventExclude)
			if err != nil {
				return err
			}
			for _, ev := range evs {
				targets = appendUnique(targets, ev.Site)
			}
		}
		if len(targets) == 0 {
			for _, d := range strings.Fields(row.Domains) {
				if site, err := policy.SiteOf(d); err == nil {
					targets = appendUnique(targets, site)
				}
			}
		}
		if len(targets) == 0 && act != ActionDismiss {
			return fmt.Errorf("%w: message %d (%s): name the sites to act on, or dismiss it", ErrNeedSites, row.ID, row.Intent)
		}
		ap.Sites = targets
		var auth Auth
		_ = json.Unmarshal([]byte(row.Auth), &auth)
		pol := p.policyIn(tx)
		change := func(site string) policy.Change {
			return policy.Change{Actor: by, Evidence: row.MessageID, Source: SourceReview,
				Reason: reasonOf(row.Subject), Detail: detailOf(row, auth, site, by)}
		}
		switch act {
		case ActionReinclude:
			for _, site := range targets {
				_, err := pol.Reinclude(ctx, site, change(site))
				if errors.Is(err, policy.ErrNotExcluded) {
					ap.NotExcluded = append(ap.NotExcluded, site)
					continue
				}
				if err != nil {
					return err
				}
			}
		case ActionExclude:
			for _, site := range targets {
				res, err := pol.Exclude(ctx, []string{site}, change(site))
				if err != nil {
					return err
				}
				if len(res) > 0 && res[0].Already {
					ap.Already = append(ap.Already, site)
				}
			}
		case ActionDismiss:
			evSites := targets
			if len(evSites) == 0 {
				evSites = []string{""}
			}
			for _, site := range evSites {
				c := change(site)
				c.Reason = "dismissed: " + c.Reason
				if _, err := pol.Record(ctx, db.EventMailDismiss, site, c); err != nil {
					return err
				}
			}
		}
		if row.ReviewStatus != ReviewPending {
			return nil
		}
		status := ReviewApproved
		if act == ActionDismiss {
			status = ReviewDismissed
		}
		ap.ReviewStatus = status
		return closeReview(ctx, tx, row.ID, status, by, p.now())
	})
	if err != nil {
		return nil, wrapReview(err)
	}
	return ap, nil
}

// messageRow reads message id, without its bytes; with pendingOnly, a
// message that does not wait for review is refused with ErrNotPending.
func messageRow(ctx context.Context, tx *db.Tx, id int64, pendingOnly bool) (*db.MailMessage, error) {
	row, err := tx.MailMessageHead(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, fmt.Errorf("%w: %d", ErrNoMessage, id)
	}
	if err != nil {
		return nil, err
	}
	if pendingOnly && row.ReviewStatus != ReviewPending {
		status := row.ReviewStatus
		if status == "" {
			status = "never queued, outcome " + row.Outcome
		} else if row.ReviewedBy != "" {
			status += " by " + row.ReviewedBy
		}
		return nil, fmt.Errorf("%w: message %d (%s)", ErrNotPending, id, status)
	}
	return row, nil
}

// closeReview moves a pending message to status; it fails with
// ErrNotPending when a concurrent review got there first.
func closeReview(ctx context.Context, tx *db.Tx, id int64, status, by string, now time.Time) error {
	closed, err := tx.CloseMailReview(ctx, id, ReviewPending, status, by, now)
	if err != nil {
		return err
	}
	if !closed {
		return fmt.Errorf("%w: message %d", ErrNotPending, id)
	}
	return nil
}

func wrapReview(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNoMessage), errors.Is(err, ErrNotPending), errors.Is(err, ErrNeedSites),
		errors.Is(err, policy.ErrBadSite), errors.Is(err, policy.ErrNoActor):
		return err
	}
	return fmt.Errorf("mailbot: review: %w", err)
}
