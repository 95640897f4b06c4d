// Package reply answers webmasters' emails: an acknowledgement for every
// exclusion applied from an email (which sites, since when, that
// robots.txt is the other way, how to come back), in the language of the
// message when it is one of Languages, and a short "a person will read
// it" reply for a message queued for staff.
//
// Replies follow RFC 3834: they go only to the envelope sender (or From)
// of a message that is not automatic, never to a mailing list, a bounce, a
// no-reply or daemon address or our own address; they carry
// Auto-Submitted: auto-replied, In-Reply-To and References; at most one
// goes to a sender about a site in 24 hours.
//
// No backscatter: a reply goes only to a sender whose domain our receiving
// server authenticated (DKIM or SPF pass aligned with From), at an address
// of that domain, so a forged sender address never receives mail (let
// alone a quote of the forger's text) from us. At most MaxPerRecipient
// replies go to one address in 24 hours and MaxPerDay in all; a reply
// withheld by a limit or for want of authentication is recorded as
// skipped, with the reason, for staff.
//
// Every reply is stored (its bytes, time and Message-ID) before it is
// sent; one that cannot be sent stays queued and is retried with backoff,
// never holding up or undoing the exclusion it acknowledges.
package reply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-message/charset"
	"golang.org/x/net/publicsuffix"

	"github.com/lohisoft/lohibot/db"
)

// DefaultFrom is the address replies come from when Options.From is empty.
const DefaultFrom = "message@lohisoft.com"

// Window is how long a sender gets no second reply about the same site,
// and the period the limits on replies count over.
const Window = 24 * time.Hour

// Default limits on replies (Options.MaxPerRecipient, Options.MaxPerDay).
const (
	DefaultMaxPerRecipient = 3
	DefaultMaxPerDay       = 500
)

// Sender submits one message. Implementations do I/O and may block.
type Sender interface {
	Send(ctx context.Context, from string, to []string, msg []byte) error
}

// Options configures a Replier. A nil *Options is the zero value.
type Options struct {
	// From is the address replies come from (and our own address, never
	// answered). Empty means DefaultFrom.
	From string
	// Own lists more of our own addresses that are never answered (the
	// mailbox's address when it differs from From). Nil means none.
	Own []string
	// Sender submits the replies. Nil means nothing is sent: replies are
	// stored as queued.
	Sender Sender
	// Now returns the current time. Nil means db.Now.
	Now func() time.Time
	// MaxAttempts is how many times a reply is tried before it is given
	// up as failed. Zero means 10.
	MaxAttempts int
	// Backoff returns the wait after the n-th failed attempt (n >= 1).
	// Nil means one minute doubling up to six hours.
	Backoff func(n int) time.Duration
	// Logger receives one line per reply sent, skipped or failed. Nil
	// means slog.Default().
	Logger *slog.Logger
	// MaxPerRecipient is the most replies one address gets in Window.
	// Zero means DefaultMaxPerRecipient; negative means no reply at all.
	MaxPerRecipient int
	// MaxPerDay is the most replies queued in all in Window. Zero means
	// DefaultMaxPerDay; negative means no reply at all.
	MaxPerDay int
	// LogURL is the base URL of the public transparency log (serve's
	// /bot/log). When set, an acknowledgement says that the checkpoint
	// including the exclusion is published within a minute at
	// LogURL/checkpoint. Empty means the log is not mentioned.
	LogURL string
}

// Replier queues and sends replies. It is safe for concurrent use.
type Replier struct {
	store *db.Store
	opts  Options
	log   *slog.Logger
	// mu serialises Queue, so two messages from one sender handled at
	// once do not both pass the 24-hour check.
	mu   sync.Mutex
	wake chan struct{}
}

