package db

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// These tests change the package's migration list, so they are white-box
// and never run in parallel.

func TestMigrateUpgradesOlderDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Version(ctx); v != SchemaVersion {
		t.Fatalf("fresh database at version %d, want %d", v, SchemaVersion)
	}
	s.Close()

	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = append(append([]string(nil), saved...),
		"CREATE TABLE upgrade_probe (id INTEGER PRIMARY KEY); INSERT INTO upgrade_probe (id) VALUES (42)")
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after adding a migration: %v", err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != len(migrations) {
		t.Errorf("upgraded version = %d, want %d", v, len(migrations))
	}
	var id int
	if err := s.pool.QueryRowContext(ctx, "SELECT id FROM upgrade_probe").Scan(&id); err != nil || id != 42 {
		t.Errorf("upgrade_probe = %d, %v; want 42", id, err)
	}
}

func TestFailedMigrationChangesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = append(append([]string(nil), saved...),
		"CREATE TABLE half_done (id INTEGER)",
		"CREATE TABLE broken (")
	if _, err := Open(ctx, path); err == nil {
		t.Fatal("Open with a broken migration succeeded")
	}
	migrations = saved
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != len(saved) {
		t.Errorf("version after failed upgrade = %d, want %d", v, len(saved))
	}
	var n int
	s.pool.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").Scan(&n)
	if n != 0 {
		t.Error("table of a failed migration was left behind")
	}
}

func TestNewerDatabaseRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.ExecContext(ctx, "UPDATE schema_version SET version = ?", SchemaVersion+5); err != nil {
		t.Fatal(err)
	}
	s.Close()

	_, err = Open(ctx, path)
	if !errors.Is(err, ErrTooNew) {
		t.Fatalf("Open(newer database) error = %v, want ErrTooNew", err)
	}
	// Nothing changed: the recorded version is still the newer one.
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = append(append([]string(nil), saved...), make([]string, 5)...)
	for i := len(saved); i < len(migrations); i++ {
		migrations[i] = "SELECT 1"
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != SchemaVersion+5 {
		t.Errorf("version = %d, want %d (unchanged)", v, SchemaVersion+5)
	}
}

// TestVerifiedMigrationMarksOldMailUnverified: exclusions made by email
// before the verified column existed were judged by forgeable headers, so
// the upgrade marks them unverified, and staff ones verified.
// upgradeFrom creates an SQLite database with the first v migrations, runs
// stmts in it, and returns it opened again with every migration.
func upgradeFrom(t *testing.T, v int, stmts ...string) *Store {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = saved[:v]
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := s.pool.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	migrations = saved
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestVerifiedMigrationMarksOldMailUnverified(t *testing.T) {
	ctx := context.Background()
	s := upgradeFrom(t, 2,
		"INSERT INTO exclusions (site, excluded_at, source, event_id) VALUES ('mail.example', '2026-01-01 00:00:00', 'mail', 1)",
		"INSERT INTO exclusions (site, excluded_at, source, event_id) VALUES ('staff.example', '2026-01-01 00:00:00', 'cli', 2)")
	got := map[string]bool{}
	rows, err := s.pool.QueryContext(ctx, "SELECT site, verified FROM exclusions")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var site string
		var v bool
		if err := rows.Scan(&site, &v); err != nil {
			t.Fatal(err)
		}
		got[site] = v
	}
	if got["mail.example"] || !got["staff.example"] {
		t.Errorf("verified after upgrade = %v, want mail.example false, staff.example true", got)
	}
}

