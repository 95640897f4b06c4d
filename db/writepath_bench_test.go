package db_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// BenchmarkWritePath runs the SQLite crawler writer's work for page
// requests as the crawler does it, with nothing else running: a
// reservation (policy version, budget slot, request row) and a
// completion (request outcome, page entry, the one link new to the
// cycle), sixteen callers per transaction (no savepoints: see the
// crawler's runGroup), over 3,000 sites crawled side
// by side, each page with five link texts. It reports the writer's time
// per page request (ns/op) and the WAL frames each request costs: the
// crawl cannot go faster than one request per that time. Link texts are
// written as the crawler writes them: every 8 pages of a site
// (anchors=8), or with each page (anchors=1, as before).
//
//	go test -run '^$' -bench WritePath -benchtime 63000x ./db/
func BenchmarkWritePath(b *testing.B) {
	for _, every := range []int{1, 8} {
		b.Run(fmt.Sprintf("anchors=%d", every), func(b *testing.B) { benchWritePath(b, 3000, every) })
	}
}

func benchWritePath(b *testing.B, sites, anchorsEvery int) {
	ctx := context.Background()
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "w.db")
	s, err := db.Open(ctx, path)
	must(err)
	defer s.Close()
	c, err := db.OpenFastConn(path, db.FastOptions{SyncLater: true, ManualCheckpoints: true})
	must(err)
	defer c.Close()

	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	name := func(i int) string { return fmt.Sprintf("site-%05d.example", i) }
	for i := range sites {
		must(s.CreateSite(ctx, &db.Site{Name: name(i), StartURL: "https://" + name(i) + "/", AddedAt: now, AddedBy: "bench"}))
	}
	cycles := make([]int64, sites)
	must(c.Begin())
	for i := range sites {
		_, err := db.InsertLease(ctx, c, name(i), "bench", now.Add(time.Hour), now)
		must(err)
		cycles[i], err = db.InsertCycle(ctx, c, name(i), "bench", now, 1<<30, 1000)
		must(err)
	}
	must(c.Commit())

	// The writer's groups, and the checkpoints the crawler's checkpointer
	// would run (their cost is counted: it is the same disk and CPU).
	var group []func() error
	groups, frames := 0, int64(0)
	flush := func() {
		must(c.Begin())
		for _, f := range group {
			must(f())
		}
		must(c.Commit())
		group = group[:0]
		if groups++; groups%64 == 0 {
			n, err := c.Checkpoint()
			must(err)
			frames += n
		}
	}
	queue := func(f func() error) {
		if group = append(group, f); len(group) == 16 {
			flush()
		}
	}
	held := make([][]db.Anchor, sites)
	b.ResetTimer()
	for n := range b.N {
		i, page := n%sites, n/sites
		site, cycle := name(i), cycles[i]
		url := fmt.Sprintf("https://%s/p/%d.html", site, page)
		t := now.Add(time.Duration(n) * time.Millisecond)
		id := new(int64)
		queue(func() error {
			if _, err := db.PolicyVersionForWrite(ctx, c); err != nil {
				return err
			}
			// (The host's lease is renewed once per half lease, not here.)
			slot, ok, err := db.ReserveBudgetSlot(ctx, c, cycle)
			if err != nil || !ok {
				return fmt.Errorf("reserve: %v %v", ok, err)
			}
			r := db.Request{CycleID: &cycle, BudgetSlot: &slot, Site: site, Host: site, Origin: "https://" + site, URL: url,
				Purpose: db.PurposePage, Node: "bench", PolicyCheck: "allowed v0", DelayMS: 1000, SentAt: t}
			err = db.InsertRequest(ctx, c, &r)
			*id = r.ID
			return err
		})
		done := t.Add(3 * time.Millisecond)
		for j := 1; j <= 3; j++ {
			to := fmt.Sprintf("https://%s/p/%d.html", site, page+j)
			held[i] = append(held[i], db.Anchor{FromURL: url, ToURL: to, ToSite: site, AnchorText: "link to " + to, SeenAt: done, RequestID: id})
		}
		held[i] = append(held[i],
			db.Anchor{FromURL: url, ToURL: "https://" + site + "/", ToSite: site, AnchorText: "home", SeenAt: done, RequestID: id},
			db.Anchor{FromURL: url, ToURL: "https://big.example/", ToSite: "big.example", AnchorText: "friends at big", SeenAt: done, RequestID: id})
		var anchors []db.Anchor
		if (page+1)%anchorsEvery == 0 {
			anchors, held[i] = held[i], nil
		}
		queue(func() error {
			status := 200
			if err := db.CompleteRequest(ctx, c, &db.Request{ID: *id, CompletedAt: &done, Status: &status, Bytes: 700,
				DurationMS: 3, Outcome: "ok", ETag: `"x"`}); err != nil {
				return err
			}
			if err := db.UpsertPage(ctx, c, &db.Page{URL: url, Site: site, Title: "Page " + url, Description: "About " + url,
				H1: "Page " + url, Status: 200, FetchedAt: done, RequestID: id}); err != nil {
				return err
			}
			if err := db.AddCycleLinks(ctx, c, cycle, []string{fmt.Sprintf("https://%s/p/%d.html", site, page+3)}); err != nil {
				return err
			}
			return db.UpsertAnchors(ctx, c, anchors)
		})
	}
	if len(group) > 0 {
		flush()
	}
	b.ReportMetric(float64(frames)/float64(b.N), "frames/req")
}
