package serve_test

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/webbotauth"
	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// TestSignedCrawl: with crawler.signing_key_file, serve publishes a signed
// directory listing that key and the published_keys, the bot page says
// requests are signed, and every request its crawler sends (in the web
// server's own record) verifies against the directory served.
func TestSignedCrawl(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		web, err := testweb.Start(&testweb.Options{Plain: 2, PagesPerSite: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		dir := t.TempDir()
		key, _ := webbotauth.GenerateKey()
		keyFile := filepath.Join(dir, "signing.pem")
		if err := webbotauth.WritePrivateKey(keyFile, key); err != nil {
			t.Fatal(err)
		}
		old, _ := webbotauth.GenerateKey()
		der, _ := x509.MarshalPKIXPublicKey(old.Public())
		oldFile := filepath.Join(dir, "old.pub.pem")
		if err := os.WriteFile(oldFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
			t.Fatal(err)
		}
		retire := time.Now().Add(time.Hour).UTC().Truncate(time.Second)

		cfg := crawlConfig(dsn, web)
		cfg.Crawler.SigningKeyFile = keyFile
		cfg.Crawler.SignatureAgent = "https://lohisoft.com"
		cfg.Crawler.PublishedKeys = []serve.PublishedKey{{File: oldFile, NotAfter: retire}}
		srv, _ := newServer(t, cfg)
		addSites(t, srv.Store(), web, "plain-000.test", "plain-001.test")
		base := start(t, srv)

		resp, err := http.Get(base + webbotauth.DirectoryPath)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != webbotauth.MediaType || resp.Header.Get("Signature") == "" {
			t.Fatalf("directory: %d %v", resp.StatusCode, resp.Header)
		}
		// The directory is signed for the signature agent's authority, as
		// the web sees it behind the proxy, whatever Host reached serve.
		bu, _ := url.Parse(base)
		asAgent := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.URL.Scheme, r.URL.Host = bu.Scheme, bu.Host
			return http.DefaultTransport.RoundTrip(r)
		})}
		d, err := webbotauth.FetchDirectory(context.Background(), asAgent, "https://lohisoft.com", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := webbotauth.FetchDirectory(context.Background(), http.DefaultClient, base, time.Now()); err == nil {
			t.Errorf("the directory verified for %s, the Host the client sent, not only for the signature agent", bu.Host)
		}
		signKID := webbotauth.Thumbprint(key.Public().(ed25519.PublicKey))
		oldKID := webbotauth.Thumbprint(old.Public().(ed25519.PublicKey))
		if len(d.Keys) != 2 || d.Keys[0].Kid != signKID || d.Keys[1].Kid != oldKID || d.Keys[1].Expires != retire.Unix() {
			t.Errorf("directory keys = %+v", d.Keys)
		}
		code, page := fetchURL(t, base+"/bot?lang=it")
		if code != 200 || !strings.Contains(page, "https://lohisoft.com/.well-known/http-message-signatures-directory") || !strings.Contains(page, signKID) {
			t.Errorf("bot page (%d) does not say requests are signed", code)
		}

		testutil.Eventually(t, 30*time.Second, "both sites crawled", func() bool {
			cs := cycles(t, srv.Store())
			for _, s := range []string{"plain-000.test", "plain-001.test"} {
				if len(cs[s]) == 0 || cs[s][len(cs[s])-1].Status == db.CycleRunning {
					return false
				}
			}
			return true
		})
		hits := web.Hits()
		if len(hits) < 4 {
			t.Fatalf("%d requests", len(hits))
		}
		for _, h := range hits {
			u, _ := url.Parse("http://" + h.Authority + h.Path)
			m := &httpsig.Message{Method: h.Method, URL: u, Authority: h.Authority, Header: h.Header}
			if res, err := webbotauth.Verify(m, d.Keys, &webbotauth.VerifyOptions{Agent: "https://lohisoft.com"}); err != nil || res.KeyID != signKID {
				t.Errorf("request %s%s: %v", h.Host, h.Path, err)
			}
		}
		keys, err := srv.Store().SigningKeys(context.Background())
		if err != nil || len(keys) != 2 {
			t.Fatalf("SigningKeys = %+v, %v", keys, err)
		}
		sum, err := audit.Run(context.Background(), srv.Store(), &audit.Options{Rules: []string{audit.RuleSignatures}}, func(v audit.Violation) error {
			t.Errorf("audit: %+v", v)
			return nil
		})
		if err != nil || sum.Rules[0].Checked < int64(len(hits)) {
			t.Errorf("audit signatures = %+v, %v", sum, err)
		}
		for _, k := range keys {
			if k.KeyID == oldKID && (k.NotAfter == nil || !k.NotAfter.Equal(retire)) {
				t.Errorf("old key recorded with not_after %v, want %v", k.NotAfter, retire)
			}
		}
	})
}

// TestSigningConfig: the keys are settable, checked, and a missing key file
// is refused.
func TestSigningConfig(t *testing.T) {
	c := testConfig("x.db")
	for k, v := range map[string]string{"crawler.signing_key_file": "/nonexistent.pem", "crawler.signature_agent": "https://bot.example", "crawler.signature_validity": "2m"} {
		if err := c.Set(k, v); err != nil {
			t.Fatalf("Set(%s) = %v", k, err)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
	if _, err := c.Signing(); err == nil {
		t.Error("Signing with a missing key file = nil error")
	}
	f, err := c.Facts(time.Now())
	if err != nil || f.DirectoryURL != "https://bot.example/.well-known/http-message-signatures-directory" {
		t.Errorf("Facts = %+v, %v", f, err)
	}
	c.Crawler.SignatureAgent = "https://bot.example/path"
	if err := c.Validate(); err == nil {
		t.Error("Validate accepts a signature agent with a path")
	}
	c = testConfig("x.db")
	if f, _ := c.Facts(time.Now()); f.SignatureAgent != "" {
		t.Errorf("without a key the page speaks of signatures: %q", f.SignatureAgent)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
