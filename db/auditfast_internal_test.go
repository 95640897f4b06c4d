package db

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAuditRequestsFast checks that the fast stream of the request log
// (auditRequestsFast, on a read-only fast-path connection) reads every
// request as the pool's packed stream does, with and without filters:
// NULLs, a missing cycle, an unfinished cycle, text where a number or a
// time is stored, times with offsets or in the form only the slow parser
// reads, and non-ASCII and separators in text; and that both fail on a
// malformed number.
func TestAuditRequestsFast(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.pool.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	at := time.Date(2026, 8, 3, 9, 0, 1, 123456000, time.UTC)
	exec(`INSERT INTO crawl_cycles (id, site, started_at, finished_at, status, budget, spent, delay_ms) VALUES (1, 'a.example', ?, ?, 'done', 20, 3, 1500)`,
		at, at.Add(time.Minute))
	exec(`INSERT INTO crawl_cycles (id, site, started_at, status, budget, spent, delay_ms) VALUES (2, 'b.example', ?, 'running', 5, 1, 0)`, at)
	const cols = `(id, cycle_id, site, host, origin, url, purpose, redirect_of, robots_snapshot_id, sent_at, completed_at, status, retry_after, outcome)`
	rows := [][]any{
		{1, 1, "a.example", "www.a.example", "https://www.a.example", "https://www.a.example/robots.txt", PurposeRobots, nil, nil, at, at.Add(100 * time.Millisecond), 200, "", "ok"},
		{2, 1, "a.example", "www.a.example", "https://www.a.example", "https://www.a.example/é?q=\x1f'x'", PurposePage, nil, 7, at.Add(time.Second), nil, nil, "", ""},
		{3, 1, "a.example", "www.a.example", "https://www.a.example", "https://www.a.example/b", PurposePage, 2, 7, at.Add(2 * time.Second), at.Add(3 * time.Second), 503, "120", "retry"},
		{4, 2, "b.example", "b.example", "http://b.example", "http://b.example/", PurposePage, nil, nil, at.Add(time.Hour), at.Add(time.Hour), 429, "Wed, 21 Oct 2026 07:28:00 GMT", "retry"},
		{5, 99, "b.example", "b.example", "http://b.example", "http://b.example/x", PurposePage, nil, nil, at.Add(2 * time.Hour), nil, nil, "", ""},
		{6, nil, "c.example", "c.example", "http://c.example:8080", "http://c.example:8080/", PurposePage, nil, nil, at.Add(3 * time.Hour), at.Add(3 * time.Hour), 200, "", "noindex"},
	}
	for _, r := range rows {
		exec("INSERT INTO requests "+cols+" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", r...)
	}
	// Values of other storage classes and spellings, as a hand edit could
	// leave them.
	exec(`UPDATE requests SET status = '404', sent_at = '2026-08-03 11:00:05+02:00', completed_at = '2026-08-03T09:00:06.5Z' WHERE id = 6`)
	exec(`UPDATE requests SET completed_at = '2026-08-03 10:00:00.25 +0000 UTC' WHERE id = 4`)
	exec(`UPDATE crawl_cycles SET delay_ms = '250' WHERE id = 2`)

	read := func(fast bool, sites []string, since time.Time) ([]AuditRequest, error) {
		var out []AuditRequest
		collect := func(r *AuditRequest) error {
			out = append(out, *r)
			return nil
		}
		cond, args := auditWhere(sites, since)
		if !fast {
			return out, s.auditRequestsPool(ctx, cond, args, collect)
		}
		rd, err := s.openReader(ctx)
		if err != nil || rd == nil {
			t.Fatalf("openReader = %v, %v", rd, err)
		}
		defer rd.Close()
		return out, auditRequestsFast(ctx, rd, auditColumns+cond, args, collect)
	}
	for _, tt := range []struct {
		name  string
		sites []string
		since time.Time
		n     int
	}{
		{"all", nil, time.Time{}, 6},
		{"sites", []string{"b.example", "c.example"}, time.Time{}, 3},
		{"since", nil, at.Add(time.Second), 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, err := read(false, tt.sites, tt.since)
			if err != nil {
				t.Fatal(err)
			}
			got, err := read(true, tt.sites, tt.since)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != tt.n {
				t.Errorf("the pool read %d requests, want %d", len(want), tt.n)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("fast stream differs from the pool's (-pool +fast):\n%s", d)
			}
		})
	}
	exec(`UPDATE requests SET status = 'abc' WHERE id = 3`)
	for _, fast := range []bool{false, true} {
		if _, err := read(fast, nil, time.Time{}); err == nil || !strings.Contains(err.Error(), "malformed number") {
			t.Errorf("fast %v, status 'abc': error %v, want a malformed number", fast, err)
		}
	}
}

// TestAuditReader checks that the audit's reader of robots.txt snapshots
// reads them as the pool does, on the fast path and off it: metadata of
// several origins, bodies of every kind (NULL, empty, binary, text, a
// number), and values stored by hand in another class.
func TestAuditReader(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "robots.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 8, 3, 9, 0, 1, 123456000, time.UTC)
	for i, body := range [][]byte{[]byte("User-agent: *\nDisallow: /x\n"), nil, {}, {0, 1, 0xff, '\''}, []byte("z")} {
		sn := &RobotsSnapshot{Origin: []string{"https://a.example", "https://b.example:8443"}[i%2], FetchedAt: at.Add(time.Duration(i) * time.Hour),
			Status: 200 + i, Body: body, Sha256: "h", Outcome: RobotsParsed}
		if i == 3 {
			id := int64(77)
			sn.RequestID = &id
		}
		if err := s.gdb.WithContext(ctx).Create(sn).Error; err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"UPDATE robots_snapshots SET body = 'text body', status = '404', fetched_at = '2026-08-03 11:00:05+02:00' WHERE id = 5",
		"UPDATE robots_snapshots SET body = 12, status = 301.0 WHERE id = 3",
	} {
		if _, err := s.pool.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	origins := []string{"https://a.example", "https://b.example:8443", "https://none.example"}
	ids := []int64{1, 2, 3, 4, 5, 99}
	type read struct {
		Infos  map[int64]RobotsSnapshotInfo
		Bodies map[int64][]byte
	}
	readAll := func(r *AuditReader) read {
		out := read{Infos: map[int64]RobotsSnapshotInfo{}, Bodies: map[int64][]byte{}}
		if err := r.RobotsSnapshotInfos(ctx, origins, func(sn RobotsSnapshotInfo) error {
			out.Infos[sn.ID] = sn
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.RobotsBodies(ctx, ids, func(id int64, body []byte) error {
			out.Bodies[id] = body
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	fast, err := s.OpenAuditReader(ctx)
	if err != nil || fast.c == nil {
		t.Fatalf("OpenAuditReader = %+v, %v; want one with a connection of its own", fast, err)
	}
	defer fast.Close()
	pool := &AuditReader{s: s}
	want, got := readAll(pool), readAll(fast)
	if len(want.Infos) != 5 || len(want.Bodies) != 5 {
		t.Errorf("the pool read %d snapshots and %d bodies, want 5 and 5", len(want.Infos), len(want.Bodies))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fast reader differs from the pool (-pool +fast):\n%s", d)
	}
}
