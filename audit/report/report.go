// Package report builds the compliance report of one site: what a
// webmaster or a lawyer asks for when they want to know what LohiSoftBot did
// on their site and whether it kept its promises. It gathers, from the
// records alone, the site's status on the crawl list and its exclusions,
// every crawl cycle with every request, the robots.txt snapshots the bot
// saw (bodies and hashes), what the index keeps of the site, the emails
// received about it, and the verdict of every audit rule; and renders it as
// text, JSON or one self-contained HTML file, in English, Italian, Danish or
// Hungarian.
package report

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/translog"
)

// Report is everything the records say about one site. Its JSON form is the
// report's --format json.
type Report struct {
	Site        string    `json:"site"`
	GeneratedAt time.Time `json:"generated_at"`
	Status      Status    `json:"status"`
	// Events is the site's policy log, oldest first.
	Events []Event `json:"policy_events"`
	// Cycles are the visits of the site, oldest first; requests logged
	// outside any cycle come last in a cycle with ID 0.
	Cycles []Cycle `json:"cycles"`
	// Robots are the robots.txt snapshots of every origin the site's
	// requests went to, by origin and time.
	Robots []Snapshot `json:"robots_snapshots"`
	// Pages and Anchors are what the index keeps of the site: every column
	// of its entries, and the link texts pointing into it.
	Pages   []Page   `json:"index_pages"`
	Anchors []Anchor `json:"index_anchors"`
	// Mail lists the emails that name the site, or are the evidence of its
	// exclusion.
	Mail []Mail `json:"emails"`
	// Replies are the replies sent to webmasters about the site
	// (acknowledgements of its exclusion, receipts), oldest first.
	Replies []Reply `json:"replies"`
	// Audit is the verdict of every audit rule on the site's records.
	Audit []RuleResult `json:"audit"`
	// Log is the transparency log when the report was built: the records
	// it shows that were in the log by then have inclusion proofs against
	// any signed checkpoint of at least its size ("lohibot log prove").
	// Nil when the log is empty.
	Log *LogHead `json:"log"`
}

// LogHead is the state of the transparency log a report was built from.
type LogHead struct {
	Size int64  `json:"size"` // leaves
	Root string `json:"root"` // base64 root hash of the tree of those leaves
	// Check is the command that proves the site's records against a
	// signed checkpoint.
	Check string `json:"check"`
	// Checkpoint is the latest signed checkpoint made ('log checkpoint',
	// serve's publication), and Proofs the inclusion proof against it of
	// every record of the site it covers, as 'log prove --json' prints
	// them. Empty when no checkpoint was made.
	Checkpoint string            `json:"checkpoint,omitempty"`
	Proofs     []*translog.Proof `json:"proofs,omitempty"`
}

// Status is where the site stands.
type Status struct {
	Listed       bool       `json:"listed"`
	StartURL     string     `json:"start_url,omitempty"`
	ListedSince  *time.Time `json:"listed_since,omitempty"`
	Crawled      bool       `json:"crawled"`
	Cycles       int        `json:"cycles"`
	Requests     int        `json:"requests"`
	PageRequests int        `json:"page_requests"`
	FirstRequest *time.Time `json:"first_request,omitempty"`
	LastRequest  *time.Time `json:"last_request,omitempty"`
	// Excluded tells whether the site is excluded now; Exclusion says since
	// when, who asked, why and the evidence.
	Excluded  bool       `json:"excluded"`
	Exclusion *Exclusion `json:"exclusion,omitempty"`
	// RequestsSinceExclusion counts requests sent after the exclusion was
	// committed (the exclusions rule says whether that broke a promise).
	RequestsSinceExclusion int `json:"requests_since_exclusion"`
}

