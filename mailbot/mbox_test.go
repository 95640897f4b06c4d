package mailbot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/mailbot"
)

var mboxTests = []struct {
	name string
	in   string
	want []string
}{
	{"empty", "", nil},
	{"one", "From a@b Mon Mar  2 09:00:00 2026\nSubject: x\n\nbody\n", []string{"Subject: x\n\nbody\n"}},
	{"two with separator line", "From a@b Mon Mar  2 09:00:00 2026\nSubject: 1\n\none\n\nFrom c@d Mon Mar  2 09:00:01 2026\nSubject: 2\n\ntwo\n",
		[]string{"Subject: 1\n\none\n", "Subject: 2\n\ntwo\n"}},
	{"mboxrd unquoting", "From a@b Mon Mar  2 09:00:00 2026\nSubject: q\n\n>From here\n>>From there\n> From not\n>Fromage\n",
		[]string{"Subject: q\n\nFrom here\n>From there\n> From not\n>Fromage\n"}},
	{"CRLF", "From a@b Mon Mar  2 09:00:00 2026\r\nSubject: 1\r\n\r\none\r\n\r\nFrom c@d x\r\nSubject: 2\r\n\r\ntwo\r\n",
		[]string{"Subject: 1\r\n\r\none\r\n", "Subject: 2\r\n\r\ntwo\r\n"}},
	{"no final newline", "From a@b x\nSubject: 1\n\nlast", []string{"Subject: 1\n\nlast"}},
	{"long line", "From a@b x\nSubject: 1\n\n" + strings.Repeat("y", 200000) + "\n", []string{"Subject: 1\n\n" + strings.Repeat("y", 200000) + "\n"}},
}

