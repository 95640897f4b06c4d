package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

func TestExcludeCommands(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		steps := []struct {
			args     []string
			code     int
			contains string
		}{
			{[]string{"exclude", "add", "https://www.Example.co.uk/x", "--by", "anna", "--reason", "email"}, 0, "excluded example.co.uk"},
			{[]string{"exclude", "check", "example.co.uk"}, 1, "is excluded"},
			{[]string{"exclude", "check", "https://shop.example.co.uk/page"}, 1, "example.co.uk"},
			{[]string{"exclude", "check", "other.example"}, 0, "not excluded"},
			{[]string{"exclude", "add", "good.com", "co.uk"}, 2, ""},
			{[]string{"exclude", "check", "good.com"}, 0, "not excluded"},
			{[]string{"exclude", "add", "example.co.uk", "--by=bob"}, 0, "already excluded"},
			{[]string{"exclude", "remove", "example.co.uk"}, 2, ""},
			{[]string{"exclude", "remove", "never.example", "--by", "carla"}, 1, ""},
			{[]string{"exclude", "add", "1.2.3.4"}, 2, ""},
			{[]string{"exclude", "add"}, 2, ""},
			{[]string{"exclude", "check"}, 2, ""},
			{[]string{"exclude", "frobnicate"}, 2, ""},
			{[]string{"exclude", "list", "--bogus"}, 2, ""},
			{[]string{"nonsense"}, 2, ""},
			{[]string{"sites", "add", "https://shop.example.org:8443/start", "bücher.de"}, 0, "xn--bcher-kva.de"},
			{[]string{"sites", "remove", "unlisted.example"}, 1, ""},
			{[]string{"sites", "list"}, 0, "https://shop.example.org:8443/start"},
		}
		for _, s := range steps {
			r := runCLI(t, env, s.args...)
			if r.code != s.code {
				t.Errorf("lohibot %s: exit %d, want %d (stdout %q, stderr %q)", strings.Join(s.args, " "), r.code, s.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, s.contains) {
				t.Errorf("lohibot %s: stdout %q, want it to contain %q", strings.Join(s.args, " "), r.stdout, s.contains)
			}
			if s.code == 2 && r.stderr == "" {
				t.Errorf("lohibot %s: exit 2 without an error message", strings.Join(s.args, " "))
			}
		}

		r := runCLI(t, env, "exclude", "list", "--json")
		var got []exclusionJSON
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var e exclusionJSON
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("exclude list --json line %q: %v", line, err)
			}
			got = append(got, e)
		}
		if len(got) != 1 || got[0].Site != "example.co.uk" || got[0].By != "anna" || got[0].Reason != "email" || got[0].Evidence == "" || !got[0].Excluded {
			t.Errorf("exclude list --json = %+v", got)
		}

		r = runCLI(t, env, "--json", "sites", "list")
		if !strings.Contains(r.stdout, `"site":"example.org"`) || !strings.Contains(r.stdout, `"start_url":"https://shop.example.org:8443/start"`) {
			t.Errorf("sites list --json = %s", r.stdout)
		}

		if r := runCLI(t, env, "exclude", "remove", "example.co.uk", "--by", "carla"); r.code != 0 {
			t.Errorf("exclude remove: exit %d: %s", r.code, r.stderr)
		}
		if r := runCLI(t, env, "exclude", "check", "example.co.uk"); r.code != 0 {
			t.Errorf("exclude check after re-inclusion: exit %d", r.code)
		}
	})
}

func TestDBFlagOverridesEnv(t *testing.T) {
	dir := t.TempDir()
	envDB, flagDB := filepath.Join(dir, "env.db"), filepath.Join(dir, "flag.db")
	env := []string{"LOHIBOT_DB=" + envDB}
	dbtest.Init(t, envDB)
	dbtest.Init(t, flagDB)
	if r := runCLI(t, env, "exclude", "add", "example.com", "--db", flagDB); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := runCLI(t, env, "exclude", "check", "example.com"); r.code != 0 {
		t.Errorf("LOHIBOT_DB database has the exclusion made with --db")
	}
	if r := runCLI(t, nil, "--db="+flagDB, "exclude", "check", "example.com"); r.code != 1 {
		t.Errorf("--db database lacks the exclusion")
	}
}

// TestBadDatabaseIsBadInput: a --db or LOHIBOT_DB that cannot name a
// database is bad input (exit 2), and nothing is created.
func TestBadDatabaseIsBadInput(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "x.db")
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"folder missing (--db)", nil, []string{"exclude", "list", "--db", missing}},
		{"folder missing (LOHIBOT_DB)", []string{"LOHIBOT_DB=" + missing}, []string{"exclude", "check", "example.com"}},
		{"folder missing (sqlite://)", nil, []string{"--db=sqlite://" + missing, "sites", "list"}},
		{"unknown scheme", nil, []string{"exclude", "list", "--db", "mysql://db/x"}},
		{"empty sqlite path", nil, []string{"exclude", "list", "--db", "sqlite://"}},
		{"a folder", nil, []string{"exclude", "list", "--db", dir}},
		{"not an SQLite file", nil, []string{"exclude", "list", "--db", notDB}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, tt.args...)
			if r.code != 2 || r.stderr == "" || r.stdout != "" {
				t.Errorf("lohibot %s: exit %d, stdout %q, stderr %q; want exit 2 with a message on stderr only",
					strings.Join(tt.args, " "), r.code, r.stdout, r.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("a bad --db created %s", filepath.Dir(missing))
	}
	if b, _ := os.ReadFile(notDB); string(b) != "not a database\n" {
		t.Errorf("a bad --db changed %s", notDB)
	}
}

