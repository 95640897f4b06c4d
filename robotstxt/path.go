package robotstxt

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
//
// As Google's GetPathParamsQuery: two leading slashes start an authority;
// "://" ends a scheme only if no "/", "?" or ";" comes before it; the path
// starts at the next "/", "?" or ";"; a "#" before that leaves the path
// empty. One scan, no allocation.
func pathOf(url string) (p string, slash bool) {
	i := 0
	if len(url) >= 2 && url[0] == '/' && url[1] == '/' {
		i = 2
	}
	start := -1
scan:
	for ; i < len(url); i++ {
		switch url[i] {
		case '#':
			return "/", false
		case '/', '?', ';':
			start = i
			break scan
		case ':':
			if strings.HasPrefix(url[i+1:], "//") {
				for i += 3; i < len(url); i++ {
					switch url[i] {
					case '#':
						return "/", false
					case '/', '?', ';':
						start = i
						break scan
					}
				}
			}
		}
	}
	if start < 0 {
		return "/", false
	}
	p = url[start:]
	if h := strings.IndexByte(p, '#'); h >= 0 {
		p = p[:h]
	}
	return p, p[0] != '/'
}
