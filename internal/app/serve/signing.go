package serve

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/webbotauth"
)

// Signing is what the configuration's Web Bot Auth keys give: the
// crawler's signer and the key directory, built from the same files so the
// directory always lists the key the crawler signs with.
type Signing struct {
	// Signer signs the crawler's requests; nil when crawler.signing_key_file
	// is empty.
	Signer *webbotauth.Signer
	// Keys are the directory's keys: the signing key first, then
	// crawler.published_keys.
	Keys []webbotauth.DirectoryKey
	// Directory serves them at webbotauth.DirectoryPath.
	Directory *webbotauth.DirectoryHandler
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
		key, err := webbotauth.ReadPrivateKey(cr.SigningKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: crawler.signing_key_file: %w", ErrConfig, err)
		}
		if s.Signer, err = webbotauth.NewSigner(key, &webbotauth.SignerOptions{Agent: cr.SignatureAgent, Validity: time.Duration(cr.SignatureValidity)}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		s.Keys = append(s.Keys, webbotauth.DirectoryKey{Private: key, Public: key.Public().(ed25519.PublicKey)})
	}
	for i, pk := range cr.PublishedKeys {
		k := webbotauth.DirectoryKey{NotBefore: pk.NotBefore, NotAfter: pk.NotAfter}
		if priv, err := webbotauth.ReadPrivateKey(pk.File); err == nil {
			k.Private = priv
		} else if k.Public, err = webbotauth.ReadPublicKey(pk.File); err != nil {
			return nil, fmt.Errorf("%w: crawler.published_keys[%d]: %w", ErrConfig, i, err)
		}
		if k.Public == nil {
			k.Public = k.Private.Public().(ed25519.PublicKey)
		}
		s.Keys = append(s.Keys, k)
	}
	agent, err := webbotauth.Origin(cr.SignatureAgent)
	if err != nil {
		return nil, fmt.Errorf("%w: crawler.signature_agent: %w", ErrConfig, err)
	}
	// Signed for the configured authority, never for the Host a client sends.
	s.Directory = webbotauth.NewDirectoryHandler(&webbotauth.DirectoryOptions{Keys: s.Keys, Agent: agent})
	return s, nil
}
