package main

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
)

// TestCrawlDiskFull crawls 40 sites into a database on a 6 MB tmpfs that
// fills mid-crawl: the crawl stops, says why, counts the sites it could
// not finish as errors and exits 1. Once there is space again a second
// crawl finishes, right away (taking over the first's leases as they
// expire) or after they expired; the web server's record shows 20 page
// requests per site, one request in flight per host and the gap held
// across the fault, every request it received is in the log, the audit
// passes and SQLite finds the file sound.
func TestCrawlDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crawler processes")
	}
	for _, resume := range []struct {
		name  string
		after time.Duration
	}{{"at once", 0}, {"after the leases expired", 3 * time.Second}} {
		t.Run(resume.name, func(t *testing.T) { crawlDiskFull(t, resume.after) })
	}
}

func crawlDiskFull(t *testing.T, resumeAfter time.Duration) {
	ctx := context.Background()
	mnt := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=6m"); err != nil {
		t.Skipf("tmpfs mount not permitted here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dsn := filepath.Join(mnt, "lohibot.db")

	web, err := testweb.Start(&testweb.Options{Plain: 40, PagesPerSite: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	if r := runCLI(t, nil, "--db", dsn, "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	starts := []string{"--db", dsn, "sites", "add"}
	for _, s := range web.Plain() {
		starts = append(starts, s.StartURL)
	}
	if r := runCLI(t, nil, starts...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// The crawl needs about 6 MB; 2.5 MB of room fills a third of the way.
	filler := filepath.Join(mnt, "filler")
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	if free := int64(st.Bavail) * st.Bsize; free > 2500<<10 {
		if err := os.WriteFile(filler, make([]byte, free-2500<<10), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	const delay = 100 * time.Millisecond
	args := []string{"--db", dsn, "--resolver", web.DNSAddr, "crawl", "--all", "--allow-private",
		"--delay", delay.String(), "--lease-ttl", "2s", "--timeout", "1s"}
	began := time.Now()
	out, err := lohibotProcess(ctx, args...).CombinedOutput()
	took := time.Since(began)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("crawl on a full disk: %v, want exit 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "the disk holding the database is full") {
		t.Errorf("crawl on a full disk does not say the disk is full:\n%s", out)
	}
	failed := strings.Count(string(out), ": failed, error: ")
	m := regexp.MustCompile(`(?m)^\d+ sites? .*, (\d+) errors?$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no summary line:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); failed == 0 || n < failed {
		t.Errorf("summary counts %s errors with %d sites failed, want at least one per failed site:\n%s", m[1], failed, out)
	}
	t.Logf("on a full disk: exit 1 after %v, %d sites failed; %s", took.Round(time.Millisecond), failed, m[0])

	// Space again.
	os.Remove(filler)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=64m"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(resumeAfter)
	began = time.Now()
	if out, err = lohibotProcess(ctx, args...).CombinedOutput(); err != nil {
		t.Fatalf("crawl resumed with space again: %v\n%s", err, out)
	}
	t.Logf("resumed: exit 0 after %v; %s", time.Since(began).Round(time.Millisecond), lastLine(string(out)))

	hits := web.Hits()
	pages := web.PageHitsPerSite(hits)
	for _, s := range web.Plain() {
		if pages[s.Name] != 20 {
			t.Errorf("%s: %d page requests (the web server's record), want 20", s.Name, pages[s.Name])
		}
	}
	web.CheckPolite(t, hits, delay)
	if r := runCLI(t, nil, "--db", dsn, "audit"); r.code != 0 {
		t.Errorf("audit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	store := dbtest.OpenDSN(t, dsn)
	var check string
	if err := dbtest.SQL(store).QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("PRAGMA integrity_check = %q, %v; want ok", check, err)
	}
	// Every request the server received is in the log (withdrawn rows
	// were never sent).
	var rows []db.Request
	if err := dbtest.Gorm(store).Where("outcome IS NULL OR outcome <> ?", db.OutcomeWithdrawn).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	logged := map[string]int{}
	for _, r := range rows {
		if u, err := url.Parse(r.URL); err == nil {
			logged[u.Hostname()+u.RequestURI()]++
		}
	}
	for _, h := range hits {
		key := h.Host + h.Path
		if logged[key] == 0 {
			t.Errorf("the server received %s%s, which the log does not hold", h.Host, h.Path)
			continue
		}
		logged[key]--
	}
}

// lastLine is the last line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
