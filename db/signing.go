package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// SigningKey is a Web Bot Auth key as published: its JWK and the window in
// which it may sign requests (NotAfter nil: open). The window is what the
// audit holds each signed request against ("published at the time").
type SigningKey struct {
	KeyID      string `gorm:"column:keyid;primaryKey"`
	JWK        string `gorm:"column:jwk"`
	NotBefore  time.Time
	NotAfter   *time.Time
	RecordedAt time.Time
}

// TableName implements gorm's tabler.
func (SigningKey) TableName() string { return "signing_keys" }

// SigningRun is one run of a signing crawler: from StartedAt until EndedAt
// (nil: still running, or it died) every request of Node must be signed.
type SigningRun struct {
	ID        int64
	Node      string
	KeyID     string `gorm:"column:keyid"`
	StartedAt time.Time
	EndedAt   *time.Time
}

// TableName implements gorm's tabler.
func (SigningRun) TableName() string { return "signing_runs" }

// PublishSigningKey records that k is published (serve's directory). A key
// recorded already keeps its earliest NotBefore; NotAfter is set to k's
// (the configuration is authoritative for when a key is retired).
func (s *Store) PublishSigningKey(ctx context.Context, k SigningKey) error {
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return publishKey(tx, k, true)
	})
}

func publishKey(tx *gorm.DB, k SigningKey, setNotAfter bool) error {
	k.NotBefore = k.NotBefore.UTC()
	if k.RecordedAt.IsZero() {
		k.RecordedAt = Now()
	}
	var old SigningKey
	err := tx.Where("keyid = ?", k.KeyID).Take(&old).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		if err := tx.Create(&k).Error; err != nil {
			return fmt.Errorf("db: record signing key: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("db: signing key: %w", err)
	}
	upd := map[string]any{"jwk": k.JWK}
	if k.NotBefore.Before(old.NotBefore) {
		upd["not_before"] = k.NotBefore
	}
	if setNotAfter {
		upd["not_after"] = k.NotAfter
	}
	if err := tx.Model(&SigningKey{}).Where("keyid = ?", k.KeyID).Updates(upd).Error; err != nil {
		return fmt.Errorf("db: update signing key: %w", err)
	}
	return nil
}

// StartSigningRun ends node's open signing runs at at and, when keyID is
// not empty, starts one with that key (recording the key as published from
// at if it was not recorded yet). A crawler calls it as it starts, with an
// empty keyID when it does not sign.
func (s *Store) StartSigningRun(ctx context.Context, node, keyID, jwk string, at time.Time) error {
	at = at.UTC()
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&SigningRun{}).Where("node = ? AND ended_at IS NULL", node).Update("ended_at", at).Error; err != nil {
			return fmt.Errorf("db: end signing runs: %w", err)
		}
		if keyID == "" {
			return nil
		}
		if err := publishKey(tx, SigningKey{KeyID: keyID, JWK: jwk, NotBefore: at}, false); err != nil {
			return err
		}
		if err := tx.Create(&SigningRun{Node: node, KeyID: keyID, StartedAt: at}).Error; err != nil {
			return fmt.Errorf("db: start signing run: %w", err)
		}
		return nil
	})
}

// SigningKeys returns every recorded key, by keyid.
func (s *Store) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	var ks []SigningKey
	if err := s.DB.WithContext(ctx).Order("keyid").Find(&ks).Error; err != nil {
		return nil, fmt.Errorf("db: signing keys: %w", err)
	}
	return ks, nil
}

// SigningRuns returns every signing run, by node and start.
func (s *Store) SigningRuns(ctx context.Context) ([]SigningRun, error) {
	var rs []SigningRun
	if err := s.DB.WithContext(ctx).Order("node, started_at").Find(&rs).Error; err != nil {
		return nil, fmt.Errorf("db: signing runs: %w", err)
	}
	return rs, nil
}

// RequestSignatures calls fn for every request of the log sent at or after
// since (zero: all) to one of sites (empty: every site), ordered by site
// and sent_at, with the columns the signature audit and the report need.
// It streams: memory does not grow with the log.
func (s *Store) RequestSignatures(ctx context.Context, sites []string, since time.Time, fn func(Request) error) error {
	q := s.DB.WithContext(ctx).Model(&Request{}).
		Select("id, site, host, node, url, purpose, sent_at, completed_at, status, outcome, sig_keyid, sig_created, sig_expires")
	if len(sites) > 0 {
		q = q.Where("site IN ?", sites)
	}
	if !since.IsZero() {
		q = q.Where("sent_at >= ?", since.UTC())
	}
	rows, err := q.Order("site, sent_at, id").Rows()
	if err != nil {
		return fmt.Errorf("db: request signatures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Request
		if err := s.DB.ScanRows(rows, &r); err != nil {
			return fmt.Errorf("db: request signatures: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: request signatures: %w", err)
	}
	return nil
}
