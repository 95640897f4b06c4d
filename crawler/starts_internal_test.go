package crawler

import (
	"slices"
	"testing"

	"github.com/lohisoft/lohibot/db"
)

// TestTakeStarts checks how the starts waiting are cut into batches: in
// order, at most n, and never a site or a start host twice in one batch
// (the statement leases each row once); what is left waits, in order.
func TestTakeStarts(t *testing.T) {
	req := func(site, host string) *cycleStartReq {
		return &cycleStartReq{site: db.CycleSite{Site: site, LeaseKey: cycleKey(site), Host: host}}
	}
	names := func(qs []*cycleStartReq) []string {
		var out []string
		for _, q := range qs {
			out = append(out, q.site.Site)
		}
		return out
	}
	pending := []*cycleStartReq{req("a", "a"), req("b", "b"), req("a", "a"), req("c", ""), req("d", "b"), req("e", ""), req("f", "f")}
	for _, want := range []struct{ batch, left []string }{
		{[]string{"a", "b", "c", "e"}, []string{"a", "d", "f"}},
		{[]string{"a", "d", "f"}, nil},
		{nil, nil},
	} {
		batch := takeStarts(&pending, 4)
		if got := names(batch); !slices.Equal(got, want.batch) {
			t.Errorf("batch %v, want %v", got, want.batch)
		}
		if got := names(pending); !slices.Equal(got, want.left) {
			t.Errorf("left %v, want %v", got, want.left)
		}
	}
}
