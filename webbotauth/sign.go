package webbotauth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// Tag is the tag parameter of a Web Bot Auth request signature.
const Tag = "web-bot-auth"

// Label is the signature label, and the Signature-Agent member key, that
// LohiSoftBot's requests use.
const Label = "sig1"

// DefaultAgent is the Signature-Agent origin: where the key directory is.
const DefaultAgent = "https://lohisoft.com"

// DefaultValidity is how long a request signature is valid after it was
// created.
const DefaultValidity = 5 * time.Minute

// MaxValidity is the longest validity a signature may claim (the draft
// asks for short-lived signatures); the verifier refuses longer ones.
const MaxValidity = 24 * time.Hour

// nonceLen is the nonce's length in bytes, as in the reference
// implementation (64 random bytes, base64).
const nonceLen = 64

// SignerOptions configures a Signer.
type SignerOptions struct {
	// Agent is the Signature-Agent origin (scheme://host[:port]), where the
	// directory is served. Empty means DefaultAgent.
	Agent string
	// Validity is expires minus created. Zero means DefaultValidity; it is
	// capped at MaxValidity.
	Validity time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Signer signs requests with one key. It is safe for concurrent use.
type Signer struct {
	key      ed25519.PrivateKey
	keyID    string
	agent    string // the Signature-Agent field value
	origin   string
	validity time.Duration
	now      func() time.Time
}

// NewSigner returns a Signer for key. A nil options pointer is equivalent
// to a zero options value.
func NewSigner(key ed25519.PrivateKey, o *SignerOptions) (*Signer, error) {
	if o == nil {
		o = &SignerOptions{}
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: not an Ed25519 private key", ErrKeyFile)
	}
	origin, err := Origin(o.Agent)
	if err != nil {
		return nil, err
	}
	s := &Signer{key: key, keyID: Thumbprint(key.Public().(ed25519.PublicKey)), origin: origin,
		validity: o.Validity, now: o.Now}
	if s.validity <= 0 {
		s.validity = DefaultValidity
	}
	s.validity = min(s.validity, MaxValidity)
	if s.now == nil {
		s.now = time.Now
	}
	s.agent = Label + "=" + strconv.Quote(origin)
	return s, nil
}

// Origin checks that agent is an http(s) origin and returns it in its
// serialised form (lowercase scheme and host, no path). Empty means
// DefaultAgent.
func Origin(agent string) (string, error) {
	if agent == "" {
		agent = DefaultAgent
	}
	u, err := url.Parse(agent)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("webbotauth: signature agent %q is not an http(s) origin", agent)
	}
	return u.Scheme + "://" + httpsig.Authority(u.Scheme, u.Host), nil
}

// KeyID is the signer's keyid: its public key's thumbprint.
func (s *Signer) KeyID() string { return s.keyID }

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// Agent is the Signature-Agent origin.
func (s *Signer) Agent() string { return s.origin }

// Stamp is what a request was signed with: the evidence kept per request.
type Stamp struct {
	KeyID   string
	Created time.Time
	Expires time.Time
}

// Sign adds Signature-Agent, Signature-Input and Signature to req: one
// signature (label sig1) covering @authority and the signature-agent
// member, with created, keyid, alg, expires, nonce and tag="web-bot-auth"
// (draft-ietf-webbotauth-httpsig-protocol-01). It does no I/O.
func (s *Signer) Sign(req *http.Request) (Stamp, error) {
	var nonce [nonceLen]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return Stamp{}, fmt.Errorf("webbotauth: nonce: %w", err)
	}
	now := s.now()
	created := now.Unix()
	expires := now.Add(s.validity).Unix()
	req.Header.Set("Signature-Agent", s.agent)
	p := httpsig.NewParams(httpsig.NewComponent("@authority"), httpsig.NewComponent("signature-agent", "key", Label))
	p.Meta.Add("created", created)
	p.Meta.Add("keyid", s.keyID)
	p.Meta.Add("alg", "ed25519")
	p.Meta.Add("expires", expires)
	p.Meta.Add("nonce", base64.StdEncoding.EncodeToString(nonce[:]))
	p.Meta.Add("tag", Tag)
	sig, err := httpsig.SignEd25519(httpsig.FromRequest(req), p, s.key)
	if err != nil {
		return Stamp{}, fmt.Errorf("webbotauth: sign: %w", err)
	}
	in, sg, err := httpsig.Fields(httpsig.Signature{Label: Label, Params: p, Sig: sig})
	if err != nil {
		return Stamp{}, err
	}
	req.Header.Set("Signature-Input", in)
	req.Header.Set("Signature", sg)
	return Stamp{KeyID: s.keyID, Created: time.Unix(created, 0).UTC(), Expires: time.Unix(expires, 0).UTC()}, nil
}
