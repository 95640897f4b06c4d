package webbotauth

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// ErrNotVerified is wrapped by every *VerifyError.
var ErrNotVerified = errors.New("webbotauth: signature not verified")

// Reasons a request's signature is refused (VerifyError.Code).
const (
	ReasonMissing      = "missing"       // no Signature-Input/Signature, or none tagged web-bot-auth
	ReasonMalformed    = "malformed"     // fields or parameters that cannot be used
	ReasonExpired      = "expired"       // now is after expires
	ReasonNotYetValid  = "not-yet-valid" // created is in the future
	ReasonUnknownKey   = "unknown-key"   // keyid is not in the directory
	ReasonKeyNotValid  = "key-not-valid" // created is outside the key's nbf..exp
	ReasonAuthority    = "wrong-authority"
	ReasonAgent        = "wrong-agent"
	ReasonBadSignature = "bad-signature" // the signature does not verify: tampered
)

// VerifyError says why a signature was refused.
type VerifyError struct {
	Code   string // one of the Reason constants
	Reason string // for people
}

func (e *VerifyError) Error() string { return "webbotauth: " + e.Reason }

// Unwrap makes errors.Is(err, ErrNotVerified) true.
func (e *VerifyError) Unwrap() error { return ErrNotVerified }

func refuse(code, format string, a ...any) *VerifyError {
	return &VerifyError{Code: code, Reason: fmt.Sprintf(format, a...)}
}

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Now is the time the request is judged at. Zero means time.Now().
	Now time.Time
	// Skew is how far created may lie in the future. Zero means 60 s.
	Skew time.Duration
	// Authority, when set, is the authority the request must have been
	// sent to (host[:port]).
	Authority string
	// Agent, when set, is the Signature-Agent origin the signature must
	// name.
	Agent string
	// IgnoreTime skips the created/expires check against Now (for old log
	// lines, judged at their own time by the caller).
	IgnoreTime bool
}

// Result is a verified signature.
type Result struct {
	Label     string
	KeyID     string
	Created   time.Time
	Expires   time.Time
	Agent     string // the covered Signature-Agent member, unquoted
	Authority string
}

// Verify checks m's Web Bot Auth signature against the keys of a
// directory: a signature tagged web-bot-auth, covering @authority (or
// @target-uri) and signature-agent when the field is present, with
// created and expires, within its validity at o.Now, by a listed key valid
// when it was created. It returns the first signature that verifies, or a
// *VerifyError for the first tagged one. A nil options pointer is
// equivalent to a zero options value.
func Verify(m *httpsig.Message, keys []JWK, o *VerifyOptions) (*Result, error) {
	if o == nil {
		o = &VerifyOptions{}
	}
	now, skew := o.Now, o.Skew
	if now.IsZero() {
		now = time.Now()
	}
	if skew <= 0 {
		skew = time.Minute
	}
	sigs, err := httpsig.Parse(m.Header)
	if errors.Is(err, httpsig.ErrMissing) {
		return nil, refuse(ReasonMissing, "the request carries no Signature-Input and Signature")
	}
	if err != nil {
		return nil, refuse(ReasonMalformed, "%v", strings.TrimPrefix(err.Error(), "httpsig: "))
	}
	var first *VerifyError
	for _, s := range sigs {
		if tag, _ := s.Params.Str("tag"); tag != Tag {
			continue
		}
		r, verr := verifyOne(m, s, keys, o, now, skew)
		if verr == nil {
			return r, nil
		}
		if first == nil {
			first = verr
		}
	}
	if first == nil {
		return nil, refuse(ReasonMissing, "no signature is tagged %q", Tag)
	}
	return nil, first
}

