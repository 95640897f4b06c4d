// Package audit checks, from the stored records alone, that LohiSoftBot kept
// the promises of its public page: robots.txt,
// the page budget, politeness towards hosts, exclusions, and what the index
// stores.
//
// Every rule is re-derived from the raw records: the request log, the
// robots.txt snapshots (whose bodies are hashed and parsed again with
// robotstxt), the crawl cycles, the policy event log and the schema of
// the index tables. The crawler's own verdicts (the robots rule it logged,
// the outcome it gave a snapshot, the gap it says it waited) are shown as
// evidence but never trusted.
//
// Run streams through the request log ordered by (site, sent_at) and keeps
// state for one site at a time, so its memory does not grow with the log.
package audit

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// The rules, as named on the command line.
const (
	// RuleRobots: every page request was checked against a robots.txt
	// snapshot of its origin fetched at most MaxSnapshotAge before it, whose
	// body still has its recorded sha256 and whose rules allow the URL; no
	// page request precedes the first robots.txt fetch of its origin; no
	// page request was sent while a disallow-all snapshot was in force
	// (RFC 9309 2.3.1.4: 5xx, unreachable; lohibot adds 401, 403 and 429).
	RuleRobots = "robots"
	// RuleBudget: at most MaxPages page requests per site per crawl cycle,
	// counting redirect hops, retries and requests that never completed.
	RuleBudget = "budget"
	// RulePoliteness: requests to one host never overlap in time (one that
	// never completed stays open; one closed as "abandoned" after its
	// crawler died counts as in flight until its completed_at, the expiry of
	// the dead crawler's lease, and no longer); the gap between the end of one and the
	// start of the next is at least the delay in force (the cycle's --delay
	// or the robots.txt Crawl-delay, capped at MaxCrawlDelay, whichever is
	// longer); after a 429 or 503 with Retry-After the next request to the
	// host waits as long as it said; after a 401, 403, 407 or a challenge
	// page no request goes to that host for the rest of the cycle.
	RulePoliteness = "politeness"
	// RuleExclusions: no request to a site was sent after its exclusion was
	// committed, until a staff member re-included it.
	RuleExclusions = "exclusions"
	// RuleStorage: the index tables hold only the promised columns, and no
	// index entry or link text is kept for a page whose last fetch was
	// marked noindex.
	RuleStorage = "storage"
	// RuleSignatures: every request a signing crawler sent (a node's
	// signing run covers its time) carries Web Bot Auth evidence; each
	// signed request names a key that was published when it was signed
	// (signing_keys: created not before its not_before, expires not after
	// its not_after), its validity is positive and at most 24 hours
	// (webbotauth.MaxValidity), and it was sent within it. Requests that
	// never completed are skipped: their evidence is written on completion.
	RuleSignatures = "signatures"
	// RuleIntegrity: the evidence records (policy events, requests,
	// robots.txt snapshots, mail messages) are as the transparency log
	// committed to them: every leaf recomputed from its row is the log's,
	// the stored tree is the tree of the leaves, every final row is in the
	// log, and (with Options.Checkpoint) the records reproduce a signed
	// checkpoint (db.VerifyLog). It covers the whole log whatever sites
	// are named.
	RuleIntegrity = "integrity"
)

// Limits the rules check against.
const (
	// MaxPages is the page budget the public page promises per site and
	// cycle.
	MaxPages = 20
	// MaxSnapshotAge is how old a robots.txt snapshot may be when a page
	// request relies on it (RFC 9309 2.4: caching beyond 24 hours is not
	// recommended).
	MaxSnapshotAge = 24 * time.Hour
	// MaxCrawlDelay caps the Crawl-delay lohibot honours.
	MaxCrawlDelay = 60 * time.Second
)

// Rules returns every rule name in the order audits run and print them.
func Rules() []string {
	return []string{RuleRobots, RuleBudget, RulePoliteness, RuleExclusions, RuleStorage, RuleSignatures, RuleIntegrity}
}

// IsRule reports whether name is one of Rules.
func IsRule(name string) bool { return slices.Contains(Rules(), name) }

// ErrUnknownRule is wrapped by the error Run returns for a rule name it does
// not know.
var ErrUnknownRule = errors.New("audit: unknown rule")

// Checks name the ways a rule can be broken; a Violation carries one.
const (
	CheckNoSnapshot    = "no-snapshot"    // robots: no robots.txt of the origin fetched before the request
	CheckStaleSnapshot = "stale-snapshot" // robots: the snapshot in force is older than MaxSnapshotAge
	CheckHashMismatch  = "hash-mismatch"  // robots: the snapshot body does not have its recorded sha256
	CheckDisallowAll   = "disallow-all"   // robots: the snapshot in force says disallow all
	CheckDisallowed    = "disallowed"     // robots: the snapshot's rules disallow the URL
	CheckUnlinked      = "unlinked"       // robots: the request is not tied to a usable snapshot of its origin
	CheckOverBudget    = "over-budget"    // budget: too many page requests in a cycle
	CheckNoCycle       = "no-cycle"       // budget: a page request outside any crawl cycle
	CheckOverlap       = "overlap"        // politeness: two requests to one host in flight at once
	CheckTooSoon       = "too-soon"       // politeness: the gap was shorter than the delay in force
	CheckRetryAfter    = "retry-after"    // politeness: Retry-After was not honoured
	CheckAfterAuth     = "after-auth"     // politeness: a request after 401/403/407 or a challenge
	CheckExcluded      = "excluded"       // exclusions: a request to an excluded site
	CheckExtraColumn   = "extra-column"   // storage: an index table has a column the page does not promise
	CheckNoindexPage   = "noindex-page"   // storage: an index entry for a page marked noindex
	CheckNoindexAnchor = "noindex-anchor" // storage: link text kept for a page marked noindex
	// integrity: db.LogChanged, db.LogDeleted, db.LogInserted,
	// db.LogReordered, db.LogTree, and:
	CheckCheckpoint = "checkpoint" // integrity: the records do not reproduce the checkpoint, or its signature does not verify
)

