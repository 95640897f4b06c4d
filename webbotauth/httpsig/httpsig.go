// Package httpsig is the part of HTTP Message Signatures (RFC 9421) that
// LohiSoftBot needs: the signature base (RFC 9421 Section 2.5) of a request
// or a response, Ed25519 signing and verifying (Section 3.3.6), and the
// Signature-Input and Signature fields (Section 4). Structured fields
// (RFC 9651) are parsed and serialised by github.com/dunglas/httpsfv.
//
// Supported components: @method, @target-uri, @authority, @scheme,
// @request-target, @path, @query, and header fields, with the "key"
// (dictionary member), "sf" and "req" parameters. Functions do no I/O and
// are safe for concurrent use.
package httpsig

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dunglas/httpsfv"
)

// ErrMalformed is wrapped by errors about fields that cannot be parsed.
var ErrMalformed = errors.New("httpsig: malformed signature fields")

// ErrMissing is returned when a message has no signature with the asked
// label (or none at all).
var ErrMissing = errors.New("httpsig: no signature")

// ErrInvalid is returned when a signature does not verify.
var ErrInvalid = errors.New("httpsig: signature does not verify")

// Message is an HTTP message as a signature sees it. For a response,
// Request is the request it answers (for components with the "req"
// parameter).
type Message struct {
	Method    string // requests only
	URL       *url.URL
	Authority string // the Host; empty means URL.Host
	Status    int    // responses only
	Header    http.Header
	Request   *Message
}

// FromRequest is the Message of r.
func FromRequest(r *http.Request) *Message {
	return &Message{Method: r.Method, URL: r.URL, Authority: r.Host, Header: r.Header}
}

// Component is one covered component: a name ("@authority" or a lowercase
// field name) with its parameters.
type Component = httpsfv.Item

// NewComponent returns the component name with the parameters given as
// name, value pairs (values: string, bool).
func NewComponent(name string, params ...any) Component {
	c := httpsfv.NewItem(name)
	for i := 0; i+1 < len(params); i += 2 {
		c.Params.Add(params[i].(string), params[i+1])
	}
	return c
}

// Params are a signature's metadata (RFC 9421 Section 2.3): the covered
// components and the parameters, in their order.
type Params struct {
	Components []Component
	Meta       *httpsfv.Params
}

// NewParams returns Params covering components, with no parameters yet.
func NewParams(components ...Component) *Params {
	return &Params{Components: components, Meta: httpsfv.NewParams()}
}

func (p *Params) inner() httpsfv.InnerList {
	return httpsfv.InnerList{Items: p.Components, Params: p.Meta}
}

// String serialises p as the value of @signature-params and of the
// Signature-Input member (RFC 9421 Section 2.3).
func (p *Params) String() string {
	s, err := httpsfv.Marshal(p.inner())
	if err != nil {
		return ""
	}
	return s
}

// Int returns the integer parameter name (created, expires).
func (p *Params) Int(name string) (int64, bool) {
	v, ok := p.Meta.Get(name)
	i, isInt := v.(int64)
	return i, ok && isInt
}

// Str returns the string parameter name (keyid, alg, nonce, tag).
func (p *Params) Str(name string) (string, bool) {
	v, ok := p.Meta.Get(name)
	s, isStr := v.(string)
	return s, ok && isStr
}

// Covers says whether p covers the component name (with any parameters).
func (p *Params) Covers(name string) bool {
	for _, c := range p.Components {
		if n, _ := c.Value.(string); n == name {
			return true
		}
	}
	return false
}

// Base returns the signature base of m for p (RFC 9421 Section 2.5).
func Base(m *Message, p *Params) (string, error) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, c := range p.Components {
		id, err := httpsfv.Marshal(c)
		if err != nil {
			return "", fmt.Errorf("%w: component: %v", ErrMalformed, err)
		}
		if seen[id] {
			return "", fmt.Errorf("%w: component %s covered twice", ErrMalformed, id)
		}
		seen[id] = true
		v, err := value(m, c)
		if err != nil {
			return "", err
		}
		b.WriteString(id)
		b.WriteString(": ")
		b.WriteString(v)
		b.WriteByte('\n')
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(p.String())
	return b.String(), nil
}

