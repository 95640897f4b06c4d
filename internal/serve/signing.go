package serve

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/crawler/botauth"
)

// Signing is what the configuration's Web Bot Auth keys give: the
// crawler's signer and the key directory, built from the same files so the
// directory always lists the key the crawler signs with.
type Signing struct {
	// Signer signs the crawler's requests; nil when crawler.signing_key_file
	// is empty.
	Signer *botauth.Signer
	// Keys are the directory's keys: the signing key first, then
	// crawler.published_keys.
	Keys []botauth.DirectoryKey
	// Directory serves them at botauth.DirectoryPath.
	Directory *botauth.DirectoryHandler
}

// KeyIDs returns the keyids of the keys listed at now.
func (s *Signing) KeyIDs(now time.Time) []string {
	var out []string
	for _, j := range s.Directory.Directory(now).Keys {
		out = append(out, j.Kid)
	}
	return out
}

// Signing reads the key files of c and builds its Signing. It does I/O.
func (c *Config) Signing() (*Signing, error) {
	cr := &c.Crawler
	s := &Signing{}
	if cr.SigningKeyFile != "" {
		key, err := botauth.ReadPrivateKey(cr.SigningKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: crawler.signing_key_file: %w", ErrConfig, err)
		}
		if s.Signer, err = botauth.NewSigner(key, &botauth.SignerOptions{Agent: cr.SignatureAgent, Validity: time.Duration(cr.SignatureValidity)}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		s.Keys = append(s.Keys, botauth.DirectoryKey{Private: key, Public: key.Public().(ed25519.PublicKey)})
	}
	for i, pk := range cr.PublishedKeys {
		k := botauth.DirectoryKey{NotBefore: pk.NotBefore, NotAfter: pk.NotAfter}
		if priv, err := botauth.ReadPrivateKey(pk.File); err == nil {
			k.Private = priv
		} else if k.Public, err = botauth.ReadPublicKey(pk.File); err != nil {
			return nil, fmt.Errorf("%w: crawler.published_keys[%d]: %w", ErrConfig, i, err)
		}
		if k.Public == nil {
			k.Public = k.Private.Public().(ed25519.PublicKey)
		}
		s.Keys = append(s.Keys, k)
	}
	s.Directory = botauth.NewDirectoryHandler(&botauth.DirectoryOptions{Keys: s.Keys})
	return s, nil
}
