package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/localweb/localdns"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// identityDNS serves the PTR and A records of the verify tests.
func identityDNS(t *testing.T) string {
	t.Helper()
	srv, err := localdns.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	for ip, name := range map[string]string{"79.139.58.98": "crawler1.bot.lohisoft.com", "79.139.58.121": "crawler2.bot.lohisoft.com",
		"203.0.113.11": "www.lohisoft.com", "203.0.113.12": "bot.lohisoft.com.evil.example"} {
		srv.AddPTR(ip, name)
		srv.AddA(name, ip)
	}
	srv.AddPTR("203.0.113.10", "crawler1.bot.lohisoft.com") // claims our name, A points elsewhere
	srv.ServFail("203.0.113.15")
	return srv.Addr
}

// verifyJSON is one line of verify --json.
type verifyJSON struct {
	IP        string   `json:"ip"`
	Verdict   string   `json:"verdict"`
	Genuine   bool     `json:"genuine"`
	Hostnames []string `json:"hostnames"`
	Reason    string   `json:"reason"`
}

func decodeLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var list []T
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v T
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		list = append(list, v)
	}
	return list
}

func TestVerifyCommand(t *testing.T) {
	dns := identityDNS(t)
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "unused.db")
	tests := []struct {
		name    string
		args    []string
		code    int
		verdict []string // per address, for --json
		stdout  string   // a substring of the text output
	}{
		{"ours", []string{"verify", "79.139.58.98", "79.139.58.121", "--json"}, 0, []string{"genuine", "genuine"}, ""},
		{"ours, text", []string{"verify", "79.139.58.98"}, 0, nil, "crawler1.bot.lohisoft.com resolves back to 79.139.58.98"},
		{"mapped IPv6 form of ours", []string{"verify", "--json", "::ffff:79.139.58.121"}, 0, []string{"genuine"}, ""},
		{"one impostor", []string{"verify", "79.139.58.98", "203.0.113.10", "--json"}, 1, []string{"genuine", "impostor"}, ""},
		{"forged PTR, text", []string{"verify", "203.0.113.10"}, 1, nil, "impostor"},
		{"bare lohisoft.com", []string{"verify", "203.0.113.11", "--json"}, 1, []string{"impostor"}, ""},
		{"look-alike", []string{"verify", "203.0.113.12", "--json"}, 1, []string{"impostor"}, ""},
		{"no PTR", []string{"verify", "203.0.113.14", "--json"}, 1, []string{"impostor"}, ""},
		{"IPv6", []string{"verify", "2001:db8::1", "--json"}, 1, []string{"impostor"}, ""},
		{"SERVFAIL, text", []string{"verify", "203.0.113.15"}, 1, nil, "unverifiable"},
		{"SERVFAIL", []string{"verify", "203.0.113.15", "--json"}, 1, []string{"unverifiable"}, ""},
		{"not an IP", []string{"verify", "79.139.58.98", "crawler1.bot.lohisoft.com"}, 2, nil, ""},
		{"no argument", []string{"verify"}, 2, nil, ""},
		{"bad timeout", []string{"verify", "79.139.58.98", "--timeout", "0s"}, 2, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--resolver", dns, "--db", dsn}, tt.args...)
			res := runCLI(t, nil, args...)
			if res.code != tt.code {
				t.Fatalf("lohibot %v: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, res.code, tt.code, res.stdout, res.stderr)
			}
			if tt.stdout != "" && !strings.Contains(res.stdout, tt.stdout) {
				t.Errorf("lohibot %v printed %q, want it to contain %q", tt.args, res.stdout, tt.stdout)
			}
			if tt.verdict == nil {
				return
			}
			got := decodeLines[verifyJSON](t, res.stdout)
			if len(got) != len(tt.verdict) {
				t.Fatalf("lohibot %v printed %d JSON lines, want %d: %s", tt.args, len(got), len(tt.verdict), res.stdout)
			}
			for i, r := range got {
				genuine := tt.verdict[i] == "genuine"
				if r.Verdict != tt.verdict[i] || r.Genuine != genuine || r.Reason == "" || r.Hostnames == nil {
					t.Errorf("lohibot %v line %d = %+v, want verdict %q, genuine %v, with a reason and hostnames", tt.args, i, r, tt.verdict[i], genuine)
				}
			}
		})
	}
	if res := runCLI(t, nil, "--resolver", "no-port", "verify", "79.139.58.98"); res.code != 2 {
		t.Errorf("lohibot --resolver no-port verify: exit %d, want 2", res.code)
	}
}

