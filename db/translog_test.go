package db_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/translog/leaf"
)

// logFixture writes a little of every evidence table, ids chosen with gaps
// (3 and 4 free) so a row can later be inserted in the middle: three
// policy events, three requests (one in flight), a robots.txt snapshot,
// and two messages (one waiting for review). Seven rows are final.
func logFixture(t *testing.T, s *db.Store) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 8, 1, 12, 0, 0, 123456000, time.UTC)
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
		&db.RobotsSnapshot{ID: 1, Origin: "https://b.example:443", FetchedAt: now, Status: 200, Body: []byte("User-agent: *\x00\nAllow: /\n"),
			Sha256: "x", Outcome: db.RobotsParsed, RequestID: i64(1)},
		&db.MailMessage{ID: 1, MessageID: "m1@example", ReceivedAt: now, FromAddr: "w@a.example", Subject: "stop", Intent: "exclude",
			Domains: "a.example", Outcome: "excluded", Raw: []byte("From: w@a.example\r\n\r\nstop\r\n"), Size: 30, Sha256: "y"},
		&db.MailMessage{ID: 2, MessageID: "m2@example", ReceivedAt: now.Add(time.Minute), FromAddr: "w@c.example", Intent: "reinclude",
			Domains: "c.example", Outcome: "queued", ReviewStatus: "pending", ReviewReason: "re-inclusion", Raw: []byte("x")},
	}
	for _, r := range rows {
		if err := dbtest.Gorm(s).WithContext(ctx).Create(r).Error; err != nil {
			t.Fatalf("create %T: %v", r, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// verifyLog returns the problems VerifyLog finds, as "check table id".
func verifyLog(t *testing.T, s *db.Store) ([]string, *db.LogReport) {
	t.Helper()
	var ps []string
	rep, err := s.VerifyLog(context.Background(), func(p db.LogProblem) error {
		ps = append(ps, fmt.Sprintf("%s %s %d", p.Check, p.Table, p.RowID))
		return nil
	})
	if err != nil {
		t.Fatalf("VerifyLog: %v", err)
	}
	return ps, rep
}

// appended appends what is final and returns the log's size.
func appended(t *testing.T, s *db.Store) int64 {
	t.Helper()
	n, err := s.AppendLog(context.Background())
	if err != nil {
		t.Fatalf("AppendLog: %v", err)
	}
	return n
}

// TestLogAppendVerify: the final rows become leaves, the rest wait, and
// the untouched log verifies; rows that become final later are appended.
func TestLogAppendVerify(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		logFixture(t, s)
		if n := appended(t, s); n != 7 {
			t.Fatalf("log size = %d, want 7", n)
		}
		if n := appended(t, s); n != 7 {
			t.Fatalf("a second append with nothing new: size %d, want 7", n)
		}
		ps, rep := verifyLog(t, s)
		if len(ps) > 0 || rep.Size != 7 || rep.Unlogged != 2 {
			t.Fatalf("VerifyLog = %v, size %d, unlogged %d; want no problem, 7 leaves, 2 unlogged", ps, rep.Size, rep.Unlogged)
		}
		root, err := tlog.TreeHash(7, s.LogHashes(ctx))
		if err != nil || root != rep.Root {
			t.Fatalf("stored root %v (%v), recomputed %v", root, err, rep.Root)
		}
		// The request in flight completes, the message leaves review.
		if err := dbtest.Gorm(s).Exec("UPDATE requests SET completed_at = ?, status = 200, outcome = 'ok' WHERE id = 5", db.Now()).Error; err != nil {
			t.Fatal(err)
		}
		if ok, err := s.CloseMailReview(ctx, 2, "pending", "dismissed", "staff", db.Now()); err != nil || !ok {
			t.Fatalf("CloseMailReview = %v, %v", ok, err)
		}
		if n := appended(t, s); n != 9 {
			t.Fatalf("log size = %d, want 9", n)
		}
		if ps, rep := verifyLog(t, s); len(ps) > 0 || rep.Unlogged != 0 {
			t.Fatalf("VerifyLog = %v, unlogged %d; want none", ps, rep.Unlogged)
		}
		for _, want := range []struct {
			table string
			id    int64
		}{{"requests", 5}, {"mail_messages", 2}} {
			idx, err := s.LeafIndex(ctx, want.table, want.id)
			if err != nil || idx < 7 {
				t.Errorf("LeafIndex(%s, %d) = %d, %v; want 7 or 8", want.table, want.id, idx, err)
			}
		}
	})
}

// TestLogLeafSameOnBothEngines: one row gives the same leaf, but for its
// salt, on SQLite and PostgreSQL, NUL bytes of a body included.
func TestLogLeafSameOnBothEngines(t *testing.T) {
	var got []*leaf.Record
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		logFixture(t, s)
		appended(t, s)
		for _, row := range []struct {
			table string
			id    int64
		}{{"policy_events", 1}, {"requests", 2}, {"robots_snapshots", 1}, {"mail_messages", 1}} {
			idx, err := s.LeafIndex(ctx, row.table, row.id)
			if err != nil {
				t.Fatal(err)
			}
			l, err := s.LogLeafAt(ctx, idx)
			if err != nil {
				t.Fatal(err)
			}
			r, err := leaf.Parse(l.Data)
			if err != nil {
				t.Fatal(err)
			}
			if r.Table != row.table || r.ID != row.id || len(r.Salt) != leaf.SaltSize {
				t.Errorf("leaf %d = %s %d, salt %d bytes", idx, r.Table, r.ID, len(r.Salt))
			}
			r.Salt = nil
			got = append(got, r)
		}
		body, _ := got[len(got)-2].Field("body")
		if string(body.Bytes) != "User-agent: *\x00\nAllow: /\n" {
			t.Errorf("robots body in the leaf = %q", body.Bytes)
		}
		if got[len(got)-2].Site != "b.example" {
			t.Errorf("robots snapshot's site = %q, want b.example", got[len(got)-2].Site)
		}
	})
	if len(got) == 8 {
		for i := range 4 {
			a, b := got[i].Marshal(), got[i+4].Marshal()
			if string(a) != string(b) {
				t.Errorf("%s %d: leaf on SQLite %+v, on PostgreSQL %+v", got[i].Table, got[i].ID, got[i], got[i+4])
			}
		}
	}
}

