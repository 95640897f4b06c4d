package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/webbotauth"
	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

func TestKeys(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "bot.pem")
	r := runCLI(t, nil, "keys", "generate", "--out", key, "--json")
	if r.code != 0 {
		t.Fatalf("keys generate: exit %d, %s", r.code, r.stderr)
	}
	var gen keyInfo
	if err := json.Unmarshal([]byte(r.stdout), &gen); err != nil || len(gen.KeyID) != 43 || gen.JWK.Kty != "OKP" || gen.JWK.Crv != "Ed25519" {
		t.Fatalf("keys generate --json = %s (%v)", r.stdout, err)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	before, _ := os.ReadFile(key)
	if r := runCLI(t, nil, "keys", "generate", "--out", key); r.code != 1 || !strings.Contains(r.stderr, "not overwriting") {
		t.Errorf("keys generate over an existing file: exit %d, %s", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(key); !bytes.Equal(before, after) {
		t.Error("the existing key file was changed")
	}
	r = runCLI(t, nil, "keys", "show", key)
	if r.code != 0 || !strings.Contains(r.stdout, "keyid: "+gen.KeyID) || strings.Contains(r.stdout, "PRIVATE") || strings.Contains(r.stdout, `"d"`) {
		t.Errorf("keys show: exit %d, %s", r.code, r.stdout)
	}
	conf := filepath.Join(dir, "lohibot.toml")
	os.WriteFile(conf, []byte("[crawler]\nsigning_key_file = \""+key+"\"\n"), 0o644)
	if r := runCLI(t, nil, "keys", "show", "--config", conf, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"keyid":"`+gen.KeyID+`"`) {
		t.Errorf("keys show --config: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"keys", "generate"}, {"keys", "show"}, {"keys", "show", filepath.Join(dir, "none.pem")}, {"keys", "show", conf}} {
		if r := runCLI(t, nil, args...); r.code != 2 {
			t.Errorf("lohibot %v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
}

// capture writes what the web server received as the text a webmaster
// would save.
func capture(h testweb.Hit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", h.Method, h.Path, h.Authority)
	h.Header.Write(&b)
	return b.String()
}

// signedCrawl crawls a local web of one site of the given pages with a new
// signing key, on a new database in a temporary folder dir, and returns
// them: the key file, the web (closed when the test ends) and the
// environment naming the database.
func signedCrawl(t *testing.T, pages int) (dir, key string, web *testweb.Web, env []string) {
	t.Helper()
	dir = t.TempDir()
	dsn := filepath.Join(dir, "l.db")
	dbtest.Init(t, dsn)
	env = []string{"LOHIBOT_DB=" + dsn}
	web, err := testweb.Start(&testweb.Options{Plain: 1, PagesPerSite: pages})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(web.Close)
	key = filepath.Join(dir, "bot.pem")
	if r := runCLI(t, nil, "keys", "generate", "--out", key); r.code != 0 {
		t.Fatal(r.stderr)
	}
	site := web.Site("plain-000.test")
	if r := runCLI(t, env, "crawl", "--add", site.StartURL, "--allow-private", "--resolver", web.DNSAddr, "--delay", "50ms", "--signing-key-file", key); r.code != 0 {
		t.Fatalf("crawl: exit %d, %s", r.code, r.stderr)
	}
	return dir, key, web, env
}

// TestVerifySignatureCaptured: a crawl with --signing-key-file signs every
// request the local web received; verify-signature accepts each captured
// one and rejects a flipped byte, an expired window, another authority, a
// missing signature and another key, each with its reason.
func TestVerifySignatureCaptured(t *testing.T) {
	dir, key, web, _ := signedCrawl(t, 3)
	hits := web.Hits()
	if len(hits) < 2 || hits[0].Path != "/robots.txt" {
		t.Fatalf("hits: %d", len(hits))
	}
	for _, h := range hits {
		f := filepath.Join(dir, "req.txt")
		os.WriteFile(f, []byte(capture(h)), 0o644)
		if r := runCLI(t, nil, "verify-signature", f, "--directory", key); r.code != 0 || !strings.HasPrefix(r.stdout, "valid: GET http") {
			t.Errorf("verify-signature %s%s: exit %d, %s %s", h.Host, h.Path, r.code, r.stdout, r.stderr)
		}
	}
	h := hits[len(hits)-1]
	text := capture(h)
	sigs, err := httpsig.Parse(h.Header)
	if err != nil {
		t.Fatal(err)
	}
	sigs[0].Sig[10] ^= 0x01
	_, flipped, _ := httpsig.Fields(sigs[0])
	other := filepath.Join(dir, "other.pem")
	runCLI(t, nil, "keys", "generate", "--out", other)
	tests := []struct {
		name  string
		input string
		args  []string
		code  string
	}{
		{"flipped byte", strings.Replace(text, h.Header.Get("Signature"), flipped, 1), nil, webbotauth.ReasonBadSignature},
		{"another authority", strings.Replace(text, "Host: "+h.Authority, "Host: other.test", 1), nil, webbotauth.ReasonBadSignature},
		{"path changed is still valid", strings.Replace(text, h.Path, "/changed", 1), nil, ""},
		{"expired", text, []string{"--at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, webbotauth.ReasonExpired},
		{"asserted authority", text, []string{"--authority", "www.example.org"}, webbotauth.ReasonAuthority},
		{"missing", "GET / HTTP/1.1\nHost: plain-000.test\nUser-Agent: LohiSoftBot/1.0 (+https://lohisoft.com/bot)\n", nil, webbotauth.ReasonMissing},
		{"wrong key", text, []string{"--directory", other}, webbotauth.ReasonUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"verify-signature", "--json"}, tt.args...)
			if !slicesContains(tt.args, "--directory") {
				args = append(args, "--directory", key)
			}
			r := runCLIIn(t, nil, tt.input, args...)
			var v signatureVerdict
			if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
				t.Fatalf("stdout %q: %v (stderr %s)", r.stdout, err, r.stderr)
			}
			want := 1
			if tt.code == "" {
				want = 0
			}
			if r.code != want || v.Code != tt.code || v.Valid != (tt.code == "") || v.Reason == "" {
				t.Errorf("exit %d, verdict %+v; want exit %d code %q", r.code, v, want, tt.code)
			}
		})
	}
	if r := runCLIIn(t, nil, "not a request", "verify-signature", "--directory", key); r.code != 2 {
		t.Errorf("garbage input: exit %d, want 2", r.code)
	}
	if r := runCLIIn(t, nil, text, "verify-signature", "--directory", filepath.Join(dir, "none.json")); r.code != 2 {
		t.Errorf("missing directory: exit %d, want 2", r.code)
	}
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestVerifySignatureDirectoryURL: --directory URL fetches the signed
// directory; the request's Signature-Agent must name that origin; a HAR
// file works as input.
func TestVerifySignatureDirectoryURL(t *testing.T) {
	key, _ := webbotauth.GenerateKey()
	srv := httptest.NewServer(webbotauth.NewDirectoryHandler(&webbotauth.DirectoryOptions{Keys: []webbotauth.DirectoryKey{{Private: key}}}))
	defer srv.Close()
	sign := func(agent string) *http.Request {
		s, err := webbotauth.NewSigner(key, &webbotauth.SignerOptions{Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "https://www.example.org/a", nil)
		req.Header = http.Header{}
		if _, err := s.Sign(req); err != nil {
			t.Fatal(err)
		}
		return req
	}
	if r := runCLIIn(t, nil, webbotauth.FormatRequest(sign(srv.URL)), "verify-signature", "--directory", srv.URL); r.code != 0 {
		t.Errorf("own agent: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	r := runCLIIn(t, nil, webbotauth.FormatRequest(sign("https://lohisoft.com")), "verify-signature", "--directory", srv.URL+webbotauth.DirectoryPath, "--json")
	if r.code != 1 || !strings.Contains(r.stdout, `"code":"wrong-agent"`) {
		t.Errorf("other agent: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	req := sign(srv.URL)
	var hdrs []map[string]string
	for k := range req.Header {
		hdrs = append(hdrs, map[string]string{"name": strings.ToLower(k), "value": req.Header.Get(k)})
	}
	har, _ := json.Marshal(map[string]any{"log": map[string]any{"entries": []any{
		map[string]any{"startedDateTime": time.Now().Format(time.RFC3339), "request": map[string]any{"method": "GET", "url": "https://www.example.org/a", "headers": hdrs}},
	}}})
	f := filepath.Join(t.TempDir(), "c.har")
	os.WriteFile(f, har, 0o644)
	if r := runCLI(t, nil, "verify-signature", f, "--directory", srv.URL); r.code != 0 {
		t.Errorf("HAR: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestAuditSignaturesAfterSignedCrawl: the signatures rule holds over a
// crawl made with --signing-key-file, and is named on the command line.
func TestAuditSignaturesAfterSignedCrawl(t *testing.T) {
	_, _, web, env := signedCrawl(t, 2)
	site := web.Site("plain-000.test")
	r := runCLI(t, env, "audit", "signatures")
	if r.code != 0 || !strings.Contains(r.stdout, "signatures") {
		t.Errorf("audit signatures: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, env, "report", site.Name)
	if r.code != 0 || !strings.Contains(r.stdout, "signed ") {
		t.Errorf("report: exit %d, no signature shown:\n%s", r.code, r.stdout)
	}
}
