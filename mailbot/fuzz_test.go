package mailbot_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/mailbot"
)

// FuzzParse checks that Parse never panics (its recover would say
// "internal error"), always classifies, and returns well-formed fields.
//
//	go test ./mailbot -run '^$' -fuzz FuzzParse -fuzztime 1m
func FuzzParse(f *testing.F) {
	for _, dir := range append(corpusDirs, holdoutDir, hardDir) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
		for _, name := range files {
			raw, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	f.Add([]byte(""))
	f.Add([]byte("\r\n\r\n"))
	f.Add([]byte("Subject: =?utf-8?B?broken?=\nContent-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: message/rfc822\n\n--x--\n"))
	f.Add([]byte("Content-Type: text/html\nContent-Transfer-Encoding: base64\n\nPGEgaHJlZj0iaHR0cDovL2V4YW1wbGUuY29tIj5zdG9wPC9hPg"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := mailbot.Parse(raw)
		if m == nil {
			t.Fatal("Parse returned nil")
		}
		if strings.HasPrefix(m.Review, "internal error") {
			t.Fatalf("Parse panicked: %s", m.Review)
		}
		switch m.Intent {
		case mailbot.IntentExclude, mailbot.IntentReinclude, mailbot.IntentOther, mailbot.IntentAuto:
		default:
			t.Fatalf("Parse().Intent = %q, not an intent", m.Intent)
		}
		if m.MessageID == "" {
			t.Fatal("Parse().MessageID is empty")
		}
		if !slices.IsSorted(m.Domains) || len(slices.Compact(slices.Clone(m.Domains))) != len(m.Domains) {
			t.Fatalf("Parse().Domains = %q, not sorted and unique", m.Domains)
		}
		for _, s := range []string{m.MessageID, m.From, m.Subject, m.Lang, m.Review} {
			if !utf8.ValidString(s) {
				t.Fatalf("Parse() returned invalid UTF-8 %q", s)
			}
		}
		if m.Size != len(raw) {
			t.Fatalf("Parse().Size = %d, want %d", m.Size, len(raw))
		}
	})
}
