package db_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

func TestOpenBothEngines(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		if v, err := s.Version(ctx); err != nil || v != db.SchemaVersion {
			t.Fatalf("Version() = %d, %v; want %d", v, err, db.SchemaVersion)
		}
		// Round-trip a row with times, blobs and nullable columns.
		now := db.Now()
		snap := db.RobotsSnapshot{Origin: "https://example.com:443", FetchedAt: now, Status: 200,
			Body: []byte("User-agent: *\nDisallow: /x\n"), Sha256: "abc", Outcome: db.RobotsParsed}
		if err := dbtest.Gorm(s).WithContext(ctx).Create(&snap).Error; err != nil {
			t.Fatal(err)
		}
		var got db.RobotsSnapshot
		if err := dbtest.Gorm(s).WithContext(ctx).First(&got, snap.ID).Error; err != nil {
			t.Fatal(err)
		}
		if !got.FetchedAt.Equal(now) || string(got.Body) != string(snap.Body) || got.RequestID != nil {
			t.Errorf("round trip = %+v, want %+v", got, snap)
		}
		// Reopening an up-to-date database changes nothing.
		s2, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		s2.Close()
	})
}

func TestOneRunningCyclePerSite(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		s := dbtest.OpenDSN(t, dsn)
		c1 := db.CrawlCycle{Site: "example.com", StartedAt: time.Now(), Status: db.CycleRunning, Budget: 20}
		if err := dbtest.Gorm(s).Create(&c1).Error; err != nil {
			t.Fatal(err)
		}
		c2 := db.CrawlCycle{Site: "example.com", StartedAt: time.Now(), Status: db.CycleRunning, Budget: 20}
		if err := dbtest.Gorm(s).Create(&c2).Error; err == nil {
			t.Error("a second running cycle for one site was accepted")
		}
		slot := 1
		r1 := db.Request{CycleID: &c1.ID, BudgetSlot: &slot, Site: "example.com", Host: "example.com",
			Origin: "https://example.com:443", URL: "https://example.com/", Purpose: db.PurposePage, SentAt: time.Now()}
		if err := dbtest.Gorm(s).Create(&r1).Error; err != nil {
			t.Fatal(err)
		}
		r2 := r1
		r2.ID = 0
		if err := dbtest.Gorm(s).Create(&r2).Error; err == nil {
			t.Error("two requests with one budget slot were accepted")
		}
	})
}

func TestOpenBadDSN(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"mysql://x", "sqlite://", "/no/such/folder/x.db"} {
		if s, err := db.Open(ctx, dsn); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want error", dsn)
		} else if errors.Is(err, db.ErrTooNew) {
			t.Errorf("Open(%q) = %v", dsn, err)
		}
	}
}

// TestOpenExistingCreatesNothing: a name of no database is refused with
// ErrNoDatabase and nothing is created (a typo in --db must not start an
// empty policy); Open (init) creates it, after which OpenExisting opens it.
func TestOpenExistingCreatesNothing(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.EmptyDSN(t, engine)
			_, err := db.OpenExisting(ctx, dsn)
			if !errors.Is(err, db.ErrNoDatabase) {
				t.Fatalf("OpenExisting(%q) = %v, want ErrNoDatabase", dsn, err)
			}
			if engine == "sqlite" {
				if _, serr := os.Stat(dsn); !os.IsNotExist(serr) {
					t.Errorf("OpenExisting created %s (stat: %v)", dsn, serr)
				}
				if want := "no lohibot database at " + dsn + " (create it with lohibot init --db " + dsn + ")"; err.Error() != want {
					t.Errorf("error = %q, want %q", err, want)
				}
			}
			// Still none: the refused open created no schema either.
			if _, err := db.OpenExisting(ctx, dsn); !errors.Is(err, db.ErrNoDatabase) {
				t.Fatalf("second OpenExisting = %v, want ErrNoDatabase", err)
			}
			s, err := db.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			s, err = db.OpenExisting(ctx, dsn)
			if err != nil {
				t.Fatalf("OpenExisting after Open: %v", err)
			}
			s.Close()
		})
	}
}

func TestOpenExistingEmptySQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenExisting(context.Background(), path); !errors.Is(err, db.ErrNoDatabase) {
		t.Fatalf("OpenExisting(empty file) = %v, want ErrNoDatabase", err)
	}
}

// TestBadPostgresDSN: a DSN that does not parse is ErrBadDSN (bad input,
// exit 2), and the error does not show its password.
func TestBadPostgresDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://bot:s3cret@db.example:99999999/x",
		"postgres://bot:s3cret@db.example/x?password=s3cret&sslmode=bogus",
		"postgres://bot:s3%zzcret@db.example/x",
	} {
		_, err := db.OpenExisting(context.Background(), dsn)
		if !errors.Is(err, db.ErrBadDSN) {
			t.Errorf("OpenExisting(%q) = %v, want ErrBadDSN", dsn, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "s3%zzcret") {
			t.Errorf("OpenExisting(%q) error shows the password: %v", dsn, err)
		}
	}
}

// TestVerifiedColumn: migration 3 gives exclusions a verified flag; rows
// made by email before it are unverified, the others verified.
func TestVerifiedColumn(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		s := dbtest.OpenDSN(t, dsn)
		for _, ex := range []db.Exclusion{
			{Site: "a.example", ExcludedAt: db.Now(), Source: "cli", Verified: true},
			{Site: "b.example", ExcludedAt: db.Now(), Source: "mail", Verified: false},
		} {
			if err := dbtest.Gorm(s).Create(&ex).Error; err != nil {
				t.Fatal(err)
			}
		}
		var got []db.Exclusion
		if err := dbtest.Gorm(s).Order("site").Find(&got).Error; err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !got[0].Verified || got[1].Verified {
			t.Errorf("exclusions = %+v, want a verified, b not", got)
		}
	})
}

