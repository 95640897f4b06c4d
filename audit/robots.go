package audit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/robotstxt"
)

// originState holds the robots.txt snapshots of one origin: their metadata
// all the time, bodies only while they are needed.
type originState struct {
	origin  string
	snaps   []*snapshot // by fetched_at, id
	byID    map[int64]*snapshot
	loaded  *snapshot // the snapshot whose body is parsed
	lastSeq int64     // the last row of the stream read so far that needs it
}

// snapshot is a robots.txt snapshot as the audit sees it.
type snapshot struct {
	id        int64
	origin    string
	fetchedAt time.Time
	status    int
	recorded  string // the outcome the crawler gave it
	outcome   string // the outcome the audit gives it (see effectiveOutcome)
	sha256    string // as recorded
	errText   string
	requestID int64
	size      int64 // of the body

	body    []byte // read ahead, until it is parsed
	hasBody bool   // body holds the body

	checked    bool // the body was read and hashed
	hashOK     bool
	actualHash string
	crawlDelay time.Duration
	hasDelay   bool
	rules      *robotstxt.Robots // nil unless this is originState.loaded
}

// effectiveOutcome re-derives what a robots.txt fetch means from its status
// (RFC 9309 2.3.1: 2xx parsed; 3xx left after the redirect limit and 4xx
// unavailable, allow all; 5xx and network errors unreachable, disallow all;
// lohibot also treats 401, 403 and 429 as disallow all), and keeps the
// crawler's own outcome when it is stricter.
func effectiveOutcome(status int, recorded string) string {
	var derived string
	switch {
	case status >= 200 && status < 300:
		derived = db.RobotsParsed
	case status == 401 || status == 403 || status == 429:
		derived = db.RobotsDisallowAll
	case status >= 300 && status < 500:
		derived = db.RobotsAllowAll
	default:
		derived = db.RobotsDisallowAll
	}
	strictness := map[string]int{db.RobotsAllowAll: 0, db.RobotsParsed: 1, db.RobotsDisallowAll: 2}
	if s, ok := strictness[recorded]; ok && s > strictness[derived] {
		return recorded
	}
	return derived
}

// prefetch reads the snapshots of the origins the rows name, and the bodies
// of the snapshots in force for them, in batched queries.
func (a *auditor) prefetch(ctx context.Context, rows []row) error {
	if !a.rules.robots && !a.rules.politeness {
		return nil
	}
	need := make(map[string][]string)
	for i := range rows {
		r := &rows[i]
		if _, ok := a.origins[r.dorigin]; !ok {
			if _, ok := need[r.dorigin]; !ok {
				need[r.dorigin] = originSpellings(r.dorigin, r.origin)
			}
		}
	}
	if err := a.fetchOrigins(ctx, need); err != nil {
		return err
	}
	var (
		ids   []int64
		bytes int64
		seen  = make(map[int64]bool)
	)
	for i := range rows {
		r := &rows[i]
		o := a.origins[r.dorigin]
		o.lastSeq = max(o.lastSeq, r.seq)
		sn := o.inForce(r.sentAt)
		if sn == nil || sn.checked || sn.hasBody || seen[sn.id] || bytes+sn.size > prefetchBodyBytes {
			continue
		}
		seen[sn.id] = true
		bytes += sn.size
		ids = append(ids, sn.id)
	}
	return a.fetchBodies(ctx, ids)
}

// pruneOrigins forgets the origins no row from seq on needs.
func (a *auditor) pruneOrigins(seq int64) {
	for k, o := range a.origins {
		if o.lastSeq < seq {
			delete(a.origins, k)
		}
	}
}

