package boundedread_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/boundedread"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := boundedread.ReadFile(small, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile(5 bytes, limit 5) = %q, %v; want the bytes", b, err)
	}
	_, err := boundedread.ReadFile(small, 4)
	var tl *boundedread.TooLargeError
	if !errors.As(err, &tl) || tl.Path != small || tl.Limit != 4 {
		t.Errorf("ReadFile(5 bytes, limit 4) = %v, want a *TooLargeError", err)
	}
	if _, err := boundedread.ReadFile(filepath.Join(dir, "none"), 4); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want os.ErrNotExist", err)
	}
	// An endless file ends in an error, not in reading forever.
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := boundedread.ReadFile("/dev/zero", boundedread.SecretLimit)
		if !errors.As(err, &tl) || !strings.Contains(err.Error(), "larger than 64 KiB") {
			t.Errorf("ReadFile(/dev/zero) = %v, want a *TooLargeError saying 64 KiB", err)
		}
	}
}
