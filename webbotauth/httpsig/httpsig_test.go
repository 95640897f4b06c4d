package httpsig_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// rfcKey is test-key-ed25519 of RFC 9421 Appendix B.1.4.
const rfcKey = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----`

const rfcPublic = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----`

func rfcKeys(t *testing.T) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	b, _ := pem.Decode([]byte(rfcKey))
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := pem.Decode([]byte(rfcPublic))
	pub, err := x509.ParsePKIXPublicKey(p.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(ed25519.PrivateKey), pub.(ed25519.PublicKey)
}

// TestRFC9421B26 is RFC 9421 Appendix B.2.6: the signature base and the
// Ed25519 signature, byte for byte.
func TestRFC9421B26(t *testing.T) {
	priv, pub := rfcKeys(t)
	u, _ := url.Parse("https://example.com/foo?param=Value&Pet=dog")
	h := http.Header{}
	h.Set("Host", "example.com")
	h.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:")
	h.Set("Content-Length", "18")
	m := &httpsig.Message{Method: "POST", URL: u, Header: h}

	sigs, err := httpsig.Parse(http.Header{
		"Signature-Input": {`sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`},
		"Signature":       {`sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := sigs[0]
	base, err := httpsig.Base(m, s.Params)
	if err != nil {
		t.Fatal(err)
	}
	want := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	if base != want {
		t.Fatalf("Base =\n%s\nwant\n%s", base, want)
	}
	got, err := httpsig.SignEd25519(m, s.Params, priv)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(s.Sig) {
		t.Errorf("SignEd25519 = %s, want %s", base64.StdEncoding.EncodeToString(got), base64.StdEncoding.EncodeToString(s.Sig))
	}
	if err := httpsig.VerifyEd25519(m, s.Params, s.Sig, pub); err != nil {
		t.Errorf("VerifyEd25519 = %v", err)
	}
	h.Set("Content-Length", "19")
	if err := httpsig.VerifyEd25519(m, s.Params, s.Sig, pub); !errors.Is(err, httpsig.ErrInvalid) {
		t.Errorf("VerifyEd25519(tampered) = %v, want ErrInvalid", err)
	}
}

type vector struct {
	Key struct {
		D, X string
	} `json:"key"`
	TargetURL      string `json:"target_url"`
	Signature      string `json:"signature"`
	SignatureInput string `json:"signature_input"`
	SignatureAgent string `json:"signature_agent"`
}

// TestWebBotAuthVectors checks the Ed25519 vectors of the Web Bot Auth
// reference implementation (cloudflare/web-bot-auth,
// web_bot_auth_architecture_v2.json): the signature is recomputed byte
// for byte, the fields serialise back to the same text, and it verifies.
func TestWebBotAuthVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/web_bot_auth_architecture_v2_ed25519.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 {
		t.Fatalf("%d vectors, want 2", len(vs))
	}
	for _, v := range vs {
		t.Run(v.SignatureInput[:4], func(t *testing.T) {
			d, _ := base64.RawURLEncoding.DecodeString(v.Key.D)
			x, _ := base64.RawURLEncoding.DecodeString(v.Key.X)
			priv := ed25519.NewKeyFromSeed(d)
			if string(priv.Public().(ed25519.PublicKey)) != string(x) {
				t.Fatal("d and x disagree")
			}
			u, _ := url.Parse(v.TargetURL)
			h := http.Header{"Signature-Input": {v.SignatureInput}, "Signature": {v.Signature}}
			if v.SignatureAgent != "" {
				h.Set("Signature-Agent", v.SignatureAgent)
			}
			m := &httpsig.Message{Method: "GET", URL: u, Header: h}
			sigs, err := httpsig.Parse(h)
			if err != nil {
				t.Fatal(err)
			}
			s := sigs[0]
			if err := httpsig.VerifyEd25519(m, s.Params, s.Sig, x); err != nil {
				t.Fatalf("VerifyEd25519 = %v", err)
			}
			got, err := httpsig.SignEd25519(m, s.Params, priv)
			if err != nil {
				t.Fatal(err)
			}
			s.Sig = got
			in, sig, err := httpsig.Fields(s)
			if err != nil {
				t.Fatal(err)
			}
			if in != v.SignatureInput || sig != v.Signature {
				t.Errorf("Fields =\n%s\n%s\nwant\n%s\n%s", in, sig, v.SignatureInput, v.Signature)
			}
		})
	}
}

func TestBaseErrors(t *testing.T) {
	u, _ := url.Parse("https://example.com/")
	m := &httpsig.Message{Method: "GET", URL: u, Header: http.Header{"Signature-Agent": {`a="https://x.test"`}}}
	tests := []struct {
		name string
		c    httpsig.Component
	}{
		{"missing field", httpsig.NewComponent("signature-agent-x")},
		{"missing member", httpsig.NewComponent("signature-agent", "key", "b")},
		{"unknown derived", httpsig.NewComponent("@nope")},
		{"req without request", httpsig.NewComponent("@authority", "req", true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := httpsig.Base(m, httpsig.NewParams(tt.c)); err == nil {
				t.Errorf("Base(%s) = nil error", tt.name)
			}
		})
	}
	if _, err := httpsig.Base(m, httpsig.NewParams(httpsig.NewComponent("@authority"), httpsig.NewComponent("@authority"))); err == nil {
		t.Error("Base(twice) = nil error")
	}
	if _, err := httpsig.Parse(http.Header{}); !errors.Is(err, httpsig.ErrMissing) {
		t.Errorf("Parse(empty) = %v, want ErrMissing", err)
	}
	if _, err := httpsig.Parse(http.Header{"Signature-Input": {"sig1=("}, "Signature": {"sig1=:AA==:"}}); !errors.Is(err, httpsig.ErrMalformed) {
		t.Errorf("Parse(bad) = %v, want ErrMalformed", err)
	}
}
