// Package boundedread reads files given on the command line or in the
// configuration (keys, secrets, captures, key directories, the
// configuration itself) in bounded memory: a file larger than its limit,
// such as /dev/zero, is refused with a *TooLargeError instead of being read
// until the process runs out of memory.
package boundedread

import (
	"fmt"
	"io"
	"os"
)

// Limits of the files lohibot reads whole.
const (
	SecretLimit  = 64 << 10 // a password, OAuth token or key file
	ConfigLimit  = 1 << 20  // a configuration file, a key directory
	CaptureLimit = 16 << 20 // a captured HTTP request (verify-signature)
)

// TooLargeError says that a file is larger than the limit it is read with.
type TooLargeError struct {
	Path  string
	Limit int64 // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the limit for this file", e.Path, size(e.Limit))
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file at path, at most limit bytes of it: a larger file
// gives a *TooLargeError, having read only limit+1 bytes. Errors opening or
// reading the file are os's. It does I/O.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}