func TestReadMbox(t *testing.T) {
	for _, tt := range mboxTests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := mailbot.ReadMbox(strings.NewReader(tt.in), func(raw []byte) error {
				got = append(got, string(raw))
				return nil
			})
			if err != nil {
				t.Fatalf("ReadMbox: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadMbox(%q) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestDetectAndReadSource(t *testing.T) {
	dir := t.TempDir()
	eml := filepath.Join(dir, "one.eml")
	mbox := filepath.Join(dir, "box.mbox")
	md := filepath.Join(dir, "Maildir")
	notMD := filepath.Join(dir, "plain")
	mustWrite(t, eml, "Subject: one\n\nbody\n")
	mustWrite(t, mbox, "From a x\nSubject: m1\n\n1\n\nFrom b x\nSubject: m2\n\n2\n")
	mustWrite(t, filepath.Join(md, "cur", "1000.a:2,S"), "Subject: cur\n\n")
	mustWrite(t, filepath.Join(md, "new", "1001.b"), "Subject: new\n\n")
	mustWrite(t, filepath.Join(md, "new", ".hidden"), "Subject: hidden\n\n")
	mustWrite(t, filepath.Join(md, "tmp", "1002.c"), "Subject: tmp\n\n")
	if err := os.MkdirAll(notMD, 0o755); err != nil {
		t.Fatal(err)
	}

	kinds := []struct {
		path string
		want mailbot.SourceKind
		err  error
	}{
		{eml, mailbot.KindMessage, nil},
		{mbox, mailbot.KindMbox, nil},
		{md, mailbot.KindMaildir, nil},
		{notMD, "", mailbot.ErrNotMaildir},
		{filepath.Join(dir, "missing"), "", os.ErrNotExist},
	}
	for _, k := range kinds {
		got, err := mailbot.DetectSource(k.path)
		if got != k.want || (k.err == nil) != (err == nil) || (k.err != nil && !errors.Is(err, k.err)) {
			t.Errorf("DetectSource(%s) = %q, %v; want %q, %v", filepath.Base(k.path), got, err, k.want, k.err)
		}
	}

	reads := []struct {
		path string
		want []string
	}{
		{eml, []string{"one.eml|Subject: one"}},
		{mbox, []string{"box.mbox#1|Subject: m1", "box.mbox#2|Subject: m2"}},
		{md, []string{"1000.a:2,S|Subject: cur", "1001.b|Subject: new"}},
	}
	for _, r := range reads {
		var got []string
		err := mailbot.ReadSource(context.Background(), r.path, func(raw []byte, source string) error {
			first, _, _ := strings.Cut(string(raw), "\n")
			got = append(got, filepath.Base(source)+"|"+first)
			return nil
		})
		if err != nil {
			t.Fatalf("ReadSource(%s): %v", r.path, err)
		}
		if diff := cmp.Diff(r.want, got); diff != "" {
			t.Errorf("ReadSource(%s) (-want +got):\n%s", filepath.Base(r.path), diff)
		}
	}
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadFolderRecursive: a folder of messages is read with its
// sub-folders, in name order, depth first; a Maildir inside is read as a
// Maildir (cur/ and new/, not tmp/); hidden files and folders are skipped;
// a link to a file inside the folder is read, one to a file out of it is
// not, a link to a folder is not followed (here one that would loop).
func TestReadFolderRecursive(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "saved")
	mustWrite(t, filepath.Join(base, "outside.eml"), "Subject: linked\n\n")
	mustWrite(t, filepath.Join(dir, "a.eml"), "Subject: a\n\n")
	mustWrite(t, filepath.Join(dir, "b", "c.eml"), "Subject: b/c\n\n")
	mustWrite(t, filepath.Join(dir, "b", "d.mbox"), "From a x\nSubject: b/d 1\n\n1\n\nFrom b x\nSubject: b/d 2\n\n2\n")
	mustWrite(t, filepath.Join(dir, "b", ".hidden.eml"), "Subject: hidden file\n\n")
	mustWrite(t, filepath.Join(dir, "b", "deeper", "e.eml"), "Subject: b/deeper/e\n\n")
	mustWrite(t, filepath.Join(dir, ".Trash", "x.eml"), "Subject: hidden folder\n\n")
	mustWrite(t, filepath.Join(dir, "md", "cur", "1000.a:2,S"), "Subject: md cur\n\n")
	mustWrite(t, filepath.Join(dir, "md", "new", "1001.b"), "Subject: md new\n\n")
	mustWrite(t, filepath.Join(dir, "md", "tmp", "1002.c"), "Subject: md tmp\n\n")
	mustWrite(t, filepath.Join(dir, "md", "other", "y.eml"), "Subject: md other\n\n")
	mustWrite(t, filepath.Join(dir, "z.eml"), "Subject: z\n\n")
	if err := os.Symlink(dir, filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside.eml"), filepath.Join(dir, "m-link-out.eml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b/c.eml", filepath.Join(dir, "m-link.eml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "nowhere"), filepath.Join(dir, "n-dangling.eml")); err != nil {
		t.Fatal(err)
	}
	if k, err := mailbot.DetectSource(dir); k != mailbot.KindFolder || err != nil {
		t.Fatalf("DetectSource(saved) = %q, %v; want folder", k, err)
	}
	want := []string{
		"a.eml|Subject: a",
		"b/c.eml|Subject: b/c",
		"b/d.mbox#1|Subject: b/d 1",
		"b/d.mbox#2|Subject: b/d 2",
		"b/deeper/e.eml|Subject: b/deeper/e",
		"m-link.eml|Subject: b/c",
		"md/cur/1000.a:2,S|Subject: md cur",
		"md/new/1001.b|Subject: md new",
		"z.eml|Subject: z",
	}
	for range 2 { // the same order every time
		var got []string
		err := mailbot.ReadSource(context.Background(), dir, func(raw []byte, source string) error {
			first, _, _ := strings.Cut(string(raw), "\n")
			rel, _ := filepath.Rel(dir, source)
			got = append(got, filepath.ToSlash(rel)+"|"+first)
			return nil
		})
		if err != nil {
			t.Fatalf("ReadSource(saved): %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadSource(saved) (-want +got):\n%s", diff)
		}
	}

	// A folder whose messages are all in sub-folders is a folder of
	// messages; one with only hidden ones, or links to folders, is not.
	nested := filepath.Join(base, "nested")
	mustWrite(t, filepath.Join(nested, "2026", "03", "m.eml"), "Subject: m\n\n")
	hidden := filepath.Join(base, "hidden")
	mustWrite(t, filepath.Join(hidden, ".cache", "m.eml"), "Subject: m\n\n")
	linked := filepath.Join(base, "linked")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(nested, filepath.Join(linked, "to-nested")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want mailbot.SourceKind
		err  error
	}{
		{nested, mailbot.KindFolder, nil},
		{hidden, "", mailbot.ErrNotMaildir},
		{linked, "", mailbot.ErrNotMaildir},
	} {
		got, err := mailbot.DetectSource(c.path)
		if got != c.want || (c.err == nil) != (err == nil) || (c.err != nil && !errors.Is(err, c.err)) {
			t.Errorf("DetectSource(%s) = %q, %v; want %q, %v", filepath.Base(c.path), got, err, c.want, c.err)
		}
	}
}

// TestReadFolderSkipsOtherFiles: in a folder, a file is read as mail when
// its extension is a mail one (or it has none), whatever it holds, or when
// its first line is a header field or an mbox "From " line; a README.md or
// an expected.json beside the messages is not sent to staff as a damaged
// message. A file named on its own is always read.
func TestReadFolderSkipsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "a.eml"), "Subject: a\n\n")
	mustWrite(t, filepath.Join(dir, "broken.EML"), "no header at all\n")
	mustWrite(t, filepath.Join(dir, "expected.json"), "{\n  \"messages\": []\n}\n")
	mustWrite(t, filepath.Join(dir, "notes.txt"), "Subject: saved as text\n\nbody\n")
	mustWrite(t, filepath.Join(dir, "old.txt"), "From someone Mon Jan  1 00:00:00 2026\nSubject: an mbox\n\nx\n")
	mustWrite(t, filepath.Join(dir, "README.md"), "# Mail corpus\n\nDate: not a header line\n")
	mustWrite(t, filepath.Join(dir, "photo.png"), "\x89PNG\r\n\x1a\n")
	mustWrite(t, filepath.Join(dir, "1234"), "Subject: MH-style name\n\n")
	var got []string
	err := mailbot.ReadSource(context.Background(), dir, func(raw []byte, source string) error {
		got = append(got, filepath.Base(source))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1234", "a.eml", "broken.EML", "notes.txt", "old.txt#1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadSource(folder) (-want +got):\n%s", diff)
	}
	// Named on its own, it is read (and Parse says what is wrong with it).
	got = nil
	if err := mailbot.ReadSource(context.Background(), filepath.Join(dir, "README.md"), func(raw []byte, source string) error {
		got = append(got, filepath.Base(source))
		return nil
	}); err != nil || len(got) != 1 {
		t.Errorf("ReadSource(README.md) read %v, %v; want the file", got, err)
	}
	// A folder with nothing that looks like mail is not a folder of messages.
	other := t.TempDir()
	mustWrite(t, filepath.Join(other, "README.md"), "# nothing here\n")
	if _, err := mailbot.DetectSource(other); !errors.Is(err, mailbot.ErrNotMaildir) {
		t.Errorf("DetectSource(folder of a README) = %v, want ErrNotMaildir", err)
	}
}

