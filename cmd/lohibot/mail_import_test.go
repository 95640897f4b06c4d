package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// TestMailImportFolderRecursive: mail import FOLDER reads the messages in
// its sub-folders too (a mail client's export keeps a folder per mailbox),
// skips hidden ones, and does not follow a link to a folder (here one that
// would loop).
func TestMailImportFolderRecursive(t *testing.T) {
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	dir := filepath.Join(t.TempDir(), "saved")
	put := func(name, testFile string) {
		raw, err := os.ReadFile(mailTestdata(testFile))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("Inbox/exclude-one.eml", "exclude-one.eml")
	put("Inbox/2026/exclude-two.eml", "exclude-two.eml")
	put("Archive/other.eml", "other.eml")
	put(".Trash/reinclude.eml", "reinclude.eml")
	if err := os.Symlink(dir, filepath.Join(dir, "Inbox", "loop")); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, env, "mail", "import", "--json", dir)
	if r.code != 0 {
		t.Fatalf("mail import FOLDER: exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var sources []string
	for _, l := range lines[:len(lines)-1] {
		var it struct {
			Source string `json:"source"`
		}
		if err := json.Unmarshal([]byte(l), &it); err != nil {
			t.Fatalf("mail import --json line %q: %v", l, err)
		}
		rel, _ := filepath.Rel(dir, it.Source)
		sources = append(sources, filepath.ToSlash(rel))
	}
	slices.Sort(sources)
	if want := []string{"Archive/other.eml", "Inbox/2026/exclude-two.eml", "Inbox/exclude-one.eml"}; !slices.Equal(sources, want) {
		t.Errorf("mail import FOLDER read %q, want %q:\n%s", sources, want, r.stdout)
	}
	for _, site := range []string{"bakery-example.com", "garden-example.org"} {
		if r := runCLI(t, env, "exclude", "check", site); r.code != 1 {
			t.Errorf("exclude check %s after importing the folder: exit %d, want 1 (excluded)", site, r.code)
		}
	}

	// A folder whose only messages are in a hidden folder has nothing to
	// import: bad input, as before.
	empty := filepath.Join(t.TempDir(), "only-hidden")
	if err := os.MkdirAll(filepath.Join(empty, ".Trash"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, ".Trash", "m.eml"), []byte("Subject: x\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, env, "mail", "import", empty); r.code != 2 || r.stderr == "" {
		t.Errorf("mail import of a folder with only hidden messages: exit %d, stderr %q; want 2 with a message", r.code, r.stderr)
	}
}

// TestMailImportHostileMaildir: a FIFO in cur/ does not hang mail import,
// and a link in cur/ to /etc/passwd is not stored as a message; the real
// message beside them is.
func TestMailImportHostileMaildir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	msg, err := os.ReadFile(mailTestdata("exclude-one.eml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cur", "1.a:2,S"), msg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "cur", "2.b:2,S"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "cur", "3.c:2,S")); err != nil {
		t.Fatal(err)
	}
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite")}
	done := make(chan cliResult, 1)
	go func() { done <- runCLI(t, env, "mail", "import", "--json", dir) }()
	select {
	case r := <-done:
		if r.code != 0 || strings.Count(r.stdout, `"source"`) != 1 || !strings.Contains(r.stdout, `"excluded":["bakery-example.com"]`) {
			t.Errorf("mail import: exit %d, stdout %s, stderr %s; want the one real message", r.code, r.stdout, r.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("mail import hangs on a FIFO in cur/")
	}
	if r := runCLI(t, env, "mail", "show", "2", "--raw"); strings.Contains(r.stdout, "root:") {
		t.Errorf("/etc/passwd was stored as a message")
	}
}
