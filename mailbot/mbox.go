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
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
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
// mbox, any other file is one message. A FIFO or socket is refused (see
// ReadFile). It does I/O, and never blocks on a special file.
func DetectSource(path string) (SourceKind, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("mailbot: %w", err)
	}
	if fi.IsDir() {
		if isMaildir(path) {
			return KindMaildir, nil
		}
		root, err := os.OpenRoot(path)
		if err != nil {
			return "", fmt.Errorf("mailbot: %w", err)
		}
		defer root.Close()
		found := false
		err = walkFolder(context.Background(), root, path, func(string, bool) error {
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
	f, err := openNamed(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if isMbox(f) {
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
//
// Inside a folder or Maildir only regular files are read, each opened
// without blocking and checked once open: FIFOs, sockets and devices are
// skipped, and so is a symbolic link that leads out of the folder named
// by path (a link to /etc/passwd is never read as a message).
// The raw bytes passed to fn are not reused: fn may keep them. It stops at
// the first error of fn, of reading, or of ctx.
func ReadSource(ctx context.Context, path string, fn func(raw []byte, source string) error) error {
	kind, err := DetectSource(path)
	if err != nil {
		return err
	}
	switch kind {
	case KindMaildir, KindFolder:
		root, err := os.OpenRoot(path)
		if err != nil {
			return fmt.Errorf("mailbot: %w", err)
		}
		defer root.Close()
		if kind == KindMaildir {
			return readMaildir(ctx, root, path, ".", fn)
		}
		return walkFolder(ctx, root, path, func(rel string, maildir bool) error {
			if maildir {
				return readMaildir(ctx, root, path, rel, fn)
			}
			f, err := openInTree(root, rel)
			if errors.Is(err, errNotRegular) {
				return nil
			}
			if err != nil {
				return err
			}
			defer f.Close()
			return readOpened(ctx, f, filepath.Join(path, rel), fn)
		})
	default:
		f, err := openNamed(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return readOpened(ctx, f, path, fn)
	}
}

// readOpened calls fn with the messages of f: each of an mbox (labelled
// NAME#N), or f as one message.
func readOpened(ctx context.Context, f *os.File, name string, fn func(raw []byte, source string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mbox := isMbox(f)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("mailbot: %s: %w", name, err)
	}
	if !mbox {
		raw, err := readLimited(f)
		if err != nil {
			return fmt.Errorf("mailbot: %s: %w", name, err)
		}
		return fn(raw, name)
	}
	n := 0
	return ReadMbox(f, func(raw []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		n++
		return fn(raw, fmt.Sprintf("%s#%d", name, n))
	})
}

// isMbox reports whether f starts with an mbox "From " line. It reads from
// f's current offset.
func isMbox(f io.Reader) bool {
	head := make([]byte, 5)
	n, _ := io.ReadFull(f, head)
	return n == 5 && string(head) == "From "
}

// ReadFile reads one message file, at most MaxSize+1 bytes of it: a longer
// message (or a file without end, such as /dev/zero) comes back cut to
// that length, which Parse recognises as too large and sends to staff, as
// the watcher does with a message over MaxSize. A FIFO, socket or folder
// is refused without blocking (see openNamed). It does I/O.
func ReadFile(path string) ([]byte, error) {
	f, err := openNamed(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := readLimited(f)
	if err != nil {
		return nil, fmt.Errorf("mailbot: %w", err)
	}
	return raw, nil
}

func readLimited(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, MaxSize+1))
}

// errNotRegular is wrapped by the errors of a file that is not a regular
// file (or, named on the command line, a character device).
var errNotRegular = errors.New("not a regular file")

// openNamed opens a file named by the user (on the command line) for
// reading. It is opened non-blocking, so that a FIFO without a writer
// cannot hang the process, and checked once open: a regular file or a
// character device (such as /dev/zero, read up to the size limit) is
// returned, anything else refused with an error wrapping errNotRegular.
func openNamed(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("mailbot: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mailbot: %w", err)
	}
	if m := fi.Mode(); !m.IsRegular() && m&fs.ModeCharDevice == 0 {
		f.Close()
		return nil, fmt.Errorf("mailbot: %s: %w (%s)", path, errNotRegular, fileKind(m))
	}
	return f, nil
}

// openInTree opens the file rel inside root for reading: non-blocking, and
// through root, so a symbolic link may lead only to another place inside
// the tree. What is not a regular file once open is refused with an error
// wrapping errNotRegular; so is a link out of the tree.
func openInTree(root *os.Root, rel string) (*os.File, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.ELOOP) ||
			strings.Contains(err.Error(), "escapes from parent") {
			// A dangling link, or one out of the tree.
			return nil, fmt.Errorf("mailbot: %s: %w", rel, errNotRegular)
		}
		return nil, fmt.Errorf("mailbot: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mailbot: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("mailbot: %s: %w (%s)", rel, errNotRegular, fileKind(fi.Mode()))
	}
	return f, nil
}

// fileKind names the type of a file that is not a regular one.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
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
// b/d.eml, e.eml. The paths given to fn are relative to dir, which root
// opens. Hidden files and folders (name starting with ".") are skipped,
// and so is whatever is neither a regular file nor a folder (devices,
// sockets, FIFOs); a symbolic link is read when it points to a regular
// file inside dir and skipped otherwise: links to folders are never
// followed, so a link loop cannot make the walk endless. dir itself is
// read even when its name is hidden or it is a Maildir. It stops at the
// first error of fn, of reading a folder, or of ctx. It does I/O.
func walkFolder(ctx context.Context, root *os.Root, dir string, fn func(rel string, maildir bool) error) error {
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("mailbot: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			if isMaildir(filepath.Join(dir, p)) {
				if err := fn(p, true); err != nil {
					return err
				}
				return fs.SkipDir
			}
			return nil
		case t.IsRegular():
			if looksLikeMail(root, p) {
				return fn(p, false)
			}
		case t&fs.ModeSymlink != 0:
			if st, err := root.Stat(p); err == nil && st.Mode().IsRegular() && looksLikeMail(root, p) {
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

// looksLikeMail reports whether the file rel under root, found in a
// folder, is to be read as a message or an mbox: its extension is a mail
// one (see mailExtensions), or its first line is a header field ("Name:
// value") or an mbox "From " line. A README.md or an expected.json beside
// the messages is not one. (A file named on the command line is always
// read.)
func looksLikeMail(root *os.Root, rel string) bool {
	if mailExtensions[strings.ToLower(filepath.Ext(rel))] {
		return true
	}
	f, err := openInTree(root, rel)
	if errors.Is(err, errNotRegular) {
		return false
	}
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

// readMaildir calls fn with each message of the Maildir rel under root
// (whose folder is base): the regular files of cur/ and new/, in name
// order. Anything else there (a FIFO, a socket, a link out of the tree or
// to a non-file) is skipped without being opened for a blocking read.
func readMaildir(ctx context.Context, root *os.Root, base, rel string, fn func(raw []byte, source string) error) error {
	var files []string
	for _, sub := range []string{"cur", "new"} {
		entries, err := fs.ReadDir(root.FS(), path.Join(filepath.ToSlash(rel), sub))
		if errors.Is(err, fs.ErrNotExist) {
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
			files = append(files, filepath.Join(rel, sub, n))
		}
	}
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := openInTree(root, name)
		if errors.Is(err, errNotRegular) {
			continue
		}
		if err != nil {
			return err
		}
		raw, err := readLimited(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("mailbot: %s: %w", name, err)
		}
		if err := fn(raw, filepath.Join(base, name)); err != nil {
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
