package db

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNUL is returned (wrapped) when a text column of an evidence table
// would get a NUL byte. The records are text for people and for the
// transparency log's leaves alike: a NUL is refused at write time,
// with the table and column it was meant for, rather than stored where
// some reader stops at it (SQLite's text functions) and another does not.
var ErrNUL = errors.New("db: text holds a NUL byte")

// checkText returns an error wrapping ErrNUL when any of the values of
// cols (name, value pairs) holds a NUL byte.
func checkText(table string, cols ...string) error {
	for i := 0; i+1 < len(cols); i += 2 {
		if strings.IndexByte(cols[i+1], 0) >= 0 {
			return fmt.Errorf("%w: %s.%s %q", ErrNUL, table, cols[i], cols[i+1])
		}
	}
	return nil
}

// checkRequest is checkText for the text columns of a request's row.
func checkRequest(r *Request) error {
	return checkText("requests", "site", r.Site, "host", r.Host, "origin", r.Origin, "url", r.URL, "purpose", r.Purpose,
		"node", r.Node, "robots_rule", r.RobotsRule, "policy_check", r.PolicyCheck, "retry_after", r.RetryAfter,
		"outcome", r.Outcome, "error", r.Error, "sig_keyid", r.SigKeyID, "etag", r.ETag, "last_modified", r.LastModified)
}