// fetchOrigins reads the snapshot metadata of origins (canonical origin →
// its spellings), a hundred origins per query.
func (a *auditor) fetchOrigins(ctx context.Context, need map[string][]string) error {
	if len(need) == 0 {
		return nil
	}
	bySpelling := make(map[string][]string)
	var spellings []string
	for canon, sp := range need {
		a.origins[canon] = &originState{origin: canon, byID: make(map[int64]*snapshot)}
		for _, s := range sp {
			if _, ok := bySpelling[s]; !ok {
				spellings = append(spellings, s)
			}
			bySpelling[s] = append(bySpelling[s], canon)
		}
	}
	slices.Sort(spellings)
	err := a.snaps.RobotsSnapshotInfos(ctx, spellings, func(info db.RobotsSnapshotInfo) error {
		sn := &snapshot{id: info.ID, origin: info.Origin, fetchedAt: info.FetchedAt, status: info.Status,
			recorded: info.Outcome, sha256: info.Sha256, errText: info.Error, requestID: info.RequestID, size: info.Size}
		sn.outcome = effectiveOutcome(sn.status, sn.recorded)
		for _, canon := range bySpelling[sn.origin] {
			o := a.origins[canon]
			if _, dup := o.byID[sn.id]; !dup {
				o.snaps = append(o.snaps, sn)
				o.byID[sn.id] = sn
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	for canon := range need {
		o := a.origins[canon]
		slices.SortFunc(o.snaps, func(x, y *snapshot) int {
			if c := x.fetchedAt.Compare(y.fetchedAt); c != 0 {
				return c
			}
			return cmp.Compare(x.id, y.id)
		})
	}
	return nil
}

// fetchBodies reads the bodies of snapshots already known, two hundred per
// query.
func (a *auditor) fetchBodies(ctx context.Context, ids []int64) error {
	want := make(map[int64][]*snapshot)
	for _, o := range a.origins {
		for _, id := range ids {
			if sn, ok := o.byID[id]; ok {
				want[id] = append(want[id], sn)
			}
		}
	}
	err := a.snaps.RobotsBodies(ctx, ids, func(id int64, body []byte) error {
		for _, sn := range want[id] {
			sn.body, sn.hasBody = body, true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// origin returns the snapshots of r's origin, reading them if the read-ahead
// did not.
func (a *auditor) origin(ctx context.Context, r *row) (*originState, error) {
	if o, ok := a.origins[r.dorigin]; ok {
		return o, nil
	}
	if err := a.fetchOrigins(ctx, map[string][]string{r.dorigin: originSpellings(r.dorigin, r.origin)}); err != nil {
		return nil, err
	}
	o := a.origins[r.dorigin]
	o.lastSeq = max(o.lastSeq, r.seq)
	return o, nil
}

// inForce returns the latest snapshot fetched at or before t, or nil.
func (o *originState) inForce(t time.Time) *snapshot {
	i := sort.Search(len(o.snaps), func(i int) bool { return o.snaps[i].fetchedAt.After(t) })
	if i == 0 {
		return nil
	}
	return o.snaps[i-1]
}

// load hashes and parses a snapshot's body (reading it if the read-ahead did
// not), and drops the parsed body of the origin's previous one.
func (a *auditor) load(ctx context.Context, o *originState, sn *snapshot) error {
	if o.loaded == sn {
		return nil
	}
	body := sn.body
	if !sn.hasBody {
		var err error
		if body, err = a.store.RobotsBody(ctx, sn.id); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	sn.body, sn.hasBody = nil, false
	sum := sha256.Sum256(body)
	sn.actualHash = hex.EncodeToString(sum[:])
	sn.hashOK = strings.EqualFold(sn.actualHash, strings.TrimSpace(sn.sha256)) ||
		(sn.sha256 == "" && len(body) == 0 && sn.outcome != db.RobotsParsed)
	sn.checked = true
	sn.rules = robotstxt.Parse(body)
	sn.crawlDelay, sn.hasDelay = sn.rules.CrawlDelay(robotstxt.ProductToken)
	if sn.crawlDelay > MaxCrawlDelay {
		sn.crawlDelay = MaxCrawlDelay
	}
	if o.loaded != nil {
		o.loaded.rules = nil
	}
	o.loaded = sn
	return nil
}

// citeSnapshot returns the request that fetched a snapshot, to cite it.
func (a *auditor) citeSnapshot(ctx context.Context, sn *snapshot, refs []RequestRef) ([]RequestRef, error) {
	if sn == nil || sn.requestID == 0 {
		return refs, nil
	}
	ref, ok, err := a.loadRef(ctx, sn.requestID)
	if err != nil || !ok {
		return refs, err
	}
	return append(refs, ref), nil
}

// checkRobots applies the robots rule to one page request.
func (a *auditor) checkRobots(ctx context.Context, s *siteState, r *row) error {
	a.count(RuleRobots, 1, 0)
	o, err := a.origin(ctx, r)
	if err != nil {
		return err
	}
	// The violation, if any; its Requests are filled in only then
	// (r.refs).
	v := Violation{Site: s.name, Rule: RuleRobots}
	sn := o.inForce(r.sentAt)
	if sn == nil {
		v.Requests = r.refs()
		v.Check = CheckNoSnapshot
		v.Evidence = fmt.Sprintf("page request %d to %s was sent at %s, but no robots.txt of %s had been fetched before it",
			r.id, r.url, fmtTime(r.sentAt), r.dorigin)
		if len(o.snaps) > 0 {
			v.Evidence += fmt.Sprintf(" (the first fetch was at %s, snapshot %d)", fmtTime(o.snaps[0].fetchedAt), o.snaps[0].id)
		} else {
			v.Evidence += " (none was ever fetched)"
		}
		return a.report(v)
	}
	if age := r.sentAt.Sub(sn.fetchedAt); age > MaxSnapshotAge {
		v.Requests = r.refs()
		v.Check = CheckStaleSnapshot
		v.Evidence = fmt.Sprintf("page request %d was sent at %s; the latest robots.txt of %s before it (snapshot %d) was fetched at %s, %s earlier, more than %s",
			r.id, fmtTime(r.sentAt), r.dorigin, sn.id, fmtTime(sn.fetchedAt), fmtDur(age), fmtDur(MaxSnapshotAge))
		if v.Requests, err = a.citeSnapshot(ctx, sn, v.Requests); err != nil {
			return err
		}
		return a.report(v)
	}
	if err := a.load(ctx, o, sn); err != nil {
		return err
	}
	if !sn.hashOK {
		v.Requests = r.refs()
		v.Check = CheckHashMismatch
		recorded := sn.sha256
		if recorded == "" {
			recorded = "none"
		}
		v.Evidence = fmt.Sprintf("page request %d relied on robots.txt snapshot %d of %s (fetched %s), whose body hashes to sha256 %s, but the recorded sha256 is %s: the evidence was altered",
			r.id, sn.id, r.dorigin, fmtTime(sn.fetchedAt), sn.actualHash, recorded)
		if v.Requests, err = a.citeSnapshot(ctx, sn, v.Requests); err != nil {
			return err
		}
		return a.report(v)
	}
	switch sn.outcome {
	case db.RobotsDisallowAll:
		v.Requests = r.refs()
		v.Check = CheckDisallowAll
		why := fmt.Sprintf("status %d", sn.status)
		if sn.status == 0 {
			why = "no response"
			if sn.errText != "" {
				why += " (" + sn.errText + ")"
			}
		}
		v.Evidence = fmt.Sprintf("robots.txt of %s fetched at %s (snapshot %d) answered %s, which means disallow all until the next fetch; page request %d to %s was sent at %s while it was in force",
			r.dorigin, fmtTime(sn.fetchedAt), sn.id, why, r.id, r.url, fmtTime(r.sentAt))
		if v.Requests, err = a.citeSnapshot(ctx, sn, v.Requests); err != nil {
			return err
		}
		return a.report(v)
	case db.RobotsParsed:
		d := sn.rules.Decide(robotstxt.ProductToken, r.url)
		if !d.Allowed {
			v.Requests = r.refs()
			v.Check = CheckDisallowed
			rule := d.Rule
			if d.Line > 0 {
				rule = fmt.Sprintf("%q (line %d)", d.Rule, d.Line)
			}
			logged, _, err := a.detail(ctx, r.id)
			if err != nil {
				return err
			}
			v.Evidence = fmt.Sprintf("robots.txt of %s fetched at %s (snapshot %d, sha256 %s) disallows %s for %s by %s; page request %d was sent at %s (the crawler logged robots rule %q)",
				r.dorigin, fmtTime(sn.fetchedAt), sn.id, short(sn.actualHash), r.url, robotstxt.ProductToken, rule, r.id, fmtTime(r.sentAt), logged)
			if v.Requests, err = a.citeSnapshot(ctx, sn, v.Requests); err != nil {
				return err
			}
			return a.report(v)
		}
	}
	return a.checkLink(ctx, o, r, v)
}

// checkLink checks that the request names the snapshot it was checked
// against (every page request is tied to its robots.txt
// snapshot), and that the snapshot it names could have been used.
func (a *auditor) checkLink(ctx context.Context, o *originState, r *row, v Violation) error {
	v.Check = CheckUnlinked
	if r.snapshotID == 0 {
		v.Requests = r.refs()
		v.Evidence = fmt.Sprintf("page request %d to %s names no robots.txt snapshot, so there is no record of what it was checked against", r.id, r.url)
		return a.report(v)
	}
	linked := o.byID[r.snapshotID]
	var err error
	switch {
	case linked == nil:
		v.Requests = r.refs()
		v.Evidence = fmt.Sprintf("page request %d to %s names robots.txt snapshot %d, which is not a snapshot of %s", r.id, r.url, r.snapshotID, r.dorigin)
	case linked.fetchedAt.After(r.sentAt):
		v.Requests = r.refs()
		v.Evidence = fmt.Sprintf("page request %d was sent at %s but names robots.txt snapshot %d, fetched later at %s", r.id, fmtTime(r.sentAt), linked.id, fmtTime(linked.fetchedAt))
		v.Requests, err = a.citeSnapshot(ctx, linked, v.Requests)
	case r.sentAt.Sub(linked.fetchedAt) > MaxSnapshotAge:
		v.Requests = r.refs()
		v.Evidence = fmt.Sprintf("page request %d was sent at %s but names robots.txt snapshot %d, fetched %s earlier, more than %s",
			r.id, fmtTime(r.sentAt), linked.id, fmtDur(r.sentAt.Sub(linked.fetchedAt)), fmtDur(MaxSnapshotAge))
		v.Requests, err = a.citeSnapshot(ctx, linked, v.Requests)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	return a.report(v)
}

// short abbreviates a hex hash for evidence text.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
