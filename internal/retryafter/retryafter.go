// Package retryafter reads the Retry-After header (RFC 9110 section
// 10.2.3), so that the crawler, which honours it, and the audit, which
// checks that it was honoured, read it the same way.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxSeconds caps delay-seconds (about 68 years), so that the wait fits in
// a time.Duration.
const maxSeconds = 1 << 31

// NotBefore returns the time before which a request must not be repeated
// after a response carrying the Retry-After value header that completed at
// completed: delay-seconds counted from completed, or an HTTP-date (in
// UTC). It reports false for an empty, negative or unreadable value. It
// does no I/O and is safe for concurrent use.
func NotBefore(header string, completed time.Time) (time.Time, bool) {
	h := strings.TrimSpace(header)
	if h == "" {
		return time.Time{}, false
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n < 0 {
			return time.Time{}, false
		}
		return completed.Add(time.Duration(min(n, maxSeconds)) * time.Second), true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}
