package outsider_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoLohibot: the package builds on the standard library and
// golang.org/x/mod alone, so what it checks is checked as from outside.
func TestImportsNoLohibot(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/lohisoft/lohibot/internal/testenv/outsider").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/lohisoft/lohibot") && p != "github.com/lohisoft/lohibot/internal/testenv/outsider" {
			t.Errorf("outsider depends on %s", p)
		}
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(p, "golang.org/x/mod/") && !strings.HasPrefix(p, "github.com/lohisoft/lohibot/") {
			t.Errorf("outsider depends on %s, beyond golang.org/x/mod", p)
		}
	}
}
