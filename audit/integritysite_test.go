package audit_test

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestIntegrityOfNamedSites: the integrity rule of an audit of named sites
// checks those sites' records against the stored tree (audit SITE on a
// large log must not re-verify the whole log), so a record of another site
// edited is that site's finding, and the audit of all sites still finds
// it.
func TestIntegrityOfNamedSites(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		for i, site := range []string{"https://www.a-shop.example", "https://www.b-shop.example"} {
			start := at(time.Duration(i) * time.Hour)
			c := w.cycle(mustSite(t, site), start, start.Add(time.Minute), time.Second, 20)
			snap := w.robots(c, site, start, 200, "User-agent: *\nAllow: /\n")
			w.request(c, db.PurposePage, site+"/", start.Add(5*time.Second), snapshot(snap))
			w.request(c, db.PurposePage, site+"/about", start.Add(10*time.Second), snapshot(snap))
			if _, err := w.store.AppendLog(w.ctx); err != nil {
				t.Fatal(err)
			}
		}
		w.exec("UPDATE requests SET url = 'https://www.b-shop.example/elsewhere' WHERE url = 'https://www.b-shop.example/about'")
		integrity := []string{audit.RuleIntegrity}
		_, vs, _ := runAudit(t, w, &audit.Options{Rules: integrity, Sites: []string{"a-shop.example"}})
		if len(vs) != 0 {
			t.Errorf("audit integrity a-shop.example: %+v, want none: the edited record is b-shop's", vs)
		}
		for _, opts := range []*audit.Options{{Rules: integrity, Sites: []string{"b-shop.example"}}, {Rules: integrity}} {
			_, vs, sum := runAudit(t, w, opts)
			if len(vs) != 1 || vs[0].Check != db.LogChanged || vs[0].Table != "requests" || vs[0].Leaf == nil {
				t.Errorf("audit integrity %v: %+v, want one changed request, with its leaf", opts.Sites, vs)
			}
			if sum.Log == nil || sum.Log.Size < 8 {
				t.Errorf("audit integrity %v: log summary %+v, want every leaf checked", opts.Sites, sum.Log)
			}
		}
	})
}
