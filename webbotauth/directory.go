package webbotauth

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// DirectoryPath is the well-known path of the key directory.
const DirectoryPath = "/.well-known/http-message-signatures-directory"

// MediaType is the directory's media type.
const MediaType = "application/http-message-signatures-directory+json"

// DirectoryTag is the tag of the signature over a directory response.
const DirectoryTag = "http-message-signatures-directory"

// Directory is a key directory: a JWK Set (RFC 7517 Section 5).
type Directory struct {
	Keys []JWK `json:"keys"`
}

// DirectoryKey is one key a directory lists. Private, when set, also signs
// the directory response (proving its holder serves it). NotBefore and
// NotAfter bound when the key may sign requests (zero: unbounded); a key
// is listed from the start until NotAfter has passed, so a new key is
// published before it signs and an old one stays until its last signature
// expired.
type DirectoryKey struct {
	Public    ed25519.PublicKey
	Private   ed25519.PrivateKey
	NotBefore time.Time
	NotAfter  time.Time
}

// DirectoryOptions configures a DirectoryHandler.
type DirectoryOptions struct {
	// Keys are the keys to list; duplicates (by thumbprint) are merged.
	Keys []DirectoryKey
	// Validity is how long the directory's signature is valid. Zero means
	// one hour.
	Validity time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Agent is the signature-agent origin the directory is served for
	// (https://lohisoft.com): its signatures cover that authority,
	// whatever Host a client or a proxy sends, so that no one can have a
	// valid directory signature for another name. Empty means the
	// request's Host (a directory served on its own, as in tests).
	Agent string
}

// DirectoryHandler serves the key directory with its signature. It is
// safe for concurrent use.
type DirectoryHandler struct {
	keys      []DirectoryKey
	validity  time.Duration
	now       func() time.Time
	scheme    string // of Options.Agent; "" when none
	authority string // of Options.Agent; "" when none
}

// NewDirectoryHandler returns the handler for o. A nil options pointer is
// equivalent to a zero options value (an empty directory).
func NewDirectoryHandler(o *DirectoryOptions) *DirectoryHandler {
	if o == nil {
		o = &DirectoryOptions{}
	}
	h := &DirectoryHandler{validity: o.Validity, now: o.Now}
	if o.Agent != "" {
		if u, err := url.Parse(o.Agent); err == nil && u.Host != "" {
			h.scheme, h.authority = u.Scheme, httpsig.Authority(u.Scheme, u.Host)
		}
	}
	if h.validity <= 0 {
		h.validity = time.Hour
	}
	if h.now == nil {
		h.now = time.Now
	}
	seen := map[string]int{}
	for _, k := range o.Keys {
		if k.Public == nil && k.Private != nil {
			k.Public = k.Private.Public().(ed25519.PublicKey)
		}
		if len(k.Public) != ed25519.PublicKeySize {
			continue
		}
		id := Thumbprint(k.Public)
		if i, ok := seen[id]; ok {
			first := &h.keys[i]
			if first.Private == nil {
				first.Private = k.Private
			}
			if first.NotBefore.IsZero() {
				first.NotBefore = k.NotBefore
			}
			if first.NotAfter.IsZero() {
				first.NotAfter = k.NotAfter
			}
			continue
		}
		seen[id] = len(h.keys)
		h.keys = append(h.keys, k)
	}
	return h
}

// Directory returns the directory as listed at now: every key whose
// NotAfter has not passed.
func (h *DirectoryHandler) Directory(now time.Time) Directory {
	d := Directory{Keys: []JWK{}}
	for _, k := range h.keys {
		if !k.NotAfter.IsZero() && now.After(k.NotAfter) {
			continue
		}
		j := PublicJWK(k.Public)
		if !k.NotBefore.IsZero() {
			j.NotBefore = k.NotBefore.Unix()
		}
		if !k.NotAfter.IsZero() {
			j.Expires = k.NotAfter.Unix()
		}
		d.Keys = append(d.Keys, j)
	}
	return d
}