// TestMissingPostgresDatabase: a DSN naming a PostgreSQL database that does
// not exist (a typo in --db) is ErrNoDatabase, for Open (init) and
// OpenExisting alike, and says how to create it without showing the
// password; it was a connection failure (exit 1) like an unreachable server.
func TestMissingPostgresDatabase(t *testing.T) {
	u := dbtest.MissingPostgres(t)
	u.User = url.UserPassword(u.User.Username(), "s3cret")
	dsn := u.String()
	for name, open := range map[string]func(context.Context, string) (*db.Store, error){"Open": db.Open, "OpenExisting": db.OpenExisting} {
		s, err := open(context.Background(), dsn)
		if err == nil {
			s.Close()
			t.Fatalf("%s(missing database) = nil error", name)
		}
		if !errors.Is(err, db.ErrNoDatabase) || !strings.Contains(err.Error(), "createdb lohibot_missing_") {
			t.Errorf("%s(missing database) = %v, want ErrNoDatabase saying how to create it", name, err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s(missing database) error shows the password: %v", name, err)
		}
	}
}

// TestOpenRefusesAForeignDatabase: Open (lohibot init) creates lohibot's
// tables only in a new or empty database; one holding another program's
// tables (--db naming the wrong database) is ErrBadDSN and left as it was.
func TestOpenRefusesAForeignDatabase(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.EmptyDSN(t, engine)
			driver := map[string]string{"sqlite": "sqlite", "postgres": "pgx"}[engine]
			other, err := sql.Open(driver, dsn) // drivers registered by package db
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.ExecContext(ctx, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER)"); err != nil {
				t.Fatal(err)
			}
			other.Close()
			var before []byte
			if engine == "sqlite" {
				if before, err = os.ReadFile(dsn); err != nil {
					t.Fatal(err)
				}
			}
			_, err = db.Open(ctx, dsn)
			if !errors.Is(err, db.ErrBadDSN) || !strings.Contains(err.Error(), `is not a lohibot database and not empty (it has a table "invoices")`) {
				t.Fatalf("Open(foreign database) = %v, want ErrBadDSN", err)
			}
			if _, err := db.OpenExisting(ctx, dsn); !errors.Is(err, db.ErrNoDatabase) {
				t.Errorf("OpenExisting(foreign database) after the refused Open = %v, want ErrNoDatabase (nothing created)", err)
			}
			if engine == "sqlite" {
				// Not a byte changed: not even its journal mode (WAL
				// would rewrite the header and add a -wal file).
				after, err := os.ReadFile(dsn)
				if err != nil || !bytes.Equal(after, before) {
					t.Errorf("the foreign file changed (%d bytes before, %d after, %v)", len(before), len(after), err)
				}
				if _, err := os.Stat(dsn + "-wal"); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a -wal file beside the foreign database: %v", err)
				}
			}
		})
	}
}

// TestConcurrentInits: opens racing on a new database all succeed and
// create it once, with the whole schema: on PostgreSQL none takes the
// other's fresh tables for a foreign database; on SQLite none fails with
// SQLITE_BUSY while turning the new file to WAL (a connection that read the
// header in rollback mode and then needs the write lock gets no busy
// handler). OpenExisting racing them either finds no database yet or opens
// it, never anything else. SQLite repeats the race on 30 new files.
func TestConcurrentInits(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			rounds := 30
			if engine == "postgres" {
				rounds = 3
			}
			for round := range rounds {
				ctx := context.Background()
				dsn := dbtest.EmptyDSN(t, engine)
				const n = 8
				errs := make(chan error, n)
				for i := range n {
					go func() {
						open := db.Open
						if i%4 == 3 {
							open = db.OpenExisting
						}
						s, err := open(ctx, dsn)
						if err == nil {
							s.Close()
						} else if i%4 == 3 && errors.Is(err, db.ErrNoDatabase) {
							err = nil // not created yet: what OpenExisting says then
						}
						errs <- err
					}()
				}
				for range n {
					if err := <-errs; err != nil {
						t.Errorf("round %d: concurrent Open of a new database: %v", round, err)
					}
				}
				s := dbtest.OpenDSN(t, dsn)
				if v, err := s.Version(ctx); err != nil || v != db.SchemaVersion {
					t.Errorf("round %d: Version() = %d, %v; want %d", round, v, err, db.SchemaVersion)
				}
				var rows int
				if err := dbtest.SQL(s).QueryRowContext(ctx, "SELECT count(*) FROM schema_version").Scan(&rows); err != nil || rows != 1 {
					t.Errorf("round %d: schema_version has %d rows (%v), want 1", round, rows, err)
				}
				if engine == "sqlite" {
					var mode string
					if err := dbtest.SQL(s).QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
						t.Errorf("round %d: journal_mode = %q, %v; want wal", round, mode, err)
					}
				}
				s.Close()
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestOpenWaitsToTurnOnWAL: Open of an SQLite file that another connection
// is writing in rollback mode (another program, or a first open that has not
// switched to WAL yet) waits for that write instead of failing with
// SQLITE_BUSY, and leaves the file in WAL mode.
func TestOpenWaitsToTurnOnWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	other, err := sql.Open("sqlite", "file:"+path) // driver registered by package db
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// An empty file with a write lock held: the header is not written yet.
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		s, err := db.Open(ctx, path)
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Open returned while another connection held the write lock: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Open after the other writer finished: %v", err)
	}
	s := dbtest.OpenDSN(t, path)
	var mode string
	if err := dbtest.SQL(s).QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if v, err := s.Version(ctx); err != nil || v != db.SchemaVersion {
		t.Errorf("Version() = %d, %v; want %d", v, err, db.SchemaVersion)
	}
}
