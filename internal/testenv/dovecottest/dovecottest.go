// Package dovecottest runs a private Dovecot IMAP server for integration
// tests: its own configuration, Maildir, users and self-signed certificate
// under a temporary folder, listening on loopback ports (IMAP with STARTTLS,
// and IMAPS). Tests using it are skipped unless LOHIBOT_TEST_DOVECOT is set
// (./test.sh sets it when dovecot is installed).
//
// It needs Debian's dovecot-imapd (2.3) and root: Dovecot's login process
// runs as dovenull and mail is owned by nobody.
package dovecottest

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Env is the environment variable that enables Dovecot tests.
const Env = "LOHIBOT_TEST_DOVECOT"

// The test account.
const (
	User     = "bot@test"
	Password = "secret"
)

// Server is a running private Dovecot. Its methods fail the test on error.
type Server struct {
	// Dir holds the configuration, the Maildirs, the certificate and the log.
	Dir string
	// Config is the configuration file, for doveadm -c.
	Config string
	// IMAPAddr is the plain IMAP listener (STARTTLS available), IMAPSAddr
	// the implicit TLS one; both 127.0.0.1:PORT.
	IMAPAddr, IMAPSAddr string
	// CertPEM is the server's self-signed certificate.
	CertPEM []byte

	t testing.TB

	mu  sync.Mutex // guards cmd, exited and seq
	seq int        // numbers Maildir deliveries
	cmd *exec.Cmd
	// exited is closed when the running master exits.
	exited chan struct{}
}

