// Package webbotauth is Web Bot Auth for LohiSoftBot: the Ed25519 key its
// requests are signed with (PKCS#8 PEM files, JWKs per RFC 8037, keyids
// as RFC 7638 thumbprints), signing a request
// (draft-ietf-webbotauth-httpsig-protocol-01), the key directory served at
// /.well-known/http-message-signatures-directory with its own signature
// (draft-meunier-webbotauth-httpsig-directory-00), and verifying a
// captured request against a directory. RFC 9421 itself is in
// webbotauth/httpsig.
package webbotauth

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/lohisoft/lohibot/internal/boundedread"
)

// ErrKeyFile is wrapped by errors about a key file that cannot be used.
var ErrKeyFile = errors.New("webbotauth: unusable key file")

// GenerateKey returns a new Ed25519 private key.
func GenerateKey() (ed25519.PrivateKey, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("webbotauth: generate key: %w", err)
	}
	return k, nil
}

// MarshalPrivateKey returns key as a PKCS#8 PEM block ("PRIVATE KEY").
func MarshalPrivateKey(key ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("webbotauth: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// WritePrivateKey writes key to a new file at path, PKCS#8 PEM, mode 0600.
// It never overwrites: an existing path gives an error wrapping
// fs.ErrExist.
func WritePrivateKey(path string, key ed25519.PrivateKey) error {
	b, err := MarshalPrivateKey(key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("webbotauth: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("webbotauth: write key: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("webbotauth: write key: %w", err)
	}
	return nil
}

// ReadPrivateKey reads an Ed25519 private key from a PKCS#8 PEM file. A
// file that group or others may read is refused, as ssh refuses one: a
// key others could have read may be theirs too.
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	if err := checkPrivateMode(path); err != nil {
		return nil, err
	}
	b, err := boundedread.ReadFile(path, boundedread.SecretLimit)
	if err != nil {
		return nil, fmt.Errorf("webbotauth: %w", err)
	}
	k, err := ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKeyFile, path, err)
	}
	return k, nil
}

// checkPrivateMode refuses a private key file that group or others may
// read or write (wrapping ErrKeyFile), naming its mode and the fix.
func checkPrivateMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("botauth: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s: a private key readable by others is refused (mode %04o; make it readable by its owner only: chmod 600 %s)",
			ErrKeyFile, path, perm, path)
	}
	return nil
}

// ParsePrivateKey parses a PKCS#8 PEM Ed25519 private key.
func ParsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("no PKCS#8 PEM block (PRIVATE KEY)")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an Ed25519 key", k)
	}
	return ek, nil
}

// ReadPublicKey reads an Ed25519 public key from a file holding a PKCS#8
// private key (refused when others may read it, as ReadPrivateKey), an
// SPKI public key ("PUBLIC KEY") in PEM, or a JWK.
func ReadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := boundedread.ReadFile(path, boundedread.SecretLimit)
	if err != nil {
		return nil, fmt.Errorf("webbotauth: %w", err)
	}
	if blk, _ := pem.Decode(b); blk != nil && blk.Type == "PRIVATE KEY" {
		if err := checkPrivateMode(path); err != nil {
			return nil, err
		}
	}
	p, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKeyFile, path, err)
	}
	return p, nil
}

// ParsePublicKey parses what ReadPublicKey reads.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
		var j JWK
		if err := json.Unmarshal(b, &j); err != nil {
			return nil, err
		}
		return j.PublicKey()
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("neither PEM nor a JWK")
	}
	switch blk.Type {
	case "PRIVATE KEY":
		k, err := ParsePrivateKey(b)
		if err != nil {
			return nil, err
		}
		return k.Public().(ed25519.PublicKey), nil
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, err
		}
		ek, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("a %T, not an Ed25519 key", k)
		}
		return ek, nil
	}
	return nil, fmt.Errorf("PEM block %q is no key", blk.Type)
}

// JWK is an Ed25519 public key as a JSON Web Key (RFC 8037 Section 2),
// as listed in a key directory. NotBefore and Expires ("nbf", "exp", Unix
// seconds) bound when the key may sign; zero means unbounded.
type JWK struct {
	Kty       string `json:"kty"`
	Crv       string `json:"crv"`
	X         string `json:"x"`
	Kid       string `json:"kid,omitempty"`
	Use       string `json:"use,omitempty"`
	NotBefore int64  `json:"nbf,omitempty"`
	Expires   int64  `json:"exp,omitempty"`
}

// PublicJWK returns pub's JWK with its thumbprint as kid.
func PublicJWK(pub ed25519.PublicKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: Thumbprint(pub), Use: "sig"}
}

// PublicKey returns the key j describes.
func (j JWK) PublicKey() (ed25519.PublicKey, error) {
	if j.Kty != "OKP" || j.Crv != "Ed25519" {
		return nil, fmt.Errorf("webbotauth: JWK kty %q crv %q is not an Ed25519 key", j.Kty, j.Crv)
	}
	x, err := base64.RawURLEncoding.DecodeString(j.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, errors.New("webbotauth: JWK x is not a base64url Ed25519 public key")
	}
	return ed25519.PublicKey(x), nil
}

// Thumbprint returns pub's JWK thumbprint (RFC 7638, SHA-256, base64url
// without padding): the keyid its signatures carry. The members are the
// required ones of RFC 8037, in lexicographic order.
func Thumbprint(pub ed25519.PublicKey) string {
	canon := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
