package mailbot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/mailbot/reply"
	"github.com/lohisoft/lohibot/policy"
)

// Outcome is what processing did with a message; it is stored in
// mail_messages.outcome.
type Outcome string

// The outcomes.
const (
	OutcomeExcluded Outcome = "excluded" // one or more sites were excluded
	OutcomeQueued   Outcome = "queued"   // stored and waiting for staff
	OutcomeIgnored  Outcome = "ignored"  // stored, nothing to do (auto mail)
	OutcomeFailed   Outcome = "failed"   // stored, but applying it failed: waiting for staff
)

// Review statuses of a stored message (mail_messages.review_status).
const (
	ReviewNone      = ""          // nothing for staff to do
	ReviewPending   = "pending"   // waits for a staff member
	ReviewApproved  = "approved"  // a staff member applied it
	ReviewDismissed = "dismissed" // a staff member decided to do nothing
)

// SourceMail is the policy.Change Source of exclusions made by email.
const SourceMail = "mail"

// MaxSitesPerMessage is the most sites one email may exclude: a message
// naming more goes to staff, and none of it is applied.
const MaxSitesPerMessage = 10

// DefaultUnverifiedLimit is how many sites one sender may exclude without
// being verified for them in UnverifiedWindow (Options.UnverifiedLimit).
const DefaultUnverifiedLimit = 10

// UnverifiedWindow is the period Options.UnverifiedLimit counts over.
const UnverifiedWindow = 24 * time.Hour

// maxIDLen is the longest Message-ID stored as is; longer ones (which no
// real mailer writes) are replaced by a hash so the unique index stays
// usable on every engine.
const maxIDLen = 255

// Options configures a Processor. A nil *Options is the zero value.
type Options struct {
	// Parse parses and classifies a raw message. Nil means
	// ParseTrusting with AuthservID.
	Parse func(raw []byte) *Message
	// AuthservID is the authserv-id of our receiving mail server: only the
	// Authentication-Results headers it added on top of a message are
	// trusted (RFC 8601 §5). "" trusts none: every message is
	// unauthenticated, and exclusions made by email are unverified.
	AuthservID string
	// Now returns the current time for received_at and the policy changes.
	// Nil means db.Now.
	Now func() time.Time
	// Logger receives one line per applied message. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Replies, when not nil, answers the senders: an acknowledgement of
	// every exclusion applied, a "received" reply for a message queued for
	// staff (see package reply). Replies are queued after the message is
	// committed; a reply that fails never undoes or delays what was done.
	// Nil means no reply.
	Replies *reply.Replier
	// UnverifiedLimit is the most sites one sender may exclude in
	// UnverifiedWindow without being shown to speak for them; a message
	// that would exclude more goes to staff, none of it applied. Zero
	// means DefaultUnverifiedLimit.
	UnverifiedLimit int
}

// Processor applies emails to the policy: it stores every message once in
// mail_messages, excludes the sites of exclusion requests at once, and
// queues everything else for staff. It is safe for concurrent use by
// multiple goroutines and processes: the unique Message-ID decides which
// of two concurrent attempts stores a message, and the other changes
// nothing.
type Processor struct {
	store   *db.Store
	policy  *policy.Policy
	parse   func([]byte) *Message
	now     func() time.Time
	log     *slog.Logger
	replies *reply.Replier
	// unverifiedLimit is Options.UnverifiedLimit.
	unverifiedLimit int
}

