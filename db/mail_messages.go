package db

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// MailMessageByID returns the stored message with row id id, raw bytes
// included, or ErrNotFound. It does I/O.
func (s *Store) MailMessageByID(ctx context.Context, id int64) (*MailMessage, error) {
	var m MailMessage
	err := s.DB.WithContext(ctx).Where("id = ?", id).Take(&m).Error
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
	err := s.DB.WithContext(ctx).Where("evidence = ?", evidence).Order("version").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("db: read policy events: %w", err)
	}
	return out, nil
}