// ServeHTTP answers GET and HEAD with the directory, its media type, and
// one signature per listed key whose private part is known, each covering
// "@authority";req with tag="http-message-signatures-directory"
// (draft-meunier-webbotauth-httpsig-directory-00, Section 4).
func (h *DirectoryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	now := h.now()
	body, _ := json.MarshalIndent(h.Directory(now), "", "  ")
	body = append(body, '\n')
	w.Header().Set("Content-Type", MediaType)
	w.Header().Set("Cache-Control", "max-age=300")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if h.authority != "" {
		scheme, host = h.scheme, h.authority
	}
	req := &httpsig.Message{Method: r.Method, URL: &url.URL{Scheme: scheme, Host: host, Path: r.URL.Path}, Header: r.Header}
	resp := &httpsig.Message{Status: http.StatusOK, Header: w.Header(), Request: req}
	var sigs []httpsig.Signature
	for _, k := range h.keys {
		if k.Private == nil || (!k.NotAfter.IsZero() && now.After(k.NotAfter)) {
			continue
		}
		p := httpsig.NewParams(httpsig.NewComponent("@authority", "req", true))
		p.Meta.Add("alg", "ed25519")
		p.Meta.Add("keyid", Thumbprint(k.Public))
		p.Meta.Add("created", now.Unix())
		p.Meta.Add("expires", now.Add(h.validity).Unix())
		p.Meta.Add("tag", DirectoryTag)
		sig, err := httpsig.SignEd25519(resp, p, k.Private)
		if err != nil {
			continue
		}
		sigs = append(sigs, httpsig.Signature{Label: "binding" + strconv.Itoa(len(sigs)), Params: p, Sig: sig})
	}
	if len(sigs) > 0 {
		if in, sg, err := httpsig.Fields(sigs...); err == nil {
			w.Header().Set("Signature-Input", in)
			w.Header().Set("Signature", sg)
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// ParseDirectory parses a directory (a JWK Set), or a single key: a JWK,
// or a PEM public or private key.
func ParseDirectory(b []byte) (*Directory, error) {
	var d Directory
	t := strings.TrimSpace(string(b))
	if strings.HasPrefix(t, "{") && strings.Contains(t, `"keys"`) {
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("webbotauth: directory: %w", err)
		}
		return &d, nil
	}
	p, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("webbotauth: neither a directory nor a key: %w", err)
	}
	return &Directory{Keys: []JWK{PublicJWK(p)}}, nil
}

// ErrDirectory is wrapped by errors about a directory that cannot be had
// or trusted.
var ErrDirectory = errors.New("webbotauth: directory")

// DirectoryURL returns the directory URL of an origin, or agent itself
// when it has a path already.
func DirectoryURL(agent string) (string, error) {
	u, err := url.Parse(agent)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%w: %q is not an http(s) URL", ErrDirectory, agent)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = DirectoryPath
	}
	return u.String(), nil
}

// FetchDirectory fetches the directory at rawURL (an origin or the
// directory's URL) with client. When the response is signed, at least one
// signature by a key it lists must verify (else the directory is refused).
// It does network I/O.
func FetchDirectory(ctx context.Context, client *http.Client, rawURL string, now time.Time) (*Directory, error) {
	u, err := DirectoryURL(rawURL)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDirectory, err)
	}
	req.Header.Set("Accept", MediaType+", application/json;q=0.9")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDirectory, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %s", ErrDirectory, u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDirectory, err)
	}
	var d Directory
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDirectory, u, err)
	}
	if resp.Header.Get("Signature") != "" {
		reqMsg := httpsig.FromRequest(req)
		m := &httpsig.Message{Status: resp.StatusCode, Header: resp.Header, Request: reqMsg}
		if err := verifyDirectory(m, d.Keys, now); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrDirectory, u, err)
		}
	}
	return &d, nil
}

// verifyDirectory checks that one of m's directory signatures verifies
// with one of keys and has not expired.
func verifyDirectory(m *httpsig.Message, keys []JWK, now time.Time) error {
	sigs, err := httpsig.Parse(m.Header)
	if err != nil {
		return err
	}
	for _, s := range sigs {
		if tag, _ := s.Params.Str("tag"); tag != DirectoryTag {
			continue
		}
		if exp, ok := s.Params.Int("expires"); ok && now.Unix() > exp {
			continue
		}
		kid, _ := s.Params.Str("keyid")
		pub := findKey(keys, kid)
		if pub == nil {
			continue
		}
		if httpsig.VerifyEd25519(m, s.Params, s.Sig, pub) == nil {
			return nil
		}
	}
	return errors.New("no valid directory signature by a key it lists")
}

// findKey returns the key of keys whose thumbprint is kid, and its JWK.
func findKey(keys []JWK, kid string) ed25519.PublicKey {
	j := findJWK(keys, kid)
	if j == nil {
		return nil
	}
	p, _ := j.PublicKey()
	return p
}

func findJWK(keys []JWK, kid string) *JWK {
	for i, j := range keys {
		p, err := j.PublicKey()
		if err == nil && Thumbprint(p) == kid {
			return &keys[i]
		}
	}
	return nil
}
