package identity

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"
)

// Format is the layout of a webmaster's access log.
type Format string

// The access log formats VerifyLog reads.
const (
	// FormatCombined is the NCSA combined format of Apache and nginx:
	//	%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"
	// Apache's vhost_combined ("%v:%p " in front) is accepted too, and
	// fields after the user agent are ignored.
	FormatCombined Format = "combined"
	// FormatCommon is the NCSA common format, combined without referer and
	// user agent. Its lines carry no user agent, so none of them claims to
	// be LohiSoftBot (see LogOptions.AssumeClaimed).
	FormatCommon Format = "common"
	// FormatJSON is one JSON object per line, with the usual field names of
	// nginx, Apache, Caddy and Traefik JSON logs (see ParseLine).
	FormatJSON Format = "json"
)

// ErrBadFormat is returned (wrapped) by ParseFormat for an unknown format
// name.
var ErrBadFormat = errors.New("identity: unknown access log format")

// ErrMalformed is wrapped by ParseLine's errors: the line is not in the
// format. VerifyLog counts such lines and skips them.
var ErrMalformed = errors.New("identity: malformed access log line")

// MaxLineSize is the longest access log line VerifyLog reads; longer lines
// are counted as malformed and skipped.
const MaxLineSize = 64 << 10

// ParseFormat returns the Format named by s (combined, common or json, in
// any case). An empty string or "auto" returns "", which tells VerifyLog to
// detect the format from the log's first lines.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "", "auto":
		return "", nil
	case FormatCombined, FormatCommon, FormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("%w %q: want combined, common or json", ErrBadFormat, s)
}

// Entry is one request of an access log.
type Entry struct {
	// Addr is the client address, IPv4-mapped addresses unmapped.
	Addr netip.Addr
	// Time is when the server logged the request.
	Time time.Time
	// Method is the request method; empty when the request line could not be
	// read (such as "-", or bytes of a TLS handshake).
	Method string
	// Target is the request target as logged: /path?query, or an absolute
	// URL; empty when the request line could not be read.
	Target string
	// Host is the virtual host, when the format logs one (vhost_combined,
	// JSON logs); empty otherwise.
	Host string
	// Status is the response status, or 0 when not logged.
	Status int
	// UserAgent is the User-Agent header; empty when absent or "-".
	UserAgent string
}

// ParseLine parses one line (without its line ending) of an access log in
// format f, which must not be empty. Its errors wrap ErrMalformed.
//
// JSON lines are objects whose fields are found by name, case and
// punctuation ignored, nested objects included (Caddy's request.remote_ip):
// the address in remote_addr, remote_ip, client_ip, ip, ClientAddr...; the
// time in time, time_local, time_iso8601, timestamp, ts, @timestamp...
// (RFC 3339, the Apache/nginx time, or seconds since the epoch); the request
// in request ("GET /x HTTP/1.1"), or method with uri, request_uri, path or
// url; the user agent in user_agent, http_user_agent, ua, agent or a
// User-Agent header; the status in status or status_code; the virtual host
// in host or http_host. An address, a time and a request are required.
func ParseLine(f Format, line []byte) (Entry, error) {
	var r rawEntry
	if err := parseLine(f, line, &r, nil); err != nil {
		return Entry{}, err
	}
	return r.entry(), nil
}

// rawEntry is an Entry whose text fields still point into the line (or into
// unescaped copies): the hot path converts them to strings only for the
// lines that claim to be LohiSoftBot.
type rawEntry struct {
	addr                     netip.Addr
	t                        time.Time
	method, target, host, ua []byte
	status                   int
	sigInput, sig, sigAgent  []byte // JSON logs only
}

func (r *rawEntry) entry() Entry {
	return Entry{Addr: r.addr, Time: r.t, Method: string(r.method), Target: string(r.target),
		Host: string(r.host), Status: r.status, UserAgent: string(r.ua)}
}

