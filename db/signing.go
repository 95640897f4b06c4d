package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	return s.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
	return s.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
	if err := s.gdb.WithContext(ctx).Order("keyid").Find(&ks).Error; err != nil {
		return nil, fmt.Errorf("db: signing keys: %w", err)
	}
	return ks, nil
}

// SigningRuns returns every signing run, by node and start.
func (s *Store) SigningRuns(ctx context.Context) ([]SigningRun, error) {
	var rs []SigningRun
	if err := s.gdb.WithContext(ctx).Order("node, started_at").Find(&rs).Error; err != nil {
		return nil, fmt.Errorf("db: signing runs: %w", err)
	}
	return rs, nil
}

// RequestSignatures calls fn for every completed request of the log sent
// at or after since (zero: all) to one of sites (empty: every site) that is
// signed or was sent by one of nodes (the nodes that ever ran signing),
// ordered by site and sent_at, with the columns the signature audit needs
// (ID, Site, Node, URL, Purpose, SentAt, CompletedAt, Status, Outcome,
// SigKeyID, SigCreated, SigExpires; times in UTC). It returns how many
// completed requests the window holds, those passed to fn or not. It
// streams (memory does not grow with the log), does I/O, and stops at the
// first error fn returns, returning it.
func (s *Store) RequestSignatures(ctx context.Context, sites []string, since time.Time, nodes []string, fn func(Request) error) (int64, error) {
	where, args := requestWindow("", sites, since)
	where = append([]string{"completed_at IS NOT NULL"}, where...)
	var completed int64
	if err := s.pool.QueryRowContext(ctx, s.rebind("SELECT COUNT(*) FROM requests WHERE "+strings.Join(where, " AND ")), args...).Scan(&completed); err != nil {
		return 0, fmt.Errorf("db: request signatures: %w", err)
	}
	cond := "sig_keyid <> ''"
	if len(nodes) > 0 {
		cond = "(" + cond + " OR node IN (" + placeholders(len(nodes)) + "))"
		for _, n := range nodes {
			args = append(args, n)
		}
	}
	where = append(where, cond)
	cols := []string{"id", "status", "sent_at", "completed_at", "sig_created", "sig_expires",
		"site", "node", "purpose", "outcome", "sig_keyid", "url"}
	sel := strings.Join(cols, ", ")
	packed := s.Dialect != Postgres
	if packed {
		// One text column: see auditSelect.
		for i, c := range cols {
			switch c {
			case "site", "node", "purpose", "outcome", "sig_keyid":
				c = "replace(" + c + ", char(31), ' ')"
			}
			cols[i] = "COALESCE(" + c + ", '')"
		}
		sel = strings.Join(cols, " || char(31) || ")
	}
	q := "SELECT " + sel + " FROM requests WHERE " + strings.Join(where, " AND ") + " ORDER BY site, sent_at, id"
	rows, err := s.pool.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return 0, fmt.Errorf("db: request signatures: %w", err)
	}
	defer rows.Close()
	var (
		buf                                      string
		status                                   sql.NullInt64
		sent, done, created, expires             textTime
		site, node, purpose, outcome, keyID, url string
	)
	for rows.Next() {
		var r Request
		if packed {
			if err := rows.Scan(&buf); err != nil {
				return 0, fmt.Errorf("db: request signatures: %w", err)
			}
			if err := unpackSignature(buf, &r); err != nil {
				return 0, fmt.Errorf("db: request signatures: %w", err)
			}
		} else {
			if err := rows.Scan(&r.ID, &status, &sent, &done, &created, &expires, &site, &node, &purpose, &outcome, &keyID, &url); err != nil {
				return 0, fmt.Errorf("db: request signatures: %w", err)
			}
			r.Site, r.Node, r.Purpose, r.Outcome, r.SigKeyID, r.URL = site, node, purpose, outcome, keyID, url
			if status.Valid {
				n := int(status.Int64)
				r.Status = &n
			}
			r.SentAt = sent.t
			r.CompletedAt, r.SigCreated, r.SigExpires = done.ptr(), created.ptr(), expires.ptr()
		}
		if err := fn(r); err != nil {
			return 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("db: request signatures: %w", err)
	}
	return completed, nil
}

// unpackSignature splits a packed row of RequestSignatures into r.
func unpackSignature(packed string, r *Request) error {
	var f [12]string
	if err := splitPacked(packed, f[:]); err != nil {
		return err
	}
	var err error
	tm := func(s string) *time.Time {
		if s == "" || err != nil {
			return nil
		}
		var d textTime
		if err = d.parse(s); err != nil {
			return nil
		}
		return d.ptr()
	}
	id, e := strconv.ParseInt(f[0], 10, 64)
	if e != nil {
		return fmt.Errorf("malformed id %q in request row", f[0])
	}
	r.ID = id
	if f[1] != "" {
		n, e := strconv.Atoi(f[1])
		if e != nil {
			return fmt.Errorf("malformed status %q in request row", f[1])
		}
		r.Status = &n
	}
	if t := tm(f[2]); t != nil {
		r.SentAt = *t
	}
	r.CompletedAt, r.SigCreated, r.SigExpires = tm(f[3]), tm(f[4]), tm(f[5])
	r.Site, r.Node, r.Purpose, r.Outcome, r.SigKeyID, r.URL = f[6], f[7], f[8], f[9], f[10], f[11]
	return err
}