// New returns a Replier storing its replies in store.
func New(store *db.Store, opts *Options) *Replier {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.From == "" {
		o.From = DefaultFrom
	}
	o.From = strings.ToLower(o.From)
	if o.Now == nil {
		o.Now = db.Now
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Backoff == nil {
		o.Backoff = func(n int) time.Duration {
			d := time.Minute << min(n-1, 10)
			return min(d, 6*time.Hour)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxPerRecipient == 0 {
		o.MaxPerRecipient = DefaultMaxPerRecipient
	}
	if o.MaxPerDay == 0 {
		o.MaxPerDay = DefaultMaxPerDay
	}
	return &Replier{store: store, opts: o, log: o.Logger, wake: make(chan struct{}, 1)}
}

// Request is a message that may deserve a reply.
type Request struct {
	// MailID is the stored message (mail_messages.id).
	MailID int64
	// Raw is the message as received.
	Raw []byte
	// Kind is db.ReplyAck for an applied exclusion, db.ReplyReceived for a
	// message queued for staff.
	Kind string
	// Sites are the sites excluded (ack) or named (received).
	Sites []string
	// At is when the sites were excluded.
	At time.Time
	// Lang is the language of the message ("" when unknown: English).
	Lang string
	// Text is the sender's own text, quoted briefly in the reply.
	Text string
	// Authenticated is the sender's domain as our receiving server
	// authenticated it, aligned with From (DKIM or SPF pass); "" when it
	// did not: then no reply is sent. The reply goes to an address of
	// this domain (or one aligned with it) only.
	Authenticated string
}

// Queue decides whether req gets a reply and, when it does, stores the
// reply as queued and wakes Run. It returns the stored reply, or nil and
// the reason for not replying (one of the Skip constants). A reply
// withheld for want of authentication or by a limit is stored as
// db.ReplySkipped, with the reason, so staff see it. It does I/O.
func (r *Replier) Queue(ctx context.Context, req Request) (*db.MailReply, string, error) {
	env := ReadEnvelope(req.Raw, append([]string{r.opts.From}, r.opts.Own...))
	if env.Skip != "" {
		return nil, env.Skip, nil
	}
	if req.Kind == db.ReplyAck && len(req.Sites) == 0 {
		return nil, SkipNothing, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now().UTC()
	skipped := func(to, why string) (*db.MailReply, string, error) {
		rep := &db.MailReply{MailID: req.MailID, Kind: req.Kind, Recipient: to, Sites: strings.Join(req.Sites, " "),
			MessageID: newMessageID(r.opts.From, now), CreatedAt: now, Status: db.ReplySkipped, LastError: why}
		if err := r.store.InsertMailReply(ctx, rep); err != nil {
			return nil, "", fmt.Errorf("reply: %w", err)
		}
		r.log.Info("reply skipped", "mail_id", req.MailID, "to", to, "reason", why)
		return nil, why, nil
	}
	to := replyAddress(env, req.Authenticated)
	if to == "" {
		return skipped(env.To, SkipUnauthenticated)
	}
	recent, err := r.store.MailRepliesTo(ctx, to, now.Add(-Window))
	if err != nil {
		return nil, "", fmt.Errorf("reply: %w", err)
	}
	recent = slices.DeleteFunc(recent, func(rep db.MailReply) bool { return rep.Status == db.ReplySkipped })
	sites := req.Sites
	if len(recent) > 0 {
		seen := map[string]bool{}
		for _, rep := range recent {
			if rep.Sites == "" {
				seen[""] = true
			}
			for _, s := range strings.Fields(rep.Sites) {
				seen[s] = true
			}
		}
		var fresh []string
		for _, s := range sites {
			if !seen[s] {
				fresh = append(fresh, s)
			}
		}
		if len(fresh) == 0 && (len(sites) > 0 || seen[""]) {
			return nil, SkipRecent, nil
		}
		if req.Kind == db.ReplyAck {
			sites = fresh
		} else if len(fresh) < len(sites) {
			// A "received" reply about a site already answered today.
			return nil, SkipRecent, nil
		}
	}
	if len(recent) >= r.opts.MaxPerRecipient {
		return skipped(to, SkipRecipientLimit)
	}
	if r.opts.MaxPerDay < 0 {
		return skipped(to, SkipDailyLimit)
	}
	if n, err := r.store.CountMailRepliesSince(ctx, now.Add(-Window)); err != nil {
		return nil, "", fmt.Errorf("reply: %w", err)
	} else if n >= int64(r.opts.MaxPerDay) {
		return skipped(to, SkipDailyLimit)
	}
	_, lang := textFor(req.Lang)
	d := &draft{kind: req.Kind, from: r.opts.From, to: to, env: env, sites: sites, at: req.At, lang: lang,
		quote: req.Text, date: now, logURL: r.opts.LogURL}
	if d.at.IsZero() {
		d.at = now
	}
	d.messageID = newMessageID(r.opts.From, now)
	rep := &db.MailReply{MailID: req.MailID, Kind: req.Kind, Recipient: to, Sites: strings.Join(sites, " "),
		Lang: lang, MessageID: d.messageID, CreatedAt: now, Status: db.ReplyQueued, NextAttemptAt: &now, Raw: d.bytes()}
	if err := r.store.InsertMailReply(ctx, rep); err != nil {
		return nil, "", fmt.Errorf("reply: %w", err)
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return rep, "", nil
}

// replyAddress returns where a reply to env may go given the domain our
// receiving server authenticated for the sender: the envelope sender when
// its domain is aligned with it, else the From address when that one is;
// "" when neither is, or nothing was authenticated.
func replyAddress(env *Envelope, authenticated string) string {
	if authenticated == "" {
		return ""
	}
	for _, a := range []string{env.To, env.From} {
		if at := strings.LastIndexByte(a, '@'); at > 0 && sameSite(a[at+1:], authenticated) {
			return a
		}
	}
	return ""
}

// sameSite reports whether two domains share their registrable domain
// (relaxed DMARC alignment, RFC 7489 3.1).
func sameSite(a, b string) bool {
	a, b = strings.ToLower(strings.TrimSuffix(a, ".")), strings.ToLower(strings.TrimSuffix(b, "."))
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	sa, err1 := publicsuffix.EffectiveTLDPlusOne(a)
	sb, err2 := publicsuffix.EffectiveTLDPlusOne(b)
	return err1 == nil && err2 == nil && sa == sb
}

// Flush tries every queued reply that is due now, once each, and returns
// how many were sent and how many are still queued (due later or failed
// this time). Without a Sender it sends nothing. It does I/O and blocks
// while sending.
func (r *Replier) Flush(ctx context.Context) (sent, pending int, err error) {
	if r.opts.Sender == nil {
		return 0, 0, nil
	}
	for {
		due, err := r.store.DueMailReplies(ctx, r.opts.Now(), 50)
		if err != nil {
			return sent, pending, fmt.Errorf("reply: %w", err)
		}
		progress := false
		for i := range due {
			ok, err := r.send(ctx, &due[i])
			if err != nil {
				return sent, pending, err
			}
			if ok {
				sent++
				progress = true
			} else {
				pending++
			}
		}
		if len(due) < 50 || !progress {
			return sent, pending, nil
		}
	}
}

// send tries one reply and records the outcome. ok reports whether it was
// accepted; err is a database failure (or ctx's).
func (r *Replier) send(ctx context.Context, rep *db.MailReply) (ok bool, err error) {
	attempts := rep.Attempts + 1
	serr := r.opts.Sender.Send(ctx, r.opts.From, []string{rep.Recipient}, rep.Raw)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if serr == nil {
		if err := r.store.MarkMailReplySent(context.WithoutCancel(ctx), rep.ID, attempts, r.opts.Now()); err != nil {
			return false, fmt.Errorf("reply: %w", err)
		}
		r.log.Info("reply sent", "reply_id", rep.ID, "mail_id", rep.MailID, "kind", rep.Kind, "to", rep.Recipient,
			"sites", rep.Sites, "lang", rep.Lang, "message_id", rep.MessageID)
		return true, nil
	}
	var next *time.Time
	if attempts < r.opts.MaxAttempts && !permanent(serr) {
		t := r.opts.Now().UTC().Add(r.opts.Backoff(attempts))
		next = &t
	}
	if err := r.store.MarkMailReplyRetry(ctx, rep.ID, attempts, next, serr.Error()); err != nil {
		return false, fmt.Errorf("reply: %w", err)
	}
	if next == nil {
		r.log.Error("reply given up", "reply_id", rep.ID, "to", rep.Recipient, "attempts", attempts, "err", serr)
	} else {
		r.log.Warn("reply not sent; will retry", "reply_id", rep.ID, "to", rep.Recipient, "attempts", attempts,
			"retry_at", next.Format(time.RFC3339), "err", serr)
	}
	return false, nil
}

// PermanentError marks a send failure that retrying cannot fix (the server
// refused the recipient with a 5xx code).
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

func permanent(err error) bool {
	var pe *PermanentError
	return errors.As(err, &pe)
}

// Run sends queued replies until ctx ends: at once when Queue wakes it, and
// when a retry falls due. It returns nil when ctx ends. Without a Sender it
// returns at once. It does I/O.
func (r *Replier) Run(ctx context.Context) error {
	if r.opts.Sender == nil {
		return nil
	}
	for {
		if _, _, err := r.Flush(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.log.Error("replies: database failed", "err", err)
		}
		wait := time.Minute
		if next, err := r.store.NextMailReplyAttempt(ctx); err == nil && next != nil {
			wait = max(min(next.Sub(r.opts.Now()), time.Minute), 50*time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-r.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// headerWords decodes RFC 2047 encoded words in any charset go-message
// knows.
var headerWords = &mime.WordDecoder{CharsetReader: charset.Reader}

func decodeHeader(v string) string {
	if d, err := headerWords.DecodeHeader(v); err == nil {
		v = d
	}
	return strings.Join(strings.Fields(v), " ")
}
