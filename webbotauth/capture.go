package webbotauth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/webbotauth/httpsig"
)

// ErrCapture is wrapped by errors about a capture that cannot be read.
var ErrCapture = errors.New("webbotauth: unreadable capture")

// Captured is one request a webmaster captured.
type Captured struct {
	Message *httpsig.Message
	// At is when it was captured (HAR startedDateTime); zero if unknown.
	At time.Time
}

// ParseCapture reads captured requests: a HAR file (every entry whose
// request carries Signature-Input, or every entry when none does), a
// single HAR entry or request object, or the request as text: an optional
// request line ("GET /path HTTP/1.1") or HTTP/2 pseudo-header lines
// (":authority: host"), then "Name: value" header lines. The authority
// comes from the URL or the Host (or :authority) field; the scheme is
// https unless the text says otherwise.
func ParseCapture(b []byte) ([]Captured, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return parseHAR(t)
	}
	return parseText(b)
}

type harRequest struct {
	Method  string `json:"method"`
	URL     string `json:"url"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers"`
}

type harEntry struct {
	Started string      `json:"startedDateTime"`
	Request *harRequest `json:"request"`
}

func parseHAR(b []byte) ([]Captured, error) {
	var doc struct {
		Log *struct {
			Entries []harEntry `json:"entries"`
		} `json:"log"`
		harEntry
		harRequest
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCapture, err)
	}
	var entries []harEntry
	switch {
	case doc.Log != nil:
		entries = doc.Log.Entries
	case doc.Request != nil:
		entries = []harEntry{doc.harEntry}
	case doc.URL != "":
		r := doc.harRequest
		entries = []harEntry{{Request: &r}}
	}
	var all, signed []Captured
	for _, e := range entries {
		if e.Request == nil {
			continue
		}
		u, err := url.Parse(e.Request.URL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%w: request URL %q", ErrCapture, e.Request.URL)
		}
		h := http.Header{}
		for _, kv := range e.Request.Headers {
			name := kv.Name
			if strings.HasPrefix(name, ":") {
				if name == ":authority" {
					h.Set("Host", kv.Value)
				}
				continue
			}
			h.Add(name, kv.Value)
		}
		m := &httpsig.Message{Method: e.Request.Method, URL: u, Authority: h.Get("Host"), Header: h}
		if m.Method == "" {
			m.Method = http.MethodGet
		}
		c := Captured{Message: m}
		c.At, _ = time.Parse(time.RFC3339Nano, e.Started)
		all = append(all, c)
		if h.Get("Signature-Input") != "" {
			signed = append(signed, c)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: no request in the HAR", ErrCapture)
	}
	if len(signed) > 0 {
		return signed, nil
	}
	return all, nil
}

func parseText(b []byte) ([]Captured, error) {
	method, target, scheme, authority := "", "", "https", ""
	h := http.Header{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	var last string
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			if len(h) > 0 || method != "" {
				break // the end of the header section
			}
			continue
		}
		if first {
			first = false
			if f := strings.Fields(line); len(f) == 3 && strings.HasPrefix(f[2], "HTTP/") && !strings.Contains(f[0], ":") {
				method, target = f[0], f[1]
				continue
			}
		}
		if (line[0] == ' ' || line[0] == '\t') && last != "" {
			vs := h[last]
			vs[len(vs)-1] += " " + strings.TrimSpace(line) // obsolete line folding
			continue
		}
		if strings.HasPrefix(line, ":") {
			name, v, ok := strings.Cut(line[1:], ":")
			if !ok {
				return nil, fmt.Errorf("%w: line %q", ErrCapture, line)
			}
			v = strings.TrimSpace(v)
			switch strings.ToLower(name) {
			case "method":
				method = v
			case "path":
				target = v
			case "scheme":
				scheme = v
			case "authority":
				authority = v
			}
			continue
		}
		name, v, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("%w: line %q is no header field", ErrCapture, line)
		}
		last = textproto.CanonicalMIMEHeaderKey(name)
		h.Add(last, strings.TrimSpace(v))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCapture, err)
	}
	if authority == "" {
		authority = h.Get("Host")
	}
	if method == "" {
		method = http.MethodGet
	}
	if target == "" {
		target = "/"
	}
	var u *url.URL
	if strings.Contains(target, "://") {
		pu, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("%w: request target %q", ErrCapture, target)
		}
		u = pu
		if authority == "" {
			authority = u.Host
		}
	} else {
		if authority == "" {
			return nil, fmt.Errorf("%w: no Host field (or :authority) says where the request went", ErrCapture)
		}
		pu, err := url.Parse(scheme + "://" + authority + target)
		if err != nil {
			return nil, fmt.Errorf("%w: request target %q", ErrCapture, target)
		}
		u = pu
	}
	return []Captured{{Message: &httpsig.Message{Method: method, URL: u, Authority: authority, Header: h}}}, nil
}

// FormatRequest writes req's request line and header fields as text, the
// form ParseCapture reads.
func FormatRequest(req *http.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", req.Method, req.URL.RequestURI())
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	fmt.Fprintf(&b, "Host: %s\r\n", host)
	req.Header.Write(&b)
	b.WriteString("\r\n")
	return b.String()
}
