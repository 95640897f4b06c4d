package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServeCheck checks the order of the configuration's layers: the
// defaults, the file, the environment, the flags.
func TestServeCheck(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lohibot.toml")
	writeFile(t, conf, `
http = "127.0.0.1:7001"
db = "`+filepath.Join(dir, "file.db")+`"
[crawler]
delay = "8s"
max_sites_parallel = 4
[page]
budget = 21
`)
	pw := filepath.Join(dir, "pw")
	writeFile(t, pw, "hunter2\n")
	env := []string{
		"LOHIBOT_CRAWLER_MAX_SITES_PARALLEL=6",
		"LOHIBOT_PAGE_BUDGET=22",
		"LOHIBOT_MAIL_IMAP=imaps://bot@127.0.0.1:10993/INBOX",
		"LOHIBOT_MAIL_PASSWORD_FILE=" + pw,
		"LOHIBOT_DB=" + filepath.Join(dir, "env.db"),
	}
	r := runCLI(t, env, "serve", "--config", conf, "--http", "127.0.0.1:7002", "--check")
	if r.code != 0 {
		t.Fatalf("serve --check: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, want := range []string{
		`http = "127.0.0.1:7002"`,                     // the flag beats the file
		`db = "` + filepath.Join(dir, "env.db") + `"`, // the environment beats the file
		`delay = "8s"`,                                // the file beats the default
		"max_sites_parallel = 6",                      // the environment beats the file
		"budget = 22",                                 // the environment beats the file
		`imap = "imaps://bot@127.0.0.1:10993/INBOX"`,  // the environment alone
		`recrawl_after = "168h0m0s"`,                  // the default
		`password_file = "` + pw + `"`,                // the file's name is shown
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("serve --check lacks %s:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "hunter2") {
		t.Errorf("serve --check prints the password:\n%s", r.stdout)
	}
	// --db beats the environment.
	r = runCLI(t, env, "serve", "--config", conf, "--db", filepath.Join(dir, "flag.db"), "--check")
	if r.code != 0 || !strings.Contains(r.stdout, `db = "`+filepath.Join(dir, "flag.db")+`"`) {
		t.Errorf("serve --db ... --check: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// LOHIBOT_CONFIG names the file when --config is not given.
	r = runCLI(t, []string{"LOHIBOT_CONFIG=" + conf}, "serve", "--check")
	if r.code != 0 || !strings.Contains(r.stdout, `http = "127.0.0.1:7001"`) {
		t.Errorf("LOHIBOT_CONFIG=... serve --check: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestServeBadConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lohibot.toml")
	writeFile(t, conf, "[mail]\npassword = \"hunter2\"\n")
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"secret in the file", nil, []string{"serve", "--config", conf, "--check"}, "secrets are never read"},
		{"missing file", nil, []string{"serve", "--config", filepath.Join(dir, "none.toml"), "--check"}, "no such file"},
		{"budget below the crawler's", []string{"LOHIBOT_PAGE_BUDGET=5"}, []string{"serve", "--check"}, "page.budget"},
		{"bad duration", []string{"LOHIBOT_CRAWLER_DELAY=5"}, []string{"serve", "--check"}, "LOHIBOT_CRAWLER_DELAY"},
		{"imap without password", []string{"LOHIBOT_MAIL_IMAP=imaps://bot@127.0.0.1/INBOX"}, []string{"serve", "--check"}, "no IMAP password"},
		{"bad http flag", nil, []string{"serve", "--http", "nonsense", "--check"}, "HOST:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, tt.args...)
			if r.code != exitBadInput || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("lohibot %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
			}
		})
	}
}

// freePort returns a loopback address nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeSignals runs serve as a process: SIGHUP reloads the
// configuration file and the page shows it at once; SIGTERM stops it with
// exit 0.
func TestServeSignals(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lohibot.toml")
	writeFile(t, conf, "[crawler]\nenabled = false\n[page]\nbudget = 20\n")
	addr := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := lohibotProcess(ctx, "serve", "--config", conf, "--db", filepath.Join(dir, "l.db"), "--http", addr)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	page := func() string {
		resp, err := http.Get("http://" + addr + "/bot?lang=en")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; stderr:\n%s", what, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the page with budget 20", func() bool { return strings.Contains(page(), "At most 20 pages per site") })

	writeFile(t, conf, "[crawler]\nenabled = false\n[page]\nbudget = 35\ncontact = \"optout@lohisoft.com\"\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the page with budget 35 after SIGHUP", func() bool {
		p := page()
		return strings.Contains(p, "At most 35 pages per site") && strings.Contains(p, "optout@lohisoft.com")
	})

	// A broken file on SIGHUP keeps the last good configuration.
	writeFile(t, conf, "[page]\nbudget = \"many\"\n")
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("the failed reload in the log", func() bool { return strings.Contains(stderr.String(), "configuration not reloaded") })
	if !strings.Contains(page(), "At most 35 pages per site") {
		t.Errorf("a failed reload changed the page")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not stop within 20 s of SIGTERM; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "msg=stopped") {
		t.Errorf("serve did not log its stop:\n%s", stderr.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
