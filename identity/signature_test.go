package identity_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/webbotauth"
)

// TestVerifyLogSignatures: with the directory's keys, a JSON log line
// carrying a valid Web Bot Auth signature is genuine without DNS, even from
// an address whose DNS would say impostor; a tampered one is counted in
// BadSignatures and judged by DNS; without keys nothing changes.
func TestVerifyLogSignatures(t *testing.T) {
	_, v := fleetDNS(t)
	s, err := db.Open(context.Background(), t.TempDir()+"/l.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	insertRequests(t, s)
	key, _ := webbotauth.GenerateKey()
	at := time.Date(2026, 5, 1, 10, 0, 9, 0, time.UTC)
	signer, _ := webbotauth.NewSigner(key, &webbotauth.SignerOptions{Now: func() time.Time { return at }})
	req := httptest.NewRequest("GET", "https://www.example.com/a.html", nil)
	req.Header = http.Header{}
	if _, err := signer.Sign(req); err != nil {
		t.Fatal(err)
	}
	line := func(ip, sig string) string {
		b, _ := json.Marshal(map[string]any{
			"remote_addr": ip, "time": at.Format(time.RFC3339), "method": "GET", "uri": "/a.html", "host": "www.example.com", "status": 200,
			"user_agent": "LohiSoftBot/1.0 (+https://lohisoft.com/bot)",
			"request_headers": map[string]any{"Signature-Input": []string{req.Header.Get("Signature-Input")}, "Signature": []string{sig},
				"Signature-Agent": []string{req.Header.Get("Signature-Agent")}},
		})
		return string(b) + "\n"
	}
	good := req.Header.Get("Signature")
	bad := strings.Replace(good, ":", ":A", 1)
	bad = bad[:len(bad)-3] + "==:" // keep it base64 of the wrong bytes
	log := line(noPTR, good) + line(noPTR, bad)
	keys := []webbotauth.JWK{webbotauth.PublicJWK(key.Public().(ed25519.PublicKey))}

	got, err := identity.VerifyLog(context.Background(), strings.NewReader(log), v, identity.StoreRequests(s), &identity.LogOptions{Keys: keys, Agent: "https://lohisoft.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Claimed != 2 || got.Signed != 1 || got.BadSignatures != 1 || got.Genuine != 1 || got.Impostor != 1 || got.Matched != 1 {
		t.Errorf("with keys: %+v", got)
	}
	if len(got.IPs) != 1 || got.IPs[0].Signed != 1 || got.IPs[0].Requests != 2 {
		t.Errorf("with keys, IPs = %+v", got.IPs)
	}
	got, err = identity.VerifyLog(context.Background(), strings.NewReader(log), v, identity.StoreRequests(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Signed != 0 || got.Impostor != 2 {
		t.Errorf("without keys: %+v", got)
	}
}
