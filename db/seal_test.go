package db_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
)

// sealFixture writes a little of every sealed table, ids chosen with gaps
// (3 and 4 free) so a row can later be inserted in the middle: two policy
// events, three requests (one in flight), a robots.txt snapshot, and two
// messages (one waiting for review).
func sealFixture(t *testing.T, s *db.Store) {
	t.Helper()
	ctx := context.Background()
	now := db.Now().Add(-time.Hour)
	i := func(n int) *int { return &n }
	i64 := func(n int64) *int64 { return &n }
	rows := []any{
		&db.PolicyEvent{ID: 1, Version: 1, HappenedAt: now, Kind: db.EventExclude, Site: "a.example", Actor: "staff", Reason: "asked", Source: "cli"},
		&db.PolicyEvent{ID: 2, Version: 2, HappenedAt: now.Add(time.Second), Kind: db.EventReinclude, Site: "a.example", Actor: "staff", Source: "cli"},
		&db.PolicyEvent{ID: 5, Version: 3, HappenedAt: now.Add(2 * time.Second), Kind: db.EventSiteAdd, Site: "b.example", Actor: "staff", Source: "cli"},
		&db.Request{ID: 1, CycleID: i64(1), BudgetSlot: nil, Site: "b.example", Host: "b.example", Origin: "https://b.example:443",
			URL: "https://b.example/robots.txt", Method: "GET", Purpose: db.PurposeRobots, SentAt: now, CompletedAt: &now, Status: i(200), Outcome: "ok"},
		&db.Request{ID: 2, CycleID: i64(1), BudgetSlot: i(1), Site: "b.example", Host: "b.example", Origin: "https://b.example:443",
			URL: "https://b.example/", Method: "GET", Purpose: db.PurposePage, RobotsSnapshotID: i64(1), RobotsRule: "allow-all",
			SentAt: now.Add(time.Second), CompletedAt: ptr(now.Add(2 * time.Second)), Status: i(200), Bytes: 1234, Outcome: "ok"},
		&db.Request{ID: 5, CycleID: i64(1), BudgetSlot: i(2), Site: "b.example", Host: "b.example", Origin: "https://b.example:443",
			URL: "https://b.example/next", Method: "GET", Purpose: db.PurposePage, SentAt: now.Add(3 * time.Second)}, // in flight
		&db.RobotsSnapshot{ID: 1, Origin: "https://b.example:443", FetchedAt: now, Status: 200, Body: []byte("User-agent: *\nAllow: /\n"),
			Sha256: "x", Outcome: db.RobotsParsed, RequestID: i64(1)},
		&db.MailMessage{ID: 1, MessageID: "m1@example", ReceivedAt: now, FromAddr: "w@a.example", Subject: "stop", Intent: "exclude",
			Domains: "a.example", Outcome: "excluded", Raw: []byte("From: w@a.example\r\n\r\nstop\r\n"), Size: 30, Sha256: "y"},
		&db.MailMessage{ID: 2, MessageID: "m2@example", ReceivedAt: now.Add(time.Minute), FromAddr: "w@c.example", Intent: "reinclude",
			Outcome: "queued", ReviewStatus: "pending", ReviewReason: "re-inclusion", Raw: []byte("x")},
	}
	for _, r := range rows {
		if err := dbtest.Gorm(s).WithContext(ctx).Create(r).Error; err != nil {
			t.Fatalf("create %T: %v", r, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// verify returns the problems VerifySeals finds.
func verify(t *testing.T, s *db.Store) ([]db.SealProblem, *db.SealReport) {
	t.Helper()
	var ps []db.SealProblem
	rep, err := s.VerifySeals(context.Background(), func(p db.SealProblem) error {
		ps = append(ps, p)
		return nil
	})
	if err != nil {
		t.Fatalf("VerifySeals: %v", err)
	}
	return ps, rep
}

func seal(t *testing.T, s *db.Store) *db.SealBlock {
	t.Helper()
	b, err := s.Seal(context.Background())
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return b
}

func sealedStore(t *testing.T, engine string) *db.Store {
	t.Helper()
	s := dbtest.Open(t, engine)
	sealFixture(t, s)
	if b := seal(t, s); b == nil || b.ID != 1 || b.Rows != 7 {
		t.Fatalf("first Seal = %+v, want block 1 over 7 rows", b)
	}
	if ps, _ := verify(t, s); len(ps) != 0 {
		t.Fatalf("untouched records: problems %+v", ps)
	}
	return s
}

// TestSealUntouched: an untouched history passes, rows in flight are sealed
// once final, and a second Seal with nothing new writes no block.
func TestSealUntouched(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := sealedStore(t, engine)
			ctx := context.Background()
			if b := seal(t, s); b != nil {
				t.Errorf("Seal with nothing new = block %d, want none", b.ID)
			}
			if _, rep := verify(t, s); rep.Unsealed != 2 || rep.Rows != 7 || rep.Blocks != 1 {
				t.Errorf("report = %+v, want 7 sealed rows, 2 unsealed (in flight, pending review), 1 block", rep)
			}
			// The request completes, the message is reviewed, new rows come.
			if err := dbtest.Gorm(s).Exec("UPDATE requests SET completed_at = ?, status = 200, outcome = 'ok' WHERE id = 5", db.Now()).Error; err != nil {
				t.Fatal(err)
			}
			if err := dbtest.Gorm(s).Exec("UPDATE mail_messages SET review_status = 'dismissed', reviewed_by = 'staff' WHERE id = 2").Error; err != nil {
				t.Fatal(err)
			}
			if err := dbtest.Gorm(s).WithContext(ctx).Create(&db.PolicyEvent{ID: 10, Version: 4, HappenedAt: db.Now(), Kind: db.EventExclude, Site: "c.example"}).Error; err != nil {
				t.Fatal(err)
			}
			b := seal(t, s)
			if b == nil || b.ID != 2 || b.Rows != 3 {
				t.Fatalf("second Seal = %+v, want block 2 over 3 rows", b)
			}
			ps, rep := verify(t, s)
			if len(ps) != 0 || rep.Unsealed != 0 || rep.Rows != 10 {
				t.Errorf("after the second seal: problems %+v, report %+v; want none, 10 sealed, 0 unsealed", ps, rep)
			}
			if h, err := s.SealHead(ctx); err != nil || h.Hash != b.Hash {
				t.Errorf("SealHead = %+v, %v; want block %s", h, err, b.Hash)
			}
			if got, err := s.SealBlockByHash(ctx, strings.ToUpper(b.Hash)); err != nil || got.ID != 2 {
				t.Errorf("SealBlockByHash = %+v, %v; want block 2", got, err)
			}
			if _, err := s.SealBlockByHash(ctx, "00"); !db.IsNotFound(err) {
				t.Errorf("SealBlockByHash(unknown) error = %v, want not found", err)
			}
		})
	}
}

// mutation returns an SQL expression and argument that surely changes
// column c of a row.
func mutation(c string) (string, any) {
	switch c {
	case "received_at", "sent_date", "reviewed_at", "happened_at", "sent_at", "completed_at", "retry_not_before", "fetched_at",
		"sig_created", "sig_expires":
		return "?", time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	case "raw", "body":
		return "?", []byte("tampered bytes")
	case "id", "version", "size", "cycle_id", "budget_slot", "attempt", "redirect_of", "robots_snapshot_id",
		"robots_line", "delay_ms", "status", "bytes", "duration_ms", "request_id", "purged_pages", "purged_anchors":
		return "?", int64(4242)
	}
	return "?", "tampered"
}

// TestSealTamperEveryColumn edits every sealed column of a sealed row of
// every sealed table, one at a time, and checks that VerifySeals names that
// table and row, then that putting the value back makes it pass again.
func TestSealTamperEveryColumn(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := sealedStore(t, engine)
			for _, table := range db.SealedTables() {
				for _, c := range db.SealedColumns(table) {
					if c == "id" {
						continue // below: a changed id is a deleted row
					}
					var orig any
					if err := dbtest.SQL(s).QueryRow(fmt.Sprintf("SELECT %s FROM %s WHERE id = 1", c, table)).Scan(&orig); err != nil {
						t.Fatal(err)
					}
					expr, arg := mutation(c)
					if err := dbtest.Gorm(s).Exec(fmt.Sprintf("UPDATE %s SET %s = %s WHERE id = 1", table, c, expr), arg).Error; err != nil {
						t.Fatalf("tamper %s.%s: %v", table, c, err)
					}
					ps, _ := verify(t, s)
					if len(ps) != 1 || ps[0].Check != db.SealChanged || ps[0].Table != table || ps[0].RowID != 1 {
						t.Errorf("%s.%s of row 1 edited: problems %+v, want one %q naming %s row 1", table, c, ps, db.SealChanged, table)
					}
					if err := dbtest.Gorm(s).Exec(fmt.Sprintf("UPDATE %s SET %s = ? WHERE id = 1", table, c), orig).Error; err != nil {
						t.Fatal(err)
					}
					if ps, _ := verify(t, s); len(ps) != 0 {
						t.Errorf("%s.%s put back: problems %+v, want none", table, c, ps)
					}
				}
			}
		})
	}
}

