package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// The checks of RuleSignatures.
const (
	CheckUnsigned    = "unsigned"        // a signing crawler sent a request without a signature
	CheckUnpublished = "unpublished-key" // signed with a key never published
	CheckKeyWindow   = "key-window"      // signed outside the key's published window
	CheckSigWindow   = "sig-window"      // a validity too long or inverted, or the request sent outside it
)

// maxValidity is the longest validity a request signature may claim
// (maxValidity; audit does not import the crawler).
const maxValidity = 24 * time.Hour

// sigSkew is how long before a signature's created a request may be
// logged as sent (the log's clock and the signer's are the same machine's,
// but sent_at is taken before signing).
const sigSkew = 5 * time.Second

// startSignatures starts the signatures rule on a goroutine of its own: it
// reads the request log apart from the stream, so it runs while the stream
// does. finishSignatures must be called, or the run's stop on error.
func (a *auditor) startSignatures(ctx context.Context) *backgroundRun {
	return startBackground(ctx, a.checkSignatures)
}

// finishSignatures reports the signatures rule's violations and counts
// what it checked.
func (a *auditor) finishSignatures(run *backgroundRun) error {
	completed, err := a.finishBackground(run)
	if err != nil {
		return err
	}
	a.count(RuleSignatures, completed, 0)
	return nil
}

// checkSignatures audits RuleSignatures over the request log, one pass,
// with the published keys and the signing runs held in memory (they are
// few), calls report with each violation, and returns how many completed
// requests it checked. It only reads the auditor's store and options, so
// it may run beside the stream.
func (a *auditor) checkSignatures(ctx context.Context, report func(Violation) error) (int64, error) {
	keys, err := a.store.SigningKeys(ctx)
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	byID := make(map[string]db.SigningKey, len(keys))
	for _, k := range keys {
		byID[k.KeyID] = k
	}
	runs, err := a.store.SigningRuns(ctx)
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	byNode := map[string][]db.SigningRun{}
	var nodes []string
	for _, r := range runs {
		if byNode[r.Node] == nil {
			nodes = append(nodes, r.Node)
		}
		byNode[r.Node] = append(byNode[r.Node], r)
	}
	// Only requests that are signed, or were sent by a node that ever ran
	// signing, can break the rule; every completed request counts as
	// checked.
	var emitErr error // from report, returned as it is
	completed, err := a.store.RequestSignatures(ctx, a.opts.Sites, a.opts.Since, nodes, func(r db.Request) error {
		if r.Outcome == db.OutcomeWithdrawn {
			return nil // never sent
		}
		v := Violation{Site: r.Site, Rule: RuleSignatures, Requests: []RequestRef{refOf(r)}}
		if r.SigKeyID == "" {
			if run, ok := signingRunAt(byNode[r.Node], r.SentAt); ok {
				v.Check = CheckUnsigned
				v.Evidence = fmt.Sprintf("node %s was signing with key %s since %s, but this request carries no signature",
					r.Node, run.KeyID, fmtTime(run.StartedAt))
				emitErr = report(v)
				return emitErr
			}
			return nil
		}
		if r.SigCreated == nil || r.SigExpires == nil {
			v.Check = CheckSigWindow
			v.Evidence = fmt.Sprintf("signed with key %s but created or expires was not kept", r.SigKeyID)
			emitErr = report(v)
			return emitErr
		}
		created, expires := r.SigCreated.UTC(), r.SigExpires.UTC()
		k, ok := byID[r.SigKeyID]
		switch {
		case !ok:
			v.Check = CheckUnpublished
			v.Evidence = fmt.Sprintf("signed with key %s, which was never published (signing_keys)", r.SigKeyID)
		case created.Before(k.NotBefore.Truncate(time.Second)):
			v.Check = CheckKeyWindow
			v.Evidence = fmt.Sprintf("signed at %s with key %s, published only from %s", fmtTime(created), r.SigKeyID, fmtTime(k.NotBefore))
		case k.NotAfter != nil && expires.After(k.NotAfter.UTC()):
			v.Check = CheckKeyWindow
			v.Evidence = fmt.Sprintf("signature with key %s valid until %s, but the key is published only until %s",
				r.SigKeyID, fmtTime(expires), fmtTime(*k.NotAfter))
		case !expires.After(created) || expires.Sub(created) > maxValidity:
			v.Check = CheckSigWindow
			v.Evidence = fmt.Sprintf("signature valid from %s to %s (at most %s allowed)", fmtTime(created), fmtTime(expires), maxValidity)
		case r.SentAt.Before(created.Add(-sigSkew)) || r.SentAt.After(expires):
			v.Check = CheckSigWindow
			v.Evidence = fmt.Sprintf("sent at %s, outside its signature's validity %s to %s", fmtTime(r.SentAt), fmtTime(created), fmtTime(expires))
		default:
			return nil
		}
		emitErr = report(v)
		return emitErr
	})
	if emitErr != nil {
		return 0, emitErr
	}
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	return completed, nil
}

// signingRunAt returns the run of runs (one node's, by start) in force at t.
func signingRunAt(runs []db.SigningRun, t time.Time) (db.SigningRun, bool) {
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.StartedAt.After(t) {
			continue
		}
		if r.EndedAt == nil || t.Before(*r.EndedAt) {
			return r, true
		}
		return db.SigningRun{}, false
	}
	return db.SigningRun{}, false
}

func refOf(r db.Request) RequestRef {
	return RequestRef{ID: r.ID, URL: r.URL, Purpose: r.Purpose, SentAt: r.SentAt, CompletedAt: r.CompletedAt, Status: r.Status, Outcome: r.Outcome}
}