// parseLine parses line into r; js, when not nil, is reused for JSON.
func parseLine(f Format, line []byte, r *rawEntry, js *jsonScanner) error {
	*r = rawEntry{}
	var err error
	switch f {
	case FormatCombined:
		err = parseNCSA(line, true, r)
	case FormatCommon:
		err = parseNCSA(line, false, r)
	case FormatJSON:
		if js == nil {
			js = new(jsonScanner)
		}
		err = js.parse(line, r)
	default:
		return fmt.Errorf("%w %q", ErrBadFormat, f)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}

// DetectFormat guesses the format of a log line: json for an object,
// combined when the line parses as combined, common when it parses as
// common, and "" when it is none of them.
func DetectFormat(line []byte) Format {
	line = bytes.TrimSpace(line)
	for _, f := range []Format{FormatJSON, FormatCombined, FormatCommon} {
		if f == FormatJSON && (len(line) == 0 || line[0] != '{') {
			continue
		}
		if _, err := ParseLine(f, line); err == nil {
			return f
		}
	}
	return ""
}

// botToken is the product token of LohiSoftBot's user agent, lowercase.
const botToken = "lohisoftbot"

// ClaimsBot reports whether a user agent claims to be LohiSoftBot: it holds
// the product token LohiSoftBot, in any case, as a whole word
// ("Mozilla/5.0 (compatible; lohisoftbot/1.0)" does; "NotLohiSoftBot" and
// "LohiSoftBotX" do not).
func ClaimsBot(userAgent string) bool { return claimsBot(userAgent) }

func claimsBot[T string | []byte](s T) bool {
	n := len(botToken)
	for i := 0; i+n <= len(s); i++ {
		if s[i]|0x20 != 'l' {
			continue
		}
		j := 1
		for j < n && s[i+j]|0x20 == botToken[j] { // exact for ASCII letters
			j++
		}
		if j == n && (i == 0 || !isWordByte(s[i-1])) && (i+n == len(s) || !isWordByte(s[i+n])) {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// lineReader reads an access log line by line, gunzipping it when it starts
// with the gzip magic bytes, in bounded memory.
type lineReader struct {
	br *bufio.Reader
	zr *gzip.Reader // nil for plain text
}

func newLineReader(r io.Reader) (*lineReader, error) {
	br := bufio.NewReaderSize(r, MaxLineSize)
	lr := &lineReader{br: br}
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		lr.zr = zr
		lr.br = bufio.NewReaderSize(zr, MaxLineSize)
	}
	return lr, nil
}

// next returns the next line without its line ending, valid until the next
// call. A line longer than MaxLineSize is skipped and reported as tooLong.
// At the end it returns io.EOF.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	line, err = lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = lr.br.ReadSlice('\n')
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		return nil, true, nil
	}
	if err != nil {
		if !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		if len(line) == 0 {
			return nil, false, io.EOF
		}
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, false, nil
}

// ncsa scans one line of the NCSA formats.
type ncsa struct {
	b []byte
	i int
}

func (p *ncsa) skipSpaces() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
}

// token returns the next run of non-space bytes.
func (p *ncsa) token() []byte {
	p.skipSpaces()
	start := p.i
	for p.i < len(p.b) && p.b[p.i] != ' ' && p.b[p.i] != '\t' {
		p.i++
	}
	return p.b[start:p.i]
}

// bracketed returns the text between [ and ].
func (p *ncsa) bracketed() ([]byte, bool) {
	p.skipSpaces()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return nil, false
	}
	end := bytes.IndexByte(p.b[p.i:], ']')
	if end < 0 {
		return nil, false
	}
	s := p.b[p.i+1 : p.i+end]
	p.i += end + 1
	return s, true
}

// quoted returns the text of a double-quoted field, undoing the escapes of
// Apache (\" \\ \xHH) and nginx (\xHH).
func (p *ncsa) quoted() ([]byte, bool) {
	p.skipSpaces()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	p.i++
	start := p.i
	escaped := false
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			escaped = true
			p.i += 2
			continue
		case '"':
			raw := p.b[start:p.i]
			p.i++
			if !escaped {
				return raw, true
			}
			return unescapeLog(raw), true
		}
		p.i++
	}
	return nil, false
}

