package audit_test

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestIntegrityOfNamedSites: the integrity rule of an audit of named sites
// checks those sites' records and the blocks that sealed them
// (audit SITE on a large log must not re-verify the whole chain), so a
// record changed in another site's block is that site's finding, and the
// audit of all sites still finds it.
func TestIntegrityOfNamedSites(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		var blocks []int64
		for i, site := range []string{"https://www.a-shop.example", "https://www.b-shop.example"} {
			start := at(time.Duration(i) * time.Hour)
			c := w.cycle(mustSite(t, site), start, start.Add(time.Minute), time.Second, 20)
			snap := w.robots(c, site, start, 200, "User-agent: *\nAllow: /\n")
			w.request(c, db.PurposePage, site+"/", start.Add(5*time.Second), snapshot(snap))
			w.request(c, db.PurposePage, site+"/about", start.Add(10*time.Second), snapshot(snap))
			b, err := w.store.Seal(w.ctx)
			if err != nil || b == nil {
				t.Fatalf("Seal = %v, %v", b, err)
			}
			blocks = append(blocks, b.ID)
		}
		// b-shop's second page, sealed in b-shop's block, is edited.
		w.exec("UPDATE requests SET url = 'https://www.b-shop.example/elsewhere' WHERE url = 'https://www.b-shop.example/about'")
		integrity := []string{audit.RuleIntegrity}

		_, vs, sum := runAudit(t, w, &audit.Options{Rules: integrity, Sites: []string{"a-shop.example"}})
		if len(vs) != 0 {
			t.Errorf("audit integrity a-shop.example: %d violations (%+v), want none: b-shop's block is not a-shop's", len(vs), vs)
		}
		// a-shop's block (3 requests, 1 snapshot) checked, and the chain
		// from it to the head.
		if s := sum.Seal; s == nil || s.SealedRows != 4 || s.Blocks != 2 || s.HeadBlock != blocks[1] {
			t.Errorf("audit integrity a-shop.example: seal summary %+v, want 4 sealed rows, 2 blocks, head %d", sum.Seal, blocks[1])
		}
		for _, opts := range []*audit.Options{{Rules: integrity, Sites: []string{"b-shop.example"}}, {Rules: integrity}} {
			_, vs, _ := runAudit(t, w, opts)
			if len(vs) != 1 || vs[0].Check != db.SealChanged || vs[0].Table != "requests" || vs[0].Block != blocks[1] {
				t.Errorf("audit integrity %v: %+v, want one changed request sealed in block %d", opts.Sites, vs, blocks[1])
			}
		}
	})
}
