package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/translog"
	"github.com/lohisoft/lohibot/webbotauth"
)

// watchedLog is a serve daemon publishing its log over HTTP.
type watchedLog struct {
	srv *serve.Server
	url string // the log's base URL
}

// exclude excludes n sites named prefix0.example... and publishes a
// checkpoint.
func (l *watchedLog) exclude(t *testing.T, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	var sites []string
	for i := range n {
		sites = append(sites, fmt.Sprintf("%s%d.example", prefix, i))
	}
	if _, err := policy.New(l.srv.Store(), nil).Exclude(ctx, sites, policy.Change{Actor: "anna", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	if err := l.srv.PublishCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
}

// startLog runs serve on a new database with the log key in keyFile.
func startLog(t *testing.T, keyFile string) *watchedLog {
	t.Helper()
	dsn := dbtest.DSN(t, "sqlite")
	cfg := serve.DefaultConfig()
	cfg.DB, cfg.HTTP, cfg.Crawler.Enabled = dsn, "127.0.0.1:0", false
	cfg.Log.KeyFile = keyFile
	srv, err := serve.New(context.Background(), cfg, &serve.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &watchedLog{srv: srv, url: ts.URL + "/bot/log"}
}

func newLogKeyFile(t *testing.T) (path, vkey string) {
	t.Helper()
	priv, err := webbotauth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "log.pem")
	if err := webbotauth.WritePrivateKey(path, priv); err != nil {
		t.Fatal(err)
	}
	k, err := translog.NewKey(priv, translog.DefaultOrigin)
	if err != nil {
		t.Fatal(err)
	}
	return path, k.VerifierKey()
}

func TestLogWatch(t *testing.T) {
	keyFile, vkey := newLogKeyFile(t)
	state := filepath.Join(t.TempDir(), "watch.state")
	a := startLog(t, keyFile)
	a.exclude(t, "a", 5)

	r := runCLI(t, nil, "log", "watch", a.url, "--state", state, "--vkey", vkey)
	if r.code != 0 || !strings.Contains(r.stdout, "checkpoint of 5 leaves") || !strings.Contains(r.stdout, "first") {
		t.Fatalf("first watch: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	a.exclude(t, "b", 300)
	r = runCLI(t, nil, "log", "watch", a.url, "--state", state, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"size":305`) || !strings.Contains(r.stdout, `"previous_size":5`) {
		t.Fatalf("watch after growth (key from the state): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	a.exclude(t, "c", 3)
	if r = runCLI(t, nil, "log", "watch", a.url, "--state", state); r.code != 0 || !strings.Contains(r.stdout, "extends the 305 leaves") {
		t.Fatalf("watch across a full tile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	accepted, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}

	// The same key signs a different history: a fork, and a rollback.
	fork := startLog(t, keyFile)
	fork.exclude(t, "x", 320)
	rollback := startLog(t, keyFile)
	rollback.exclude(t, "a", 5)
	other, _ := newLogKeyFile(t)
	stranger := startLog(t, other)
	stranger.exclude(t, "a", 400)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"fork", fork.url, "fork"},
		{"rollback", rollback.url, "rollback"},
		{"another key", stranger.url, "signature"},
	} {
		r := runCLI(t, nil, "log", "watch", tc.url, "--state", state)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming %q", tc.name, r.code, r.stderr, tc.want)
		}
		if now, _ := os.ReadFile(state); string(now) != string(accepted) {
			t.Errorf("%s: the state file changed", tc.name)
		}
	}
	// Same size, different root: a fork too.
	same := startLog(t, keyFile)
	same.exclude(t, "z", 308)
	if r := runCLI(t, nil, "log", "watch", same.url, "--state", state); r.code != 1 || !strings.Contains(r.stderr, "fork") {
		t.Errorf("same size, other root: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "log", "watch", a.url, "--state", state); r.code != 0 {
		t.Errorf("the honest log after the refusals: exit %d, %s", r.code, r.stderr)
	}
}

func TestLogWatchUsage(t *testing.T) {
	_, vkey := newLogKeyFile(t)
	_, vkey2 := newLogKeyFile(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "s")
	if err := os.WriteFile(state, []byte(`{"url":"x","vkey":"`+vkey+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "g")
	if err := os.WriteFile(garbage, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"log", "watch", "https://lohisoft.com/bot/log"},                                       // no key, no state
		{"log", "watch", "ftp://lohisoft.com/bot/log", "--vkey", vkey},                         // not http
		{"log", "watch", "https://lohisoft.com/bot/log", "--vkey", "nonsense"},                 // bad key
		{"log", "watch", "https://lohisoft.com/bot/log", "--state", state, "--vkey", vkey2},    // another key
		{"log", "watch", "https://lohisoft.com/bot/log", "--state", garbage},                   // not a state file
		{"log", "watch", "https://lohisoft.com/bot/log", "--state", filepath.Join(dir, "new")}, // first run without a key
		{"log", "watch", "--vkey", vkey},
	} {
		if r := runCLI(t, nil, args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}