// TestSealTamperRows deletes, inserts, renumbers and backdates rows, and
// edits the chain itself.
func TestSealTamperRows(t *testing.T) {
	tests := []struct {
		name   string
		sql    string
		args   []any
		check  string
		table  string
		row    int64
		engine string // only on this engine ("" for both)
	}{
		{"delete request", "DELETE FROM requests WHERE id = 2", nil, db.SealDeleted, "requests", 2, ""},
		{"delete event", "DELETE FROM policy_events WHERE id = 1", nil, db.SealDeleted, "policy_events", 1, ""},
		{"delete snapshot", "DELETE FROM robots_snapshots WHERE id = 1", nil, db.SealDeleted, "robots_snapshots", 1, ""},
		{"delete message", "DELETE FROM mail_messages WHERE id = 1", nil, db.SealDeleted, "mail_messages", 1, ""},
		{"delete request in flight", "DELETE FROM requests WHERE id = 5", nil, db.SealDeleted, "requests", 5, ""},
		{"insert event in the middle", "INSERT INTO policy_events (id, version, happened_at, kind, site) VALUES (3, 99, ?, 'reinclude', 'x.example')",
			[]any{db.Now().Add(-time.Hour)}, db.SealInserted, "policy_events", 3, ""},
		{"insert request in the middle", "INSERT INTO requests (id, site, host, origin, url, purpose, sent_at, completed_at, outcome) VALUES (4, 'b.example', 'b.example', 'o', 'u', 'page', ?, ?, 'ok')",
			[]any{db.Now().Add(-time.Hour), db.Now().Add(-time.Hour)}, db.SealInserted, "requests", 4, ""},
		{"append backdated event", "INSERT INTO policy_events (id, version, happened_at, kind, site) VALUES (9, 98, ?, 'reinclude', 'x.example')",
			[]any{db.Now().Add(-time.Hour)}, db.SealBackdated, "policy_events", 9, ""},
		{"append event with an old version", "INSERT INTO policy_events (id, version, happened_at, kind, site) VALUES (9, 0, ?, 'reinclude', 'x.example')",
			[]any{db.Now()}, db.SealInserted, "policy_events", 9, ""},
		{"renumber request", "UPDATE requests SET id = 7 WHERE id = 2", nil, db.SealDeleted, "requests", 2, ""},
		{"swap message content", "UPDATE mail_messages SET subject = 'other' WHERE id = 1", nil, db.SealChanged, "mail_messages", 1, ""},
		{"edit block", "UPDATE seal_blocks SET state = 'requests 1 \n'", nil, db.SealChain, "", 0, ""},
		{"edit row hash", "UPDATE seal_rows SET hash = 'ab' WHERE tbl = 'requests' AND row_id = 1", nil, "", "requests", 1, ""},
	}
	for _, engine := range dbtest.Engines() {
		for _, tt := range tests {
			if tt.engine != "" && tt.engine != engine {
				continue
			}
			t.Run(engine+"/"+tt.name, func(t *testing.T) {
				s := sealedStore(t, engine)
				if err := dbtest.Gorm(s).Exec(tt.sql, tt.args...).Error; err != nil {
					t.Fatal(err)
				}
				ps, _ := verify(t, s)
				found := false
				for _, p := range ps {
					if (tt.check == "" || p.Check == tt.check) && p.Table == tt.table && p.RowID == tt.row {
						found = true
					}
				}
				if !found {
					t.Errorf("after %q: problems %+v; want %q naming %s row %d", tt.sql, ps, tt.check, tt.table, tt.row)
				}
			})
		}
	}
}

