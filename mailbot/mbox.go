package mailbot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SourceKind is the format of a file or folder of mail.
type SourceKind string

// The formats ReadSource understands.
const (
	KindMessage SourceKind = "eml"     // one RFC 5322 message
	KindMbox    SourceKind = "mbox"    // messages separated by "From " lines (mboxrd)
	KindMaildir SourceKind = "maildir" // a folder with cur/ and new/ holding one message per file
	KindFolder  SourceKind = "folder"  // any other folder: each file in it and its sub-folders is a message (or an mbox)
)

// ErrNotMaildir is returned for a folder that has neither cur/ nor new/ nor
// any file to read, in it or in its sub-folders.
var ErrNotMaildir = errors.New("mailbot: neither a Maildir (no cur/ or new/ folder) nor a folder of message files")

// DetectSource tells the format of path: a folder with cur/ or new/ is a
// Maildir, another folder holding files (directly or in sub-folders) is a
// folder of messages (such as .eml files saved from a mail client, which
// often keeps a folder per mailbox), a file starting with "From " is an
// mbox, any other file is one message. It does I/O.
func DetectSource(path string) (SourceKind, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("mailbot: %w", err)
	}
	if fi.IsDir() {
		if isMaildir(path) {
			return KindMaildir, nil
		}
		found := false
		err := walkFolder(context.Background(), path, func(string, bool) error {
			found = true
			return errFound
		})
		if err != nil && !errors.Is(err, errFound) {
			return "", err
		}
		if !found {
			return "", fmt.Errorf("%w: %s", ErrNotMaildir, path)
		}
		return KindFolder, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("mailbot: %w", err)
	}
	defer f.Close()
	head := make([]byte, 5)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("mailbot: read %s: %w", path, err)
	}
	if n == 5 && string(head) == "From " {
		return KindMbox, nil
	}
	return KindMessage, nil
}

// ReadSource calls fn with every message of the file or folder at path
// (see DetectSource), in order, with a label naming where it came from:
// the file, FILE#N for the Nth message of an mbox, or the Maildir file. A
// folder of messages is read with its sub-folders, in name order (see
// walkFolder): each file as a message or an mbox, each Maildir inside as a
// Maildir.
// The raw bytes passed to fn are not reused: fn may keep them. It stops at
// the first error of fn, of reading, or of ctx.
func ReadSource(ctx context.Context, path string, fn func(raw []byte, source string) error) error {
	kind, err := DetectSource(path)
	if err != nil {
		return err
	}
	switch kind {
	case KindMaildir:
		return readMaildir(ctx, path, fn)
	case KindFolder:
		return walkFolder(ctx, path, func(p string, maildir bool) error {
			if maildir {
				return readMaildir(ctx, p, fn)
			}
			return ReadSource(ctx, p, fn)
		})
	case KindMbox:
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("mailbot: %w", err)
		}
		defer f.Close()
		n := 0
		return ReadMbox(f, func(raw []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			n++
			return fn(raw, fmt.Sprintf("%s#%d", path, n))
		})
	default:
		raw, err := ReadFile(path)
		if err != nil {
			return err
		}
		return fn(raw, path)
	}
}

// ReadFile reads one message file, at most MaxSize+1 bytes of it: a longer
// message (or a file without end, such as /dev/zero) comes back cut to
// that length, which Parse recognises as too large and sends to staff, as
// the watcher does with a message over MaxSize. It does I/O.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mailbot: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("mailbot: %w", err)
	}
	return raw, nil
}

// errFound stops a walkFolder at the first thing found.
var errFound = errors.New("mailbot: found")

// isMaildir reports whether dir has a cur/ or new/ folder.
func isMaildir(dir string) bool {
	for _, sub := range []string{"cur", "new"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// walkFolder calls fn with each message file under dir (maildir false) and
// each Maildir folder under it (maildir true, its files not walked), in
// the order of their names, folder by folder, depth first: a.eml, b/c.eml,
// b/d.eml, e.eml. Hidden files and folders (name starting with ".") are
// skipped, and so is whatever is neither a regular file nor a folder
// (devices, sockets); a symbolic link is read when it points to a regular
// file and skipped otherwise: links to folders are never followed, so a
// link loop cannot make the walk endless. dir itself is read even when
// its name is hidden or it is a Maildir. It stops at the first error of
// fn, of reading a folder, or of ctx. It does I/O.
func walkFolder(ctx context.Context, dir string, fn func(path string, maildir bool) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("mailbot: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			if isMaildir(p) {
				if err := fn(p, true); err != nil {
					return err
				}
				return filepath.SkipDir
			}
			return nil
		case t.IsRegular():
			if looksLikeMail(p) {
				return fn(p, false)
			}
		case t&fs.ModeSymlink != 0:
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && looksLikeMail(p) {
				return fn(p, false)
			}
		}
		return nil
	})
}