// TestVerifyAsksOnlyTheResolver: with --resolver, the PTR and A lookups of
// an address listed in /etc/hosts (127.0.0.1 is "localhost" there) go to
// the given server, and only to it; without --resolver the system's
// resolver answers, /etc/hosts included.
func TestVerifyAsksOnlyTheResolver(t *testing.T) {
	srv, err := localdns.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.AddPTR("127.0.0.1", "crawler5.bot.lohisoft.com")
	srv.AddA("crawler5.bot.lohisoft.com", "127.0.0.1")
	empty, err := localdns.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "unused.db")

	res := runCLI(t, nil, "--db", dsn, "--resolver", srv.Addr, "verify", "127.0.0.1", "--json")
	got := decodeLines[verifyJSON](t, res.stdout)
	if res.code != 0 || len(got) != 1 || got[0].Verdict != "genuine" || !slices.Equal(got[0].Hostnames, []string{"crawler5.bot.lohisoft.com"}) {
		t.Errorf("verify 127.0.0.1 --resolver (PTR crawler5.bot.lohisoft.com): exit %d, %+v; want genuine with that name\nstderr: %s", res.code, got, res.stderr)
	}
	res = runCLI(t, nil, "--db", dsn, "--resolver", srv.Addr, "verify", "127.0.0.1")
	if want := "crawler5.bot.lohisoft.com resolves back to 127.0.0.1"; res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Errorf("verify 127.0.0.1 --resolver: exit %d, printed %q; want it to say %q", res.code, res.stdout, want)
	}

	res = runCLI(t, nil, "--db", dsn, "--resolver", empty.Addr, "verify", "127.0.0.1", "--json")
	got = decodeLines[verifyJSON](t, res.stdout)
	if res.code != 1 || len(got) != 1 || got[0].Verdict != "impostor" || len(got[0].Hostnames) != 0 || got[0].Reason != "no PTR record" {
		t.Errorf("verify 127.0.0.1 --resolver (no records): exit %d, %+v; want impostor, no hostnames, no PTR record", res.code, got)
	}

	// Without --resolver: whatever the system says of 127.0.0.1.
	names, err := net.DefaultResolver.LookupAddr(context.Background(), "127.0.0.1")
	if err != nil {
		t.Skipf("the system resolver has no name for 127.0.0.1: %v", err)
	}
	var want []string
	for _, n := range names {
		want = append(want, strings.ToLower(strings.TrimSuffix(n, ".")))
	}
	res = runCLI(t, nil, "--db", dsn, "verify", "127.0.0.1", "--json")
	got = decodeLines[verifyJSON](t, res.stdout)
	if len(got) != 1 || !slices.Equal(got[0].Hostnames, want) {
		t.Errorf("verify 127.0.0.1 (system resolver) = %+v, want hostnames %v", got, want)
	}
}