// TestUpgradeLogFromSealChain: a database sealed by the seal chain gets a
// log whose first leaf commits to the chain's head, then the rows the
// chain sealed, in the order it sealed them, then the rest; the log
// verifies, and a row the chain left pending is appended once final.
func TestUpgradeLogFromSealChain(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = saved[:logMigration-1]
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := Now()
	for i := 1; i <= 4; i++ {
		if err := s.gdb.Create(&PolicyEvent{Version: int64(i), HappenedAt: now, Kind: EventSiteAdd, Site: "a.example"}).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.gdb.Create(&Request{Site: "a.example", Host: "a.example", Origin: "o", URL: "u", Purpose: PurposePage, SentAt: now, CompletedAt: &now}).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.gdb.Create(&Request{Site: "a.example", Host: "a.example", Origin: "o", URL: "u2", Purpose: PurposePage, SentAt: now}).Error; err != nil {
		t.Fatal(err)
	}
	// The chain as the seal code left it: two blocks, the second sealing
	// request 1 and events 2 and 3, the first event 1; request 2 in
	// flight; event 4 written after.
	for _, q := range []string{
		`INSERT INTO seal_blocks (id, sealed_at, prev_hash, root, row_count, state, hash) VALUES (1, '2026-01-01 00:00:00+00:00', '', 'r1', 1,
			'mail_messages 0 
policy_events 1 
requests 0 
robots_snapshots 0 
', 'h1')`,
		`INSERT INTO seal_blocks (id, sealed_at, prev_hash, root, row_count, state, hash) VALUES (2, '2026-01-01 00:00:01+00:00', 'h1', 'r2', 3,
			'mail_messages 0 
policy_events 3 
requests 2 2
robots_snapshots 0 
', 'h2')`,
		`INSERT INTO seal_rows (tbl, row_id, block_id, hash) VALUES ('policy_events', 1, 1, 'x'), ('requests', 1, 2, 'x'),
			('policy_events', 3, 2, 'x'), ('policy_events', 2, 2, 'x')`,
	} {
		if err := s.gdb.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	migrations = saved
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	type ref struct {
		Tbl   string
		RowID int64
	}
	var got []ref
	if err := s.gdb.Raw("SELECT tbl, row_id FROM log_leaves ORDER BY idx").Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	want := []ref{{"seal_blocks", 2}, {"policy_events", 1}, {"policy_events", 2}, {"policy_events", 3}, {"requests", 1}, {"policy_events", 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("leaves after the upgrade = %v, want %v", got, want)
	}
	check := func(wantSize, wantUnlogged int64) {
		t.Helper()
		rep, err := s.VerifyLog(ctx, func(p LogProblem) error {
			t.Errorf("problem after the upgrade: %+v", p)
			return nil
		})
		if err != nil || rep.Size != wantSize || rep.Unlogged != wantUnlogged {
			t.Errorf("VerifyLog = %+v, %v; want %d leaves, %d unlogged", rep, err, wantSize, wantUnlogged)
		}
	}
	check(6, 1)
	if err := s.gdb.Exec("UPDATE requests SET completed_at = ? WHERE id = 2", Now()).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendLog(ctx); err != nil {
		t.Fatal(err)
	}
	check(7, 0)
	// The head the first leaf commits to is checked like any row.
	if err := s.gdb.Exec("UPDATE seal_blocks SET hash = 'forged' WHERE id = 2").Error; err != nil {
		t.Fatal(err)
	}
	var problems []LogProblem
	if _, err := s.VerifyLog(ctx, func(p LogProblem) error { problems = append(problems, p); return nil }); err != nil ||
		len(problems) != 1 || problems[0].Table != "seal_blocks" || problems[0].Check != LogChanged {
		t.Errorf("VerifyLog after the old head changed = %+v, %v; want seal_blocks changed", problems, err)
	}
}

// TestCandidateLinksKeyedMigration: step 18 moves SQLite's candidate pairs
// into a table without a rowid, keeping every pair, and the counts read
// from them stay exact.
func TestCandidateLinksKeyedMigration(t *testing.T) {
	ctx := context.Background()
	s := upgradeFrom(t, 17,
		"INSERT INTO candidates (site, linked_from, first_seen, last_seen) VALUES ('c.example', 2, '2026-01-01 00:00:00', '2026-01-01 00:00:00')",
		"INSERT INTO candidate_links (site, from_site) VALUES ('c.example', 'a.example'), ('c.example', 'b.example')")
	var withoutRowid bool
	if err := s.pool.QueryRowContext(ctx, "SELECT wr FROM pragma_table_list WHERE name = 'candidate_links'").Scan(&withoutRowid); err != nil || !withoutRowid {
		t.Errorf("candidate_links without rowid = %v, %v; want true", withoutRowid, err)
	}
	if err := s.RecordCandidates(ctx, []CandidateLinks{{Site: "c.example", From: []string{"a.example", "d.example"}}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	cs, err := s.CandidatesAfter(ctx, "", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].LinkedFrom != 3 {
		t.Errorf("candidates after the upgrade = %+v, want c.example linked from 3 sites", cs)
	}
}