// TestEmptyByIsBadInput: --by given empty is refused (exit 2); every change
// names who made it.
func TestEmptyByIsBadInput(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	for _, args := range [][]string{
		{"exclude", "add", "example.com", "--by="},
		{"exclude", "add", "example.com", "--by", " "},
		{"exclude", "remove", "example.com", "--by", " "},
		{"sites", "add", "example.com", "--by="},
		{"sites", "remove", "example.com", "--by="},
	} {
		if r := runCLI(t, env, args...); r.code != 2 || r.stderr == "" {
			t.Errorf("lohibot %s: exit %d, stderr %q; want 2", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if r := runCLI(t, env, "exclude", "check", "example.com"); r.code != 0 {
		t.Errorf("exclude check after refused adds: exit %d, want 0 (nothing excluded)", r.code)
	}
}

// TestSitesJSON: sites add --json says whether the site is excluded, as
// sites list does; a site named twice is removed once.
func TestSitesJSON(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	if r := runCLI(t, env, "exclude", "add", "example.com", "--by", "anna"); r.code != 0 {
		t.Fatalf("exclude add: exit %d: %s", r.code, r.stderr)
	}
	r := runCLI(t, env, "sites", "add", "https://www.example.com/start", "other.example", "--json")
	if r.code != 0 {
		t.Fatalf("sites add: exit %d: %s", r.code, r.stderr)
	}
	want := map[string]bool{"example.com": true, "other.example": false}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(want) {
		t.Fatalf("sites add --json printed %d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for _, line := range lines {
		var s siteJSON
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("sites add --json line %q: %v", line, err)
		}
		if s.Excluded != want[s.Site] {
			t.Errorf("sites add --json: %s excluded = %v, want %v", s.Site, s.Excluded, want[s.Site])
		}
	}
	r = runCLI(t, env, "sites", "remove", "example.com", "https://www.example.com/", "--json")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("sites remove example.com www.example.com: exit %d, stdout %q, stderr %q; want one removal", r.code, r.stdout, r.stderr)
	}
}

func TestHelpHasExamples(t *testing.T) {
	a := &app{getenv: func(string) string { return "" }}
	leaves := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c.Runnable() && !c.HasSubCommands() {
			leaves++
		}
		if c.Runnable() && !c.HasSubCommands() && c.Example == "" {
			t.Errorf("%s has no examples in its help", c.CommandPath())
		}
		if c.Short == "" {
			t.Errorf("%s has no short description", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(a))
	// exclude ×4, sites ×3, mail ×4+, robots ×2, crawl, search, audit,
	// report, verify, verify-log, ips, demo, serve.
	if leaves < 24 {
		t.Errorf("walked %d runnable commands, want at least 24", leaves)
	}
	if r := runCLI(t, nil, "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "lohibot") {
		t.Errorf("completion bash: exit %d", r.code)
	}
}

// TestConcurrentProcesses runs staff, a watcher and a crawler as separate
// lohibot processes on one database: each adds exclusions and checks them at
// once. None may be lost, and no process may fail (no "database is locked").
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		if r := runCLI(t, nil, "--db", dsn, "exclude", "list"); r.code != 0 {
			t.Fatalf("init: %s", r.stderr)
		}
		const procs, each = 3, 8
		var wg sync.WaitGroup
		errs := make(chan string, procs*each*2)
		for p := 0; p < procs; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					site := fmt.Sprintf("p%d-%d.example", p, i)
					out, err := lohibotProcess(ctx, "--db", dsn, "exclude", "add", site, "--by", fmt.Sprint("proc", p)).CombinedOutput()
					if err != nil {
						errs <- fmt.Sprintf("exclude add %s: %v: %s", site, err, out)
						continue
					}
					cmd := lohibotProcess(ctx, "--db", dsn, "exclude", "check", site)
					out, _ = cmd.CombinedOutput() // exit 1 is the answer
					if cmd.ProcessState.ExitCode() != 1 {
						errs <- fmt.Sprintf("exclude check %s: exit %d, want 1: %s", site, cmd.ProcessState.ExitCode(), out)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		r := runCLI(t, nil, "--db", dsn, "--json", "exclude", "list")
		if n := strings.Count(r.stdout, "\n"); n != procs*each {
			t.Errorf("exclude list has %d exclusions, want %d:\n%s", n, procs*each, r.stdout)
		}
	})
}