// value is the component value of c in m (RFC 9421 Sections 2.1, 2.2).
func value(m *Message, c Component) (string, error) {
	name, ok := c.Value.(string)
	if !ok || name == "" || name != strings.ToLower(name) {
		return "", fmt.Errorf("%w: component name %v", ErrMalformed, c.Value)
	}
	var key string
	var sf, req bool
	for _, pn := range c.Params.Names() {
		pv, _ := c.Params.Get(pn)
		switch pn {
		case "key":
			k, ok := pv.(string)
			if !ok {
				return "", fmt.Errorf("%w: key parameter of %s", ErrMalformed, name)
			}
			key = k
		case "sf":
			sf = pv == true
		case "req":
			req = pv == true
		default:
			return "", fmt.Errorf("httpsig: unsupported parameter %q of component %s", pn, name)
		}
	}
	if req {
		if m.Request == nil {
			return "", fmt.Errorf("httpsig: component %s;req needs the request", name)
		}
		m = m.Request
	}
	if strings.HasPrefix(name, "@") {
		return derived(m, name)
	}
	vals := slices.Clone(m.Header.Values(name))
	if len(vals) == 0 {
		return "", fmt.Errorf("httpsig: covered field %s is missing", name)
	}
	for i, v := range vals {
		vals[i] = strings.Trim(v, " \t")
	}
	switch {
	case key != "":
		d, err := httpsfv.UnmarshalDictionary(vals)
		if err != nil {
			return "", fmt.Errorf("%w: field %s is no dictionary: %v", ErrMalformed, name, err)
		}
		mem, ok := d.Get(key)
		if !ok {
			return "", fmt.Errorf("httpsig: field %s has no member %q", name, key)
		}
		s, err := httpsfv.Marshal(mem)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return s, nil
	case sf:
		if d, err := httpsfv.UnmarshalDictionary(vals); err == nil {
			if s, err := httpsfv.Marshal(d); err == nil {
				return s, nil
			}
		}
		if l, err := httpsfv.UnmarshalList(vals); err == nil {
			if s, err := httpsfv.Marshal(l); err == nil {
				return s, nil
			}
		}
		if it, err := httpsfv.UnmarshalItem(vals); err == nil {
			if s, err := httpsfv.Marshal(it); err == nil {
				return s, nil
			}
		}
		return "", fmt.Errorf("%w: field %s is no structured field", ErrMalformed, name)
	}
	return strings.Join(vals, ", "), nil
}

// derived is a derived component's value (RFC 9421 Section 2.2).
func derived(m *Message, name string) (string, error) {
	u := m.URL
	if u == nil && name != "@method" {
		return "", fmt.Errorf("httpsig: component %s needs the target URI", name)
	}
	switch name {
	case "@method":
		if m.Method == "" {
			return "", fmt.Errorf("httpsig: component @method of a response")
		}
		return m.Method, nil
	case "@authority":
		return Authority(u.Scheme, m.authority()), nil
	case "@scheme":
		return strings.ToLower(u.Scheme), nil
	case "@target-uri":
		t := *u
		t.Host = Authority(u.Scheme, m.authority())
		t.Scheme = strings.ToLower(u.Scheme)
		t.Fragment, t.RawFragment = "", ""
		return t.String(), nil
	case "@path":
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		return p, nil
	case "@query":
		return "?" + u.RawQuery, nil
	case "@request-target":
		return u.RequestURI(), nil
	}
	return "", fmt.Errorf("httpsig: unsupported component %s", name)
}

func (m *Message) authority() string {
	if m.Authority != "" {
		return m.Authority
	}
	return m.URL.Host
}