// TestLogAttacks: each edit of the records made behind lohibot's back is
// found, naming its table and id.
func TestLogAttacks(t *testing.T) {
	type attack struct {
		name string
		// sqlite and postgres are the edit on each engine ("" for the
		// sqlite one on both).
		sqlite, postgres string
		args             []any
		want             string
		site             string // a site whose audit alone finds it too (VerifySiteLog)
	}
	attacks := []attack{
		{name: "NUL appended to an event's reason",
			sqlite:   "UPDATE policy_events SET reason = reason || char(0) || ' and every other site' WHERE id = 1",
			postgres: "UPDATE policy_events SET reason = reason || ' and every other site' WHERE id = 1",
			want:     "changed policy_events 1", site: "a.example"},
		{name: "NUL appended to an exclusion's site",
			sqlite:   "UPDATE policy_events SET site = site || char(0) WHERE id = 1",
			postgres: "UPDATE policy_events SET site = site || ' ' WHERE id = 1",
			want:     "changed policy_events 1"},
		{name: "NUL appended to a request's host",
			sqlite:   "UPDATE requests SET host = host || char(0) WHERE id = 2",
			postgres: "UPDATE requests SET host = host || ' ' WHERE id = 2",
			want:     "changed requests 2"},
		{name: "request status edited", sqlite: "UPDATE requests SET status = 404 WHERE id = 2", want: "changed requests 2", site: "b.example"},
		{name: "robots body edited", sqlite: "UPDATE robots_snapshots SET body = ? WHERE id = 1", args: []any{[]byte("User-agent: *\nAllow: /\n")},
			want: "changed robots_snapshots 1"},
		{name: "event deleted", sqlite: "DELETE FROM policy_events WHERE id = 2", want: "deleted policy_events 2"},
		{name: "message in review deleted", sqlite: "DELETE FROM mail_messages WHERE id = 2", want: "deleted mail_messages 2"},
		{name: "event inserted in the middle", sqlite: "INSERT INTO policy_events (id, version, happened_at, kind, site) VALUES (3, 99, ?, 'reinclude', 'a.example')",
			args: []any{time.Date(2026, 8, 1, 11, 0, 0, 0, time.UTC)}, want: "inserted policy_events 3", site: "a.example"},
		{name: "forged email with id -1", sqlite: `INSERT INTO mail_messages (id, message_id, received_at, from_addr, intent, domains, outcome, review_status)
			VALUES (-1, 'forged@example', ?, 'w@a.example', 'reinclude', 'a.example', 'reincluded', 'approved')`,
			args: []any{db.Now().Add(-2 * time.Hour)}, want: "inserted mail_messages -1"},
		{name: "leaves swapped", sqlite: "UPDATE log_leaves SET idx = -1 WHERE idx = 0; UPDATE log_leaves SET idx = 0 WHERE idx = 1; UPDATE log_leaves SET idx = 1 WHERE idx = -1",
			want: "reordered"},
	}
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		for _, a := range attacks {
			t.Run(a.name, func(t *testing.T) {
				s := dbtest.OpenDSN(t, dbtest.DSN(t, s0(dsn)))
				logFixture(t, s)
				appended(t, s)
				if ps, _ := verifyLog(t, s); len(ps) > 0 {
					t.Fatalf("problems before the attack: %v", ps)
				}
				q := a.sqlite
				if s.Dialect == db.Postgres && a.postgres != "" {
					// PostgreSQL keeps no NUL in text: the closest edit.
					q = a.postgres
				}
				for _, q := range strings.Split(q, "; ") {
					if err := dbtest.Gorm(s).Exec(q, a.args...).Error; err != nil {
						t.Fatalf("the attack: %v", err)
					}
				}
				ps, _ := verifyLog(t, s)
				if !slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(p, a.want) }) {
					t.Errorf("VerifyLog after the attack = %v, want %q", ps, a.want)
				}
				if a.site == "" {
					return
				}
				ps = nil
				if _, err := s.VerifySiteLog(context.Background(), []string{a.site}, func(p db.LogProblem) error {
					ps = append(ps, fmt.Sprintf("%s %s %d", p.Check, p.Table, p.RowID))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(ps, a.want) {
					t.Errorf("VerifySiteLog(%s) after the attack = %v, want %q", a.site, ps, a.want)
				}
			})
		}
	})
}

