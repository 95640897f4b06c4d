package robots

import "strings"

// PathOf reduces a URL to the string rules are matched against: path, params
// and query, fragment dropped; an empty path is "/" (RFC 9309 2.2.2). It
// accepts absolute URLs ("https://example.com/a?b"), scheme-relative ones
// ("//example.com/a"), host-and-path forms ("example.com/a") and paths
// ("/a?b"), exactly as Google's reference parser reduces them. The result is
// not yet percent-encoding-normalised; Decide does that.
func PathOf(target string) string {
	p, slash := pathOf(target)
	if slash {
		return "/" + p
	}
	return p
}

// pathOf is PathOf without the allocation: when slash is true the result
// lacks its leading "/" (the path started with "?" or ";").
func pathOf(url string) (p string, slash bool) {
	// Two leading slashes start an authority.
	start := 0
	if len(url) >= 2 && url[0] == '/' && url[1] == '/' {
		start = 2
	}
	rest := url[start:]
	early := strings.IndexAny(rest, "/?;")
	proto := strings.Index(rest, "://")
	if proto >= 0 && (early < 0 || early >= proto) {
		rest = rest[proto+3:]
	}
	i := strings.IndexAny(rest, "/?;")
	if i < 0 {
		return "/", false
	}
	hash := strings.IndexByte(url[start:], '#')
	// The fragment, if any, as an index into rest.
	if hash >= 0 {
		hash -= len(url[start:]) - len(rest)
		if hash < i {
			return "/", false
		}
		rest = rest[:hash]
	}
	p = rest[i:]
	return p, p[0] != '/'
}
