package main

import (
	"strings"
	"testing"
)

// These tests check the command-line contract (DESIGN.md, "The command
// line", and issue 13) from outside, as a user or the black-box tests see
// it: arguments in, exit code and output out.

// TestContractRobotsFetchRefusesBeforeSending: robots fetch refuses a URL
// with credentials without echoing them, and names what a bare domain
// lacks; both are bad input (exit 2), decided before any database or
// network is touched.
func TestContractRobotsFetchRefusesBeforeSending(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"credentials", "http://alice:s3cret@example.org/", "credentials (user:password@) is refused"},
		{"credentials without scheme", "alice:s3cret@example.org", "credentials (user:password@) is refused"},
		{"bare domain", "example.org", `"example.org" is not an http(s) URL (such as https://example.org/)`},
		{"scheme-relative", "//example.org/x", `is not an http(s) URL (such as https://example.org/x)`},
		{"bad port", "example.org:abc", `bad port "abc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := t.TempDir() + "/none.db"
			res := runCLI(t, nil, "--db", dsn, "robots", "fetch", tt.url)
			if res.code != exitBadInput {
				t.Errorf("robots fetch %q: exit %d, want %d; stderr %q", tt.url, res.code, exitBadInput, res.stderr)
			}
			if !strings.Contains(res.stderr, tt.want) {
				t.Errorf("robots fetch %q: stderr %q, want it to say %q", tt.url, res.stderr, tt.want)
			}
			if strings.Contains(res.stdout+res.stderr, "s3cret") {
				t.Errorf("robots fetch %q printed the password: stdout %q, stderr %q", tt.url, res.stdout, res.stderr)
			}
		})
	}
}