// s0 returns the engine of dsn.
func s0(dsn string) string {
	if strings.HasPrefix(dsn, "postgres") {
		return "postgres"
	}
	return "sqlite"
}

// TestLogForgedLeaf: an attacker with SQL and SHA-256 appends a leaf of
// their own for a fabricated row (id -1), with every stored hash
// recomputed: the tree is consistent, and the row id is still found out.
func TestLogForgedLeaf(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		logFixture(t, s)
		n := appended(t, s)
		if err := dbtest.Gorm(s).Exec(`INSERT INTO mail_messages (id, message_id, received_at, from_addr, intent, domains, outcome, review_status)
			VALUES (-1, 'forged@example', ?, 'w@a.example', 'reinclude', 'a.example', 'reincluded', 'approved')`, db.Now().Add(-2*time.Hour)).Error; err != nil {
			t.Fatal(err)
		}
		salt := make([]byte, leaf.SaltSize)
		rand.Read(salt)
		// The leaf as lohibot would compute it, found by trial: the
		// integrity check's own recomputation says whether it matches.
		if err := dbtest.Gorm(s).Exec("INSERT INTO log_leaves (idx, tbl, row_id, salt) VALUES (?, 'mail_messages', -1, ?)", n, salt).Error; err != nil {
			t.Fatal(err)
		}
		var data []byte
		// The attacker reads the leaf data through lohibot's own reader.
		l, err := s.LogLeafAt(ctx, n)
		if err != nil || l.Data == nil {
			t.Fatalf("LogLeafAt = %+v, %v", l, err)
		}
		data = l.Data
		hs, err := tlog.StoredHashes(n, data, s.LogHashes(ctx))
		if err != nil {
			t.Fatal(err)
		}
		base := tlog.StoredHashIndex(0, n)
		for i, h := range hs {
			if err := dbtest.Gorm(s).Exec("INSERT INTO log_hashes (id, hash) VALUES (?, ?)", base+int64(i), h[:]).Error; err != nil {
				t.Fatal(err)
			}
		}
		ps, rep := verifyLog(t, s)
		if rep.Size != n+1 || !slices.Contains(ps, "inserted mail_messages -1") || slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(p, "tree") }) {
			t.Errorf("VerifyLog = %v (size %d); want only the forged row, inserted, in a consistent tree of %d", ps, rep.Size, n+1)
		}
	})
}