// TestSealProblemsInOrder: the roots are recomputed alongside the tables,
// but the problems still come chain first, then table by table in id order;
// an error from emit stops VerifySeals and is returned.
func TestSealProblemsInOrder(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := sealedStore(t, engine)
			for _, q := range []string{
				"UPDATE robots_snapshots SET status = 500 WHERE id = 1",
				"UPDATE policy_events SET actor = 'x' WHERE id = 2",
				"UPDATE policy_events SET actor = 'y' WHERE id = 1",
				"UPDATE seal_rows SET hash = 'ab' WHERE tbl = 'requests' AND row_id = 1",
			} {
				if err := dbtest.Gorm(s).Exec(q).Error; err != nil {
					t.Fatal(err)
				}
			}
			ps, _ := verify(t, s)
			var got []string
			for _, p := range ps {
				got = append(got, fmt.Sprintf("%s %s %d", p.Check, p.Table, p.RowID))
			}
			want := []string{"chain  0", "changed policy_events 1", "changed policy_events 2", "changed requests 1", "changed robots_snapshots 1"}
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("problems %q, want %q", got, want)
			}
			stop := fmt.Errorf("stop")
			n := 0
			_, err := s.VerifySeals(context.Background(), func(p db.SealProblem) error {
				n++
				if p.Table == "policy_events" {
					return stop
				}
				return nil
			})
			if err != stop || n != 2 {
				t.Errorf("VerifySeals with emit failing on the first table problem = %v after %d problems, want %v after 2", err, n, stop)
			}
		})
	}
}

