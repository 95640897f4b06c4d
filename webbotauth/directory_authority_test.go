package webbotauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/webbotauth"
)

// hostRewriter sends every request to the test server, with Host set as
// host says: the client's own (nil), or a fixed one (a proxy that rewrites
// it, or a client that lies).
type hostRewriter struct {
	srv  *url.URL
	host func(*http.Request) string
}

func (h hostRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = h.srv.Scheme, h.srv.Host
	if h.host != nil {
		r.Host = h.host(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestDirectorySignsConfiguredAuthority: the key directory's signature
// covers the configured signature agent's authority, never the Host the
// client sends: a client asking as evil.example gets no valid signature
// for evil.example, and behind a proxy that rewrites Host (plain
// proxy_pass) the directory still verifies for the agent.
func TestDirectorySignsConfiguredAuthority(t *testing.T) {
	h := webbotauth.NewDirectoryHandler(&webbotauth.DirectoryOptions{
		Keys: []webbotauth.DirectoryKey{{Private: rfcKey(t)}}, Now: func() time.Time { return t0 }, Agent: "http://lohisoft.com"})
	srv := httptest.NewServer(h)
	defer srv.Close()
	su, _ := url.Parse(srv.URL)
	ctx := context.Background()

	// Behind a proxy that sends the backend's own address as Host.
	proxied := &http.Client{Transport: hostRewriter{srv: su, host: func(*http.Request) string { return su.Host }}}
	if _, err := webbotauth.FetchDirectory(ctx, proxied, "http://lohisoft.com", t0); err != nil {
		t.Errorf("directory behind a proxy rewriting Host: %v, want it verified for lohisoft.com", err)
	}
	// A client asking as evil.example.
	liar := &http.Client{Transport: hostRewriter{srv: su}}
	if _, err := webbotauth.FetchDirectory(ctx, liar, "http://evil.example", t0); err == nil {
		t.Errorf("a client asking as evil.example got a directory signature valid for evil.example")
	}
}
