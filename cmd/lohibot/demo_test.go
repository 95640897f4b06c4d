package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

func TestDemoCmd(t *testing.T) {
	used := dbtest.DSN(t, "sqlite")
	if r := runCLI(t, nil, "--db", used, "sites", "add", "example.com"); r.code != 0 {
		t.Fatalf("sites add: exit %d: %s", r.code, r.stderr)
	}
	tests := []struct {
		name     string
		env      []string
		args     []string
		wantCode int
		wantOut  string // in standard output
		wantErr  string // in standard error
	}{
		{name: "extra argument", args: []string{"demo", "now"}, wantCode: 2, wantErr: "unexpected arguments"},
		{name: "zero delay", args: []string{"demo", "--delay", "0s"}, wantCode: 2, wantErr: "--delay must be positive"},
		{name: "a database with data", args: []string{"--db", used, "demo"}, wantCode: 2, wantErr: "already holds data"},
		{
			name: "a quick run kept in a folder", env: []string{"LOHIBOT_DB=" + used},
			args:     []string{"demo", "--delay", "20ms", "--dir", filepath.Join(t.TempDir(), "kept")},
			wantCode: 0, wantOut: "Try:",
		},
	}
	// --db puts the database outside the demo's temporary folder: the demo
	// says where each is, and a login wall it handled is no error.
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	tests = append(tests, struct {
		name     string
		env      []string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{name: "a database of its own", args: []string{"--db", fresh, "demo", "--delay", "20ms"}, wantCode: 0,
		wantOut: "The database stays at " + fresh + "; the report and the log were removed"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("lohibot %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(tt.args, " "), r.code, tt.wantCode, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.wantOut) {
				t.Errorf("lohibot %s: stdout %q, want it to contain %q", strings.Join(tt.args, " "), r.stdout, tt.wantOut)
			}
			if !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("lohibot %s: stderr %q, want it to contain %q", strings.Join(tt.args, " "), r.stderr, tt.wantErr)
			}
			if tt.wantCode == 0 && (strings.Contains(r.stdout, " 1 error") || !strings.Contains(r.stdout, "left as promised")) {
				t.Errorf("lohibot %s counted the login wall it handled as an error:\n%s", strings.Join(tt.args, " "), r.stdout)
			}
		})
	}
	// LOHIBOT_DB is never the demo's database: the quick run above used a
	// folder of its own and left the real database alone.
	if r := runCLI(t, nil, "--db", used, "--json", "exclude", "list"); strings.TrimSpace(r.stdout) != "" {
		t.Errorf("exclusions in the LOHIBOT_DB database after the demo: %q, want none", r.stdout)
	}
}