// TestReadMaildirHostile: a FIFO in cur/ is skipped without blocking (the
// read would wait for a writer for ever), a link in cur/ to a file out of
// the Maildir (/etc/passwd) is never read as a message, a link to another
// message inside it is; the FIFO named on the command line is refused.
func TestReadMaildirHostile(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "Maildir")
	mustWrite(t, filepath.Join(md, "cur", "1000.a:2,S"), "Subject: first\n\n")
	mustWrite(t, filepath.Join(md, "new", "1003.d"), "Subject: last\n\n")
	mustWrite(t, filepath.Join(md, "tmp", "inside"), "Subject: linked inside\n\n")
	if err := syscall.Mkfifo(filepath.Join(md, "cur", "1001.b:2,S"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(md, "cur", "1002.c:2,S")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tmp/inside", filepath.Join(md, "cur", "1002.d:2,S")); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{md, dir} { // a Maildir, and a folder holding it
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var got []string
		done := make(chan error, 1)
		go func() {
			done <- mailbot.ReadSource(ctx, src, func(raw []byte, source string) error {
				first, _, _ := strings.Cut(string(raw), "\n")
				got = append(got, filepath.Base(source)+"|"+first)
				return nil
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("ReadSource(%s): %v", src, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadSource(%s) blocks on the FIFO", src)
		}
		cancel()
		want := []string{"1000.a:2,S|Subject: first", "1002.d:2,S|Subject: linked inside", "1003.d|Subject: last"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadSource(%s) (-want +got):\n%s", src, diff)
		}
	}
	fifo := filepath.Join(dir, "named.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := mailbot.ReadFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadFile(fifo) = %v, want not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile blocks on a FIFO")
	}
	if _, err := mailbot.DetectSource(fifo); err == nil {
		t.Error("DetectSource(fifo) = nil error, want not a regular file")
	}
}
