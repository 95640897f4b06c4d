package mailbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

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
}

// Pending lists the messages waiting for staff, oldest first. It does I/O.
func (p *Processor) Pending(ctx context.Context) ([]ReviewItem, error) {
	var rows []db.MailMessage
	err := p.store.DB.WithContext(ctx).
		Select("id", "message_id", "received_at", "sent_date", "from_addr", "subject", "intent", "domains",
			"auth_domain", "outcome", "review_reason").
		Where("review_status = ?", ReviewPending).Order("received_at, id").Find(&rows).Error
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
		if it.Domains == nil {
			it.Domains = []string{}
		}
		out = append(out, it)
	}
	return out, nil
}

// Approval is what approving a message did.
type Approval struct {
	ID        int64  `json:"id"`
	MessageID string `json:"message_id"`
	Intent    Intent `json:"intent"`
	// Action is "exclude" or "reinclude".
	Action string   `json:"action"`
	Sites  []string `json:"sites"`
	// NotExcluded lists the sites of a re-inclusion that were not excluded
	// (nothing to undo).
	NotExcluded []string `json:"not_excluded,omitempty"`
	By          string   `json:"by"`
}

// Approve applies a queued message on behalf of the staff member by, and
// marks it approved. A re-inclusion re-includes its sites (policy.Reinclude
// with by as the actor); an exclusion (one that named no site, failed, or
// was flagged for review) excludes its sites; any other message is
// treated as an exclusion of the given sites. sites, when not empty,
// replaces the sites named in the message; a message that names none
// needs them (ErrNeedSites). Everything happens in one transaction.
func (p *Processor) Approve(ctx context.Context, id int64, by string, sites []string) (*Approval, error) {
	if by == "" {
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
	err := p.store.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row, err := pendingRow(tx, id)
		if err != nil {
			return err
		}
		ap = &Approval{ID: row.ID, MessageID: row.MessageID, Intent: Intent(row.Intent), By: by}
		targets := override
		if len(targets) == 0 {
			for _, d := range strings.Fields(row.Domains) {
				if site, err := policy.SiteOf(d); err == nil {
					targets = appendUnique(targets, site)
				}
			}
		}
		if len(targets) == 0 {
			return fmt.Errorf("%w: message %d (%s): name the sites to act on, or dismiss it", ErrNeedSites, row.ID, row.Intent)
		}
		ap.Sites = targets
		var auth Auth
		_ = json.Unmarshal([]byte(row.Auth), &auth)
		pol := p.policyIn(tx)
		if Intent(row.Intent) == IntentReinclude {
			ap.Action = "reinclude"
			for _, site := range targets {
				c := policy.Change{Actor: by, Evidence: row.MessageID, Source: SourceReview,
					Reason: reasonOf(row.Subject), Detail: detailOf(row, auth, site, by)}
				_, err := pol.Reinclude(ctx, site, c)
				if errors.Is(err, policy.ErrNotExcluded) {
					ap.NotExcluded = append(ap.NotExcluded, site)
					continue
				}
				if err != nil {
					return err
				}
			}
		} else {
			ap.Action = "exclude"
			for _, site := range targets {
				c := policy.Change{Actor: by, Evidence: row.MessageID, Source: SourceReview,
					Reason: reasonOf(row.Subject), Detail: detailOf(row, auth, site, by)}
				if _, err := pol.Exclude(ctx, []string{site}, c); err != nil {
					return err
				}
			}
		}
		return closeReview(tx, row.ID, ReviewApproved, by, p.now())
	})
	if err != nil {
		return nil, wrapReview(err)
	}
	return ap, nil
}

// Dismiss marks a queued message as seen by the staff member by, with no
// action.
func (p *Processor) Dismiss(ctx context.Context, id int64, by string) error {
	if by == "" {
		return policy.ErrNoActor
	}
	err := p.store.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row, err := pendingRow(tx, id)
		if err != nil {
			return err
		}
		return closeReview(tx, row.ID, ReviewDismissed, by, p.now())
	})
	return wrapReview(err)
}

// pendingRow reads a message that waits for review.
func pendingRow(tx *gorm.DB, id int64) (*db.MailMessage, error) {
	var row db.MailMessage
	err := tx.Omit("raw").Where("id = ?", id).Take(&row).Error
	if errorIsNotFound(err) {
		return nil, fmt.Errorf("%w: %d", ErrNoMessage, id)
	}
	if err != nil {
		return nil, err
	}
	if row.ReviewStatus != ReviewPending {
		status := row.ReviewStatus
		if status == "" {
			status = "never queued, outcome " + row.Outcome
		} else if row.ReviewedBy != "" {
			status += " by " + row.ReviewedBy
		}
		return nil, fmt.Errorf("%w: message %d (%s)", ErrNotPending, id, status)
	}
	return &row, nil
}

// closeReview moves a pending message to status; it fails with
// ErrNotPending when a concurrent review got there first.
func closeReview(tx *gorm.DB, id int64, status, by string, now time.Time) error {
	res := tx.Model(&db.MailMessage{}).Where("id = ? AND review_status = ?", id, ReviewPending).
		Updates(map[string]any{"review_status": status, "reviewed_by": by, "reviewed_at": now.UTC()})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
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
