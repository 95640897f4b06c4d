package db

import "time"

// Site is a row of the crawl list: a registrable domain (see policy.SiteOf)
// and the URL its crawl starts from.
type Site struct {
	ID       int64
	Name     string
	StartURL string
	AddedAt  time.Time
	AddedBy  string
}

// TableName implements gorm's tabler.
func (Site) TableName() string { return "sites" }

// Exclusion is a site currently taken off the crawl list. The row is deleted
// on re-inclusion; the history stays in PolicyEvent.
type Exclusion struct {
	Site       string `gorm:"primaryKey"`
	ExcludedAt time.Time
	Actor      string // who asked: a staff member, or the sender of an email
	Reason     string
	Evidence   string // the email's Message-ID, or the staff member
	Source     string // "cli", "mail", "review"
	EventID    int64  // the PolicyEvent that excluded it
	// Verified is true for a staff exclusion and for an email whose sender
	// the receiving server authenticated for the site (a trusted
	// Authentication-Results header, DKIM or SPF aligned with From).
	Verified bool
	// PurgeAfter, when set, is when the site's index entries, kept since an
	// unverified exclusion, are purged unless the exclusion is verified
	// (purged then) or the site re-included (kept) before. Nil means
	// nothing is kept: the index was purged.
	PurgeAfter *time.Time
}

// TableName implements gorm's tabler.
func (Exclusion) TableName() string { return "exclusions" }

// Kinds of PolicyEvent.
const (
	EventExclude       = "exclude"        // a site was excluded
	EventExcludeRepeat = "exclude-repeat" // an already-excluded site was asked for again
	EventReinclude     = "reinclude"      // a staff member re-included a site
	EventSiteAdd       = "site-add"       // a site joined the crawl list
	EventSiteUpdate    = "site-update"    // a listed site got a new start URL
	EventSiteRemove    = "site-remove"    // a site left the crawl list
	EventMailDismiss   = "mail-dismiss"   // a staff member closed an email without changing the policy
	EventPurge         = "purge"          // the index entries kept since an unverified exclusion were purged, unopposed
)

// PolicyEvent is one entry of the append-only policy log. Rows are never
// updated or deleted. Version is strictly increasing in commit order (it is
// taken from the single policy_state row inside the writing transaction), so
// a reader that has seen version v has seen every event up to v.
type PolicyEvent struct {
	ID         int64
	Version    int64
	HappenedAt time.Time
	Kind       string
	Site       string
	Actor      string
	Reason     string
	Evidence   string
	Source     string
	Detail     string // free-form JSON with more evidence (mail authentication results, ...)
	// PurgedPages and PurgedAnchors count the index entries of the site
	// (pages, and link texts pointing to it) the change deleted: an
	// exclusion purges the site from the index. Zero for other changes.
	PurgedPages   int64
	PurgedAnchors int64
}

// TableName implements gorm's tabler.
func (PolicyEvent) TableName() string { return "policy_events" }

// MailMessage is one email received at the exclusion mailbox, stored once
// (MessageID is unique) with its raw bytes as evidence.
type MailMessage struct {
	ID           int64
	MessageID    string // without angle brackets; a stable content hash when the message has none
	ReceivedAt   time.Time
	SentDate     *time.Time
	FromAddr     string
	Subject      string
	Intent       string // exclude, reinclude, other, auto
	Domains      string // space-separated sites
	Lang         string
	Auth         string // JSON: DKIM/SPF/DMARC results of Authentication-Results
	AuthDomain   string // the authenticated sender domain, when one passed
	Outcome      string // excluded, queued, ignored, failed
	ReviewStatus string // "", pending, approved, dismissed
	ReviewReason string
	Reasons      string // JSON array: what decided the classification ("" before schema 6)
	ReviewedBy   string
	ReviewedAt   *time.Time
	Source       string // imap://..., a file path
	Size         int64
	Sha256       string
	Raw          []byte
}

// TableName implements gorm's tabler.
func (MailMessage) TableName() string { return "mail_messages" }

// Cycle statuses.
const (
	CycleRunning = "running"
	CycleDone    = "done"
	CycleStopped = "stopped" // interrupted (Ctrl-C, crash recovery)
)

// CrawlCycle is one visit of a site. Spent counts the budget slots reserved
// so far; it never goes past Budget (see Request.BudgetSlot), and goes down
// only when a request never sent gives its slot back (WithdrawRequest).
type CrawlCycle struct {
	ID         int64
	Site       string
	Node       string
	StartedAt  time.Time
	FinishedAt *time.Time
	Status     string
	Budget     int
	Spent      int
	DelayMS    int64 // the --delay in force for this cycle
	Reason     string
}

// TableName implements gorm's tabler.
func (CrawlCycle) TableName() string { return "crawl_cycles" }

