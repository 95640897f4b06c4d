package report

import (
	"context"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// Reply is one reply to a webmaster about the site: the acknowledgement of
// an exclusion made by email, or the receipt of a message queued for staff.
type Reply struct {
	MailID    int64      `json:"mail_id"` // the email it answers
	Kind      string     `json:"kind"`    // ack or received
	To        string     `json:"to"`
	Lang      string     `json:"lang"`
	MessageID string     `json:"message_id"`
	CreatedAt time.Time  `json:"created_at"`
	Status    string     `json:"status"` // sent, queued, failed
	SentAt    *time.Time `json:"sent_at,omitempty"`
}

func buildReplies(ctx context.Context, store *db.Store, rep *Report) error {
	rows, err := store.MailRepliesAbout(ctx, rep.Site)
	if err != nil {
		return err
	}
	for _, r := range rows {
		rep.Replies = append(rep.Replies, Reply{MailID: r.MailID, Kind: r.Kind, To: r.Recipient, Lang: r.Lang,
			MessageID: r.MessageID, CreatedAt: r.CreatedAt.UTC(), Status: r.Status, SentAt: utcPtr(r.SentAt)})
	}
	return nil
}