// TestSealInsertedAnywhere: rows inserted after sealing are found wherever
// their ids fall (before the first sealed id, at 0 and below, between
// sealed rows far apart or close together, past the head), in id order,
// and nothing else is reported; the check reads only the ids the sealed
// rows skip.
func TestSealInsertedAnywhere(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := dbtest.Open(t, engine)
			ctx := context.Background()
			old := db.Now().Add(-time.Hour)
			insert := func(id int64) {
				t.Helper()
				if err := dbtest.Gorm(s).WithContext(ctx).Exec("INSERT INTO requests (id, site, host, origin, url, purpose, sent_at, completed_at, outcome) VALUES (?, 'b.example', 'b.example', 'o', 'u', 'page', ?, ?, 'ok')",
					id, old, old).Error; err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range []int64{3, 4, 5, 200, 201, 202, 270, 10000} {
				insert(id)
			}
			if b := seal(t, s); b == nil || b.Rows != 8 {
				t.Fatalf("Seal = %+v, want a block over 8 rows", b)
			}
			for _, id := range []int64{10001, 230, 7, 0, -7, 1000, 50000} {
				insert(id)
			}
			ps, rep := verify(t, s)
			var got []string
			for _, p := range ps {
				got = append(got, fmt.Sprintf("%s %s %d", p.Check, p.Table, p.RowID))
			}
			want := []string{"inserted requests -7", "inserted requests 0", "inserted requests 7", "inserted requests 230",
				"inserted requests 1000", "backdated requests 10001", "backdated requests 50000"}
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("problems %q, want %q", got, want)
			}
			if rep.Rows != 8 || rep.Unsealed != 7 {
				t.Errorf("report: %d sealed rows, %d unsealed, want 8 and 7", rep.Rows, rep.Unsealed)
			}
		})
	}
}