// New returns a Processor that applies messages to pol, whose store also
// holds the messages.
func New(pol *policy.Policy, opts *Options) *Processor {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Parse == nil {
		id := o.AuthservID
		o.Parse = func(raw []byte) *Message { return ParseTrusting(raw, id) }
	}
	if o.Now == nil {
		o.Now = db.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.UnverifiedLimit <= 0 {
		o.UnverifiedLimit = DefaultUnverifiedLimit
	}
	return &Processor{store: pol.Store(), policy: pol, parse: o.Parse, now: o.Now, log: o.Logger, replies: o.Replies,
		unverifiedLimit: o.UnverifiedLimit}
}

// Result is what Process did with one message.
type Result struct {
	ID        int64  // the mail_messages row
	MessageID string // as stored
	From      string
	Subject   string
	Intent    Intent
	Domains   []string
	Outcome   Outcome
	// Excluded lists the sites this message excluded (or asked again to
	// exclude) when Outcome is OutcomeExcluded.
	Excluded []string
	// ReviewStatus is the message's review status: ReviewPending when it
	// waits for staff.
	ReviewStatus string
	// ReviewReason says why the message waits for staff.
	ReviewReason string
	// Duplicate is true when the message was already stored (by an earlier
	// run or a concurrent one): nothing was changed, and the other fields
	// describe the stored row.
	Duplicate bool
	// Committed is when the database transaction that stored the message
	// committed (for a duplicate, when it was found).
	Committed time.Time
	// Reasons are the classifier's reasons (nil for a duplicate).
	Reasons []string
	// Lang is the language of the message's text, "" when unknown.
	Lang string
	// ReplyID is the reply queued to the sender (mail_replies.id), 0 when
	// none was.
	ReplyID int64
	// ReplySkipped says why no reply was queued when replies are on ("" when
	// one was, or replies are off).
	ReplySkipped string
	// Auth is what our receiving server's trusted Authentication-Results
	// say about the sender (zero for a duplicate).
	Auth Auth
}

// NeedsReview reports whether the message waits for a staff member.
func (r *Result) NeedsReview() bool { return r.ReviewStatus == ReviewPending }

// Process parses, classifies and applies one raw message: it is stored in
// mail_messages (once: a message already stored is left alone and the
// result has Duplicate set), the sites of an exclusion request are excluded
// in the same transaction, and anything that needs a human is queued for
// review. source says where the message came from (an IMAP URL, a file).
//
// An error means nothing was stored or changed (the database failed): the
// caller should keep the message and try again later. Process does I/O
// and blocks while another writer holds the database.
func (p *Processor) Process(ctx context.Context, raw []byte, source string) (*Result, error) {
	m := p.safeParse(raw)
	return p.apply(ctx, m, raw, source)
}

// safeParse runs the parser and turns a panic (which Parse promises never
// to raise) into a message for staff.
func (p *Processor) safeParse(raw []byte) (m *Message) {
	defer func() {
		if r := recover(); r != nil {
			m = &Message{Intent: IntentOther, Review: fmt.Sprintf("the parser failed: %v", r), Size: len(raw)}
		}
	}()
	m = p.parse(raw)
	if m == nil {
		m = &Message{Intent: IntentOther, Review: "the parser returned nothing", Size: len(raw)}
	}
	return m
}

// plan is what a message asks for, decided before touching the database.
type plan struct {
	row    db.MailMessage
	sites  []string // the sites to exclude now
	review string   // why staff must look at it; "" when not
}

func (p *Processor) plan(m *Message, raw []byte, source string) *plan {
	sum := sha256.Sum256(raw)
	hexSum := hex.EncodeToString(sum[:])
	id := clean(strings.TrimSpace(m.MessageID))
	if id == "" {
		id = "sha256:" + hexSum
	} else if len(id) > maxIDLen {
		h := sha256.Sum256([]byte(id))
		id = "sha256-id:" + hex.EncodeToString(h[:])
	}
	auth, _ := json.Marshal(m.Auth)
	reasonsJSON, _ := json.Marshal(cleanAll(m.Reasons))
	pl := &plan{row: db.MailMessage{
		MessageID:  id,
		ReceivedAt: p.now().UTC(),
		FromAddr:   clean(m.From),
		Subject:    clean(m.Subject),
		Intent:     string(m.Intent),
		Domains:    clean(strings.Join(m.Domains, " ")),
		Lang:       clean(m.Lang),
		Auth:       string(auth),
		AuthDomain: clean(m.Auth.Domain),
		Source:     clean(source),
		Size:       int64(len(raw)),
		Sha256:     hexSum,
		Raw:        raw,
		Reasons:    string(reasonsJSON),
	}}
	if !m.Date.IsZero() {
		d := m.Date.UTC()
		pl.row.SentDate = &d
	}

	d := Decide(m)
	pl.sites = d.Sites
	pl.review = d.Review

	switch {
	case len(pl.sites) > 0:
		pl.row.Outcome = string(OutcomeExcluded)
	case pl.review != "":
		pl.row.Outcome = string(OutcomeQueued)
	default:
		pl.row.Outcome = string(OutcomeIgnored)
	}
	if pl.review != "" {
		pl.row.ReviewStatus = ReviewPending
		pl.row.ReviewReason = pl.review
	}
	return pl
}

// Decision is what Process does with a parsed message, decided before
// touching the database: Parse reports the same decision as
// Message.Action, so a dry run says what an import would do.
type Decision struct {
	Action Action
	// Sites are the sites excluded at once (Action is ActionApply).
	Sites []string
	// Review says why staff must look at the message ("" when they need
	// not: an applied exclusion or ignored machine mail).
	Review string
}

// Decide decides what Process does with m. Only an exclusion whose
// Action the classifier set to ActionApply (its act-alone rule held), that
// the parser read whole and that names between 1 and MaxSitesPerMessage
// valid sites is applied without a human; machine mail is ignored;
// everything else goes to staff, with the reasons that failed.
func Decide(m *Message) Decision {
	var d Decision
	var why []string
	if m.Review != "" {
		why = append(why, clean(m.Review))
	}
	switch m.Intent {
	case IntentExclude:
		var bad []string
		for _, dom := range m.Domains {
			site, err := policy.SiteOf(dom)
			if err != nil {
				bad = append(bad, dom)
				continue
			}
			d.Sites = appendUnique(d.Sites, site)
		}
		if len(bad) > 0 {
			why = append(why, "not a site: "+clean(strings.Join(bad, " ")))
		}
		if len(d.Sites) == 0 {
			why = append(why, "exclusion request names no site: a staff member must find it")
		}
		if len(d.Sites) > MaxSitesPerMessage {
			why = append(why, fmt.Sprintf("names %d sites, more than the %d one email may exclude: a staff member must check it",
				len(d.Sites), MaxSitesPerMessage))
		}
		if m.Action != ActionApply && len(why) == 0 {
			why = append(why, reviewReasons(m.Reasons, "exclusion not clear enough to apply without a human")...)
		}
	case IntentReinclude:
		why = append(why, "re-inclusion waits for a staff member")
	case IntentAuto:
	case IntentOther:
		for _, r := range m.Reasons {
			if strings.HasPrefix(r, "unclear: ") {
				// Why the request was not applied (classify).
				why = append(why, clean(r))
			}
		}
		if m.Review == "" && len(why) == 0 {
			why = append(why, "needs a human reader")
		}
	default:
		why = append(why, fmt.Sprintf("unknown intent %q", clean(string(m.Intent))))
	}
	d.Review = strings.Join(why, "; ")
	switch {
	case d.Review != "":
		d.Action, d.Sites = ActionReview, nil
	case m.Intent == IntentAuto:
		d.Action = ActionIgnore
	default:
		d.Action = ActionApply
	}
	return d
}

// reviewReasons returns the classifier's "review: …" reasons without
// their prefix, or def when there is none.
func reviewReasons(reasons []string, def string) []string {
	var out []string
	for _, r := range reasons {
		if rest, ok := strings.CutPrefix(r, "review: "); ok {
			out = append(out, clean(rest))
		}
	}
	if len(out) == 0 {
		out = append(out, def)
	}
	return out
}

// apply stores the message and applies its plan in one transaction.
func (p *Processor) apply(ctx context.Context, m *Message, raw []byte, source string) (*Result, error) {
	pl := p.plan(m, raw, source)
	var res *Result
	err := p.store.InTx(ctx, func(tx *db.Tx) error {
		res = newResult(m, pl) // a retry of the transaction starts from the plan again
		return p.applyIn(ctx, tx, m, pl, res)
	})
	if err != nil {
		return nil, fmt.Errorf("mailbot: process %s: %w", pl.row.MessageID, err)
	}
	p.applied(ctx, raw, res, source)
	return res, nil
}

// newResult is the result of a message before it is applied.
func newResult(m *Message, pl *plan) *Result {
	return &Result{MessageID: pl.row.MessageID, From: pl.row.FromAddr, Subject: pl.row.Subject,
		Intent: m.Intent, Domains: m.Domains, Reasons: m.Reasons, Lang: m.Lang, Auth: m.Auth}
}

// applyIn stores the message and applies its plan inside tx, filling res.
// Its error means tx must be rolled back (at least to a savepoint taken
// before the call).
func (p *Processor) applyIn(ctx context.Context, tx *db.Tx, m *Message, pl *plan, res *Result) error {
	row := pl.row
	inserted, err := tx.InsertMailMessage(ctx, &row)
	if err != nil {
		return fmt.Errorf("store message: %w", err)
	}
	if !inserted {
		// Stored before (or by a concurrent run that committed first).
		old, err := tx.MailOutcomeByMessageID(ctx, row.MessageID)
		if err != nil {
			return fmt.Errorf("read stored message: %w", err)
		}
		res.Duplicate = true
		res.Reasons = nil
		res.Auth = Auth{}
		res.ID = old.ID
		res.Intent = Intent(old.Intent)
		res.Domains = strings.Fields(old.Domains)
		res.Outcome = Outcome(old.Outcome)
		res.ReviewStatus = old.ReviewStatus
		res.ReviewReason = old.ReviewReason
		return nil
	}
	res.ID = row.ID
	res.Outcome = Outcome(row.Outcome)
	res.ReviewStatus = row.ReviewStatus
	res.ReviewReason = row.ReviewReason
	res.Excluded = nil
	if len(pl.sites) == 0 {
		return nil
	}
	var why string
	// In a savepoint, as a failure here is handled as the exclusion's.
	err = tx.InTx(ctx, func(stx *db.Tx) error {
		var err error
		why, err = p.overUnverifiedLimit(ctx, stx, m, &row, pl.sites)
		return err
	})
	switch {
	case err == nil && why != "":
		reason := why
		if row.ReviewReason != "" {
			reason = row.ReviewReason + "; " + why
		}
		if err := tx.SetMailOutcome(ctx, row.ID, string(OutcomeQueued), ReviewPending, reason); err != nil {
			return fmt.Errorf("record the limit: %w", err)
		}
		res.Outcome, res.ReviewStatus, res.ReviewReason = OutcomeQueued, ReviewPending, reason
		return nil
	case err != nil:
	case len(pl.sites) == 1:
		// policy.Exclude runs in its own savepoint already.
		err = p.exclude(ctx, tx, m, &row, pl.sites)
	default:
		// All the sites or none.
		err = tx.InTx(ctx, func(stx *db.Tx) error {
			return p.exclude(ctx, stx, m, &row, pl.sites)
		})
	}
	if err == nil {
		res.Excluded = pl.sites
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	// The exclusion failed but the database still works: keep the
	// message as failed, for staff, rather than lose it.
	reason := "exclusion failed: " + clean(err.Error())
	if row.ReviewReason != "" {
		reason = row.ReviewReason + "; " + reason
	}
	if err := tx.SetMailOutcome(ctx, row.ID, string(OutcomeFailed), ReviewPending, reason); err != nil {
		return fmt.Errorf("record failure: %w", err)
	}
	res.Outcome = OutcomeFailed
	res.ReviewStatus = ReviewPending
	res.ReviewReason = reason
	return nil
}

// applied does what follows the commit of a message: the reply and the
// log line.
func (p *Processor) applied(ctx context.Context, raw []byte, res *Result, source string) {
	res.Committed = p.now().UTC()
	if !res.Duplicate && p.replies != nil {
		p.queueReply(ctx, raw, res)
	}
	if !res.Duplicate {
		p.log.Info("mail applied", "id", res.ID, "message_id", res.MessageID, "from", res.From,
			"intent", string(res.Intent), "outcome", string(res.Outcome), "excluded", strings.Join(res.Excluded, " "),
			"review", res.ReviewReason, "source", source)
	}
}

// pending is a parsed message waiting to be applied by applyGroup.
type pending struct {
	raw    []byte
	source string
	m      *Message
	pl     *plan
	res    *Result // set by applyGroup
	err    error   // set by applyGroup
}

// prepare parses and plans a message, before any database work.
func (p *Processor) prepare(raw []byte, source string) *pending {
	m := p.safeParse(raw)
	return &pending{raw: raw, source: source, m: m, pl: p.plan(m, raw, source)}
}

// applyGroup applies several messages in one transaction, each in its own
// savepoint: one commit (one fsync) for the group, and what each message
// does is still all or nothing. A message whose savepoint fails gets its
// error and is not stored; the others are. When the transaction fails as a
// whole, each message is tried alone, so that one message never fails
// another. Each item gets res or err.
func (p *Processor) applyGroup(ctx context.Context, group []*pending) {
	err := p.store.InTx(ctx, func(tx *db.Tx) error {
		for _, it := range group {
			it.res, it.err = newResult(it.m, it.pl), nil
			err := tx.InTx(ctx, func(stx *db.Tx) error {
				return p.applyIn(ctx, stx, it.m, it.pl, it.res)
			})
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				it.res, it.err = nil, fmt.Errorf("mailbot: process %s: %w", it.pl.row.MessageID, err)
			}
		}
		return nil
	})
	if err != nil {
		if len(group) == 1 {
			group[0].res, group[0].err = nil, fmt.Errorf("mailbot: process %s: %w", group[0].pl.row.MessageID, err)
			return
		}
		for _, it := range group {
			it.res, it.err = p.apply(ctx, it.m, it.raw, it.source)
		}
		return
	}
	for _, it := range group {
		if it.err == nil {
			p.applied(ctx, it.raw, it.res, it.source)
		}
	}
}

// queueReply queues the reply a processed message deserves, if any. A
// failure is logged: the message and what it caused are committed already.
func (p *Processor) queueReply(ctx context.Context, raw []byte, res *Result) {
	// Only a sender our server authenticated is answered (no backscatter).
	req := reply.Request{MailID: res.ID, Raw: raw, Lang: res.Lang, At: res.Committed, Authenticated: res.Auth.Aligned}
	switch {
	case len(res.Excluded) > 0:
		req.Kind, req.Sites = db.ReplyAck, res.Excluded
	case res.ReviewStatus == ReviewPending:
		req.Kind = db.ReplyReceived
		for _, d := range res.Domains {
			if site, err := policy.SiteOf(d); err == nil {
				req.Sites = appendUnique(req.Sites, site)
			}
		}
	default:
		res.ReplySkipped = "nothing to answer (" + string(res.Outcome) + ")"
		return
	}
	if res.Intent == IntentAuto {
		res.ReplySkipped = reply.SkipAutomatic
		return
	}
	req.Text = Inspect(raw).NewText
	rep, skip, err := p.replies.Queue(ctx, req)
	if err != nil {
		p.log.Error("reply not queued", "id", res.ID, "err", err)
		res.ReplySkipped = "not queued: " + err.Error()
		return
	}
	if rep == nil {
		res.ReplySkipped = skip
		return
	}
	res.ReplyID = rep.ID
}

// exclusionDetail is the JSON evidence of an exclusion made by email
// (policy_events.detail).
type exclusionDetail struct {
	MessageID string `json:"message_id"`
	From      string `json:"from"`
	Date      string `json:"date,omitempty"`
	Subject   string `json:"subject,omitempty"`
	Auth      Auth   `json:"auth"`
	// AuthDomainMatches is true when the sender's authenticated domain
	// belongs to the excluded site: the request came from the site's own
	// people.
	AuthDomainMatches bool `json:"auth_domain_matches_site"`
	// Verified is true when the authenticated domain is aligned with From
	// and belongs to the site (Message.Verified).
	Verified          bool   `json:"verified"`
	FromDomainMatches bool   `json:"from_domain_matches_site"`
	ApprovedBy        string `json:"approved_by,omitempty"`
}

// exclude excludes each site with its own evidence, through a policy that
// writes inside tx.
func (p *Processor) exclude(ctx context.Context, tx *db.Tx, m *Message, row *db.MailMessage, sites []string) error {
	pol := p.policyIn(tx)
	for _, site := range sites {
		c := policy.Change{
			Actor:    actorOf(row.FromAddr),
			Evidence: row.MessageID,
			Source:   SourceMail,
			Reason:   reasonOf(row.Subject),
			Detail:   detailOf(row, m.Auth, site, ""),
			// Verified only when the sender proved they speak for the
			// site; it applies at once either way.
			Unverified: !m.Verified(site),
		}
		if _, err := pol.Exclude(ctx, []string{site}, c); err != nil {
			return err
		}
	}
	return nil
}

// policyIn returns a Policy whose changes happen inside tx (as savepoints),
// so a message and the exclusions it causes commit together.
func (p *Processor) policyIn(tx *db.Tx) *policy.Policy {
	return p.policy.WithNow(p.now).In(tx)
}

// overUnverifiedLimit says why the message's exclusion of sites must wait
// for staff because of the sender's unverified exclusions ("" when it need
// not): the new unverified exclusions it would make, with those the sender
// made in UnverifiedWindow, come to more than the limit. So one sender who
// cannot prove they speak for the sites cannot take a large part of the
// crawl list off at once. Sites already excluded do not count.
func (p *Processor) overUnverifiedLimit(ctx context.Context, tx *db.Tx, m *Message, row *db.MailMessage, sites []string) (string, error) {
	var fresh int
	for _, site := range sites {
		if m.Verified(site) {
			continue
		}
		if _, err := tx.Exclusion(ctx, site); err == nil {
			continue
		} else if !errors.Is(err, db.ErrNotFound) {
			return "", err
		}
		fresh++
	}
	if fresh == 0 {
		return "", nil
	}
	// Counted under the policy lock, so two messages of one sender
	// applied at once by two processes cannot both pass.
	if err := tx.LockPolicy(ctx); err != nil {
		return "", err
	}
	n, err := tx.CountUnverifiedExclusionsBy(ctx, actorOf(row.FromAddr), SourceMail, p.now().Add(-UnverifiedWindow))
	if err != nil {
		return "", err
	}
	if int(n)+fresh <= p.unverifiedLimit {
		return "", nil
	}
	return fmt.Sprintf("the sender, not verified for these sites, asked to exclude %d sites in 24 hours, more than the %d allowed: a staff member must check it",
		int(n)+fresh, p.unverifiedLimit), nil
}

func detailOf(row *db.MailMessage, auth Auth, site, approvedBy string) string {
	d := exclusionDetail{MessageID: row.MessageID, From: row.FromAddr, Subject: row.Subject, Auth: auth, ApprovedBy: approvedBy}
	if row.SentDate != nil {
		d.Date = row.SentDate.UTC().Format(time.RFC3339)
	}
	d.AuthDomainMatches = domainMatches(auth.Domain, site)
	d.Verified = domainMatches(auth.Aligned, site)
	if at := strings.LastIndexByte(row.FromAddr, '@'); at >= 0 {
		d.FromDomainMatches = domainMatches(row.FromAddr[at+1:], site)
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// domainMatches reports whether domain belongs to site (is the site or one
// of its hosts).
func domainMatches(domain, site string) bool {
	if domain == "" || site == "" {
		return false
	}
	s, err := policy.SiteOfHost(domain)
	return err == nil && s == site
}

func actorOf(from string) string {
	if from == "" {
		return "unknown sender"
	}
	return from
}

func reasonOf(subject string) string {
	if subject == "" {
		return "email: (no subject)"
	}
	const max = 200
	if utf8.RuneCountInString(subject) > max {
		r := []rune(subject)
		subject = string(r[:max]) + "…"
	}
	return "email: " + subject
}

// clean makes a string storable as text on every engine: valid UTF-8,
// without NUL bytes.
// cleanAll cleans each string of list; an empty list for nil.
func cleanAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = clean(s)
	}
	return out
}

func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