// Exclusion is the current exclusion of the site.
type Exclusion struct {
	Since    time.Time `json:"since"`
	By       string    `json:"by"`
	Reason   string    `json:"reason"`
	Evidence string    `json:"evidence"`
	Source   string    `json:"source"`
	Version  int64     `json:"policy_version"`
	// IndexPurged counts what the exclusion deleted from the index.
	IndexPurged *db.IndexPurge `json:"index_purged,omitempty"`
	// Verified is true for a staff exclusion or an email whose sender was
	// shown to speak for the site.
	Verified bool `json:"verified"`
	// PurgeAfter, for an unverified exclusion, is when the index entries
	// it keeps (hidden from search, listed in Pages) are purged unless
	// someone objects; absent when nothing is kept.
	PurgeAfter *time.Time `json:"purge_after,omitempty"`
	// MailID is the ID (in Report.Mail) of the email whose Message-ID is
	// the evidence, 0 when there is none.
	MailID int64 `json:"mail_id,omitempty"`
}

// Event is one entry of the site's policy log.
type Event struct {
	Version    int64     `json:"version"`
	HappenedAt time.Time `json:"happened_at"`
	Kind       string    `json:"kind"`
	Actor      string    `json:"actor"`
	Reason     string    `json:"reason"`
	Evidence   string    `json:"evidence"`
	Source     string    `json:"source"`
	// IndexPurged counts what the change deleted from the index (the
	// site's pages and the link texts pointing to it). It is set on
	// exclusions, and on other changes that purged anything.
	IndexPurged *db.IndexPurge `json:"index_purged,omitempty"`
}

// eventPurge is the IndexPurged of an Event made from e.
func eventPurge(e db.PolicyEvent) *db.IndexPurge {
	if e.Kind != db.EventExclude && e.PurgedPages == 0 && e.PurgedAnchors == 0 {
		return nil
	}
	return &db.IndexPurge{Pages: e.PurgedPages, Anchors: e.PurgedAnchors}
}

// Cycle is one visit of the site with its requests, in the order sent.
type Cycle struct {
	ID int64 `json:"id"`
	// Number counts the site's cycles from 1, oldest first; 0 for the
	// requests logged outside any cycle.
	Number       int        `json:"number"`
	Node         string     `json:"node"`
	StartedAt    *time.Time `json:"started_at"`
	FinishedAt   *time.Time `json:"finished_at"`
	Status       string     `json:"status"`
	Budget       int        `json:"budget"`
	Spent        int        `json:"spent"`
	DelayMS      int64      `json:"delay_ms"`
	Reason       string     `json:"reason"`
	PageRequests int        `json:"page_requests"`
	Requests     []Request  `json:"requests"`
	// RobotsRefused are URLs of the cycle robots.txt refused, never
	// requested (at most db.MaxRobotsRefusals per cycle are recorded);
	// absent when none was.
	RobotsRefused []Refusal `json:"robots_refused,omitempty"`
}

// Refusal is a URL robots.txt refused: the rule that refused it, in which
// snapshot, and when.
type Refusal struct {
	URL              string    `json:"url"`
	RefusedAt        time.Time `json:"refused_at"`
	RobotsSnapshotID *int64    `json:"robots_snapshot_id"`
	RobotsRule       string    `json:"robots_rule"`
	RobotsLine       int       `json:"robots_line"`
}

// Request is one request of the log.
type Request struct {
	ID               int64      `json:"id"`
	SentAt           time.Time  `json:"sent_at"`
	CompletedAt      *time.Time `json:"completed_at"`
	Host             string     `json:"host"`
	URL              string     `json:"url"`
	Purpose          string     `json:"purpose"`
	Attempt          int        `json:"attempt"`
	RedirectOf       *int64     `json:"redirect_of,omitempty"`
	Status           *int       `json:"status"`
	Bytes            int64      `json:"bytes"`
	DurationMS       int64      `json:"duration_ms"`
	RobotsSnapshotID *int64     `json:"robots_snapshot_id,omitempty"`
	RobotsRule       string     `json:"robots_rule"`
	RobotsLine       int        `json:"robots_line,omitempty"`
	PolicyCheck      string     `json:"policy_check"`
	DelayMS          int64      `json:"delay_ms"`
	RetryAfter       string     `json:"retry_after,omitempty"`
	RetryNotBefore   *time.Time `json:"retry_not_before,omitempty"`
	Outcome          string     `json:"outcome"`
	Error            string     `json:"error,omitempty"`
	// Signature is the Web Bot Auth evidence of a signed request.
	Signature *Signature `json:"signature,omitempty"`
}