func unescapeLog(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'x':
			if i+2 < len(raw) {
				if v, ok := unhex2(raw[i+1], raw[i+2]); ok {
					out = append(out, v)
					i += 2
					continue
				}
			}
			out = append(out, '\\', 'x')
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		default:
			out = append(out, raw[i])
		}
	}
	return out
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func unhex2(a, b byte) (byte, bool) {
	x, ok1 := unhex(a)
	y, ok2 := unhex(b)
	return x<<4 | y, ok1 && ok2
}

// parseNCSA reads the common format and, when combined is set, the referer
// and user agent after it.
func parseNCSA(line []byte, combined bool, e *rawEntry) error {
	p := &ncsa{b: line}
	first := p.token()
	addr, ok := parseAddr(first)
	if !ok {
		// Apache's vhost_combined: "%v:%p %h ...".
		second := p.token()
		if addr, ok = parseAddr(second); !ok {
			return fmt.Errorf("no client address")
		}
		e.host = first
	}
	e.addr = addr
	ident, user := p.token(), p.token()
	if len(ident) == 0 || len(user) == 0 {
		return fmt.Errorf("no user fields")
	}
	ts, ok := p.bracketed()
	if !ok {
		return fmt.Errorf("no [time]")
	}
	t, ok := parseCLFTime(ts)
	if !ok {
		return fmt.Errorf("bad time %q", ts)
	}
	e.t = t
	req, ok := p.quoted()
	if !ok {
		return fmt.Errorf("no \"request\"")
	}
	e.method, e.target = splitRequestLine(req)
	status := p.token()
	if len(status) != 1 || status[0] != '-' {
		n, ok := atoi(status)
		if !ok || n < 100 || n > 999 {
			return fmt.Errorf("bad status %q", status)
		}
		e.status = n
	}
	size := p.token()
	if len(size) != 1 || size[0] != '-' {
		if _, ok := atoi(size); !ok {
			return fmt.Errorf("bad size %q", size)
		}
	}
	if !combined {
		return nil
	}
	if _, ok := p.quoted(); !ok {
		return fmt.Errorf("no \"referer\"")
	}
	ua, ok := p.quoted()
	if !ok {
		return fmt.Errorf("no \"user agent\"")
	}
	if len(ua) != 1 || ua[0] != '-' {
		e.ua = ua
	}
	return nil
}

// parseAddr parses a client address as logged, unmapping IPv4-mapped IPv6.
func parseAddr(b []byte) (netip.Addr, bool) {
	if len(b) == 0 || len(b) > 64 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(string(b))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// splitRequestLine splits "GET /path HTTP/1.1" into method and target. A
// request line that is not one ("-", garbage) gives nothing.
func splitRequestLine(req []byte) (method, target []byte) {
	method, rest, ok := bytes.Cut(req, []byte{' '})
	if !ok || len(method) == 0 || !isToken(method) {
		return nil, nil
	}
	target, _, _ = bytes.Cut(bytes.TrimLeft(rest, " "), []byte{' '})
	if len(target) == 0 {
		return nil, nil
	}
	return method, target
}

func isToken(s []byte) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseCLFTime parses the Apache/nginx time "02/Jan/2006:15:04:05 -0700"
// without time.Parse's generality (it is on the hot path).
func parseCLFTime(b []byte) (time.Time, bool) {
	const layout = "02/Jan/2006:15:04:05 -0700"
	if len(b) != len(layout) || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' || b[20] != ' ' {
		return time.Time{}, false
	}
	num := func(s []byte) int {
		n, ok := atoi(s)
		if !ok {
			return -1
		}
		return n
	}
	day, year, hour, minute, sec := num(b[0:2]), num(b[7:11]), num(b[12:14]), num(b[15:17]), num(b[18:20])
	month := 0
	for i, m := range months {
		if string(b[3:6]) == m {
			month = i + 1
			break
		}
	}
	zh, zm := num(b[22:24]), num(b[24:26])
	if day < 1 || day > 31 || month == 0 || year < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
		sec < 0 || sec > 60 || zh < 0 || zm < 0 || (b[21] != '+' && b[21] != '-') {
		return time.Time{}, false
	}
	offset := zh*3600 + zm*60
	if b[21] == '-' {
		offset = -offset
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // 31/Feb and the like
		return time.Time{}, false
	}
	return t.Add(-time.Duration(offset) * time.Second), true
}