// mailExtensions are the file name extensions of saved messages and
// mailboxes: a file in a folder with one of them (or none, as in a Maildir
// or an MH folder) is read whatever it holds, so that a damaged message
// still reaches staff.
var mailExtensions = map[string]bool{"": true, ".eml": true, ".email": true, ".mail": true, ".msg": true, ".mbox": true, ".mbx": true}

// looksLikeMail reports whether the file at path, found in a folder, is to
// be read as a message or an mbox: its extension is a mail one (see
// mailExtensions), or its first line is a header field ("Name: value") or
// an mbox "From " line. A README.md or an expected.json beside the
// messages is not one. (A file named on the command line is always read.)
func looksLikeMail(path string) bool {
	if mailExtensions[strings.ToLower(filepath.Ext(path))] {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return true // (reading it says why)
	}
	defer f.Close()
	head := make([]byte, 1000)
	n, _ := io.ReadFull(f, head)
	line, _, _ := bytes.Cut(head[:n], []byte("\n"))
	if bytes.HasPrefix(line, []byte("From ")) {
		return true
	}
	name, _, ok := bytes.Cut(line, []byte(":"))
	if !ok || len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c > '~' { // RFC 5322 field names: printable ASCII, no space or colon
			return false
		}
	}
	return true
}

func readMaildir(ctx context.Context, dir string, fn func(raw []byte, source string) error) error {
	var files []string
	for _, sub := range []string{"cur", "new"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("mailbot: %w", err)
		}
		var names []string
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
				continue
			}
			names = append(names, e.Name())
		}
		sort.Strings(names) // Maildir names start with the delivery time
		for _, n := range names {
			files = append(files, filepath.Join(dir, sub, n))
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := ReadFile(f)
		if err != nil {
			return err
		}
		if err := fn(raw, f); err != nil {
			return err
		}
	}
	return nil
}

// ReadMbox splits an mbox into messages and calls fn with each. A message
// starts at a line beginning with "From " (the From_ line, dropped); the
// blank line the format puts before the next From_ line is dropped, and
// mboxrd quoting is undone (">From " becomes "From ", ">>From " becomes
// ">From "). Line endings are kept as they are (LF or CRLF). Text before
// the first From_ line is ignored. The slice passed to fn is not reused.
// The mbox is read as a stream, one message in memory at a time, and a
// message is kept only up to MaxSize+1 bytes (the rest is skipped), so
// Parse sends it to staff as too large.
func ReadMbox(r io.Reader, fn func(raw []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		cur     []byte
		started bool
		long    []byte // a line longer than the buffer, being assembled
	)
	emit := func() error {
		if !started {
			return nil
		}
		msg := trimSeparator(cur)
		cur = nil
		return fn(msg)
	}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Only the start of a long line matters: its first bytes say
			// whether it starts a message, and a message is kept only
			// up to MaxSize+1 bytes.
			if room := MaxSize + 1 - len(cur) - len(long); room > 0 {
				long = append(long, line[:min(len(line), room)]...)
			} else if long == nil {
				long = append(long, line[:min(len(line), 5)]...)
			}
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if len(line) > 0 {
			switch {
			case bytes.HasPrefix(line, []byte("From ")):
				if err := emit(); err != nil {
					return err
				}
				started = true
				cur = make([]byte, 0, 8<<10)
			case !started:
			case len(cur) > MaxSize:
				// Too large already: the rest is skipped.
			case line[0] == '>' && isQuotedFrom(line):
				cur = append(cur, line[1:min(len(line), MaxSize+2-len(cur))]...)
			default:
				cur = append(cur, line[:min(len(line), MaxSize+1-len(cur))]...)
			}
		}
		if errors.Is(err, io.EOF) {
			return emit()
		}
		if err != nil {
			return fmt.Errorf("mailbot: read mbox: %w", err)
		}
	}
}

// isQuotedFrom reports whether line is ">*From " with at least one '>'.
func isQuotedFrom(line []byte) bool {
	i := 0
	for i < len(line) && line[i] == '>' {
		i++
	}
	return i > 0 && bytes.HasPrefix(line[i:], []byte("From "))
}

// trimSeparator drops the one blank line that separates a message from the
// next From_ line.
func trimSeparator(msg []byte) []byte {
	switch {
	case bytes.HasSuffix(msg, []byte("\r\n\r\n")):
		return msg[:len(msg)-2]
	case bytes.HasSuffix(msg, []byte("\n\n")):
		return msg[:len(msg)-1]
	}
	return msg
}
