package mailbot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// Shown is a stored message as staff need to see it (lohibot mail show):
// what it says, how it was read and why, and what was done about it.
type Shown struct {
	ID           int64      `json:"id"`
	MessageID    string     `json:"message_id"`
	ReceivedAt   time.Time  `json:"received_at"`
	SentDate     *time.Time `json:"sent_date,omitempty"`
	FromAddr     string     `json:"from_addr"`
	Source       string     `json:"source"`
	Size         int64      `json:"size"`
	Sha256       string     `json:"sha256"`
	Intent       Intent     `json:"intent"`
	Lang         string     `json:"lang"`
	Domains      []string   `json:"domains"`
	Reasons      []string   `json:"reasons"`
	Auth         Auth       `json:"auth"`
	Outcome      Outcome    `json:"outcome"`
	ReviewStatus string     `json:"review_status"`
	ReviewReason string     `json:"review_reason,omitempty"`
	ReviewedBy   string     `json:"reviewed_by,omitempty"`
	ReviewedAt   *time.Time `json:"reviewed_at,omitempty"`
	// Message is the message itself, decoded.
	Message *Inspection `json:"message"`
	// Events are the policy changes made with this message as evidence.
	Events []ShownEvent `json:"events"`
	// Replies are the replies sent (or queued) to its sender.
	Replies []ShownReply `json:"replies"`
	// Raw is the message exactly as stored.
	Raw []byte `json:"-"`
}

// ShownEvent is one policy event caused by a message.
type ShownEvent struct {
	Version    int64     `json:"version"`
	HappenedAt time.Time `json:"happened_at"`
	Kind       string    `json:"kind"`
	Site       string    `json:"site"`
	Actor      string    `json:"actor"`
	Source     string    `json:"source"`
}

// ShownReply is one reply to a message.
type ShownReply struct {
	ID        int64      `json:"id"`
	Kind      string     `json:"kind"`
	To        string     `json:"to"`
	Sites     []string   `json:"sites"`
	Lang      string     `json:"lang"`
	MessageID string     `json:"message_id"`
	CreatedAt time.Time  `json:"created_at"`
	Status    string     `json:"status"`
	SentAt    *time.Time `json:"sent_at,omitempty"`
	Attempts  int        `json:"attempts"`
	LastError string     `json:"last_error,omitempty"`
}

// Show reads stored message id with everything staff need about it, or
// fails with ErrNoMessage. It does I/O.
func (p *Processor) Show(ctx context.Context, id int64) (*Shown, error) {
	row, err := p.store.MailMessageByID(ctx, id)
	if db.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %d", ErrNoMessage, id)
	}
	if err != nil {
		return nil, fmt.Errorf("mailbot: show: %w", err)
	}
	s := &Shown{ID: row.ID, MessageID: row.MessageID, ReceivedAt: row.ReceivedAt.UTC(), SentDate: utcPtr(row.SentDate),
		FromAddr: row.FromAddr, Source: row.Source, Size: row.Size, Sha256: row.Sha256, Intent: Intent(row.Intent),
		Lang: row.Lang, Domains: strings.Fields(row.Domains), Reasons: []string{}, Outcome: Outcome(row.Outcome),
		ReviewStatus: row.ReviewStatus, ReviewReason: row.ReviewReason, ReviewedBy: row.ReviewedBy,
		ReviewedAt: utcPtr(row.ReviewedAt), Raw: row.Raw, Events: []ShownEvent{}, Replies: []ShownReply{}}
	if s.Domains == nil {
		s.Domains = []string{}
	}
	if row.Reasons != "" {
		_ = json.Unmarshal([]byte(row.Reasons), &s.Reasons)
	}
	_ = json.Unmarshal([]byte(row.Auth), &s.Auth)
	s.Message = Inspect(row.Raw)
	evs, err := p.store.PolicyEventsByEvidence(ctx, row.MessageID)
	if err != nil {
		return nil, fmt.Errorf("mailbot: show: %w", err)
	}
	for _, e := range evs {
		s.Events = append(s.Events, ShownEvent{Version: e.Version, HappenedAt: e.HappenedAt.UTC(), Kind: e.Kind,
			Site: e.Site, Actor: e.Actor, Source: e.Source})
	}
	reps, err := p.store.MailRepliesOf(ctx, row.ID)
	if err != nil {
		return nil, fmt.Errorf("mailbot: show: %w", err)
	}
	for _, r := range reps {
		sites := strings.Fields(r.Sites)
		if sites == nil {
			sites = []string{}
		}
		s.Replies = append(s.Replies, ShownReply{ID: r.ID, Kind: r.Kind, To: r.Recipient, Sites: sites, Lang: r.Lang,
			MessageID: r.MessageID, CreatedAt: r.CreatedAt.UTC(), Status: r.Status, SentAt: utcPtr(r.SentAt),
			Attempts: r.Attempts, LastError: r.LastError})
	}
	return s, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