// insertFinalRequests inserts n completed requests (final, so sealable).
func insertFinalRequests(t *testing.T, s *db.Store, n int) {
	t.Helper()
	old := db.Now().Add(-time.Hour)
	if err := dbtest.Gorm(s).Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO requests (site, host, origin, url, purpose, sent_at, completed_at, outcome)
		SELECT 'b.example', 'b.example', 'o', 'u', 'page', ?, ?, 'ok' FROM n`, n, old, old).Error; err != nil {
		t.Fatal(err)
	}
}

// blockRows returns the row counts of the chain's blocks, in order.
func blockRows(t *testing.T, s *db.Store) []int64 {
	t.Helper()
	var out []int64
	if err := dbtest.Gorm(s).Raw(`SELECT row_count FROM seal_blocks ORDER BY id`).Scan(&out).Error; err != nil {
		t.Fatal(err)
	}
	return out
}

// sealedRows returns how many rows the chain's blocks seal in all.
func sealedRows(t *testing.T, s *db.Store) int64 {
	t.Helper()
	var n int64
	for _, r := range blockRows(t, s) {
		n += r
	}
	return n
}

// TestSealInBlocks: a backlog is sealed in blocks of at most 1,000 rows
// (each written in a transaction of its own, so that on SQLite a running
// crawl's writer gets the lock between them), and Seal returns the last.
func TestSealInBlocks(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := dbtest.Open(t, engine)
			insertFinalRequests(t, s, 2500)
			b := seal(t, s)
			if b == nil || b.ID != 3 || b.Rows != 500 {
				t.Fatalf("Seal = %+v, want the last of three blocks, over 500 rows", b)
			}
			if got := blockRows(t, s); !slices.Equal(got, []int64{1000, 1000, 500}) {
				t.Errorf("blocks over %v rows, want [1000 1000 500]", got)
			}
			if ps, rep := verify(t, s); len(ps) != 0 || rep.Rows != 2500 || rep.Unsealed != 0 || rep.Blocks != 3 {
				t.Errorf("verify: problems %+v, report %+v; want none, 2,500 rows sealed in 3 blocks", ps, rep)
			}
		})
	}
}

// TestSealVia: on SQLite, while SealVia is set, Seal writes its blocks with
// the function it was given (a crawler's writer); when that fails, Seal
// writes the block itself; once undone, the function is not called again.
func TestSealVia(t *testing.T) {
	s := dbtest.Open(t, "sqlite")
	var calls int
	fail := false
	undo := s.SealVia(func(ctx context.Context, f func(tx db.WriteTx) error) error {
		calls++
		if fail {
			return errors.New("writer stopped")
		}
		return inWrite(t, s, f)
	})
	insertFinalRequests(t, s, 1500)
	if b := seal(t, s); b == nil || b.ID != 2 {
		t.Fatalf("Seal = %+v, want block 2", b)
	}
	if calls != 2 {
		t.Errorf("the writer was asked %d times, want 2 (one per block)", calls)
	}
	fail = true
	insertFinalRequests(t, s, 10)
	if b := seal(t, s); b == nil || b.ID != 3 || b.Rows != 10 {
		t.Fatalf("Seal with the writer failing = %+v, want block 3 over 10 rows, written by Seal itself", b)
	}
	undo()
	fail = false
	insertFinalRequests(t, s, 10)
	if b := seal(t, s); b == nil || b.ID != 4 {
		t.Fatalf("Seal after undo = %+v, want block 4", b)
	}
	if calls != 3 {
		t.Errorf("the writer was asked %d times in all, want 3 (not after undo)", calls)
	}
	if ps, rep := verify(t, s); len(ps) != 0 || rep.Rows != 1520 || rep.Blocks != 4 {
		t.Errorf("verify: problems %+v, report %+v; want none, 1,520 rows in 4 blocks", ps, rep)
	}
}

// TestSealerGap: the background sealer seals at a kick (SealSoon), but
// kicks that come within minSealGap (250 ms) of its last seal wait for
// the gap to pass, and then make one seal: the cycles of a crawl end
// together, and a seal per cycle's end wrote a block each.
func TestSealerGap(t *testing.T) {
	s := dbtest.Open(t, "sqlite")
	s.StartSealer(time.Hour, nil)
	start := time.Now()
	for range 10 {
		insertFinalRequests(t, s, 1)
		s.SealSoon()
		time.Sleep(5 * time.Millisecond)
	}
	testutil.Eventually(t, 5*time.Second, "the first kick's seal", func() bool { return len(blockRows(t, s)) > 0 })
	// Within the first gap: the first kick's seal only (a second one at
	// most, if the first began before any row was there). Past two gaps
	// (a machine too busy), a third seal may be due: nothing to check.
	if n, took := len(blockRows(t, s)), time.Since(start); n > 2 && took < 2*250*time.Millisecond {
		t.Errorf("%d blocks %v after ten kicks, want 1 (the first kick's seal; the others wait)", n, took.Round(time.Millisecond))
	}
	testutil.Eventually(t, 5*time.Second, "the ten rows sealed", func() bool { return sealedRows(t, s) == 10 })
}
