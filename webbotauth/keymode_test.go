package webbotauth_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/webbotauth"
)

// TestPrivateKeyReadableByOthersRefused checks that a private key file
// group or others may read is refused, as ssh refuses one, by every reader
// of a private key (signing, and showing its public half), naming the fix;
// the same file, readable by its owner only, is read.
func TestPrivateKeyReadableByOthersRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := webbotauth.WritePrivateKey(path, rfcKey(t)); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := webbotauth.ReadPrivateKey(path); !errors.Is(err, webbotauth.ErrKeyFile) || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("ReadPrivateKey of a key with mode %04o: %v; want refused, naming chmod 600", mode, err)
		}
		if _, err := webbotauth.ReadPublicKey(path); !errors.Is(err, webbotauth.ErrKeyFile) {
			t.Errorf("ReadPublicKey of a private key with mode %04o: %v; want refused", mode, err)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := webbotauth.ReadPrivateKey(path); err != nil {
			t.Errorf("ReadPrivateKey of a key with mode %04o: %v; want read", mode, err)
		}
	}
}