// RequestRef is a request of the log, as a violation cites it.
type RequestRef struct {
	ID          int64      `json:"id"`
	URL         string     `json:"url"`
	Purpose     string     `json:"purpose"`
	SentAt      time.Time  `json:"sent_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Status      *int       `json:"status"`
	Outcome     string     `json:"outcome"`
}

// Violation is one broken promise: which site, which rule (and which check
// of it), the requests involved, and the evidence in words.
type Violation struct {
	Site     string       `json:"site"`
	Rule     string       `json:"rule"`
	Check    string       `json:"check"`
	Requests []RequestRef `json:"requests"`
	Evidence string       `json:"evidence"`
	// Table and RowID name the record an integrity violation is about
	// (none: the log itself).
	Table string `json:"table,omitempty"`
	RowID int64  `json:"row_id,omitempty"`
	// Leaf is the index of the log's leaf involved in an integrity
	// violation, if any.
	Leaf *int64 `json:"leaf,omitempty"`
}

// RuleSummary says how much one rule checked and how often it failed.
type RuleSummary struct {
	Rule string `json:"rule"`
	// Checked counts what the rule looked at: page requests (robots),
	// cycles (budget), requests (politeness, exclusions), index tables and
	// pages marked noindex (storage).
	Checked    int64 `json:"checked"`
	Violations int64 `json:"violations"`
}

// OK reports whether the rule held.
func (s RuleSummary) OK() bool { return s.Violations == 0 }

// Summary is the outcome of Run, one entry per audited rule in Rules order.
type Summary struct {
	Rules []RuleSummary `json:"rules"`
	// Log describes the transparency log the integrity rule checked; nil
	// when the rule did not run.
	Log *LogSummary `json:"log,omitempty"`
	// Sites counts the sites whose requests were read; Requests counts the
	// requests read (robots.txt fetches included).
	Sites    int64 `json:"sites"`
	Requests int64 `json:"requests"`
}

// LogSummary is the transparency log as the integrity rule found it.
type LogSummary struct {
	Size     int64  `json:"size"`     // leaves checked
	Root     string `json:"root"`     // base64 root hash of the tree recomputed from the records
	Unlogged int64  `json:"unlogged"` // rows not in the log yet: in flight, awaiting review, or final since the last append
	// Checkpoint is the size of the signed checkpoint the records were
	// checked against (Options.Checkpoint), if any.
	Checkpoint *int64 `json:"checkpoint,omitempty"`
}

// OK reports whether every audited rule held.
func (s *Summary) OK() bool {
	for _, r := range s.Rules {
		if !r.OK() {
			return false
		}
	}
	return true
}

// Violations returns the total number of violations.
func (s *Summary) Violations() int64 {
	var n int64
	for _, r := range s.Rules {
		n += r.Violations
	}
	return n
}

// Options configures Run. A nil *Options is the zero value: every rule, every
// site, the whole log.
type Options struct {
	// Rules lists the rules to audit (see Rules). Nil or empty means all.
	Rules []string
	// Sites limits the audit to these sites (as returned by
	// policy.SiteOf). Nil or empty means every site in the log.
	Sites []string
	// Since limits the audit to requests sent at or after it. The zero
	// value means the whole log. Context from before Since (the request
	// before on each host, a cycle's earlier pages, snapshots, exclusions)
	// is still read where a rule needs it.
	Since time.Time
	// Checkpoint, when set, is a signed checkpoint of the transparency
	// log: only the integrity rule runs, and the records must also
	// reproduce its root at its size, under a signature by one of the
	// log's keys. Run returns an error wrapping translog.ErrCheckpoint for
	// bytes that are no checkpoint.
	Checkpoint []byte
	// Logger receives progress at debug level. Nil means slog.Default().
	Logger *slog.Logger
}

// ruleSet is the set of rules an audit runs.
type ruleSet struct {
	robots, budget, politeness, exclusions, storage, signatures, integrity bool
}

func parseRules(names []string) (ruleSet, error) {
	if len(names) == 0 {
		return ruleSet{true, true, true, true, true, true, true}, nil
	}
	var rs ruleSet
	for _, n := range names {
		switch strings.ToLower(strings.TrimSpace(n)) {
		case RuleRobots:
			rs.robots = true
		case RuleBudget:
			rs.budget = true
		case RulePoliteness:
			rs.politeness = true
		case RuleExclusions:
			rs.exclusions = true
		case RuleStorage:
			rs.storage = true
		case RuleSignatures:
			rs.signatures = true
		case RuleIntegrity:
			rs.integrity = true
		default:
			return rs, fmt.Errorf("%w %q (want one of %s)", ErrUnknownRule, n, strings.Join(Rules(), ", "))
		}
	}
	return rs, nil
}

func (rs ruleSet) has(rule string) bool {
	switch rule {
	case RuleRobots:
		return rs.robots
	case RuleBudget:
		return rs.budget
	case RulePoliteness:
		return rs.politeness
	case RuleExclusions:
		return rs.exclusions
	case RuleStorage:
		return rs.storage
	case RuleSignatures:
		return rs.signatures
	case RuleIntegrity:
		return rs.integrity
	}
	return false
}

// fmtTime renders a time in violations: UTC, millisecond precision.
func fmtTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// fmtDur renders a duration in violations, to the millisecond.
func fmtDur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.Round(time.Millisecond).String()
}
