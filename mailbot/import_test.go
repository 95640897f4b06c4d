package mailbot_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot"
)

var testFiles = []string{"exclude-one.eml", "exclude-two.eml", "exclude-nosite.eml", "reinclude.eml", "other.eml", "auto.eml", "no-message-id.eml"}

// writeMbox writes the messages as an mboxrd file.
func writeMbox(t testing.TB, path string, msgs [][]byte) {
	t.Helper()
	var b bytes.Buffer
	for _, m := range msgs {
		b.WriteString("From lohibot-test Mon Mar  2 09:00:00 2026\n")
		for _, line := range bytes.SplitAfter(m, []byte("\n")) {
			if bytes.HasPrefix(bytes.TrimLeft(line, ">"), []byte("From ")) {
				b.WriteByte('>')
			}
			b.Write(line)
		}
		if !bytes.HasSuffix(m, []byte("\n")) {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImport(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		proc, pol, _ := newProcessor(t, dsn)
		dir := t.TempDir()
		var msgs [][]byte
		for _, f := range testFiles[:4] {
			msgs = append(msgs, readTestdata(t, f))
		}
		// A body line starting with "From " survives the mbox round trip.
		msgs = append(msgs, []byte("Message-ID: <from-line@x>\nX-Test-Intent: auto\n\nFrom the desk of\n>From quoted\n"))
		mbox := filepath.Join(dir, "in.mbox")
		writeMbox(t, mbox, msgs)
		md := filepath.Join(dir, "Maildir")
		for i, f := range testFiles[4:] {
			mustWrite(t, filepath.Join(md, "new", fmt.Sprintf("17000000%02d.test", i)), string(readTestdata(t, f)))
		}
		single := filepath.Join("..", "testdata", "mailbot", "exclude-one.eml") // a duplicate of the mbox's first

		var sources []string
		sum, err := proc.Import(context.Background(), []string{mbox, md, single}, &mailbot.ImportOptions{
			Workers: 1, // in order, so the duplicate is the single file
			OnResult: func(source string, res *mailbot.Result, err error) {
				if err != nil {
					t.Errorf("Import %s: %v", source, err)
				}
				sources = append(sources, filepath.Base(source))
			},
		})
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		want := mailbot.ImportSummary{Messages: 9, Excluded: 3, Queued: 3, Ignored: 2, Failed: 0, Duplicates: 1}
		if diff := cmp.Diff(want, *sum); diff != "" {
			t.Errorf("Import summary (-want +got):\n%s", diff)
		}
		if len(sources) != 9 || sources[0] != "in.mbox#1" || sources[8] != "exclude-one.eml" {
			t.Errorf("sources = %v, want in.mbox#1 ... exclude-one.eml", sources)
		}
		if got := excludedSites(t, pol); len(got) != 4 {
			t.Errorf("exclusions = %v, want 4 sites", got)
		}

		// Importing again changes nothing.
		sum, err = proc.Import(context.Background(), []string{mbox, md}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want = mailbot.ImportSummary{Messages: 8, Duplicates: 8}
		if diff := cmp.Diff(want, *sum); diff != "" {
			t.Errorf("Import again (-want +got):\n%s", diff)
		}
	})
}

func TestImportMboxUnquotes(t *testing.T) {
	proc, _, store := newSQLiteProcessor(t)
	path := filepath.Join(t.TempDir(), "in.mbox")
	body := "Message-ID: <q@x>\nX-Test-Intent: auto\n\nFrom the desk of\n>From quoted\n"
	writeMbox(t, path, [][]byte{[]byte(body)})
	if _, err := proc.Import(context.Background(), []string{path}, nil); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := dbtest.Gorm(store).Table("mail_messages").Select("raw").Where("message_id = ?", "q@x").Row().Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if string(raw) != body {
		t.Errorf("stored raw = %q, want %q", raw, body)
	}
}

var messageIDLine = regexp.MustCompile(`(?mi)^Message-ID:[^\n]*\n`)

// benchMessages returns n distinct messages made from the test messages
// and, when present, the corpus in testdata/mail.
func benchMessages(b testing.TB, n int) [][]byte {
	var bases [][]byte
	for _, f := range testFiles {
		bases = append(bases, readTestdata(b, f))
	}
	corpus, _ := filepath.Glob(filepath.Join("..", "testdata", "mail", "*.eml"))
	sort.Strings(corpus)
	for _, f := range corpus {
		raw, err := os.ReadFile(f)
		if err == nil {
			bases = append(bases, raw)
		}
	}
	out := make([][]byte, n)
	for i := range out {
		base := bases[i%len(bases)]
		eol := "\n"
		if bytes.Contains(base, []byte("\r\n")) {
			eol = "\r\n"
		}
		id := fmt.Sprintf("Message-ID: <bench-%d@lohibot.test>%s", i, eol)
		m := messageIDLine.ReplaceAll(base, nil)
		out[i] = append([]byte(id), m...)
	}
	return out
}

// BenchmarkImportMbox10k imports a 10,000-message mbox (the test messages
// and the corpus, each with a fresh Message-ID) into a fresh SQLite
// database with the real parser. The issue asks for under 15 s per op.
func BenchmarkImportMbox10k(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "10k.mbox")
	writeMbox(b, path, benchMessages(b, 10000))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		store := dbtest.Open(b, "sqlite")
		proc := mailbot.New(newPolicy(store), &mailbot.Options{Logger: quietLogger()})
		store.StartSealer(0, nil) // sealed as it goes and at the end, as mail import does
		b.StartTimer()
		sum, err := proc.Import(context.Background(), []string{path}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.AppendLog(context.Background()); err != nil {
			b.Fatal(err)
		}
		if sum.Messages != 10000 || sum.Failed != 0 || sum.Duplicates != 0 {
			b.Fatalf("Import summary = %+v, want 10000 messages, none failed or duplicate", sum)
		}
		b.ReportMetric(float64(sum.Excluded), "excluded/op")
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/op")
}

// TestImportGroupKeepsEachMessage checks that Import, which applies
// messages in groups (one transaction, a savepoint each), keeps each
// message's outcome its own: with the exclusions table gone, every
// exclusion request is stored as failed and queued for staff, with no
// policy event, while the other messages of the same groups are stored
// as they would be alone.
func TestImportGroupKeepsEachMessage(t *testing.T) {
	proc, _, store := newSQLiteProcessor(t)
	if err := dbtest.Gorm(store).Exec("DROP TABLE exclusions").Error; err != nil {
		t.Fatal(err)
	}
	var msgs [][]byte
	for i := range 60 {
		f := testFiles[i%len(testFiles)]
		m := readTestdata(t, f)
		// A fresh Message-ID each, so none is a duplicate.
		msgs = append(msgs, append([]byte(fmt.Sprintf("Message-ID: <group-%d@x>\n", i)), bytes.Replace(m, []byte("Message-ID:"), []byte("X-Old-Message-ID:"), 1)...))
	}
	path := filepath.Join(t.TempDir(), "in.mbox")
	writeMbox(t, path, msgs)
	outcomes := map[string]int{}
	sum, err := proc.Import(context.Background(), []string{path}, &mailbot.ImportOptions{
		OnResult: func(source string, res *mailbot.Result, err error) {
			if err != nil {
				t.Errorf("%s: %v", source, err)
				return
			}
			outcomes[string(res.Outcome)]++
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Messages != 60 || sum.Excluded != 0 || sum.Failed == 0 || sum.Failed+sum.Queued+sum.Ignored != 60 {
		t.Errorf("summary = %+v, want 60 messages, the exclusion requests failed, none excluded", sum)
	}
	if outcomes[string(mailbot.OutcomeFailed)] != sum.Failed {
		t.Errorf("OnResult outcomes %v disagree with the summary %+v", outcomes, sum)
	}
	if n := countRows(t, store, &db.MailMessage{}, ""); n != 60 {
		t.Errorf("stored messages = %d, want 60", n)
	}
	if n := countRows(t, store, &db.MailMessage{}, "outcome = 'failed' AND review_status = 'pending'"); n != int64(sum.Failed) {
		t.Errorf("stored failed and pending = %d, want %d", n, sum.Failed)
	}
	if n := countRows(t, store, &db.PolicyEvent{}, ""); n != 0 {
		t.Errorf("policy events = %d, want 0 (each failed exclusion rolled back)", n)
	}
}

// TestImportAppliesInReadOrder: Import parses several messages at once but
// stores them in the order it read them, even when the first one takes
// longest to parse: the ids and the OnResult calls follow the files'
// order, and of two copies of one Message-ID the first read is stored.
func TestImportAppliesInReadOrder(t *testing.T) {
	store := dbtest.Open(t, "sqlite")
	slowParse := func(raw []byte) *mailbot.Message {
		if bytes.Contains(raw, []byte("<order-00@x>")) {
			time.Sleep(300 * time.Millisecond)
		}
		return fakeParse(raw)
	}
	proc := mailbot.New(newPolicy(store), &mailbot.Options{Parse: slowParse, Logger: quietLogger()})
	dir := t.TempDir()
	const n = 40
	var want []string
	for i := range n {
		id := fmt.Sprintf("order-%02d@x", i)
		if i == n-1 {
			id = "order-00@x" // a second copy of the first: a duplicate
		}
		name := fmt.Sprintf("m%02d.eml", i)
		mustWrite(t, filepath.Join(dir, name), string(testMessage(id, "other", "")))
		want = append(want, name)
	}
	var got []string
	var ids []int64
	sum, err := proc.Import(context.Background(), []string{dir}, &mailbot.ImportOptions{
		Workers: 4,
		OnResult: func(source string, res *mailbot.Result, err error) {
			if err != nil {
				t.Errorf("%s: %v", source, err)
				return
			}
			got = append(got, filepath.Base(source))
			if !res.Duplicate {
				ids = append(ids, res.ID)
			} else if filepath.Base(source) != want[n-1] {
				t.Errorf("%s stored as a duplicate, want only %s (the second copy)", source, want[n-1])
			}
		},
	})
	if err != nil || sum.Messages != n || sum.Duplicates != 1 {
		t.Fatalf("Import = %+v, %v; want %d messages, 1 duplicate", sum, err, n)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnResult order (-want +got):\n%s", diff)
	}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }) {
		t.Errorf("ids in read order = %v, want increasing", ids)
	}
}