// Signature is what a request was signed with.
type Signature struct {
	KeyID   string    `json:"keyid"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// Snapshot is a robots.txt the bot fetched, with its body as evidence.
type Snapshot struct {
	ID        int64     `json:"id"`
	Origin    string    `json:"origin"`
	FetchedAt time.Time `json:"fetched_at"`
	Status    int       `json:"status"`
	Outcome   string    `json:"outcome"`
	FinalURL  string    `json:"final_url"`
	Sha256    string    `json:"sha256"`
	// HashOK tells whether the stored body still hashes to Sha256.
	HashOK    bool   `json:"hash_ok"`
	Size      int    `json:"size"`
	Body      string `json:"body"`
	Error     string `json:"error,omitempty"`
	RequestID *int64 `json:"request_id,omitempty"`
}

// Page is an index entry: every column the index has.
type Page struct {
	ID          int64     `json:"id"`
	URL         string    `json:"url"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	H1          string    `json:"h1"`
	H2          string    `json:"h2"`
	H3          string    `json:"h3"`
	Status      int       `json:"status"`
	FetchedAt   time.Time `json:"fetched_at"`
	RequestID   *int64    `json:"request_id,omitempty"`
}

// Anchor is the text of a link pointing into the site.
type Anchor struct {
	FromURL    string    `json:"from_url"`
	ToURL      string    `json:"to_url"`
	AnchorText string    `json:"anchor_text"`
	SeenAt     time.Time `json:"seen_at"`
}

// Mail is an email received about the site (the raw message stays in the
// database; its hash is shown).
type Mail struct {
	ID           int64      `json:"id"`
	MessageID    string     `json:"message_id"`
	ReceivedAt   time.Time  `json:"received_at"`
	SentDate     *time.Time `json:"sent_date,omitempty"`
	From         string     `json:"from"`
	Subject      string     `json:"subject"`
	Intent       string     `json:"intent"`
	Domains      []string   `json:"domains"`
	Lang         string     `json:"lang,omitempty"`
	AuthDomain   string     `json:"auth_domain,omitempty"`
	Outcome      string     `json:"outcome"`
	ReviewStatus string     `json:"review_status,omitempty"`
	ReviewedBy   string     `json:"reviewed_by,omitempty"`
	Size         int64      `json:"size"`
	Sha256       string     `json:"sha256"`
}

// RuleResult is the verdict of one audit rule on the site.
type RuleResult struct {
	Rule       string            `json:"rule"`
	OK         bool              `json:"ok"`
	Checked    int64             `json:"checked"`
	Violations []audit.Violation `json:"violations"`
}

// Options configures Build. A nil *Options is the zero value.
type Options struct {
	// Now returns the time the report is generated at. Nil means db.Now.
	Now func() time.Time
}

// Build gathers the report of site (as returned by policy.SiteOf) from
// store. It only reads; it does I/O and runs the audit on the site's
// records.
func Build(ctx context.Context, store *db.Store, site string, opts *Options) (*Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = db.Now
	}
	rep := &Report{Site: site, GeneratedAt: o.Now().UTC(), Events: []Event{}, Cycles: []Cycle{}, Robots: []Snapshot{},
		Pages: []Page{}, Anchors: []Anchor{}, Mail: []Mail{}, Replies: []Reply{}, Audit: []RuleResult{}}
	// The log first: every record in it is among those read next.
	if h, err := translog.New(store, "").Head(ctx); err != nil {
		return nil, fmt.Errorf("report: %s: %w", site, err)
	} else if h.Size > 0 {
		rep.Log = &LogHead{Size: h.Size, Root: base64.StdEncoding.EncodeToString(h.Hash[:]),
			Check: "lohibot log prove " + site + " --checkpoint FILE"}
		if err := proveLatest(ctx, store, site, rep.Log); err != nil {
			return nil, fmt.Errorf("report: %s: %w", site, err)
		}
	}
	for _, step := range []func(context.Context, *db.Store, *Report) error{
		buildStatus, buildEvents, buildCycles, buildRobots, buildIndex, buildMail,
	} {
		if err := step(ctx, store, rep); err != nil {
			return nil, fmt.Errorf("report: %s: %w", site, err)
		}
	}
	if err := buildReplies(ctx, store, rep); err != nil {
		return nil, fmt.Errorf("report: %s: %w", site, err)
	}
	if err := buildAudit(ctx, store, rep); err != nil {
		return nil, fmt.Errorf("report: %s: %w", site, err)
	}
	return rep, nil
}

