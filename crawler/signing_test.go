package crawler_test

import (
	"crypto/ed25519"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/testweb"
	"github.com/lohisoft/lohibot/webbotauth"
	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// TestCrawlSigned: with a key, every request the web server received,
// robots.txt included, carries a Web Bot Auth signature that verifies
// against the key's directory, and the request log keeps each one's keyid,
// created and expires.
func TestCrawlSigned(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) { testCrawlSigned(t, engine) })
	}
}

func testCrawlSigned(t *testing.T, engine string) {
	{
		e := newEnv(t, engine, &testweb.Options{Plain: 2, PagesPerSite: 5})
		key, err := webbotauth.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		signer, err := webbotauth.NewSigner(key, &webbotauth.SignerOptions{Agent: "https://lohisoft.com"})
		if err != nil {
			t.Fatal(err)
		}
		o := e.options(t)
		o.Signer = signer
		c := e.crawler(t, o)
		e.crawl(t, c, "plain-000.test", "plain-001.test")
		hits := e.web.Hits()
		if len(hits) < 4 {
			t.Fatalf("%d requests, want a crawl", len(hits))
		}
		keys := []webbotauth.JWK{webbotauth.PublicJWK(key.Public().(ed25519.PublicKey))}
		robots := 0
		for _, h := range hits {
			if h.Path == "/robots.txt" {
				robots++
			}
			u, _ := url.Parse("http://" + h.Authority + h.Path)
			m := &httpsig.Message{Method: h.Method, URL: u, Authority: h.Authority, Header: h.Header}
			res, err := webbotauth.Verify(m, keys, &webbotauth.VerifyOptions{Agent: "https://lohisoft.com"})
			if err != nil {
				t.Errorf("request %s%s: %v", h.Host, h.Path, err)
				continue
			}
			if res.KeyID != signer.KeyID() || res.Expires.Sub(res.Created) != webbotauth.DefaultValidity {
				t.Errorf("request %s%s verified as %+v", h.Host, h.Path, res)
			}
			// Tampered: another authority.
			m.Authority = "elsewhere.test"
			if _, err := webbotauth.Verify(m, keys, nil); err == nil {
				t.Errorf("request %s%s verifies for another authority", h.Host, h.Path)
			}
		}
		if robots == 0 {
			t.Error("no robots.txt request was seen")
		}
		rows := e.requests(t)
		if len(rows) != len(hits) {
			t.Errorf("log has %d rows, server saw %d", len(rows), len(hits))
		}
		for _, r := range rows {
			if r.SigKeyID != signer.KeyID() || r.SigCreated == nil || r.SigExpires == nil ||
				r.SigExpires.Sub(*r.SigCreated) != webbotauth.DefaultValidity ||
				r.SigCreated.After(r.SentAt.Add(time.Second)) || r.SentAt.After(*r.SigExpires) {
				t.Errorf("log row %d (%s): keyid %q created %v expires %v sent %v", r.ID, r.URL, r.SigKeyID, r.SigCreated, r.SigExpires, r.SentAt)
			}
		}
		runs, err := e.store.SigningRuns(t.Context())
		if err != nil || len(runs) != 1 || runs[0].KeyID != signer.KeyID() || runs[0].Node != "test" || runs[0].EndedAt != nil {
			t.Errorf("SigningRuns = %+v, %v", runs, err)
		}
	}
}

// TestCrawlUnsigned: without a key no request carries a signature, and the
// log keeps none.
func TestCrawlUnsigned(t *testing.T) {
	e := newEnv(t, "sqlite", &testweb.Options{Plain: 1, PagesPerSite: 3})
	c := e.crawler(t, nil)
	e.crawl(t, c, "plain-000.test")
	for _, h := range e.web.Hits() {
		for _, f := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
			if v := http.Header(h.Header).Get(f); v != "" {
				t.Errorf("request %s%s carries %s: %s", h.Host, h.Path, f, v)
			}
		}
	}
	for _, r := range e.requests(t) {
		if r.SigKeyID != "" || r.SigCreated != nil {
			t.Errorf("log row %d signed: %q", r.ID, r.SigKeyID)
		}
	}
}