// Authority normalises host (host[:port]) for @authority: lowercase, the
// scheme's default port left out (RFC 9421 Section 2.2.3).
func Authority(scheme, host string) string {
	host = strings.ToLower(host)
	switch {
	case strings.EqualFold(scheme, "https") && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	case strings.EqualFold(scheme, "http") && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	}
	return host
}

// SignEd25519 signs m's base for p with key and returns the signature.
func SignEd25519(m *Message, p *Params, key ed25519.PrivateKey) ([]byte, error) {
	base, err := Base(m, p)
	if err != nil {
		return nil, err
	}
	return ed25519.Sign(key, []byte(base)), nil
}

// VerifyEd25519 checks sig over m's base for p with key. It returns nil,
// ErrInvalid, or why the base could not be built.
func VerifyEd25519(m *Message, p *Params, sig []byte, key ed25519.PublicKey) error {
	base, err := Base(m, p)
	if err != nil {
		return err
	}
	if len(key) != ed25519.PublicKeySize || !ed25519.Verify(key, []byte(base), sig) {
		return ErrInvalid
	}
	return nil
}

// Signature is one labelled signature of a message.
type Signature struct {
	Label  string
	Params *Params
	Sig    []byte
}

// Parse returns the signatures of h's Signature-Input and Signature fields,
// in Signature-Input's order. It returns ErrMissing when there is none, and
// an error wrapping ErrMalformed when the fields cannot be parsed or do
// not match.
func Parse(h http.Header) ([]Signature, error) {
	in, sg := h.Values("Signature-Input"), h.Values("Signature")
	if len(in) == 0 && len(sg) == 0 {
		return nil, ErrMissing
	}
	if len(in) == 0 || len(sg) == 0 {
		return nil, fmt.Errorf("%w: Signature-Input and Signature must come together", ErrMalformed)
	}
	di, err := httpsfv.UnmarshalDictionary(in)
	if err != nil {
		return nil, fmt.Errorf("%w: Signature-Input: %v", ErrMalformed, err)
	}
	ds, err := httpsfv.UnmarshalDictionary(sg)
	if err != nil {
		return nil, fmt.Errorf("%w: Signature: %v", ErrMalformed, err)
	}
	var out []Signature
	for _, label := range di.Names() {
		mi, _ := di.Get(label)
		il, ok := mi.(httpsfv.InnerList)
		if !ok {
			return nil, fmt.Errorf("%w: Signature-Input member %s is not an inner list", ErrMalformed, label)
		}
		ms, ok := ds.Get(label)
		if !ok {
			return nil, fmt.Errorf("%w: Signature has no member %s", ErrMalformed, label)
		}
		it, ok := ms.(httpsfv.Item)
		b, isBytes := it.Value.([]byte)
		if !ok || !isBytes {
			return nil, fmt.Errorf("%w: Signature member %s is not a byte sequence", ErrMalformed, label)
		}
		for _, c := range il.Items {
			if _, ok := c.Value.(string); !ok {
				return nil, fmt.Errorf("%w: Signature-Input member %s has a non-string component", ErrMalformed, label)
			}
		}
		out = append(out, Signature{Label: label, Params: &Params{Components: il.Items, Meta: il.Params}, Sig: b})
	}
	if len(out) == 0 {
		return nil, ErrMissing
	}
	return out, nil
}

// Fields returns the Signature-Input and Signature field values carrying
// sigs (RFC 9421 Section 4).
func Fields(sigs ...Signature) (input, signature string, err error) {
	di, ds := httpsfv.NewDictionary(), httpsfv.NewDictionary()
	for _, s := range sigs {
		di.Add(s.Label, s.Params.inner())
		ds.Add(s.Label, httpsfv.NewItem(s.Sig))
	}
	if input, err = httpsfv.Marshal(di); err != nil {
		return "", "", fmt.Errorf("httpsig: %w", err)
	}
	if signature, err = httpsfv.Marshal(ds); err != nil {
		return "", "", fmt.Errorf("httpsig: %w", err)
	}
	return input, signature, nil
}
