package webbotauth_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/webbotauth"
	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// rfcSeed is the private key of RFC 9421 Appendix B.1.4 (test-key-ed25519).
const rfcSeed = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"

func rfcKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	d, err := base64.RawURLEncoding.DecodeString(rfcSeed)
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.NewKeyFromSeed(d)
}

func TestThumbprint(t *testing.T) {
	// RFC 8037 Appendix A.3.
	x, _ := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
	if got, want := webbotauth.Thumbprint(x), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"; got != want {
		t.Errorf("Thumbprint(RFC 8037 A.3) = %s, want %s", got, want)
	}
	// The keyid of the Web Bot Auth reference vectors for test-key-ed25519.
	if got, want := webbotauth.Thumbprint(rfcKey(t).Public().(ed25519.PublicKey)), "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"; got != want {
		t.Errorf("Thumbprint(test-key-ed25519) = %s, want %s", got, want)
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.key")
	k, err := webbotauth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := webbotauth.WritePrivateKey(path, k); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "-----BEGIN PRIVATE KEY-----") {
		t.Errorf("key file is not PKCS#8 PEM:\n%s", b)
	}
	got, err := webbotauth.ReadPrivateKey(path)
	if err != nil || !got.Equal(k) {
		t.Fatalf("ReadPrivateKey = %v, %v", got, err)
	}
	pub, err := webbotauth.ReadPublicKey(path)
	if err != nil || !pub.Equal(k.Public()) {
		t.Fatalf("ReadPublicKey = %v, %v", pub, err)
	}
	k2, _ := webbotauth.GenerateKey()
	if err := webbotauth.WritePrivateKey(path, k2); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WritePrivateKey(existing) = %v, want fs.ErrExist", err)
	}
	if again, _ := webbotauth.ReadPrivateKey(path); !again.Equal(k) {
		t.Error("the existing key was overwritten")
	}
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func signed(t *testing.T, key ed25519.PrivateKey, rawURL string) (*http.Request, webbotauth.Stamp) {
	t.Helper()
	s, err := webbotauth.NewSigner(key, &webbotauth.SignerOptions{Agent: "https://lohisoft.com", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", rawURL, nil)
	req.Header = http.Header{"User-Agent": {"LohiSoftBot/1.0 (+https://lohisoft.com/bot)"}}
	st, err := s.Sign(req)
	if err != nil {
		t.Fatal(err)
	}
	return req, st
}

func TestSignVerify(t *testing.T) {
	key := rfcKey(t)
	other, _ := webbotauth.GenerateKey()
	keys := []webbotauth.JWK{webbotauth.PublicJWK(key.Public().(ed25519.PublicKey))}
	req, st := signed(t, key, "https://www.example.org/robots.txt")
	if st.KeyID != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" || !st.Created.Equal(t0) || !st.Expires.Equal(t0.Add(webbotauth.DefaultValidity)) {
		t.Errorf("Stamp = %+v", st)
	}
	if got := req.Header.Get("Signature-Agent"); got != `sig1="https://lohisoft.com"` {
		t.Errorf("Signature-Agent = %s", got)
	}
	in := req.Header.Get("Signature-Input")
	for _, want := range []string{`sig1=("@authority" "signature-agent";key="sig1")`, `;created=`, `;expires=`, `;keyid="poqk`, `;alg="ed25519"`, `;nonce="`, `;tag="web-bot-auth"`} {
		if !strings.Contains(in, want) {
			t.Errorf("Signature-Input %s lacks %s", in, want)
		}
	}

	tests := []struct {
		name   string
		mutate func(m *httpsig.Message)
		keys   []webbotauth.JWK
		opts   webbotauth.VerifyOptions
		code   string
	}{
		{"valid", nil, keys, webbotauth.VerifyOptions{Now: t0.Add(time.Minute)}, ""},
		{"valid, agent checked", nil, keys, webbotauth.VerifyOptions{Now: t0, Agent: "https://lohisoft.com/"}, ""},
		{"expired", nil, keys, webbotauth.VerifyOptions{Now: t0.Add(6 * time.Minute)}, webbotauth.ReasonExpired},
		{"created in the future", nil, keys, webbotauth.VerifyOptions{Now: t0.Add(-time.Hour)}, webbotauth.ReasonNotYetValid},
		{"wrong key", nil, []webbotauth.JWK{webbotauth.PublicJWK(other.Public().(ed25519.PublicKey))}, webbotauth.VerifyOptions{Now: t0}, webbotauth.ReasonUnknownKey},
		{"another authority", func(m *httpsig.Message) { m.Authority = "evil.example" }, keys, webbotauth.VerifyOptions{Now: t0}, webbotauth.ReasonBadSignature},
		{"authority asserted", nil, keys, webbotauth.VerifyOptions{Now: t0, Authority: "other.example"}, webbotauth.ReasonAuthority},
		{"agent changed", func(m *httpsig.Message) { m.Header.Set("Signature-Agent", `sig1="https://evil.example"`) }, keys, webbotauth.VerifyOptions{Now: t0}, webbotauth.ReasonBadSignature},
		{"agent not ours", nil, keys, webbotauth.VerifyOptions{Now: t0, Agent: "https://evil.example"}, webbotauth.ReasonAgent},
		{"flipped byte", func(m *httpsig.Message) {
			sigs, err := httpsig.Parse(m.Header)
			if err != nil {
				t.Fatal(err)
			}
			sigs[0].Sig[7] ^= 0x10
			_, sg, _ := httpsig.Fields(sigs[0])
			m.Header.Set("Signature", sg)
		}, keys, webbotauth.VerifyOptions{Now: t0}, webbotauth.ReasonBadSignature},
		{"missing", func(m *httpsig.Message) { m.Header.Del("Signature"); m.Header.Del("Signature-Input") }, keys, webbotauth.VerifyOptions{Now: t0}, webbotauth.ReasonMissing},
		{"key not yet valid", nil, []webbotauth.JWK{func() webbotauth.JWK {
			j := keys[0]
			j.NotBefore = t0.Add(time.Hour).Unix()
			return j
		}()}, webbotauth.VerifyOptions{Now: t0}, webbotauth.ReasonKeyNotValid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req.Clone(context.Background())
			m := httpsig.FromRequest(r)
			if tt.mutate != nil {
				tt.mutate(m)
			}
			res, err := webbotauth.Verify(m, tt.keys, &tt.opts)
			var ve *webbotauth.VerifyError
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("Verify = %v, want valid", err)
			case tt.code == "" && (res.KeyID != st.KeyID || res.Agent != "https://lohisoft.com" || res.Authority != "www.example.org"):
				t.Errorf("Verify = %+v", res)
			case tt.code != "" && !errors.As(err, &ve):
				t.Fatalf("Verify = %v, %v; want %s", res, err, tt.code)
			case tt.code != "" && ve.Code != tt.code:
				t.Errorf("Verify code = %s (%v), want %s", ve.Code, err, tt.code)
			}
		})
	}
}

