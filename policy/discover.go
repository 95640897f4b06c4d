package policy

import (
	"context"
	"fmt"

	"github.com/lohisoft/lohibot/db"
)

// SourceDiscovery is the Change.Source of the sites discovery adds.
const SourceDiscovery = "discovery"

// AddSitesBulk puts sites (each named as SiteOf returns it, with its start
// URL) on the crawl list in one transaction, recording the batch in one
// sites-import policy event (db.EventSitesImport). Sites already listed keep their start URL; excluded ones
// are never added. It is AddSites for a list of any length: callers pass
// it a batch at a time (a few hundred to a few thousand).
func (p *Policy) AddSitesBulk(ctx context.Context, sites []db.NewSite, c Change) (db.BulkAdd, error) {
	var res db.BulkAdd
	err := p.inTx(ctx, func(tx *db.Tx) error {
		if err := tx.LockPolicy(ctx); err != nil {
			return err
		}
		var err error
		res, err = tx.AddSitesBulk(ctx, sites, db.SitesAdd{Now: p.now(), Actor: c.Actor, Source: c.Source, Reason: c.Reason})
		return err
	})
	if err != nil {
		return db.BulkAdd{}, fmt.Errorf("policy: add sites: %w", err)
	}
	return res, nil
}

// AddCandidates puts on the crawl list up to limit candidates linked from
// at least minLinks distinct sites, the most linked first, and returns
// them. It runs under the policy lock, so a site excluded before it
// commits is never added, whatever spelling the links used (candidates are
// sites as SiteOf returns them). A re-included site is eligible again.
func (p *Policy) AddCandidates(ctx context.Context, minLinks int64, limit int, c Change) ([]db.NewSite, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []db.NewSite
	err := p.inTx(ctx, func(tx *db.Tx) error {
		out = nil
		if err := tx.LockPolicy(ctx); err != nil {
			return err
		}
		cands, err := tx.EligibleCandidates(ctx, minLinks, limit)
		if err != nil || len(cands) == 0 {
			return err
		}
		sites := make([]db.NewSite, len(cands))
		names := make([]string, len(cands))
		for i, cd := range cands {
			start := cd.StartURL
			if start == "" {
				start = "https://" + cd.Site + "/"
			}
			sites[i] = db.NewSite{Name: cd.Site, StartURL: start}
			names[i] = cd.Site
		}
		now := p.now()
		res, err := tx.AddSitesBulk(ctx, sites, db.SitesAdd{Now: now, Actor: c.Actor, Source: c.Source, Reason: c.Reason, EventPerSite: true})
		if err != nil {
			return err
		}
		if err := tx.SetCandidatesAdded(ctx, names, now); err != nil {
			return err
		}
		added := make(map[string]bool, len(res.Names))
		for _, n := range res.Names {
			added[n] = true
		}
		for _, s := range sites {
			if added[s.Name] {
				out = append(out, s)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("policy: add candidates: %w", err)
	}
	return out, nil
}

// SiteEntry returns the crawl list entry input names (a domain or URL, as
// AddSites takes it): its site and the URL its crawl starts from (the URL
// itself, without credentials, or https://SITE/).
func SiteEntry(input string) (db.NewSite, error) {
	site, err := SiteOf(input)
	if err != nil {
		return db.NewSite{}, err
	}
	return db.NewSite{Name: site, StartURL: startURL(input, site)}, nil
}