// Start starts Dovecot and waits until it accepts IMAP connections; it is
// stopped when the test ends. It skips the test when LOHIBOT_TEST_DOVECOT is
// not set, and fails it when Dovecot cannot run.
func Start(t testing.TB) *Server {
	t.Helper()
	if os.Getenv(Env) == "" {
		t.Skip(Env + " not set")
	}
	if _, err := exec.LookPath("dovecot"); err != nil {
		t.Fatalf("dovecottest: %s is set but dovecot is not installed", Env)
	}
	if os.Geteuid() != 0 {
		t.Skip("dovecottest: needs root (Dovecot's login and mail users)")
	}
	dir, err := os.MkdirTemp("", "lohibot-dovecot-")
	if err != nil {
		t.Fatal(err)
	}
	// nobody and dovenull must be able to enter; mail is written by nobody.
	mustChmod(t, dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{Dir: dir, Config: filepath.Join(dir, "dovecot.conf"), t: t}
	for _, sub := range []string{"run", "state", "mail"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustChmod(t, filepath.Join(dir, "mail"), 0o777)
	s.writeCert()
	if err := os.WriteFile(filepath.Join(dir, "users"), []byte(User+":{PLAIN}"+Password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.IMAPAddr = freeAddr(t)
	s.IMAPSAddr = freeAddr(t)
	s.writeConfig()
	s.Start()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			s.dumpLog()
		}
	})
	return s
}

func mustChmod(t testing.TB, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// freeAddr returns a loopback address with a port that was free just now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func (s *Server) writeCert() {
	t := s.t
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	s.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(filepath.Join(s.Dir, "cert.pem"), s.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "key.pem"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) writeConfig() {
	d := s.Dir
	conf := `# lohibot test Dovecot (2.3 syntax)
base_dir = ` + d + `/run
state_dir = ` + d + `/state
log_path = ` + d + `/dovecot.log
protocols = imap
listen = 127.0.0.1
default_login_user = dovenull
default_internal_user = dovecot
disable_plaintext_auth = no
auth_mechanisms = plain login
ssl = yes
ssl_cert = <` + d + `/cert.pem
ssl_key = <` + d + `/key.pem
mail_location = maildir:` + d + `/mail/%d/%n/Maildir
namespace inbox {
  inbox = yes
  separator = /
}
passdb {
  driver = passwd-file
  args = ` + d + `/users
}
userdb {
  driver = static
  args = uid=nobody gid=nogroup home=` + d + `/mail/%d/%n
}
service imap-login {
  inet_listener imap {
    port = ` + port(s.IMAPAddr) + `
  }
  inet_listener imaps {
    port = ` + port(s.IMAPSAddr) + `
    ssl = yes
  }
}
`
	if err := os.WriteFile(s.Config, []byte(conf), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// Start starts the master process (again, after Stop) on the same ports and
// waits until it greets IMAP clients.
func (s *Server) Start() {
	t := s.t
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 20; attempt++ {
		cmd := exec.Command("dovecot", "-F", "-c", s.Config)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("dovecottest: start: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		if err := waitReady(s.IMAPAddr, exited, 10*time.Second); err != nil {
			lastErr = fmt.Errorf("%w; output: %s", err, out.String())
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			time.Sleep(100 * time.Millisecond) // the port may still be held
			continue
		}
		s.mu.Lock()
		s.cmd, s.exited = cmd, exited
		s.mu.Unlock()
		return
	}
	s.dumpLog()
	t.Fatalf("dovecottest: dovecot did not start: %v", lastErr)
}

// waitReady waits until the server at addr sends an IMAP greeting that
// says it is ready (not "Waiting for authentication process").
func waitReady(addr string, exited <-chan struct{}, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("dovecot exited")
		default:
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.SetDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if strings.HasPrefix(line, "* OK") && !strings.Contains(line, "Waiting") {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no IMAP greeting on %s within %v", addr, within)
}

// Stop stops the server and waits until every process of it is gone: the
// connected clients are kicked (doveadm kick), the master gets SIGTERM, and
// whatever is left after a few seconds is killed. Stopping a stopped server
// does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd, s.exited = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	// Without the kick, the master waits about 10 s for idling clients.
	exec.Command("doveadm", "-c", s.Config, "kick", "*").Run()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
	}
	// The master's process group: the master and every child it started.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// Deliver saves a message into mailbox ("" means INBOX) as the mail server
// would on delivery: with doveadm save while the server runs, or, while it
// is stopped, by writing it into the INBOX's Maildir (tmp/, then renamed
// into new/) as a local delivery agent would.
func (s *Server) Deliver(raw []byte, mailbox string) {
	s.t.Helper()
	s.mu.Lock()
	running := s.cmd != nil
	s.mu.Unlock()
	if !running {
		if mailbox != "" && mailbox != "INBOX" {
			s.t.Fatalf("dovecottest: delivery to %s while stopped: only INBOX", mailbox)
		}
		s.deliverMaildir(raw)
		return
	}
	args := []string{"-c", s.Config, "save", "-u", User}
	if mailbox != "" {
		args = append(args, "-m", mailbox)
	}
	cmd := exec.Command("doveadm", args...)
	cmd.Stdin = bytes.NewReader(raw)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("dovecottest: doveadm save: %v: %s", err, out)
	}
}

func (s *Server) deliverMaildir(raw []byte) {
	t := s.t
	t.Helper()
	md := filepath.Join(s.Dir, "mail", "test", "bot", "Maildir")
	for _, sub := range []string{"tmp", "new", "cur"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	s.seq++
	name := fmt.Sprintf("%d.M%dP%dQ%d.lohibot-test", time.Now().Unix(), time.Now().Nanosecond()/1000, os.Getpid(), s.seq)
	s.mu.Unlock()
	tmp := filepath.Join(md, "tmp", name)
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if u, err := user.Lookup("nobody"); err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(tmp, uid, gid)
	}
	if err := os.Rename(tmp, filepath.Join(md, "new", name)); err != nil {
		t.Fatal(err)
	}
}

// Count returns the number of messages in mailbox, or -1 when it does not
// exist.
func (s *Server) Count(mailbox string) int {
	s.t.Helper()
	out, err := exec.Command("doveadm", "-c", s.Config, "-f", "flow", "mailbox", "status", "-u", User, "messages", mailbox).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("exist")) {
			return -1
		}
		s.t.Fatalf("dovecottest: doveadm mailbox status %s: %v: %s", mailbox, err, out)
	}
	_, v, ok := strings.Cut(strings.TrimSpace(string(out)), "messages=")
	if !ok {
		s.t.Fatalf("dovecottest: doveadm mailbox status %s: unexpected %q", mailbox, out)
	}
	n, err := strconv.Atoi(strings.Fields(v)[0])
	if err != nil {
		s.t.Fatalf("dovecottest: doveadm mailbox status %s: %q", mailbox, out)
	}
	return n
}

// URL returns the watcher URL of the test mailbox: imaps:// on the IMAPS
// port when tls, else imap:// (STARTTLS) on the IMAP port.
func (s *Server) URL(tls bool) string {
	if tls {
		return "imaps://" + User + "@" + s.IMAPSAddr + "/INBOX"
	}
	return "imap://" + User + "@" + s.IMAPAddr + "/INBOX"
}

func (s *Server) dumpLog() {
	b, err := os.ReadFile(filepath.Join(s.Dir, "dovecot.log"))
	if err == nil && len(b) > 0 {
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		s.t.Logf("dovecot.log (tail):\n%s", b)
	}
}
