package identity

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// The fields VerifyLog reads from a JSON log line.
const (
	roleAddr = iota
	roleTime
	roleRequest
	roleMethod
	roleTarget
	roleQuery
	roleHost
	roleStatus
	roleUA
	roleSigInput // Web Bot Auth: the request's Signature-Input, Signature and Signature-Agent
	roleSig
	roleSigAgent
	numRoles
)

// jsonKeys is the table of JSON field names, normalised by normKey, for each
// role in order of preference. It is built once and never changed.
var jsonKeys = newJSONKeyTable([numRoles][]string{
	roleAddr:     {"remoteaddr", "remoteip", "clientip", "ip", "clientaddr", "clienthost", "client", "cip", "sourceip", "srcip", "remotehost"},
	roleTime:     {"time", "timelocal", "timeiso8601", "timestamp", "ts", "datetime", "date", "starttime", "startutc", "msec"},
	roleRequest:  {"request", "requestline"},
	roleMethod:   {"method", "requestmethod", "httpmethod", "verb", "csmethod"},
	roleTarget:   {"requesturi", "uri", "url", "requesturl", "path", "requestpath", "target", "csuristem"},
	roleQuery:    {"querystring", "query", "args", "csuriquery"},
	roleHost:     {"host", "httphost", "vhost", "requesthost", "cshost"},
	roleStatus:   {"status", "statuscode", "responsestatus", "downstreamstatus", "scstatus"},
	roleUA:       {"useragent", "httpuseragent", "ua", "agent", "requestuseragent", "csuseragent"},
	roleSigInput: {"signatureinput", "httpsignatureinput", "requestsignatureinput"},
	roleSig:      {"signature", "httpsignature", "requestsignature"},
	roleSigAgent: {"signatureagent", "httpsignatureagent", "requestsignatureagent"},
})

// maxJSONKeys bounds the size of jsonKeys (checked when it is built).
const maxJSONKeys = 80

// jsonKeyTable numbers the names of all roles in one sequence: the names of
// role r are start[r] to start[r+1]-1, best first.
type jsonKeyTable struct {
	index map[string]int
	start [numRoles + 1]int
}

func newJSONKeyTable(roles [numRoles][]string) *jsonKeyTable {
	t := &jsonKeyTable{index: make(map[string]int)}
	n := 0
	for r, names := range roles {
		t.start[r] = n
		for _, name := range names {
			t.index[name] = n
			n++
		}
	}
	t.start[numRoles] = n
	if n > maxJSONKeys {
		panic("identity: jsonKeys holds more than maxJSONKeys names")
	}
	return t
}

// lookup returns the number of a raw field name, or -1. It does not
// allocate.
func (t *jsonKeyTable) lookup(raw []byte) int {
	var buf [32]byte
	b := buf[:0]
	for _, c := range raw {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		default:
			continue
		}
		if len(b) == len(buf) {
			return -1
		}
		b = append(b, c)
	}
	if i, ok := t.index[string(b)]; ok {
		return i
	}
	return -1
}

// jsonVal is the value found for one field name.
type jsonVal struct {
	b     []byte
	kind  byte // 0: none, 's': string, 'n': number
	depth int
}

// jsonScanner reads one JSON object per line, keeping only the fields of
// jsonKeys: a shallower field wins over a deeper one of the same name, an
// array stands for its first element (Caddy's headers). It validates the
// syntax of the whole line without building the object, and is reused from
// line to line.
type jsonScanner struct {
	b       []byte
	i       int
	vals    [maxJSONKeys]jsonVal
	touched []int // the indexes of vals set for this line
}

// maxJSONDepth bounds nesting; fields deeper than maxRecordDepth are ignored.
const (
	maxJSONDepth   = 64
	maxRecordDepth = 4
)

var errJSONSyntax = errors.New("not a JSON object")

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) peek(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

func (s *jsonScanner) scan(line []byte) error {
	s.b, s.i = line, 0
	for _, k := range s.touched {
		s.vals[k] = jsonVal{}
	}
	s.touched = s.touched[:0]
	s.ws()
	if !s.peek('{') {
		return errJSONSyntax
	}
	if err := s.value(0, -1, true); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return fmt.Errorf("data after the JSON object")
	}
	return nil
}

// value scans one value at nesting depth; a string or number is recorded
// as field key when key >= 0 and record is set.
func (s *jsonScanner) value(depth, key int, record bool) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("JSON nested too deep")
	}
	s.ws()
	if s.i >= len(s.b) {
		return errJSONSyntax
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.i++
		s.ws()
		if s.peek('}') {
			s.i++
			return nil
		}
		for {
			s.ws()
			k, err := s.str()
			if err != nil {
				return err
			}
			s.ws()
			if !s.peek(':') {
				return errJSONSyntax
			}
			s.i++
			idx := -1
			if record && depth < maxRecordDepth {
				idx = jsonKeys.lookup(k)
			}
			if err := s.value(depth+1, idx, record); err != nil {
				return err
			}
			s.ws()
			switch {
			case s.peek(','):
				s.i++
			case s.peek('}'):
				s.i++
				return nil
			default:
				return errJSONSyntax
			}
		}
	case c == '[':
		s.i++
		s.ws()
		if s.peek(']') {
			s.i++
			return nil
		}
		for first := true; ; first = false {
			if err := s.value(depth+1, key, record && first); err != nil {
				return err
			}
			s.ws()
			switch {
			case s.peek(','):
				s.i++
			case s.peek(']'):
				s.i++
				return nil
			default:
				return errJSONSyntax
			}
		}
	case c == '"':
		v, err := s.str()
		if err != nil {
			return err
		}
		if key >= 0 && record && len(v) > 0 && !(len(v) == 1 && v[0] == '-') {
			s.set(key, v, 's', depth)
		}
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		for s.i < len(s.b) && strings.IndexByte("0123456789+-.eE", s.b[s.i]) >= 0 {
			s.i++
		}
		if key >= 0 && record {
			s.set(key, s.b[start:s.i], 'n', depth)
		}
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if rest := s.b[s.i:]; len(rest) >= len(lit) && string(rest[:len(lit)]) == lit {
				s.i += len(lit)
				return nil
			}
		}
		return errJSONSyntax
	}
	return nil
}