func TestIPsCommand(t *testing.T) {
	type ipList struct {
		CreationTime string `json:"creationTime"`
		Prefixes     []struct {
			IPv4Prefix string `json:"ipv4Prefix"`
		} `json:"prefixes"`
	}
	for _, args := range [][]string{{"ips", "--json"}, {"ips"}} {
		res := runCLI(t, nil, args...)
		if res.code != 0 {
			t.Fatalf("lohibot %v: exit %d, stderr %s", args, res.code, res.stderr)
		}
		if args[len(args)-1] == "--json" && strings.Count(strings.TrimSpace(res.stdout), "\n") != 0 {
			t.Errorf("lohibot %v printed more than one line: %s", args, res.stdout)
		}
		var l ipList
		dec := json.NewDecoder(strings.NewReader(res.stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("lohibot %v printed %q: %v", args, res.stdout, err)
		}
		if ct, err := time.Parse(time.RFC3339, l.CreationTime); err != nil || time.Since(ct) > time.Hour {
			t.Errorf("lohibot %v creationTime = %q (%v), want RFC 3339, now", args, l.CreationTime, err)
		}
		if len(l.Prefixes) != 2 || l.Prefixes[0].IPv4Prefix != "79.139.58.98/32" || l.Prefixes[1].IPv4Prefix != "79.139.58.121/32" {
			t.Errorf("lohibot %v prefixes = %+v, want 79.139.58.98/32 and 79.139.58.121/32", args, l.Prefixes)
		}
	}
	if res := runCLI(t, nil, "ips", "extra"); res.code != 2 {
		t.Errorf("lohibot ips extra: exit %d, want 2", res.code)
	}
}

// verifyLogJSON is the output of verify-log --json.
type verifyLogJSON struct {
	Claimed      int `json:"claimed"`
	Genuine      int `json:"genuine"`
	Impostor     int `json:"impostor"`
	Unverifiable int `json:"unverifiable"`
	Matched      int `json:"matched"`
	IPs          []struct {
		IP       string `json:"ip"`
		Genuine  bool   `json:"genuine"`
		Requests int    `json:"requests"`
		Matched  int    `json:"matched"`
	} `json:"ips"`
	Malformed int `json:"malformed"`
	Unmatched []struct {
		Line   int       `json:"line"`
		IP     string    `json:"ip"`
		Time   time.Time `json:"time"`
		Method string    `json:"method"`
		Host   string    `json:"host"`
		Target string    `json:"target"`
	} `json:"unmatched"`
}

func TestVerifyLogCommand(t *testing.T) {
	dns := identityDNS(t)
	fixture := func(name string) string { return filepath.Join("..", "..", "testdata", "identity", name) }
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		s, err := db.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct{ url, at string }{
			{"https://www.example.com/robots.txt", "2026-05-01T10:00:01Z"},
			{"https://www.example.com/a.html", "2026-05-01T10:00:09Z"},
			{"https://www.example.com/b.html?x=1", "2026-05-01T10:01:00Z"},
			{"https://www.example.com/c.html", "2026-05-01T10:11:00Z"},
		} {
			sent, _ := time.Parse(time.RFC3339, r.at)
			row := db.Request{Site: "example.com", Host: "www.example.com", Origin: "https://www.example.com:443",
				URL: r.url, Method: "GET", Purpose: db.PurposePage, SentAt: sent}
			if err := dbtest.Gorm(s).Create(&row).Error; err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		dir := t.TempDir()
		goodLog := filepath.Join(dir, "good.log")
		os.WriteFile(goodLog, []byte(
			`79.139.58.98 - - [01/May/2026:10:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 412 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"`+"\n"+
				`198.51.100.7 - - [01/May/2026:10:00:02 +0000] "GET / HTTP/1.1" 200 10 "-" "Mozilla/5.0"`+"\n"+
				`79.139.58.98 - - [01/May/2026:10:01:30 +0000] "GET /a.html HTTP/1.1" 200 5120 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"`+"\n"), 0o644)
		junkLog := filepath.Join(dir, "junk.log")
		os.WriteFile(junkLog, []byte("junk\nmore junk\n"), 0o644)

		run := func(t *testing.T, in string, args ...string) cliResult {
			t.Helper()
			var out, errOut bytes.Buffer
			args = append([]string{"--resolver", dns, "--db", dsn}, args...)
			code := run(context.Background(), args, strings.NewReader(in), &out, &errOut, func(string) string { return "" })
			return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
		}

		t.Run("combined, json", func(t *testing.T) {
			res := run(t, "", "verify-log", fixture("combined.log"), "--log-format", "combined", "--json")
			if res.code != 1 {
				t.Fatalf("verify-log combined.log: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
			}
			got := decodeLines[verifyLogJSON](t, res.stdout)[0]
			if got.Claimed != 10 || got.Genuine != 6 || got.Impostor != 3 || got.Unverifiable != 1 || got.Matched != 4 ||
				got.Malformed != 3 || len(got.IPs) != 6 || len(got.Unmatched) != 2 {
				t.Errorf("verify-log combined.log = %+v, want claimed 10, genuine 6, impostor 3, unverifiable 1, matched 4, malformed 3, 6 ips, 2 unmatched", got)
			}
			if ip := got.IPs[0]; ip.IP != "79.139.58.98" || !ip.Genuine || ip.Requests != 4 || ip.Matched != 3 {
				t.Errorf("verify-log combined.log ips[0] = %+v, want 79.139.58.98 genuine, 4 requests, 3 matched", ip)
			}
		})
		t.Run("gzip, detected format, text", func(t *testing.T) {
			res := run(t, "", "verify-log", fixture("combined.log.gz"))
			if res.code != 1 {
				t.Fatalf("verify-log combined.log.gz: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
			}
			for _, want := range []string{"10 lines claim to be LohiSoftBot", "impostor:     3", "203.0.113.10", "/missing.html", "need a human"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("verify-log combined.log.gz printed:\n%s\nwant it to contain %q", res.stdout, want)
				}
			}
		})
		t.Run("json from stdin", func(t *testing.T) {
			b, err := os.ReadFile(fixture("json.log"))
			if err != nil {
				t.Fatal(err)
			}
			// --format is the old, hidden name of --log-format.
			res := run(t, string(b), "verify-log", "-", "--format=json", "--json")
			got := decodeLines[verifyLogJSON](t, res.stdout)[0]
			if res.code != 1 || got.Claimed != 5 || got.Genuine != 4 || got.Impostor != 1 || got.Matched != 3 || got.Malformed != 3 {
				t.Errorf("verify-log - (json.log): exit %d, %+v; want 1, claimed 5, genuine 4, impostor 1, matched 3, malformed 3", res.code, got)
			}
		})
		t.Run("all genuine and matched", func(t *testing.T) {
			res := run(t, "", "verify-log", goodLog, "--json")
			got := decodeLines[verifyLogJSON](t, res.stdout)[0]
			if res.code != 0 || got.Claimed != 2 || got.Matched != 2 {
				t.Errorf("verify-log good.log: exit %d, %+v; want 0 with 2 claimed, 2 matched", res.code, got)
			}
		})
		t.Run("tolerance too tight", func(t *testing.T) {
			res := run(t, "", "verify-log", goodLog, "--tolerance", "30s", "--json")
			got := decodeLines[verifyLogJSON](t, res.stdout)[0]
			if res.code != 1 || got.Matched != 1 || len(got.Unmatched) != 1 || got.Unmatched[0].Target != "/a.html" {
				t.Errorf("verify-log good.log --tolerance 30s: exit %d, %+v; want 1 with /a.html unmatched", res.code, got)
			}
		})
		t.Run("common has no claims", func(t *testing.T) {
			res := run(t, "", "verify-log", fixture("common.log"), "--log-format", "common", "--json")
			got := decodeLines[verifyLogJSON](t, res.stdout)[0]
			if res.code != 0 || got.Claimed != 0 || got.Malformed != 1 || !strings.Contains(res.stderr, "--assume-claimed") {
				t.Errorf("verify-log common.log: exit %d, %+v, stderr %q; want 0, nothing claimed, a note", res.code, got, res.stderr)
			}
		})
		t.Run("common, every line a claim", func(t *testing.T) {
			res := run(t, "", "verify-log", fixture("common.log"), "--log-format=common", "--assume-claimed", "--json")
			got := decodeLines[verifyLogJSON](t, res.stdout)[0]
			if res.code != 1 || got.Claimed != 3 || got.Genuine != 2 || got.Matched != 2 || got.Impostor != 1 {
				t.Errorf("verify-log common.log --assume-claimed: exit %d, %+v; want 1, claimed 3, genuine 2, matched 2, impostor 1", res.code, got)
			}
		})
		for _, bad := range [][]string{
			{"verify-log", filepath.Join(dir, "missing.log")},
			{"verify-log", goodLog, "--format", "w3c"},
			{"verify-log", goodLog, "--log-format", "w3c"},
			{"verify-log", goodLog, "--log-format", "json", "--format", "common"},
			{"verify-log", goodLog, "--tolerance", "-1m"},
			{"verify-log", junkLog},
			{"verify-log"},
			{"verify-log", goodLog, junkLog},
		} {
			if res := run(t, "", bad...); res.code != 2 {
				t.Errorf("lohibot %v: exit %d, want 2\n%s%s", bad, res.code, res.stdout, res.stderr)
			}
		}
	})
}

func TestVerifyLogHelpNamesLogFormat(t *testing.T) {
	res := runCLI(t, nil, "verify-log", "--help")
	if res.code != 0 || !strings.Contains(res.stdout, "--log-format") || strings.Contains(res.stdout, "--format ") {
		t.Errorf("verify-log --help: exit %d, want --log-format shown and the old --format hidden:\n%s", res.code, res.stdout)
	}
}