func buildStatus(ctx context.Context, g *db.Store, rep *Report) error {
	s, err := g.Site(ctx, rep.Site)
	switch {
	case err == nil:
		rep.Status.Listed, rep.Status.StartURL = true, s.StartURL
		t := s.AddedAt.UTC()
		rep.Status.ListedSince = &t
	case !errors.Is(err, db.ErrNotFound):
		return err
	}
	ex, err := g.Exclusion(ctx, rep.Site)
	switch {
	case err == nil:
		rep.Status.Excluded = true
		x := &Exclusion{Since: ex.ExcludedAt.UTC(), By: ex.Actor, Reason: ex.Reason, Evidence: ex.Evidence, Source: ex.Source,
			Verified: ex.Verified, PurgeAfter: utcPtr(ex.PurgeAfter)}
		if ev, err := g.PolicyEvent(ctx, ex.EventID); err == nil {
			x.Version = ev.Version
			x.IndexPurged = eventPurge(*ev)
		}
		rep.Status.Exclusion = x
	case !errors.Is(err, db.ErrNotFound):
		return err
	}
	return nil
}

func buildEvents(ctx context.Context, g *db.Store, rep *Report) error {
	evs, err := g.SiteEvents(ctx, rep.Site)
	if err != nil {
		return err
	}
	for _, e := range evs {
		rep.Events = append(rep.Events, Event{Version: e.Version, HappenedAt: e.HappenedAt.UTC(), Kind: e.Kind,
			Actor: e.Actor, Reason: e.Reason, Evidence: e.Evidence, Source: e.Source, IndexPurged: eventPurge(e)})
	}
	return nil
}

