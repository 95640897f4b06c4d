package crawler

import (
	"net/url"
	"testing"

	"github.com/lohisoft/lohibot/policy"
)

// TestSiteNamesAsSiteOf checks that the sites kept for links' hosts are
// policy.SiteOf's, for every spelling of a host a link may take, asked
// first and again (kept), mixed with others of the same host.
func TestSiteNamesAsSiteOf(t *testing.T) {
	links := []string{
		"http://excluded.test/", "http://WWW.Excluded.TEST/a", "http://excluded.test./b", "http://excluded.test:8080/",
		"HTTP://EXCLUDED.TEST:8080/c", "http://shop.excluded.test/?q=1", "http://bücher.test/", "http://xn--bcher-kva.test/x",
		"http://BÜCHER.test./", "https://user:pw@excluded.test/", "http://excluded.test:/", "http://co.uk/", "http://a.co.uk/",
		"http://127.0.0.1/", "http://[::1]/", "ftp://excluded.test/", "http:///nohost", "http://xn--/", "http://a..b.test/",
		"http://alice.github.io/", "http://github.io/", "http://%65xcluded.test/", "mailto:someone@excluded.test",
		" http://excluded.test/ ",
	}
	var n siteNames
	for round := range 2 {
		for _, raw := range links {
			u, err := url.Parse(raw)
			if err != nil {
				continue // page() skips what url.Parse refuses
			}
			site, err := n.of(raw, u)
			want, wantErr := policy.SiteOf(raw)
			if site != want || (err == nil) != (wantErr == nil) {
				t.Errorf("round %d: of(%q) = %q, %v; want SiteOf's %q, %v", round+1, raw, site, err, want, wantErr)
			}
		}
	}
}
