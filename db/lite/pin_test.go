package lite_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// driver is the database/sql SQLite driver module the storage layer uses;
// pinned are the modules the fast path drives below it, which must be the
// very versions the driver requires.
const driver = "github.com/glebarez/go-sqlite"

var pinned = []string{"modernc.org/sqlite", "modernc.org/libc"}

// TestPinnedVersions checks that the build selects modernc.org/sqlite and
// modernc.org/libc at the versions github.com/glebarez/go-sqlite requires
// in its go.mod: the fast path calls the library below the driver, and only
// works while the two agree. Raising either module (or the driver) alone
// fails here. It asks the go command for the module graph's selected
// versions and reads the driver's go.mod from the module cache, so it runs
// offline. (A test binary carries no dependency list in its build
// information, so runtime/debug.ReadBuildInfo cannot tell.)
func TestPinnedVersions(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the module graph: %v", err)
	}
	cmd := exec.Command(goBin, append([]string{"list", "-m", "-json", driver}, pinned...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m: %v\n%s", err, stderr.String())
	}
	type module struct {
		Path, Version, GoMod string
		Replace              *module
	}
	linked := map[string]string{}
	var driverMod string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m module
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m.Replace != nil {
			m.Version, m.GoMod = m.Replace.Version, m.Replace.GoMod
		}
		linked[m.Path] = m.Version
		if m.Path == driver {
			driverMod = m.GoMod
		}
	}
	if driverMod == "" {
		t.Fatalf("%s is not in the module graph (or has no go.mod in the module cache): the storage layer's driver changed; the fast path must change with it", driver)
	}
	gomod, err := os.ReadFile(driverMod)
	if err != nil {
		t.Fatalf("the driver's go.mod: %v", err)
	}
	for _, msg := range mismatches(linked, requires(gomod)) {
		t.Error(msg)
	}
}

// TestMismatches checks that a version apart from the driver's is found.
func TestMismatches(t *testing.T) {
	gomod := []byte(`module github.com/glebarez/go-sqlite

go 1.17

require modernc.org/mathutil v1.5.0 // one line

require (
	golang.org/x/sys v0.7.0
	modernc.org/libc v1.22.5 // a comment
	modernc.org/sqlite v1.23.1
)
`)
	req := requires(gomod)
	if req["modernc.org/sqlite"] != "v1.23.1" || req["modernc.org/libc"] != "v1.22.5" || req["modernc.org/mathutil"] != "v1.5.0" {
		t.Fatalf("requires = %v", req)
	}
	same := map[string]string{"modernc.org/sqlite": "v1.23.1", "modernc.org/libc": "v1.22.5"}
	if m := mismatches(same, req); len(m) != 0 {
		t.Errorf("same versions: %v, want none", m)
	}
	raised := map[string]string{"modernc.org/sqlite": "v1.29.0", "modernc.org/libc": "v1.22.5"}
	if m := mismatches(raised, req); len(m) != 1 || !strings.Contains(m[0], "v1.29.0") {
		t.Errorf("sqlite raised alone: %v, want one mismatch naming v1.29.0", m)
	}
	if m := mismatches(same, map[string]string{"modernc.org/sqlite": "v1.23.1"}); len(m) != 1 {
		t.Errorf("libc not required by the driver: %v, want one mismatch", m)
	}
}

// mismatches lists each pinned module whose linked version is not the one
// required.
func mismatches(linked, required map[string]string) []string {
	var out []string
	for _, p := range pinned {
		if linked[p] == "" || linked[p] != required[p] {
			out = append(out, fmt.Sprintf("%s %s is linked, but %s requires %q: pin the driver's version in go.mod",
				p, linked[p], driver, required[p]))
		}
	}
	return out
}

// requires returns the modules a go.mod requires, with their versions.
func requires(gomod []byte) map[string]string {
	out := map[string]string{}
	block := false
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			block = true
		case block && len(f) == 1 && f[0] == ")":
			block = false
		case block && len(f) == 2:
			out[f[0]] = f[1]
		case !block && len(f) == 3 && f[0] == "require":
			out[f[1]] = f[2]
		}
	}
	return out
}