func verifyOne(m *httpsig.Message, s httpsig.Signature, keys []JWK, o *VerifyOptions, now time.Time, skew time.Duration) (*Result, *VerifyError) {
	p := s.Params
	kid, okK := p.Str("keyid")
	created, okC := p.Int("created")
	expires, okE := p.Int("expires")
	switch {
	case !okK || kid == "":
		return nil, refuse(ReasonMalformed, "signature %s has no keyid", s.Label)
	case !okC || !okE:
		return nil, refuse(ReasonMalformed, "signature %s lacks created or expires", s.Label)
	case expires <= created || time.Duration(expires-created)*time.Second > MaxValidity:
		return nil, refuse(ReasonMalformed, "signature %s claims a validity of %ds (at most %s)", s.Label, expires-created, MaxValidity)
	}
	if alg, ok := p.Str("alg"); ok && alg != "ed25519" {
		return nil, refuse(ReasonMalformed, "signature %s uses alg %q; LohiSoftBot signs with ed25519", s.Label, alg)
	}
	if !p.Covers("@authority") && !p.Covers("@target-uri") {
		return nil, refuse(ReasonMalformed, "signature %s covers neither @authority nor @target-uri", s.Label)
	}
	agent := ""
	if m.Header.Get("Signature-Agent") != "" {
		if !p.Covers("signature-agent") {
			return nil, refuse(ReasonMalformed, "signature %s does not cover the Signature-Agent field", s.Label)
		}
		agent = coveredAgent(m, p)
	}
	r := &Result{Label: s.Label, KeyID: kid, Created: time.Unix(created, 0).UTC(), Expires: time.Unix(expires, 0).UTC(), Agent: agent}
	if m.URL != nil {
		r.Authority = httpsig.Authority(m.URL.Scheme, authorityOf(m))
	} else {
		r.Authority = strings.ToLower(m.Authority)
	}
	if !o.IgnoreTime {
		if now.After(r.Expires) {
			return nil, refuse(ReasonExpired, "signature %s expired at %s (%s before the time judged, %s)", s.Label,
				r.Expires.Format(time.RFC3339), now.Sub(r.Expires).Round(time.Second), now.UTC().Format(time.RFC3339))
		}
		if r.Created.After(now.Add(skew)) {
			return nil, refuse(ReasonNotYetValid, "signature %s was created at %s, in the future", s.Label, r.Created.Format(time.RFC3339))
		}
	}
	if o.Authority != "" && !strings.EqualFold(r.Authority, o.Authority) {
		return nil, refuse(ReasonAuthority, "the request went to %s, not %s", r.Authority, o.Authority)
	}
	if o.Agent != "" {
		want, err := Origin(o.Agent)
		if err == nil && agent != want {
			return nil, refuse(ReasonAgent, "signature %s names Signature-Agent %q, not %q", s.Label, agent, want)
		}
	}
	j := findJWK(keys, kid)
	if j == nil {
		return nil, refuse(ReasonUnknownKey, "keyid %s is not a key of the directory", kid)
	}
	if (j.NotBefore != 0 && created < j.NotBefore) || (j.Expires != 0 && created > j.Expires) {
		return nil, refuse(ReasonKeyNotValid, "key %s may sign only from %s to %s, the signature was created at %s", kid,
			unixOr(j.NotBefore, "the start"), unixOr(j.Expires, "no end"), r.Created.Format(time.RFC3339))
	}
	pub, _ := j.PublicKey()
	if err := httpsig.VerifyEd25519(m, p, s.Sig, pub); err != nil {
		if errors.Is(err, httpsig.ErrInvalid) {
			return nil, refuse(ReasonBadSignature, "signature %s does not verify with key %s: the request was changed after signing, "+
				"or it was signed for another authority than %s", s.Label, kid, r.Authority)
		}
		return nil, refuse(ReasonMalformed, "%v", strings.TrimPrefix(err.Error(), "httpsig: "))
	}
	return r, nil
}

func authorityOf(m *httpsig.Message) string {
	if m.Authority != "" {
		return m.Authority
	}
	return m.URL.Host
}

// coveredAgent is the Signature-Agent value the signature covers: the
// member named by the component's key parameter, or the whole field.
func coveredAgent(m *httpsig.Message, p *httpsig.Params) string {
	vals := m.Header.Values("Signature-Agent")
	for _, c := range p.Components {
		if n, _ := c.Value.(string); n != "signature-agent" {
			continue
		}
		if k, ok := c.Params.Get("key"); ok {
			d, err := httpsfv.UnmarshalDictionary(vals)
			if err != nil {
				return ""
			}
			mem, _ := d.Get(k.(string))
			if it, ok := mem.(httpsfv.Item); ok {
				if s, ok := it.Value.(string); ok {
					return s
				}
			}
			return ""
		}
	}
	if it, err := httpsfv.UnmarshalItem(vals); err == nil {
		if s, ok := it.Value.(string); ok {
			return s
		}
	}
	return strings.Trim(strings.Join(vals, ", "), `"`)
}

func unixOr(t int64, zero string) string {
	if t == 0 {
		return zero
	}
	return time.Unix(t, 0).UTC().Format(time.RFC3339)
}