func buildCycles(ctx context.Context, g *db.Store, rep *Report) error {
	cycles, err := g.SiteCycles(ctx, rep.Site)
	if err != nil {
		return err
	}
	reqs, err := g.SiteRequests(ctx, rep.Site)
	if err != nil {
		return err
	}
	byID := make(map[int64]int)
	for _, c := range cycles {
		byID[c.ID] = len(rep.Cycles)
		started := c.StartedAt.UTC()
		rep.Cycles = append(rep.Cycles, Cycle{ID: c.ID, Number: len(rep.Cycles) + 1, Node: c.Node, StartedAt: &started, FinishedAt: utcPtr(c.FinishedAt),
			Status: c.Status, Budget: c.Budget, Spent: c.Spent, DelayMS: c.DelayMS, Reason: c.Reason, Requests: []Request{}})
	}
	var loose []Request
	var since time.Time
	if x := rep.Status.Exclusion; x != nil {
		since = x.Since
	}
	for _, r := range reqs {
		req := Request{ID: r.ID, SentAt: r.SentAt.UTC(), CompletedAt: utcPtr(r.CompletedAt), Host: r.Host, URL: r.URL,
			Purpose: r.Purpose, Attempt: r.Attempt, RedirectOf: r.RedirectOf, Status: r.Status, Bytes: r.Bytes,
			DurationMS: r.DurationMS, RobotsSnapshotID: r.RobotsSnapshotID, RobotsRule: r.RobotsRule, RobotsLine: r.RobotsLine,
			PolicyCheck: r.PolicyCheck, DelayMS: r.DelayMS, RetryAfter: r.RetryAfter, RetryNotBefore: utcPtr(r.RetryNotBefore),
			Outcome: r.Outcome, Error: r.Error}
		if r.SigKeyID != "" && r.SigCreated != nil && r.SigExpires != nil {
			req.Signature = &Signature{KeyID: r.SigKeyID, Created: r.SigCreated.UTC(), Expires: r.SigExpires.UTC()}
		}
		// A request withdrawn before its time was never sent: it is
		// listed in its cycle, and counted nowhere.
		sent := r.Outcome != db.OutcomeWithdrawn
		if sent {
			rep.Status.Requests++
			if r.Purpose == db.PurposePage {
				rep.Status.PageRequests++
			}
			if rep.Status.FirstRequest == nil {
				t := req.SentAt
				rep.Status.FirstRequest = &t
			}
			t := req.SentAt
			rep.Status.LastRequest = &t
			if !since.IsZero() && req.SentAt.After(since) {
				rep.Status.RequestsSinceExclusion++
			}
		}
		i, ok := -1, false
		if r.CycleID != nil {
			i, ok = byID[*r.CycleID]
		}
		if !ok {
			loose = append(loose, req)
			continue
		}
		c := &rep.Cycles[i]
		c.Requests = append(c.Requests, req)
		if r.Purpose == db.PurposePage && sent {
			c.PageRequests++
		}
	}
	refusals, err := g.SiteRobotsRefusals(ctx, rep.Site)
	if err != nil {
		return err
	}
	for _, f := range refusals {
		if i, ok := byID[f.CycleID]; ok {
			rep.Cycles[i].RobotsRefused = append(rep.Cycles[i].RobotsRefused, Refusal{URL: f.URL, RefusedAt: f.RefusedAt.UTC(),
				RobotsSnapshotID: f.RobotsSnapshotID, RobotsRule: f.RobotsRule, RobotsLine: f.RobotsLine})
		}
	}
	if len(loose) > 0 {
		c := Cycle{Requests: loose}
		for _, r := range loose {
			if r.Purpose == db.PurposePage && r.Outcome != db.OutcomeWithdrawn {
				c.PageRequests++
			}
		}
		rep.Cycles = append(rep.Cycles, c)
	}
	rep.Status.Cycles = len(cycles)
	rep.Status.Crawled = rep.Status.Requests > 0
	return nil
}

// maxBodyShown is how much of a robots.txt body the report carries; the
// hash always covers the whole stored body.
const maxBodyShown = 100 << 10