func (s *jsonScanner) set(key int, v []byte, kind byte, depth int) {
	old := &s.vals[key]
	if old.kind == 0 {
		s.touched = append(s.touched, key)
	}
	if old.kind == 0 || depth < old.depth {
		*old = jsonVal{b: v, kind: kind, depth: depth}
	}
}

// str reads a string, returning its bytes: a slice of the line when it has
// no escapes, a decoded copy when it has.
func (s *jsonScanner) str() ([]byte, error) {
	if !s.peek('"') {
		return nil, errJSONSyntax
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, nil
		case c == '\\':
			return s.strEscaped(start)
		case c < 0x20:
			return nil, errJSONSyntax
		}
		s.i++
	}
	return nil, errJSONSyntax
}

func (s *jsonScanner) strEscaped(start int) ([]byte, error) {
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return out, nil
		case c < 0x20:
			return nil, errJSONSyntax
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return nil, errJSONSyntax
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, errJSONSyntax
			}
			if utf16.IsSurrogate(r) && bytes.HasPrefix(s.b[s.i:], []byte(`\u`)) {
				s.i += 2
				r2, ok := s.hex4()
				if !ok {
					return nil, errJSONSyntax
				}
				r = utf16.DecodeRune(r, r2)
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, errJSONSyntax
		}
	}
	return nil, errJSONSyntax
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		v, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	s.i += 4
	return r, true
}

// first returns the value of the best field of role, or nil.
func (s *jsonScanner) first(role int) *jsonVal {
	for i := jsonKeys.start[role]; i < jsonKeys.start[role+1]; i++ {
		if s.vals[i].kind != 0 {
			return &s.vals[i]
		}
	}
	return nil
}

func (s *jsonScanner) text(role int) []byte {
	if v := s.first(role); v != nil {
		return v.b
	}
	return nil
}

func (s *jsonScanner) parse(line []byte, e *rawEntry) error {
	if err := s.scan(line); err != nil {
		return err
	}
	addrOK := false
	for i := jsonKeys.start[roleAddr]; i < jsonKeys.start[roleAddr+1] && !addrOK; i++ {
		if v := s.vals[i]; v.kind == 's' {
			e.addr, addrOK = parseAddr(v.b)
			if !addrOK { // Traefik's ClientAddr: "1.2.3.4:5678"
				if ap, err := netip.ParseAddrPort(string(v.b)); err == nil {
					e.addr, addrOK = ap.Addr().Unmap(), true
				}
			}
		}
	}
	if !addrOK {
		return fmt.Errorf("no client address")
	}
	timeOK := false
	for i := jsonKeys.start[roleTime]; i < jsonKeys.start[roleTime+1] && !timeOK; i++ {
		switch v := s.vals[i]; v.kind {
		case 'n':
			if f, err := strconv.ParseFloat(string(v.b), 64); err == nil {
				e.t, timeOK = epochTime(f)
			}
		case 's':
			e.t, timeOK = parseTimeString(v.b)
		}
	}
	if !timeOK {
		return fmt.Errorf("no time")
	}
	if req := s.text(roleRequest); req != nil {
		e.method, e.target = splitRequestLine(req)
	}
	if len(e.target) == 0 {
		e.method = s.text(roleMethod)
		e.target = s.text(roleTarget)
		if q := s.text(roleQuery); len(q) > 0 && len(e.target) > 0 && bytes.IndexByte(e.target, '?') < 0 {
			t := make([]byte, 0, len(e.target)+1+len(q))
			t = append(append(append(t, e.target...), '?'), bytes.TrimPrefix(q, []byte{'?'})...)
			e.target = t
		}
	}
	if len(e.target) == 0 {
		return fmt.Errorf("no request")
	}
	e.host = s.text(roleHost)
	if st := s.text(roleStatus); st != nil {
		if n, ok := atoi(st); ok {
			e.status = n
		}
	}
	e.ua = s.text(roleUA)
	e.sigInput, e.sig, e.sigAgent = s.text(roleSigInput), s.text(roleSig), s.text(roleSigAgent)
	return nil
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700",
	"2006-01-02T15:04:05.999999999", // no zone: UTC
	"2006-01-02 15:04:05.999999999",
	time.RFC1123Z,
	time.RFC1123,
}

// parseTimeString reads a time written as RFC 3339, the Apache/nginx layout
// (in brackets or not), a few other common layouts (UTC when they have no
// zone), or a number of seconds since the epoch.
func parseTimeString(b []byte) (time.Time, bool) {
	b = bytes.TrimSpace(bytes.Trim(b, "[]"))
	if t, ok := parseCLFTime(b); ok {
		return t, true
	}
	s := string(b)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return epochTime(v)
	}
	return time.Time{}, false
}

// epochTime converts seconds since the epoch, or milli-, micro- or
// nanoseconds when the number is too large for seconds.
func epochTime(v float64) (time.Time, bool) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v <= 0:
		return time.Time{}, false
	case v > 1e17:
		v /= 1e9
	case v > 1e14:
		v /= 1e6
	case v > 1e11:
		v /= 1e3
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(), true
}