// TestLogRefusesNUL: a NUL byte in a text column of an evidence table is
// refused at write time, naming the column, and nothing is written.
func TestLogRefusesNUL(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		err := s.InTx(ctx, func(tx *db.Tx) error {
			return tx.AppendEvent(ctx, &db.PolicyEvent{HappenedAt: db.Now(), Kind: db.EventExclude, Site: "a.example", Reason: "asked\x00 and more"})
		})
		if !errors.Is(err, db.ErrNUL) || !strings.Contains(err.Error(), "policy_events.reason") {
			t.Errorf("AppendEvent with a NUL = %v, want ErrNUL naming policy_events.reason", err)
		}
		err = db.InsertRequest(ctx, s.AutoCommit(), &db.Request{Site: "a.example", Host: "a.example\x00", Origin: "https://a.example",
			URL: "https://a.example/", Purpose: db.PurposePage, SentAt: db.Now()})
		if !errors.Is(err, db.ErrNUL) || !strings.Contains(err.Error(), "requests.host") {
			t.Errorf("InsertRequest with a NUL = %v, want ErrNUL naming requests.host", err)
		}
		_, err = s.InsertMailMessage(ctx, &db.MailMessage{MessageID: "m@x", ReceivedAt: db.Now(), Subject: "stop\x00"})
		if !errors.Is(err, db.ErrNUL) {
			t.Errorf("InsertMailMessage with a NUL = %v, want ErrNUL", err)
		}
		err = db.InsertRobotsSnapshot(ctx, s.AutoCommit(), &db.RobotsSnapshot{Origin: "https://a.example", FetchedAt: db.Now(), Outcome: "error", Error: "x\x00"})
		if !errors.Is(err, db.ErrNUL) {
			t.Errorf("InsertRobotsSnapshot with a NUL = %v, want ErrNUL", err)
		}
		var n int64
		for _, tbl := range db.LogTables() {
			var c int64
			if err := dbtest.Gorm(s).Raw("SELECT COUNT(*) FROM " + tbl).Scan(&c).Error; err != nil {
				t.Fatal(err)
			}
			n += c
		}
		if n != 0 {
			t.Errorf("%d rows written, want none", n)
		}
	})
}

// TestLogSequencersConcurrent: several stores append to one log while
// events are written; every row becomes exactly one leaf, and the log
// verifies.
func TestLogSequencersConcurrent(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		stores := []*db.Store{dbtest.OpenDSN(t, dsn), dbtest.OpenDSN(t, dsn), dbtest.OpenDSN(t, dsn)}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for _, s := range stores[1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.AppendLog(ctx); err != nil && !errors.Is(err, db.ErrLogBusy) {
						t.Errorf("AppendLog: %v", err)
						return
					}
				}
			}()
		}
		const events = 60
		for i := range events {
			err := stores[0].InTx(ctx, func(tx *db.Tx) error {
				return tx.AppendEvent(ctx, &db.PolicyEvent{HappenedAt: db.Now(), Kind: db.EventSiteAdd, Site: fmt.Sprintf("s%d.example", i)})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		if n := appended(t, stores[0]); n != events {
			t.Fatalf("log size = %d, want %d", n, events)
		}
		if ps, rep := verifyLog(t, stores[0]); len(ps) > 0 || rep.Size != events {
			t.Fatalf("VerifyLog = %v, size %d", ps, rep.Size)
		}
	})
}

// TestLogTreeRewritten: a stored hash inside the tree (not a leaf's)
// rewritten is found out, naming the first leaf whose subtree it is, and
// the report's root and hashes are still those of the tree the rows give.
func TestLogTreeRewritten(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		s := dbtest.OpenDSN(t, dsn)
		logFixture(t, s)
		if n := appended(t, s); n != 7 {
			t.Fatalf("log size = %d, want 7", n)
		}
		_, before := verifyLog(t, s)
		at4, err := tlog.TreeHash(4, before.Hashes)
		if err != nil {
			t.Fatal(err)
		}
		// The hash of leaves 0 to 3, stored after leaf 3's own and that
		// of leaves 2 and 3: a root reads it.
		if err := dbtest.Gorm(s).Exec("UPDATE log_hashes SET hash = ? WHERE id = ?", make([]byte, 32), tlog.StoredHashIndex(2, 0)).Error; err != nil {
			t.Fatal(err)
		}
		var problems []db.LogProblem
		rep, err := s.VerifyLog(context.Background(), func(p db.LogProblem) error {
			problems = append(problems, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != 1 || problems[0].Check != db.LogTree || problems[0].Index != 3 {
			t.Errorf("VerifyLog after the rewrite = %+v, want one tree problem at leaf 3", problems)
		}
		if rep.Root != before.Root {
			t.Errorf("root after the rewrite %v, want the rows' %v", rep.Root, before.Root)
		}
		if h, err := tlog.TreeHash(4, rep.Hashes); err != nil || h != at4 {
			t.Errorf("TreeHash(4) after the rewrite = %v, %v; want the rows' %v", h, err, at4)
		}
	})
}
