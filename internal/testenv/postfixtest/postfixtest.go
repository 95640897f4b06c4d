// Package postfixtest runs a throwaway Postfix (Debian's package) on
// loopback for the integration tests of the replies: it accepts mail from
// 127.0.0.1 for any address and delivers everything into one local Maildir.
// Tests using it are skipped unless LOHIBOT_TEST_POSTFIX=1; it needs root
// (Postfix's queue belongs to the postfix user).
package postfixtest

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Postfix is a running instance.
type Postfix struct {
	// Addr is the HOST:PORT of its smtpd (plaintext, no authentication,
	// mail accepted from loopback only).
	Addr string
	// Maildir receives every delivered message (new/ holds them).
	Maildir string
	dir     string
}

// Hostname is the name Postfix gives itself (myhostname): the "by" of the
// Received header it adds, and the authserv-id of OpenDKIM's results.
const Hostname = "mx.lohibot.test"

// Options configures StartWith. A nil *Options is the zero value.
type Options struct {
	// DKIMKeys, when not nil, puts OpenDKIM (Debian's opendkim) in front
	// of smtpd as a verifying milter, as a receiving MX is set up: it adds
	// an Authentication-Results header with authserv-id Hostname, and
	// removes those with that id that came with the message. It reads the
	// public keys from this map (selector._domainkey.domain -> the TXT
	// record, "v=DKIM1; k=rsa; p=...") instead of DNS.
	DKIMKeys map[string]string
}

// Start starts Postfix and stops it when the test ends. It skips the test
// when LOHIBOT_TEST_POSTFIX is not 1, and fails it when Postfix cannot run.
func Start(t testing.TB) *Postfix {
	t.Helper()
	return StartWith(t, nil)
}