func TestDirectory(t *testing.T) {
	key := rfcKey(t)
	old, _ := webbotauth.GenerateKey()
	gone, _ := webbotauth.GenerateKey()
	h := webbotauth.NewDirectoryHandler(&webbotauth.DirectoryOptions{
		Keys: []webbotauth.DirectoryKey{
			{Private: key},
			{Public: old.Public().(ed25519.PublicKey), NotAfter: t0.Add(time.Hour)},
			{Public: gone.Public().(ed25519.PublicKey), NotAfter: t0.Add(-time.Hour)},
		},
		Now: func() time.Time { return t0 },
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + webbotauth.DirectoryPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != webbotauth.MediaType {
		t.Errorf("Content-Type = %s", ct)
	}
	if in := resp.Header.Get("Signature-Input"); !strings.Contains(in, `binding0=("@authority";req)`) || !strings.Contains(in, `tag="http-message-signatures-directory"`) {
		t.Errorf("Signature-Input = %s", in)
	}
	d, err := webbotauth.FetchDirectory(context.Background(), srv.Client(), srv.URL, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Keys) != 2 || d.Keys[0].Kid != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" || d.Keys[1].Expires != t0.Add(time.Hour).Unix() {
		t.Errorf("directory = %+v", d)
	}
	// A request signed by the old key verifies against the fetched
	// directory; the retired one does not.
	for _, k := range []struct {
		key  ed25519.PrivateKey
		code string
	}{{old, ""}, {gone, webbotauth.ReasonUnknownKey}} {
		req, _ := signed(t, k.key, "https://example.net/")
		_, err := webbotauth.Verify(httpsig.FromRequest(req), d.Keys, &webbotauth.VerifyOptions{Now: t0})
		var ve *webbotauth.VerifyError
		if (k.code == "") != (err == nil) || (err != nil && (!errors.As(err, &ve) || ve.Code != k.code)) {
			t.Errorf("Verify = %v, want %q", err, k.code)
		}
	}
	// A directory whose signature is not by a key it lists is refused.
	tampered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Write([]byte(`{"keys":[]}`))
	}))
	defer tampered.Close()
	if _, err := webbotauth.FetchDirectory(context.Background(), tampered.Client(), tampered.URL, t0); !errors.Is(err, webbotauth.ErrDirectory) {
		t.Errorf("FetchDirectory(tampered) = %v, want ErrDirectory", err)
	}
}

