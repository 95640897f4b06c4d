package db

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
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
func TestVerifiedMigrationMarksOldMailUnverified(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = saved[:2]
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO exclusions (site, excluded_at, source, event_id) VALUES ('mail.example', '2026-01-01 00:00:00', 'mail', 1)",
		"INSERT INTO exclusions (site, excluded_at, source, event_id) VALUES ('staff.example', '2026-01-01 00:00:00', 'cli', 2)",
	} {
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
	defer s.Close()
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

// TestUpgradeSealsExistingRows: a database from before the seal tables gets
// its rows sealed, in id order, when it is upgraded.
func TestUpgradeSealsExistingRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = saved[:sealMigration-1]
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := Now()
	for i := 1; i <= 3; i++ {
		if err := s.gdb.Create(&PolicyEvent{Version: int64(i), HappenedAt: now, Kind: EventSiteAdd, Site: "a.example"}).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.gdb.Create(&Request{Site: "a.example", Host: "a.example", Origin: "o", URL: "u", Purpose: PurposePage, SentAt: now, CompletedAt: &now}).Error; err != nil {
		t.Fatal(err)
	}
	s.Close()

	migrations = saved
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head, err := s.SealHead(ctx)
	if err != nil || head.ID != 1 || head.Rows != 4 {
		t.Fatalf("SealHead after the upgrade = %+v, %v; want block 1 sealing the 4 rows", head, err)
	}
	var ids []int64
	if err := s.gdb.Raw("SELECT row_id FROM seal_rows WHERE tbl = 'policy_events' ORDER BY row_id").Scan(&ids).Error; err != nil || len(ids) != 3 {
		t.Fatalf("sealed policy events = %v, %v; want 3", ids, err)
	}
	rep, err := s.VerifySeals(ctx, func(p SealProblem) error {
		t.Errorf("problem after the upgrade: %+v", p)
		return nil
	})
	if err != nil || rep.Rows != 4 {
		t.Errorf("VerifySeals = %+v, %v; want 4 sealed rows", rep, err)
	}
}
