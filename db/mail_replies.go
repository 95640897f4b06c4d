package db

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Kinds of MailReply.
const (
	ReplyAck      = "ack"      // an exclusion was applied: which sites, since when, how to come back
	ReplyReceived = "received" // the message waits for staff: a person will read it
)

// Statuses of a MailReply.
const (
	ReplyQueued = "queued" // waiting to be sent (or to be retried after a failure)
	ReplySent   = "sent"   // accepted by the SMTP server
	ReplyFailed = "failed" // given up after too many attempts
	// ReplySkipped records a reply that was due and deliberately not sent
	// (the sender was not authenticated, or a limit was reached): it has
	// no bytes, and LastError says why.
	ReplySkipped = "skipped"
)

// MailReply is one reply to a webmaster's email (RFC 3834 auto-reply),
// stored with the exact bytes submitted, before it is sent: a reply that
// cannot be sent stays queued and is retried.
type MailReply struct {
	ID            int64
	MailID        int64 // the mail_messages row it answers
	Kind          string
	Recipient     string // the address it goes to (lowercase)
	Sites         string // space-separated sites it is about
	Lang          string
	MessageID     string // the reply's own Message-ID, without angle brackets
	CreatedAt     time.Time
	Status        string
	Attempts      int
	NextAttemptAt *time.Time
	SentAt        *time.Time
	LastError     string
	Raw           []byte
}

// TableName implements gorm's tabler.
func (MailReply) TableName() string { return "mail_replies" }

// InsertMailReply stores r and sets its ID. It does I/O.
func (s *Store) InsertMailReply(ctx context.Context, r *MailReply) error {
	if err := s.gdb.WithContext(ctx).Create(r).Error; err != nil {
		return fmt.Errorf("db: store mail reply: %w", err)
	}
	return nil
}

// MailRepliesTo returns the replies to recipient created at or after since,
// without their bytes. It does I/O.
func (s *Store) MailRepliesTo(ctx context.Context, recipient string, since time.Time) ([]MailReply, error) {
	var out []MailReply
	err := s.gdb.WithContext(ctx).Omit("raw").Where("recipient = ? AND created_at >= ?", recipient, since.UTC()).
		Order("id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("db: read mail replies: %w", err)
	}
	return out, nil
}

// CountMailRepliesSince counts the replies created at or after since that
// were queued to be sent (skipped ones not counted). It does I/O.
func (s *Store) CountMailRepliesSince(ctx context.Context, since time.Time) (int64, error) {
	var n int64
	err := s.gdb.WithContext(ctx).Model(&MailReply{}).Where("created_at >= ? AND status <> ?", since.UTC(), ReplySkipped).
		Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("db: count mail replies: %w", err)
	}
	return n, nil
}

// MailRepliesOf returns the replies to the message with row id mailID,
// oldest first, bytes included. It does I/O.
func (s *Store) MailRepliesOf(ctx context.Context, mailID int64) ([]MailReply, error) {
	var out []MailReply
	if err := s.gdb.WithContext(ctx).Where("mail_id = ?", mailID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("db: read mail replies: %w", err)
	}
	return out, nil
}

// MailRepliesAbout returns the replies that name site, oldest first,
// without their bytes. It does I/O.
func (s *Store) MailRepliesAbout(ctx context.Context, site string) ([]MailReply, error) {
	var out []MailReply
	pattern := "% " + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(site) + " %"
	err := s.gdb.WithContext(ctx).Omit("raw").Where("(' ' || sites || ' ') LIKE ? ESCAPE '\\'", pattern).
		Order("id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("db: read mail replies: %w", err)
	}
	return out, nil
}

// DueMailReplies returns up to limit queued replies whose next attempt is
// due at now, oldest first, bytes included. It does I/O.
func (s *Store) DueMailReplies(ctx context.Context, now time.Time, limit int) ([]MailReply, error) {
	var out []MailReply
	err := s.gdb.WithContext(ctx).Where("status = ? AND (next_attempt_at IS NULL OR next_attempt_at <= ?)", ReplyQueued, now.UTC()).
		Order("id").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("db: read due mail replies: %w", err)
	}
	return out, nil
}

// NextMailReplyAttempt returns when the earliest queued reply is due, or
// nil when none is queued. It does I/O.
func (s *Store) NextMailReplyAttempt(ctx context.Context) (*time.Time, error) {
	var out []MailReply
	err := s.gdb.WithContext(ctx).Select("id", "next_attempt_at").Where("status = ?", ReplyQueued).
		Order("next_attempt_at").Limit(1).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("db: read queued mail replies: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	if out[0].NextAttemptAt == nil {
		t := time.Time{}
		return &t, nil
	}
	return out[0].NextAttemptAt, nil
}

// MarkMailReplySent records that reply id was accepted at at. It does I/O.
func (s *Store) MarkMailReplySent(ctx context.Context, id int64, attempts int, at time.Time) error {
	err := s.gdb.WithContext(ctx).Model(&MailReply{}).Where("id = ?", id).Updates(map[string]any{
		"status": ReplySent, "attempts": attempts, "sent_at": at.UTC(), "next_attempt_at": nil, "last_error": ""}).Error
	if err != nil {
		return fmt.Errorf("db: mark mail reply sent: %w", err)
	}
	return nil
}

// MarkMailReplyRetry records a failed attempt of reply id: it stays queued
// until next, or becomes failed when next is nil. It does I/O.
func (s *Store) MarkMailReplyRetry(ctx context.Context, id int64, attempts int, next *time.Time, lastErr string) error {
	upd := map[string]any{"attempts": attempts, "last_error": lastErr}
	if next == nil {
		upd["status"] = ReplyFailed
		upd["next_attempt_at"] = nil
	} else {
		upd["next_attempt_at"] = next.UTC()
	}
	if err := s.gdb.WithContext(ctx).Model(&MailReply{}).Where("id = ?", id).Updates(upd).Error; err != nil {
		return fmt.Errorf("db: mark mail reply retry: %w", err)
	}
	return nil
}
