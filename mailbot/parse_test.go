package mailbot_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lohisoft/lohibot/mailbot"
)

// expectedMessage is one entry of an expected.json file (see
// testdata/mail/README.md).
type expectedMessage struct {
	File      string   `json:"file"`
	MessageID string   `json:"message_id"`
	From      string   `json:"from"`
	Intent    string   `json:"intent"`
	Domains   []string `json:"domains"`
	Lang      string   `json:"lang"`
	Note      string   `json:"note"`
	// Accept lists other intents a message may be read as (an exclusion
	// asked by a third party may also go to staff as other).
	Accept []string `json:"accept"`
	// Action, in our own act-alone cases only: what mail import must do.
	Action string `json:"action"`
	// Review, in our own cases only: the message must go to staff with a
	// reason ("" when it must not).
	Review bool `json:"review"`
	// Clear and SafeActions, in the fresh held-out sets: whether a careful
	// staff member would act on the message without a second look, and
	// the actions lohibot may take on its own without being wrong.
	Clear       *bool    `json:"clear"`
	SafeActions []string `json:"safe_actions"`
}

func loadExpected(t testing.TB, dir string) []expectedMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Messages []expectedMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s/expected.json: %v", dir, err)
	}
	if len(doc.Messages) == 0 {
		t.Fatalf("%s/expected.json lists no messages", dir)
	}
	return doc.Messages
}

// corpusDirs are the shared corpus (a byte-exact copy) and our own cases.
var corpusDirs = []string{"../testdata/mail", "../testdata/mail-extra"}

func TestParseCorpus(t *testing.T) {
	for _, dir := range corpusDirs {
		for _, want := range loadExpected(t, dir) {
			t.Run(filepath.Base(dir)+"/"+want.File, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join(dir, want.File))
				if err != nil {
					t.Fatal(err)
				}
				m := mailbot.Parse(raw)
				if string(m.Intent) != want.Intent {
					t.Errorf("Parse(%s).Intent = %q, want %q (%s)\nreasons: %q", want.File, m.Intent, want.Intent, want.Note, m.Reasons)
				}
				if want.Intent == "exclude" || want.Intent == "reinclude" {
					got := m.Domains
					if got == nil {
						got = []string{}
					}
					wantDomains := want.Domains
					if wantDomains == nil {
						wantDomains = []string{}
					}
					if diff := cmp.Diff(wantDomains, got); diff != "" {
						t.Errorf("Parse(%s).Domains mismatch (-want +got):\n%s", want.File, diff)
					}
				}
				if want.MessageID != "" && m.MessageID != want.MessageID {
					t.Errorf("Parse(%s).MessageID = %q, want %q", want.File, m.MessageID, want.MessageID)
				}
				if want.MessageID == "" && !strings.HasSuffix(m.MessageID, "@lohibot.invalid") {
					t.Errorf("Parse(%s).MessageID = %q, want a content id", want.File, m.MessageID)
				}
				if m.From != want.From {
					t.Errorf("Parse(%s).From = %q, want %q", want.File, m.From, want.From)
				}
				if want.Lang != "" && m.Lang != want.Lang {
					t.Errorf("Parse(%s).Lang = %q, want %q", want.File, m.Lang, want.Lang)
				}
				if (m.Review != "") != want.Review {
					t.Errorf("Parse(%s).Review = %q, want review %v", want.File, m.Review, want.Review)
				}
				if m.Size != len(raw) {
					t.Errorf("Parse(%s).Size = %d, want %d", want.File, m.Size, len(raw))
				}
			})
		}
	}
}

// TestParseConcurrent parses the corpus from several goroutines at once:
// Parse keeps no state (run with -race).
func TestParseConcurrent(t *testing.T) {
	var raws [][]byte
	for _, want := range loadExpected(t, corpusDirs[0]) {
		raw, err := os.ReadFile(filepath.Join(corpusDirs[0], want.File))
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	first := make([]*mailbot.Message, len(raws))
	for i, raw := range raws {
		first[i] = mailbot.Parse(raw)
	}
	errs := make(chan string, 4*len(raws))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, raw := range raws {
				if diff := cmp.Diff(first[i], mailbot.Parse(raw)); diff != "" {
					errs <- diff
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for diff := range errs {
		t.Errorf("concurrent Parse differs (-first +again):\n%s", diff)
	}
}
