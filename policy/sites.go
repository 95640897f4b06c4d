package policy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/lohisoft/lohibot/db"
)

// ListedSite is a site of the crawl list with its exclusion, if any.
type ListedSite struct {
	db.Site
	Excluded bool `json:"excluded"`
}

// AddedSite is a site as AddSites left it, and what it changed.
type AddedSite struct {
	db.Site
	// Listed tells whether the site was on the crawl list before.
	Listed bool
	// Replaced is the start URL a new one replaced; empty when the start
	// URL did not change.
	Replaced string
}

// AddSites puts the sites named by inputs on the crawl list, in one
// transaction. A URL input sets the site's start URL; a bare domain starts at
// https://DOMAIN/. Adding a listed site again updates its start URL when a
// URL is given. If any input is not a site, nothing changes.
func (p *Policy) AddSites(ctx context.Context, inputs []string, c Change) ([]AddedSite, error) {
	sites, err := SitesOf(inputs)
	if err != nil {
		return nil, err
	}
	starts := make([]string, len(inputs))
	for i, in := range inputs {
		starts[i] = startURL(in, sites[i])
	}
	var out []AddedSite
	err = p.inTx(ctx, func(tx *db.Tx) error {
		if err := tx.LockPolicy(ctx); err != nil {
			return err
		}
		out = out[:0]
		now := p.now()
		for i, site := range sites {
			s, err := tx.Site(ctx, site)
			switch {
			case err == nil:
				added := AddedSite{Listed: true}
				if isURL(inputs[i]) && s.StartURL != starts[i] {
					added.Replaced = s.StartURL
					if err := tx.SetStartURL(ctx, s, starts[i]); err != nil {
						return err
					}
					cc := c
					cc.Detail = fmt.Sprintf(`{"start_url":%q}`, s.StartURL)
					if _, err := appendEvent(ctx, tx, now, db.EventSiteUpdate, site, cc); err != nil {
						return err
					}
				}
				added.Site = *s
				out = append(out, added)
				continue
			case !errors.Is(err, db.ErrNotFound):
				return err
			}
			s = &db.Site{Name: site, StartURL: starts[i], AddedAt: now, AddedBy: c.Actor}
			if err := tx.CreateSite(ctx, s); err != nil {
				return err
			}
			cc := c
			cc.Detail = fmt.Sprintf(`{"start_url":%q}`, s.StartURL)
			if _, err := appendEvent(ctx, tx, now, db.EventSiteAdd, site, cc); err != nil {
				return err
			}
			out = append(out, AddedSite{Site: *s})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("policy: add sites: %w", err)
	}
	return out, nil
}

// RemoveSites takes the sites named by inputs off the crawl list (without
// excluding them). It fails with ErrNotListed, changing nothing, when one of
// them is not listed.
func (p *Policy) RemoveSites(ctx context.Context, inputs []string, c Change) ([]string, error) {
	sites, err := SitesOf(inputs)
	if err != nil {
		return nil, err
	}
	err = p.inTx(ctx, func(tx *db.Tx) error {
		if err := tx.LockPolicy(ctx); err != nil {
			return err
		}
		now := p.now()
		for _, site := range sites {
			deleted, err := tx.DeleteSite(ctx, site)
			if err != nil {
				return err
			}
			if !deleted {
				return fmt.Errorf("%w: %s", ErrNotListed, site)
			}
			if _, err := appendEvent(ctx, tx, now, db.EventSiteRemove, site, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotListed) {
			return nil, err
		}
		return nil, fmt.Errorf("policy: remove sites: %w", err)
	}
	return sites, nil
}

// Sites returns the crawl list sorted by name, each with whether it is
// excluded (an excluded site stays listed but is never crawled).
func (p *Policy) Sites(ctx context.Context) ([]ListedSite, error) {
	sites, err := p.reader().Sites(ctx)
	if err != nil {
		return nil, fmt.Errorf("policy: list sites: %w", err)
	}
	excluded, err := p.reader().ExcludedListedSites(ctx)
	if err != nil {
		return nil, fmt.Errorf("policy: list sites: %w", err)
	}
	ex := make(map[string]bool, len(excluded))
	for _, s := range excluded {
		ex[s] = true
	}
	out := make([]ListedSite, len(sites))
	for i, s := range sites {
		out[i] = ListedSite{Site: s, Excluded: ex[s.Name]}
	}
	return out, nil
}

func isURL(in string) bool {
	s := strings.TrimSpace(in)
	return strings.Contains(s, "://") || strings.ContainsAny(s, "/")
}

// startURL is the URL a crawl of site starts from: the input itself when it
// is a URL (scheme defaulting to https), else https://site/.
func startURL(in, site string) string {
	s := strings.TrimSpace(in)
	if !isURL(s) {
		return "https://" + site + "/"
	}
	if !strings.Contains(s, "://") {
		s = "https://" + strings.TrimPrefix(s, "//")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "https://" + site + "/"
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if host, err := HostOf(u.Host); err == nil {
		if port := u.Port(); port != "" {
			host += ":" + port
		}
		u.Host = host
	}
	u.User = nil
	u.Fragment = ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// EachSite calls f with every site of the crawl list, by name, reading the
// list a page at a time, so that a list of any length costs one page of
// memory. It stops at f's first error and returns it.
func (p *Policy) EachSite(ctx context.Context, f func(ListedSite) error) error {
	const page = 1000
	after := ""
	for {
		sites, err := p.store.SitesAfter(ctx, after, page)
		if err != nil {
			return fmt.Errorf("policy: list sites: %w", err)
		}
		for _, s := range sites {
			if err := f(ListedSite{Site: s.Site, Excluded: s.Excluded}); err != nil {
				return err
			}
		}
		if len(sites) < page {
			return nil
		}
		after = sites[len(sites)-1].Name
	}
}
