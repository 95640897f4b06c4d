// Package pgcluster runs a private PostgreSQL cluster for a test that must
// stop and start its database server (a restart under a running crawl),
// which the shared test server must never be. The cluster lives in a
// temporary folder, listens on a free loopback port, runs as the system's
// postgres account (started through su, so the test must run as root) and
// is removed when the test ends. A test on a machine without what it needs
// is skipped, saying why.
package pgcluster

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// account is the system user the server runs as: the server refuses to
// run as root.
const account = "postgres"

// Cluster is a private PostgreSQL cluster. Its methods fail the test on an
// error; they are not safe for concurrent use.
type Cluster struct {
	// DSN names the cluster's postgres database, as lohibot's --db takes
	// it.
	DSN  string
	t    testing.TB
	bin  string // the server's binaries
	dir  string // the cluster's folder: data, socket and log
	port int
	up   bool
}

// Start makes a cluster with initdb and starts it, and stops and removes
// it when the test ends. It skips the test when this machine cannot run
// one (not root, no server binaries, no server account).
func Start(t testing.TB) *Cluster {
	t.Helper()
	bin, why := binaries()
	if why != "" {
		t.Skipf("private database cluster unavailable: %s", why)
	}
	dir, err := os.MkdirTemp("", "lohibot-cluster")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := user.Lookup(account)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, bin: bin, dir: dir, port: freePort(t)}
	c.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	t.Cleanup(func() {
		if c.up {
			c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
		}
		os.RemoveAll(dir)
	})
	c.run("initdb", "-D", c.data(), "-A", "trust", "-U", "postgres", "--no-sync")
	c.StartServer()
	return c
}

// binaries returns the folder of the newest server's binaries, or why
// there is none to use.
func binaries() (string, string) {
	if os.Geteuid() != 0 {
		return "", "the test must run as root to start a server under its own account"
	}
	if _, err := user.Lookup(account); err != nil {
		return "", "no system account for the server"
	}
	if _, err := exec.LookPath("su"); err != nil {
		return "", "no su command"
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) < version(dirs[j]) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if st, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil && st.Mode()&0o111 != 0 {
			return dirs[i], ""
		}
	}
	return "", "no server binaries on this machine"
}

// version is the major version in a binaries folder's path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// freePort returns a loopback TCP port no one listens on now.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// run runs a server binary as the server's account, failing the test when
// it fails. Its output goes to a file, not a pipe: a server started keeps
// what it inherits open.
func (c *Cluster) run(name string, args ...string) {
	c.t.Helper()
	line := filepath.Join(c.bin, name)
	for _, a := range args {
		line += " '" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	out, err := os.CreateTemp("", "lohibot-cluster-out")
	if err != nil {
		c.t.Fatal(err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := exec.Command("su", account, "-s", "/bin/sh", "-c", line)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(out.Name())
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("pgcluster: %s: %v\n%s\n--- server log:\n%s", name, err, b, tail(log))
	}
}

// tail is the last 2 KB of a log.
func tail(b []byte) []byte {
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return bytes.TrimSpace(b)
}

// StartServer starts the cluster's server and returns once it accepts
// connections.
func (c *Cluster) StartServer() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", c.port, c.dir)
	c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-o", opts, "start")
	c.up = true
}

// Stop stops the server as `pg_ctl stop -m fast` does (every session
// terminated: SQLSTATE 57P01) and returns once it is down.
func (c *Cluster) Stop() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
	c.up = false
}

// Outage is when a Restart's stop began, when the server was down (the
// stop returned: no session can commit after it), when its start began
// (it accepts connections from some moment after) and when the start
// returned (it is back).
type Outage struct {
	Stopping, Stopped, Starting, Back time.Time
}

// Restart stops the server (fast), keeps it down for down, and starts it
// again.
func (c *Cluster) Restart(down time.Duration) Outage {
	c.t.Helper()
	var o Outage
	o.Stopping = time.Now()
	c.Stop()
	o.Stopped = time.Now()
	time.Sleep(down)
	o.Starting = time.Now()
	c.StartServer()
	o.Back = time.Now()
	return o
}