// Outcomes of a robots.txt fetch (RFC 9309 2.3.1).
const (
	RobotsParsed      = "parsed"       // 2xx: the body's rules apply
	RobotsAllowAll    = "allow-all"    // 4xx other than 401/403 ("unavailable")
	RobotsDisallowAll = "disallow-all" // 401/403, 429, 5xx, network errors ("unreachable")
)

// RobotsSnapshot is one fetched robots.txt of an origin, kept as evidence of
// what every page request was checked against.
type RobotsSnapshot struct {
	ID        int64
	Origin    string // scheme://host:port
	FetchedAt time.Time
	Status    int
	FinalURL  string
	Body      []byte // at most 500 KiB
	Sha256    string // hex sha256 of Body
	Outcome   string
	Error     string
	RequestID *int64
}

// TableName implements gorm's tabler.
func (RobotsSnapshot) TableName() string { return "robots_snapshots" }

// Request purposes.
const (
	PurposePage   = "page"
	PurposeRobots = "robots"
)

// OutcomeWithdrawn is the outcome of a request logged and then never sent:
// its site was excluded, or its crawl interrupted, before it left the
// machine. Its sent_at is the time it was to be sent and its completed_at
// when it was withdrawn. It never counts against a budget (its slot is
// given back: see WithdrawRequest), and no rule of the audit applies to it.
const OutcomeWithdrawn = "withdrawn"

// OutcomeInterrupted is the outcome of a request sent and then cut short
// by its crawl's interruption (SIGTERM, Ctrl-C) before its answer was
// read: it counts against the budget (the site may have seen it), and a
// resumed cycle asks for its URL again.
const OutcomeInterrupted = "interrupted"

// OutcomeAbandoned is the outcome of a request whose crawler stopped (kill
// -9, a lost machine, a full disk) before its answer was recorded, closed
// by the crawler that took its lease or cycle over: it counts against the
// budget (the site may have seen it), and a resumed cycle asks for its URL
// again (the links of its answer were never recorded).
const OutcomeAbandoned = "abandoned"

// Request is one HTTP request of the crawler. The row is written before the
// request is sent and completed after, so a request that died with its
// process stays in the log as sent (CompletedAt nil).
type Request struct {
	ID               int64
	CycleID          *int64
	BudgetSlot       *int // 1..Budget for page requests; unique per cycle
	Site             string
	Host             string
	Origin           string
	URL              string
	Method           string
	Purpose          string
	Node             string
	Attempt          int    // 0 for the first try, 1.. for retries
	RedirectOf       *int64 // the request whose redirect this follows
	RobotsSnapshotID *int64
	RobotsRule       string // the rule that allowed it, or the reason
	RobotsLine       int
	PolicyCheck      string // what the policy gate answered
	DelayMS          int64  // the gap in force before this request (delay or Crawl-delay)
	SentAt           time.Time
	CompletedAt      *time.Time
	Status           *int
	Bytes            int64
	DurationMS       int64
	RetryAfter       string     // the raw Retry-After header
	ETag             string     `gorm:"column:etag"` // the response's ETag (page requests), sent back as If-None-Match
	LastModified     string     // the response's Last-Modified (page requests), sent back as If-Modified-Since
	RetryNotBefore   *time.Time // when the next request to the host may start, per Retry-After
	Outcome          string     // ok, redirect, retry, auth, challenge, noindex, error, refused, ...
	Error            string
	SigKeyID         string     `gorm:"column:sig_keyid"` // the Web Bot Auth keyid it was signed with; "" unsigned
	SigCreated       *time.Time // the signature's created
	SigExpires       *time.Time // the signature's expires
}

// TableName implements gorm's tabler.
func (Request) TableName() string { return "requests" }

// HostLease says which crawler may send the next request to a host, until
// when, and when the next request may start at the earliest. It enforces one
// request in flight per host across a fleet.
type HostLease struct {
	Host      string `gorm:"primaryKey"`
	Holder    string
	ExpiresAt time.Time
	NextAt    time.Time
}

// TableName implements gorm's tabler.
func (HostLease) TableName() string { return "host_leases" }

// Page is one entry of the index: exactly the fields the bot page promises
// to keep, nothing else.
type Page struct {
	ID          int64
	URL         string
	Site        string
	Title       string
	Description string
	H1          string // one heading per line
	H2          string
	H3          string
	Status      int
	FetchedAt   time.Time
	RequestID   *int64
}

// TableName implements gorm's tabler.
func (Page) TableName() string { return "pages" }

// Anchor is the text of one link, stored for the page it points to.
type Anchor struct {
	ID         int64
	FromURL    string
	ToURL      string
	ToSite     string
	AnchorText string
	SeenAt     time.Time
	RequestID  *int64
}

// TableName implements gorm's tabler.
func (Anchor) TableName() string { return "anchors" }