func buildRobots(ctx context.Context, g *db.Store, rep *Report) error {
	origins, err := g.RequestOrigins(ctx, rep.Site)
	if err != nil {
		return err
	}
	set := make(map[string]bool)
	for _, o := range origins {
		set[o] = true
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			port := u.Port()
			host := u.Hostname()
			set[u.Scheme+"://"+host] = true
			switch {
			case port == "" && u.Scheme == "https":
				set[u.Scheme+"://"+host+":443"] = true
			case port == "" && u.Scheme == "http":
				set[u.Scheme+"://"+host+":80"] = true
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	all := make([]string, 0, len(set))
	for o := range set {
		all = append(all, o)
	}
	slices.Sort(all)
	snaps, err := g.RobotsSnapshotsOf(ctx, all)
	if err != nil {
		return err
	}
	for _, s := range snaps {
		sum := sha256.Sum256(s.Body)
		body := s.Body
		if len(body) > maxBodyShown {
			body = body[:maxBodyShown]
		}
		rep.Robots = append(rep.Robots, Snapshot{ID: s.ID, Origin: s.Origin, FetchedAt: s.FetchedAt.UTC(), Status: s.Status,
			Outcome: s.Outcome, FinalURL: s.FinalURL, Sha256: s.Sha256,
			HashOK: strings.EqualFold(hex.EncodeToString(sum[:]), s.Sha256), Size: len(s.Body),
			Body: strings.ToValidUTF8(string(body), string(utf8.RuneError)), Error: s.Error, RequestID: s.RequestID})
	}
	return nil
}

func buildIndex(ctx context.Context, g *db.Store, rep *Report) error {
	pages, err := g.SitePages(ctx, rep.Site)
	if err != nil {
		return err
	}
	for _, p := range pages {
		rep.Pages = append(rep.Pages, Page{ID: p.ID, URL: p.URL, Title: p.Title, Description: p.Description,
			H1: p.H1, H2: p.H2, H3: p.H3, Status: p.Status, FetchedAt: p.FetchedAt.UTC(), RequestID: p.RequestID})
	}
	anchors, err := g.AnchorsTo(ctx, rep.Site)
	if err != nil {
		return err
	}
	for _, a := range anchors {
		rep.Anchors = append(rep.Anchors, Anchor{FromURL: a.FromURL, ToURL: a.ToURL, AnchorText: a.AnchorText, SeenAt: a.SeenAt.UTC()})
	}
	return nil
}

func buildMail(ctx context.Context, g *db.Store, rep *Report) error {
	evidence := ""
	if x := rep.Status.Exclusion; x != nil && x.Evidence != "" {
		evidence = strings.Trim(x.Evidence, "<>")
	}
	msgs, err := g.MailAbout(ctx, rep.Site, evidence)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		rep.Mail = append(rep.Mail, Mail{ID: m.ID, MessageID: m.MessageID, ReceivedAt: m.ReceivedAt.UTC(), SentDate: utcPtr(m.SentDate),
			From: m.FromAddr, Subject: m.Subject, Intent: m.Intent, Domains: strings.Fields(m.Domains), Lang: m.Lang,
			AuthDomain: m.AuthDomain, Outcome: m.Outcome, ReviewStatus: m.ReviewStatus, ReviewedBy: m.ReviewedBy,
			Size: m.Size, Sha256: m.Sha256})
		if evidence != "" && m.MessageID == evidence {
			rep.Status.Exclusion.MailID = m.ID
		}
	}
	return nil
}

func buildAudit(ctx context.Context, store *db.Store, rep *Report) error {
	byRule := make(map[string][]audit.Violation)
	sum, err := audit.Run(ctx, store, &audit.Options{Sites: []string{rep.Site}}, func(v audit.Violation) error {
		byRule[v.Rule] = append(byRule[v.Rule], v)
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range sum.Rules {
		vs := byRule[r.Rule]
		if vs == nil {
			vs = []audit.Violation{}
		}
		rep.Audit = append(rep.Audit, RuleResult{Rule: r.Rule, OK: r.OK(), Checked: r.Checked, Violations: vs})
	}
	return nil
}

// Checked reports whether there was anything to give a verdict on: a
// request sent to the site.
func (r *Report) Checked() bool { return r.Status.Requests > 0 }

// NoRecord reports whether the records know nothing of the site: not
// listed, never excluded or crawled, no email names it, nothing indexed.
func (r *Report) NoRecord() bool {
	return !r.Status.Listed && !r.Status.Excluded && r.Status.Requests == 0 && len(r.Events) == 0 &&
		len(r.Mail) == 0 && len(r.Pages) == 0 && len(r.Anchors) == 0 && len(r.Cycles) == 0
}

// OK reports whether every audit rule held for the site.
func (r *Report) OK() bool {
	for _, a := range r.Audit {
		if !a.OK {
			return false
		}
	}
	return true
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// proveLatest puts the latest signed checkpoint into h, with the proofs of
// the site's records against it; nothing when no checkpoint was made.
func proveLatest(ctx context.Context, store *db.Store, site string, h *LogHead) error {
	msg, err := store.LatestCheckpoint(ctx)
	if db.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	origin, _, _ := strings.Cut(string(msg), "\n")
	msg, c, err := translog.New(store, origin).Latest(ctx)
	if err != nil {
		return err
	}
	proofs, err := translog.New(store, origin).ProveSite(ctx, site, c.Size)
	if err != nil {
		return err
	}
	h.Checkpoint, h.Proofs = string(msg), proofs
	return nil
}
