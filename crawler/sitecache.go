package crawler

import (
	"net/url"
	"strings"
	"sync"

	"github.com/lohisoft/lohibot/policy"
)

// maxSiteNames bounds the names a siteNames keeps (about 100 bytes each);
// past it, it forgets them all.
const maxSiteNames = 1 << 14

// siteNames remembers policy.SiteOf's answer for the links' scheme and
// host: pages link to the same few hosts over and over, and SiteOf
// (IDNA, the public suffix list) was a tenth of a crawl's CPU at 100
// links a page. It is safe for concurrent use.
type siteNames struct {
	mu sync.Mutex // guards m
	m  map[schemeHost]siteName
}

// schemeHost is a URL's scheme and host (with its port), the key of
// siteNames.
type schemeHost struct{ scheme, host string }

// siteName is one answer of policy.SiteOf.
type siteName struct {
	site string
	err  error
}

// of returns policy.SiteOf(raw), where u is raw parsed by url.Parse. The
// answer depends on raw's scheme and authority only (SiteOf parses raw as
// u was parsed, and reads the scheme and the host with its port), so it is
// kept by u's scheme and host; a raw URL with surrounding space, which
// SiteOf trims, is not kept. An error kept names the first URL it was
// found for.
func (n *siteNames) of(raw string, u *url.URL) (string, error) {
	if raw != strings.TrimSpace(raw) || u.Opaque != "" {
		return policy.SiteOf(raw)
	}
	key := schemeHost{u.Scheme, u.Host}
	n.mu.Lock()
	a, ok := n.m[key]
	n.mu.Unlock()
	if ok {
		return a.site, a.err
	}
	site, err := policy.SiteOf(raw)
	n.mu.Lock()
	if n.m == nil || len(n.m) >= maxSiteNames {
		n.m = make(map[schemeHost]siteName)
	}
	n.m[key] = siteName{site, err}
	n.mu.Unlock()
	return site, err
}
