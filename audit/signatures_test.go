package audit_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

func signed(keyid string, created time.Time, validity time.Duration) reqOpt {
	return func(r *db.Request) {
		e := created.Add(validity)
		r.SigKeyID, r.SigCreated, r.SigExpires = keyid, &created, &e
	}
}

func node(n string) reqOpt { return func(r *db.Request) { r.Node = n } }

// TestSignatures: the signatures rule flags an unsigned request of a
// signing run, a key never published, a signature outside its key's
// window, and a request sent outside its signature's validity; signed
// requests within everything, unsigned requests outside runs, and requests
// that never completed pass.
func TestSignatures(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		retired := at(2 * time.Hour)
		w.create(&db.SigningKey{KeyID: "key-a", JWK: "{}", NotBefore: at(-time.Hour), RecordedAt: at(-time.Hour)})
		w.create(&db.SigningKey{KeyID: "key-old", JWK: "{}", NotBefore: at(-48 * time.Hour), NotAfter: &retired, RecordedAt: at(-48 * time.Hour)})
		w.create(&db.SigningKey{KeyID: "key-next", JWK: "{}", NotBefore: at(5 * time.Hour), RecordedAt: at(-time.Hour)})
		end := at(3 * time.Hour)
		w.create(&db.SigningRun{Node: "n1", KeyID: "key-a", StartedAt: at(0), EndedAt: &end})
		const v = 5 * time.Minute
		page := func(path string, sent time.Time, opts ...reqOpt) int64 {
			return w.request(0, db.PurposePage, "https://www.example.org"+path, sent, append([]reqOpt{noCycle()}, opts...)...)
		}
		page("/before-run", at(-time.Minute), node("n1"))                             // not signing yet: fine
		page("/ok", at(time.Minute), node("n1"), signed("key-a", at(time.Minute), v)) // fine
		unsigned := page("/unsigned", at(2*time.Minute), node("n1"))                  // unsigned in a run
		page("/in-flight", at(3*time.Minute), node("n1"), neverCompleted())           // no evidence yet: skipped
		unknown := page("/unknown", at(4*time.Minute), node("n1"), signed("key-x", at(4*time.Minute), v))
		early := page("/next-early", at(5*time.Minute), node("n1"), signed("key-next", at(5*time.Minute), v))
		late := page("/old-late", at(119*time.Minute), node("n1"), signed("key-old", at(119*time.Minute), v))
		stale := page("/stale", at(30*time.Minute), node("n1"), signed("key-a", at(10*time.Minute), v))
		long := page("/long", at(40*time.Minute), node("n1"), signed("key-a", at(40*time.Minute), 48*time.Hour))
		page("/after-run", at(4*time.Hour), node("n1"))  // the run ended: fine
		page("/other-node", at(time.Minute), node("n2")) // n2 never signed: fine

		got, _, sum := runAudit(t, w, &audit.Options{Rules: []string{audit.RuleSignatures}})
		want := []found{
			{Site: "example.org", Rule: audit.RuleSignatures, Check: audit.CheckUnsigned, IDs: []int64{unsigned}},
			{Site: "example.org", Rule: audit.RuleSignatures, Check: audit.CheckUnpublished, IDs: []int64{unknown}},
			{Site: "example.org", Rule: audit.RuleSignatures, Check: audit.CheckKeyWindow, IDs: []int64{early}},
			{Site: "example.org", Rule: audit.RuleSignatures, Check: audit.CheckSigWindow, IDs: []int64{stale}},
			{Site: "example.org", Rule: audit.RuleSignatures, Check: audit.CheckSigWindow, IDs: []int64{long}},
			{Site: "example.org", Rule: audit.RuleSignatures, Check: audit.CheckKeyWindow, IDs: []int64{late}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("violations (-want +got):\n%s", diff)
		}
		if len(sum.Rules) != 1 || sum.Rules[0].Checked != 10 || sum.Rules[0].Violations != 6 {
			t.Errorf("summary = %+v", sum.Rules)
		}
	})
}
