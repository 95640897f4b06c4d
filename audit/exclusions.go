package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/db"
)

// interval is a time a site was excluded: from the commit of an exclusion
// event to the commit of the re-inclusion that ended it (open: none yet).
type interval struct {
	from      time.Time
	to        time.Time
	open      bool
	version   int64
	actor     string
	evidence  string
	source    string
	reversion int64 // the re-inclusion's version
}

// loadExcludedSites reads which sites were ever excluded.
func (a *auditor) loadExcludedSites(ctx context.Context) error {
	sites, err := a.store.SitesEverExcluded(ctx)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	a.excludedSites = make(map[string]bool, len(sites))
	for _, s := range sites {
		a.excludedSites[s] = true
	}
	return nil
}

// intervals reads the exclusion intervals of a site from the policy log.
func (a *auditor) intervals(ctx context.Context, s *siteState, site string) ([]interval, error) {
	if ivs, ok := s.exclusions[site]; ok {
		return ivs, nil
	}
	events, err := a.store.SiteEvents(ctx, site)
	if err != nil {
		return nil, fmt.Errorf("audit: read policy events of %s: %w", site, err)
	}
	var ivs []interval
	for _, ev := range events {
		at := ev.HappenedAt.UTC()
		open := len(ivs) > 0 && ivs[len(ivs)-1].open
		switch {
		case ev.Kind == db.EventExclude && !open:
			ivs = append(ivs, interval{from: at, open: true, version: ev.Version, actor: ev.Actor, evidence: ev.Evidence, source: ev.Source})
		case ev.Kind == db.EventReinclude && open:
			last := &ivs[len(ivs)-1]
			last.open, last.to, last.reversion = false, at, ev.Version
		}
	}
	s.exclusions[site] = ivs
	return ivs, nil
}

// checkExclusions applies the exclusions rule to one request: the site its
// URL belongs to (and the site it was logged under, when they differ) must
// not have been excluded when it was sent.
func (a *auditor) checkExclusions(ctx context.Context, s *siteState, r *row) error {
	a.count(RuleExclusions, 1, 0)
	var buf [2]string // no allocation per request
	sites := append(buf[:0], s.derivedSite(r))
	if r.site != sites[0] {
		sites = append(sites, r.site)
	}
	for _, site := range sites {
		if !a.excludedSites[site] {
			continue
		}
		ivs, err := a.intervals(ctx, s, site)
		if err != nil {
			return err
		}
		for _, iv := range ivs {
			if !r.sentAt.After(iv.from) || (!iv.open && !r.sentAt.Before(iv.to)) {
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s was excluded at %s (policy event v%d, asked by %s", site, fmtTime(iv.from), iv.version, iv.actor)
			if iv.evidence != "" && iv.evidence != iv.actor {
				fmt.Fprintf(&b, ", evidence %s", iv.evidence)
			}
			if iv.source != "" {
				fmt.Fprintf(&b, ", via %s", iv.source)
			}
			fmt.Fprintf(&b, "); request %d to %s was sent %s later, at %s, ", r.id, r.url, fmtDur(r.sentAt.Sub(iv.from)), fmtTime(r.sentAt))
			if iv.open {
				b.WriteString("and the site has not been re-included since")
			} else {
				fmt.Fprintf(&b, "before its re-inclusion at %s (v%d)", fmtTime(iv.to), iv.reversion)
			}
			if _, check, err := a.detail(ctx, r.id); err != nil {
				return err
			} else if check != "" {
				fmt.Fprintf(&b, "; the crawler logged its policy check as %q", check)
			}
			if r.site != site {
				fmt.Fprintf(&b, "; the request was logged under site %s", r.site)
			}
			return a.report(Violation{Site: site, Rule: RuleExclusions, Check: CheckExcluded,
				Requests: []RequestRef{r.ref()}, Evidence: b.String()})
		}
	}
	return nil
}
