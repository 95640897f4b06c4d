package main

import (
	"context"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestSigtermMidCrawl stops a crawl of 40 sites with SIGTERM twice,
// mid-request, and lets a third process finish it: a request that never
// left the machine is withdrawn and not counted, one cut short is asked
// again, and every site ends with exactly its 20 page requests as the web
// server counts them; the audit passes.
func TestSigtermMidCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crawler processes")
	}
	ctx := context.Background()
	dsn := dbtest.DSN(t, "sqlite")
	web, err := testweb.Start(&testweb.Options{Plain: 40, PagesPerSite: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	var starts []string
	for _, s := range web.Plain() {
		starts = append(starts, s.StartURL)
	}
	if r := runCLI(t, nil, append([]string{"--db", dsn, "sites", "add"}, starts...)...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	args := []string{"--db", dsn, "--resolver", web.DNSAddr, "crawl", "--all", "--allow-private", "--delay", "150ms"}
	for round := range 3 {
		p := lohibotProcess(ctx, args...)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		if round < 2 {
			time.Sleep(1500 * time.Millisecond)
			p.Process.Signal(syscall.SIGTERM)
		}
		err := p.Wait()
		if round < 2 && err == nil {
			t.Logf("round %d ended before its SIGTERM", round)
		}
		if round == 2 && err != nil {
			t.Fatalf("the crawl after two stops: %v", err)
		}
	}
	pages := web.PageHitsPerSite(web.Hits())
	hist := map[int]int{}
	for _, s := range web.Plain() {
		hist[pages[s.Name]]++
	}
	var ks []int
	for k := range hist {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	if len(ks) != 1 || ks[0] != 20 {
		for _, k := range ks {
			t.Errorf("%d sites ended with %d page requests (the web server's record), want every site 20", hist[k], k)
		}
	}
	if r := runCLI(t, nil, "--db", dsn, "audit"); r.code != 0 {
		t.Errorf("audit: exit %d\n%s", r.code, r.stdout)
	}
}
