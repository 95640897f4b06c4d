package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/audit/report"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

const goldenDir = "testdata/golden"

// goldenCases are the renderings kept in testdata/golden: every format in
// English and the text in Italian of writeStory's site, whose promises were
// kept; and the text and HTML in English of the same site with a promise
// broken (a request after the exclusion, outside any cycle).
var goldenCases = []struct {
	file, format, lang string
	broken             bool
}{
	{"report.en.txt", report.FormatText, "en", false},
	{"report.it.txt", report.FormatText, "it", false},
	{"report.json", report.FormatJSON, "", false},
	{"report.en.html", report.FormatHTML, "en", false},
	{"broken.en.txt", report.FormatText, "en", true},
	{"broken.en.html", report.FormatHTML, "en", true},
}

// goldenReport builds the report of writeStory's site on a fresh database
// at dsn; with broken, a page request is sent after the exclusion, outside
// any cycle. Everything the output depends on is fixed: the story's times,
// the generation time, the reply below, and the IDs (a fresh database
// numbers rows from 1 in the order the story writes them). Nothing is
// sealed, so the report has no seal head (whose time and hash would vary).
func goldenReport(t *testing.T, dsn string, broken bool) *report.Report {
	t.Helper()
	f := writeStory(t, dsn)
	var mail db.MailMessage
	if err := dbtest.Gorm(f.store).WithContext(f.ctx).Where("message_id = ?", "abc123@mail.example.com").Take(&mail).Error; err != nil {
		t.Fatal(err)
	}
	created := t0.Add(8*24*time.Hour + time.Hour + 3*time.Second)
	sent := created.Add(2 * time.Second)
	if err := f.store.InsertMailReply(f.ctx, &db.MailReply{MailID: mail.ID, Kind: db.ReplyAck, Recipient: "webmaster@example.com",
		Sites: "example.com", Lang: "en", MessageID: "ack-1@lohisoft.example", CreatedAt: created, Status: db.ReplySent,
		Attempts: 1, SentAt: &sent, Raw: []byte("Subject: ack\r\n\r\nbody")}); err != nil {
		t.Fatal(err)
	}
	if broken {
		f.request(0, nil, db.PurposePage, "https://www.example.com/late", t0.Add(9*24*time.Hour), 100*time.Millisecond, 200, "ok",
			func(r *db.Request) { r.CycleID = nil; r.Error = "late\x1b[2K" })
	}
	rep, err := report.Build(f.ctx, f.store, "example.com", &report.Options{Now: func() time.Time { return t0.Add(30 * 24 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestGolden renders the report of a fixed database and compares it with
// the files in testdata/golden; go test -update rewrites them. It runs on
// every engine of dbtest against the same files: the report must not
// depend on the engine.
func TestGolden(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			reps := map[bool]*report.Report{
				false: goldenReport(t, dbtest.DSN(t, engine), false),
				true:  goldenReport(t, dbtest.DSN(t, engine), true),
			}
			for _, c := range goldenCases {
				t.Run(c.file, func(t *testing.T) {
					var buf bytes.Buffer
					if err := report.Write(&buf, reps[c.broken], c.format, c.lang); err != nil {
						t.Fatal(err)
					}
					checkGolden(t, filepath.Join(goldenDir, c.file), buf.Bytes())
				})
			}
		})
	}
}

// checkGolden compares got with the file at path, or rewrites the file
// with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := string(got), string(want)
	if strings.HasSuffix(path, ".json") {
		// One line each: indent both so the diff points at the field.
		g, w = indentJSON(got), indentJSON(want)
	}
	t.Errorf("%s differs (-want +got; run go test -update if the change is intended):\n%s", path,
		cmp.Diff(strings.Split(w, "\n"), strings.Split(g, "\n")))
}

func indentJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}
