package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestFixture keeps every package under internal/testenv,
// and the testing packages, out of the production binary: the demo's local
// web lives in internal/localweb, which ships.
func TestBinaryLinksNoTestFixture(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
		if strings.HasPrefix(p, "github.com/lohisoft/lohibot/internal/testenv/") {
			t.Errorf("go list -deps ./cmd/lohibot includes the test fixture %s", p)
		}
	}
	for _, f := range []string{"testing", "net/http/httptest"} {
		if deps[f] {
			t.Errorf("go list -deps ./cmd/lohibot includes %s", f)
		}
	}
	if !deps["github.com/lohisoft/lohibot/internal/app/demo"] {
		t.Errorf("go list -deps ./cmd/lohibot lacks internal/app/demo: is the list complete?\n%s", out)
	}
}