func TestParseCapture(t *testing.T) {
	key := rfcKey(t)
	keys := []webbotauth.JWK{webbotauth.PublicJWK(key.Public().(ed25519.PublicKey))}
	req, _ := signed(t, key, "https://shop.example.co.uk/a?b=c")
	text := webbotauth.FormatRequest(req)
	har := `{"log":{"entries":[{"startedDateTime":"2026-12-01T12:00:01Z","request":{"method":"GET","url":"https://shop.example.co.uk/a?b=c","headers":[` +
		`{"name":":authority","value":"shop.example.co.uk"},` +
		`{"name":"signature-agent","value":` + jsonQuote(req.Header.Get("Signature-Agent")) + `},` +
		`{"name":"signature-input","value":` + jsonQuote(req.Header.Get("Signature-Input")) + `},` +
		`{"name":"signature","value":` + jsonQuote(req.Header.Get("Signature")) + `}]}},` +
		`{"request":{"method":"GET","url":"https://shop.example.co.uk/x.css","headers":[]}}]}}`
	h2 := ":method: GET\n:authority: shop.example.co.uk\n:scheme: https\n:path: /a?b=c\n" +
		"signature-agent: " + req.Header.Get("Signature-Agent") + "\nsignature-input: " + req.Header.Get("Signature-Input") +
		"\nsignature: " + req.Header.Get("Signature") + "\n"
	for name, in := range map[string]string{"text": text, "har": har, "h2": h2} {
		t.Run(name, func(t *testing.T) {
			cs, err := webbotauth.ParseCapture([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 {
				t.Fatalf("%d captures, want 1", len(cs))
			}
			if _, err := webbotauth.Verify(cs[0].Message, keys, &webbotauth.VerifyOptions{Now: t0}); err != nil {
				t.Errorf("Verify = %v", err)
			}
		})
	}
	if _, err := webbotauth.ParseCapture([]byte("GET / HTTP/1.1\nUser-Agent: x\n")); !errors.Is(err, webbotauth.ErrCapture) {
		t.Errorf("ParseCapture(no host) = %v, want ErrCapture", err)
	}
}

func jsonQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// BenchmarkSign is the cost of signing one request.
func BenchmarkSign(b *testing.B) {
	key, _ := webbotauth.GenerateKey()
	s, _ := webbotauth.NewSigner(key, nil)
	req := httptest.NewRequest("GET", "https://www.example.org/some/page?x=1", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign(req); err != nil {
			b.Fatal(err)
		}
	}
}
