package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"strings"
	"time"

	"gorm.io/gorm"
)

// MailMessageByID returns the stored message with row id id, raw bytes
// included, or ErrNotFound. It does I/O.
func (s *Store) MailMessageByID(ctx context.Context, id int64) (*MailMessage, error) {
	var m MailMessage
	err := s.gdb.WithContext(ctx).Where("id = ?", id).Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("%w: mail message %d", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("db: read mail message %d: %w", id, err)
	}
	return &m, nil
}

// PolicyEventsByEvidence returns the policy events whose evidence is
// evidence (an email's Message-ID, as stored), oldest first: what was done
// because of that message. It does I/O.
func (s *Store) PolicyEventsByEvidence(ctx context.Context, evidence string) ([]PolicyEvent, error) {
	var out []PolicyEvent
	err := s.gdb.WithContext(ctx).Where("evidence = ?", evidence).Order("version").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("db: read policy events: %w", err)
	}
	return out, nil
}

// InsertMailMessage stores m (m.ID is set) unless a message with the same
// Message-ID is stored already, and reports whether it inserted. It does
// I/O.
func (q queries) InsertMailMessage(ctx context.Context, m *MailMessage) (bool, error) {
	if err := checkText("mail_messages", "message_id", m.MessageID, "from_addr", m.FromAddr, "subject", m.Subject,
		"intent", m.Intent, "domains", m.Domains, "lang", m.Lang, "auth", m.Auth, "auth_domain", m.AuthDomain,
		"outcome", m.Outcome, "review_status", m.ReviewStatus, "review_reason", m.ReviewReason, "reasons", m.Reasons,
		"reviewed_by", m.ReviewedBy, "source", m.Source, "sha256", m.Sha256); err != nil {
		return false, err
	}
	err := q.queryRow(ctx, `INSERT INTO mail_messages (message_id, received_at, sent_date, from_addr, subject, intent, domains,
		lang, auth, auth_domain, outcome, review_status, review_reason, reasons, reviewed_by, reviewed_at, source, size, sha256, raw)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (message_id) DO NOTHING RETURNING id`,
		m.MessageID, m.ReceivedAt, m.SentDate, m.FromAddr, m.Subject, m.Intent, m.Domains,
		m.Lang, m.Auth, m.AuthDomain, m.Outcome, m.ReviewStatus, m.ReviewReason, m.Reasons, m.ReviewedBy, m.ReviewedAt,
		m.Source, m.Size, m.Sha256, m.Raw).Scan(&m.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // stored before
	}
	if err != nil {
		return false, fmt.Errorf("db: store mail message: %w", err)
	}
	return true, nil
}

// MailOutcomeByMessageID returns the stored message whose Message-ID is
// messageID with only its id, intent, domains, outcome and review fields,
// or an error wrapping ErrNotFound. It does I/O.
func (q queries) MailOutcomeByMessageID(ctx context.Context, messageID string) (*MailMessage, error) {
	var m MailMessage
	err := q.with(ctx).Select("id", "intent", "domains", "outcome", "review_status", "review_reason").
		Where("message_id = ?", messageID).Take(&m).Error
	if err != nil {
		return nil, notFound(err, "mail message "+messageID)
	}
	return &m, nil
}

// SetMailOutcome sets the outcome and review status and reason of message
// id. It does I/O.
func (q queries) SetMailOutcome(ctx context.Context, id int64, outcome, reviewStatus, reviewReason string) error {
	if err := checkText("mail_messages", "outcome", outcome, "review_status", reviewStatus, "review_reason", reviewReason); err != nil {
		return err
	}
	err := q.with(ctx).Model(&MailMessage{}).Where("id = ?", id).Updates(map[string]any{
		"outcome": outcome, "review_status": reviewStatus, "review_reason": reviewReason}).Error
	if err != nil {
		return fmt.Errorf("db: update mail message %d: %w", id, err)
	}
	return nil
}

// MailMessagesInReview lists the messages whose review status is status,
// oldest received first, raw bytes included (the review fields, not the
// classification details). It does I/O.
func (q queries) MailMessagesInReview(ctx context.Context, status string) ([]MailMessage, error) {
	var rows []MailMessage
	err := q.with(ctx).
		Select("id", "message_id", "received_at", "sent_date", "from_addr", "subject", "intent", "domains",
			"auth_domain", "outcome", "review_reason", "raw").
		Where("review_status = ?", status).Order("received_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("db: list mail in review: %w", err)
	}
	return rows, nil
}

// MailMessageHead returns message id without its raw bytes, or an error
// wrapping ErrNotFound. It does I/O.
func (q queries) MailMessageHead(ctx context.Context, id int64) (*MailMessage, error) {
	var m MailMessage
	if err := q.with(ctx).Omit("raw").Where("id = ?", id).Take(&m).Error; err != nil {
		return nil, notFound(err, fmt.Sprintf("mail message %d", id))
	}
	return &m, nil
}

// CloseMailReview moves message id from review status from to status,
// recording who and when, and reports whether it was in status from. It
// does I/O.
func (q queries) CloseMailReview(ctx context.Context, id int64, from, status, by string, at time.Time) (bool, error) {
	if err := checkText("mail_messages", "review_status", status, "reviewed_by", by); err != nil {
		return false, err
	}
	res := q.with(ctx).Model(&MailMessage{}).Where("id = ? AND review_status = ?", id, from).
		Updates(map[string]any{"review_status": status, "reviewed_by": by, "reviewed_at": at.UTC()})
	if res.Error != nil {
		return false, fmt.Errorf("db: close review of mail message %d: %w", id, res.Error)
	}
	return res.RowsAffected > 0, nil
}

// MailAbout returns the stored messages, without their raw bytes, whose
// domains name site, and the message whose Message-ID is messageID (unless
// it is ""), oldest received first. It does I/O.
func (q queries) MailAbout(ctx context.Context, site, messageID string) ([]MailMessage, error) {
	pattern := "% " + escapeLike(site) + " %"
	g := q.with(ctx).Model(&MailMessage{}).Omit("raw").
		Where("(' ' || domains || ' ') LIKE ? ESCAPE '\\'", pattern)
	if messageID != "" {
		g = g.Or("message_id = ?", messageID)
	}
	var out []MailMessage
	if err := g.Order("received_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read mail about %s: %w", site, err)
	}
	return out, nil
}

// escapeLike escapes the LIKE wildcards of s (with \ as the escape).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
