package botpage_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/app/botpage"
)

// TestSignatureSection: with a signing configuration the page says, in
// each language, that requests are signed, where the directory is and how
// to check; without one it says nothing about signatures.
func TestSignatureSection(t *testing.T) {
	p, err := botpage.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	signed := testFacts()
	signed.SignatureAgent = "https://lohisoft.com"
	signed.DirectoryURL = "https://lohisoft.com/.well-known/http-message-signatures-directory"
	signed.KeyIDs = []string{"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"}
	for _, l := range botpage.Langs() {
		var b bytes.Buffer
		if err := p.Render(&b, l, signed); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, want := range []string{`id="signature"`, signed.DirectoryURL, signed.KeyIDs[0], "Signature-Agent: sig1=&#34;https://lohisoft.com&#34;",
			"web-bot-auth", "lohibot verify-signature request.txt --directory https://lohisoft.com", "RFC 9421"} {
			if !strings.Contains(page, want) {
				t.Errorf("page (%s) lacks %q", l, want)
			}
		}
		b.Reset()
		if err := p.Render(&b, l, testFacts()); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), `id="signature"`) || strings.Contains(b.String(), "web-bot-auth") {
			t.Errorf("page (%s) without a key speaks of signatures", l)
		}
	}
}