// StartWith is Start with options.
func StartWith(t testing.TB, opts *Options) *Postfix {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if os.Getenv("LOHIBOT_TEST_POSTFIX") != "1" {
		t.Skip("set LOHIBOT_TEST_POSTFIX=1 to run the tests against a real Postfix")
	}
	if os.Geteuid() != 0 {
		t.Skip("Postfix needs root for its queue")
	}
	if _, err := exec.LookPath("postfix"); err != nil {
		t.Fatalf("LOHIBOT_TEST_POSTFIX=1 but postfix is not installed: %v", err)
	}
	pf, err := user.Lookup("postfix")
	if err != nil {
		t.Fatalf("no postfix user: %v", err)
	}
	uid, _ := strconv.Atoi(pf.Uid)
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	nuid, _ := strconv.Atoi(nobody.Uid)
	ngid, _ := strconv.Atoi(nobody.Gid)

	// Postfix wants short paths it can own; t.TempDir's is fine once
	// opened to others.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		_ = os.Chmod(d, 0o755)
	}
	p := &Postfix{dir: dir, Maildir: filepath.Join(dir, "mail", "inbox")}
	for _, sub := range []string{"conf", "queue", "data", "mail"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(filepath.Join(dir, "data"), uid, -1); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(dir, "mail"), nuid, ngid); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	p.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	main := fmt.Sprintf(`compatibility_level = 3.6
queue_directory = %[1]s/queue
data_directory = %[1]s/data
command_directory = /usr/sbin
daemon_directory = /usr/lib/postfix/sbin
shlib_directory = /usr/lib/postfix
meta_directory = /etc/postfix
mail_owner = postfix
setgid_group = postdrop
inet_interfaces = loopback-only
inet_protocols = ipv4
myhostname = %[4]s
mydestination =
mynetworks = 127.0.0.0/8
relay_domains =
smtpd_relay_restrictions = permit_mynetworks, reject
virtual_mailbox_domains = static:all
virtual_mailbox_base = %[1]s/mail
virtual_mailbox_maps = static:inbox/
virtual_uid_maps = static:%[2]d
virtual_gid_maps = static:%[3]d
maillog_file = %[1]s/maillog
maillog_file_prefixes = %[1]s
syslog_name = postfix-lohibot-test
`, dir, nuid, ngid, Hostname)
	if opts.DKIMKeys != nil {
		main += fmt.Sprintf("smtpd_milters = inet:127.0.0.1:%d\nmilter_default_action = tempfail\n", startOpenDKIM(t, dir, opts.DKIMKeys))
	}
	if err := os.WriteFile(filepath.Join(dir, "conf", "main.cf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	master, err := os.ReadFile("/etc/postfix/master.cf")
	if err != nil {
		t.Fatal(err)
	}
	smtpLine := regexp.MustCompile(`(?m)^smtp\s+inet\s.*$`)
	if !smtpLine.Match(master) {
		t.Fatal("no smtp inet service in /etc/postfix/master.cf")
	}
	master = smtpLine.ReplaceAll(master, []byte(fmt.Sprintf("%d inet n - n - - smtpd", port)))
	if err := os.WriteFile(filepath.Join(dir, "conf", "master.cf"), master, 0o644); err != nil {
		t.Fatal(err)
	}
	// The queue folders "postfix check" would create (it takes seconds).
	q := filepath.Join(dir, "queue")
	for _, d := range []string{"active", "bounce", "corrupt", "defer", "deferred", "flush", "hold", "incoming", "private", "saved", "trace", "maildrop", "public", "pid"} {
		if err := os.MkdirAll(filepath.Join(q, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	postdrop, err := user.LookupGroup("postdrop")
	if err != nil {
		t.Fatal(err)
	}
	pdgid, _ := strconv.Atoi(postdrop.Gid)
	for _, d := range []string{"active", "bounce", "corrupt", "defer", "deferred", "flush", "hold", "incoming", "private", "saved", "trace"} {
		if err := os.Chown(filepath.Join(q, d), uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	for d, mode := range map[string]os.FileMode{"maildrop": 0o730, "public": 0o710} {
		if err := os.Chown(filepath.Join(q, d), uid, pdgid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(q, d), mode); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chmod(filepath.Join(q, "pid"), 0o755)

	// master in the foreground, in its own process group (on SIGTERM it
	// kills its group).
	conf := filepath.Join(dir, "conf")
	cmd := exec.Command("/usr/lib/postfix/sbin/master", "-c", conf, "-d")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("postfix master: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", p.Addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("postfix does not listen on %s: %v\n%s", p.Addr, err, p.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// Log returns Postfix's log so far, for failure messages.
func (p *Postfix) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "maillog"))
	return string(b)
}

// Delivered returns the messages delivered so far, by file name order.
func (p *Postfix) Delivered(t testing.TB) [][]byte {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(p.Maildir, "new"))
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(p.Maildir, "new", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// QueueEmpty reports whether Postfix's queue holds no message: every
// message it accepted was delivered (or bounced, and the bounce delivered).
func (p *Postfix) QueueEmpty(t testing.TB) bool {
	t.Helper()
	n := 0
	for _, d := range []string{"maildrop", "incoming", "active", "deferred", "hold"} {
		err := filepath.WalkDir(filepath.Join(p.dir, "queue", d), func(_ string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.Type().IsRegular() {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n == 0
}

// WaitDelivered waits until at least n messages were delivered, or fails
// the test after timeout.
func (p *Postfix) WaitDelivered(t testing.TB, n int, timeout time.Duration) [][]byte {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := p.Delivered(t)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages delivered after %s, want %d; postfix log:\n%s", len(got), timeout, n, p.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startOpenDKIM runs opendkim in verifying mode on a free loopback port,
// with its files under dir, until the test ends, and returns the port.
func startOpenDKIM(t testing.TB, dir string, keys map[string]string) int {
	t.Helper()
	bin, err := exec.LookPath("opendkim")
	if err != nil {
		t.Fatalf("opendkim is not installed (apt install opendkim): %v", err)
	}
	odk := filepath.Join(dir, "opendkim")
	if err := os.MkdirAll(odk, 0o755); err != nil {
		t.Fatal(err)
	}
	var kb strings.Builder
	for name, rec := range keys {
		fmt.Fprintf(&kb, "%s %s\n", name, rec)
	}
	if err := os.WriteFile(filepath.Join(odk, "keys"), []byte(kb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := fmt.Sprintf(`Mode v
Socket inet:%d@127.0.0.1
PidFile %s/opendkim.pid
AuthservID %s
TestPublicKeys %s/keys
Syslog no
UserID opendkim
`, port, odk, Hostname, odk)
	if err := os.WriteFile(filepath.Join(odk, "opendkim.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", "-x", filepath.Join(odk, "opendkim.conf"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf, err := os.Create(filepath.Join(odk, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	logText := func() string {
		b, _ := os.ReadFile(logf.Name())
		return string(b)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("opendkim: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return port
		}
		select {
		case <-done:
			t.Fatalf("opendkim exited: %s", logText())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("opendkim does not listen on %s: %v\n%s", addr, err, logText())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
