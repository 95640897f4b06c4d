package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestFixture keeps test servers and helpers out of the
// production binary: the demo has its own small web and recorder.
func TestBinaryLinksNoTestFixture(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"testing", "net/http/httptest",
		"github.com/lohisoft/lohibot/internal/testweb",
		"github.com/lohisoft/lohibot/internal/dbtest",
		"github.com/lohisoft/lohibot/internal/testutil",
		"github.com/lohisoft/lohibot/internal/dnstest",
		"github.com/lohisoft/lohibot/internal/dovecottest",
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	for _, f := range forbidden {
		if deps[f] {
			t.Errorf("go list -deps ./cmd/lohibot includes %s", f)
		}
	}
	if !deps["github.com/lohisoft/lohibot/internal/demo"] {
		t.Errorf("go list -deps ./cmd/lohibot lacks internal/demo: is the list complete?\n%s", out)
	}
}
