// Package redact removes secrets from text before it is shown or logged:
// the password of a URL's userinfo (postgres://u:PASSWORD@host,
// imaps://u:PASSWORD@host), and the value of key=value settings whose key
// names a secret (password=, sslpassword=, token=, ...), in DSNs, URLs,
// driver errors and log lines alike. Every output of lohibot that may carry
// a DSN, an IMAP or SMTP URL or a driver's error goes through String.
package redact

import (
	"log/slog"
	"regexp"
	"strings"
)

// Mask replaces every secret.
const Mask = "xxxxx"

var (
	// userinfoPassword matches scheme://user:password@ and keeps the user.
	// The password may hold anything but blanks and quotes ("/" included:
	// a URL parser would end the host there, but the password is still
	// one); a password with an unescaped "@" is cut at the last "@".
	userinfoPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^:@/\s'"` + "`" + `]*:)([^\s'"` + "`" + `]*)@`)
	// quotedPassword matches the same inside a quoted URL ("...", as Go's
	// %q writes it), where the password may also hold blanks: it runs to
	// the last "@" before the closing quote.
	quotedPassword = regexp.MustCompile(`("[A-Za-z][A-Za-z0-9+.\-]*://[^:@/\s"]*:)((?:[^"\\]|\\.)*)@((?:[^"@\\]|\\.)*")`)
	// secretSetting matches key=value (URL query or libpq keyword form)
	// where the key names a secret.
	secretSetting = regexp.MustCompile(`(?i)\b((?:ssl)?password|passwd|pwd|pass|secret|token|access_token|oauth_token|api_key|apikey)(\s*=\s*)('[^']*'|"[^"]*"|[^\s&;'"` + "`" + `]*)`)
)

// String returns s with every secret it recognises replaced by Mask. It is
// safe for concurrent use and does no I/O.
func String(s string) string {
	s = quotedPassword.ReplaceAllString(s, "${1}"+Mask+"@${3}")
	s = userinfoPassword.ReplaceAllString(s, "${1}"+Mask+"@")
	return secretSetting.ReplaceAllString(s, "${1}${2}"+Mask)
}

// URL returns the URL u with the password of its userinfo replaced by
// Mask: everything between the first ":" after "scheme://" and the last
// "@", whatever it holds (blanks, "/", "@"). u is one URL as the user
// wrote it, which may not parse. A URL without a password comes back as
// is. It does no I/O.
func URL(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	rest := u[i+3:]
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return u
	}
	colon := strings.IndexByte(rest[:at], ':')
	if colon < 0 {
		return u
	}
	return u[:i+3] + rest[:colon+1] + Mask + rest[at:]
}

// HasPassword reports whether the URL u, as the user wrote it, carries a
// password in its userinfo (see URL).
func HasPassword(u string) bool { return URL(u) != u }

// Error returns err's text, redacted; "" for nil.
func Error(err error) string {
	if err == nil {
		return ""
	}
	return String(err.Error())
}

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr that redacts every
// string and error attribute, so a log line cannot carry a secret.
func ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if v := a.Value.String(); v != String(v) {
			return slog.String(a.Key, String(v))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, Error(err))
		}
	}
	return a
}
