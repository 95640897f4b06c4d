package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes r as plain text for a terminal or an email, with the
// report's own words in lang. Control characters in crawled and emailed
// strings are shown as escapes, so a page title cannot drive the terminal.
func WriteText(w io.Writer, r *Report, lang string) error {
	lang, err := checkLang(lang)
	if err != nil {
		return err
	}
	t := words(lang)
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	c := func(s string) string { return clean(s, false) }
	section := func(key string) { p("\n== %s ==\n", t(key)) }

	p("LohiSoftBot/1.0 · %s: %s\n", t("title"), c(showSite(r.Site)))
	p("%s %s\n", t("generated"), fmtWhen(r.GeneratedAt))
	p("%s\n", t("from_records"))
	switch {
	case !r.Checked():
		p("\n-- %s\n", t("verdict_none"))
	case r.OK():
		p("\n>> %s %s\n", t("verdict_ok"), verdictBasis(t, r))
	default:
		p("\n!! %s %s\n", t("verdict_fail"), verdictBasis(t, r))
	}

	section("status")
	yn := func(b bool) string {
		if b {
			return t("yes")
		}
		return t("no")
	}
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "  %s:\t%s\n", t(k), v) }
	listed := yn(r.Status.Listed)
	if r.Status.ListedSince != nil {
		listed += " · " + t("listed_since") + " " + fmtWhen(*r.Status.ListedSince)
	}
	row("listed", listed)
	if r.Status.StartURL != "" {
		row("start_url", c(r.Status.StartURL))
	}
	row("crawled", yn(r.Status.Crawled))
	row("cycles_n", fmt.Sprint(r.Status.Cycles))
	row("requests_n", fmt.Sprint(r.Status.Requests))
	row("page_requests_n", fmt.Sprint(r.Status.PageRequests))
	if r.Status.FirstRequest != nil {
		row("first_request", fmtWhen(*r.Status.FirstRequest))
	}
	if r.Status.LastRequest != nil {
		row("last_request", fmtWhen(*r.Status.LastRequest))
	}
	row("excluded", yn(r.Status.Excluded))
	if x := r.Status.Exclusion; x != nil {
		row("excluded_since", fmtWhen(x.Since))
		row("asked_by", c(x.By))
		if x.Reason != "" {
			row("reason", c(x.Reason))
		}
		row("evidence", c(x.Evidence))
		row("via", c(x.Source))
		row("policy_version", fmt.Sprintf("v%d", x.Version))
		if n := x.IndexPurged; n != nil {
			row("index_now", fmt.Sprintf(t("index_purged"), n.Pages, n.Anchors))
		}
		for _, m := range r.Mail {
			if m.ID == x.MailID && x.MailID != 0 {
				row("exclusion_mail", fmt.Sprintf("%s · %s · %q", fmtWhen(m.ReceivedAt), c(m.From), c(m.Subject)))
			}
		}
		row("since_exclusion", fmt.Sprint(r.Status.RequestsSinceExclusion))
	}
	tw.Flush()

	section("audit")
	p("%s\n", t("audit_note"))
	for _, a := range r.Audit {
		verdict := "[" + t("kept") + "]"
		if a.OK && a.Checked == 0 {
			verdict = "[" + t("not_checked") + "]"
		}
		if !a.OK {
			verdict = fmt.Sprintf("[%s: %d]", t("broken"), len(a.Violations))
		}
		p("  %-16s %s (%s: %d)\n", verdict, t("rule_"+a.Rule), t("checked"), a.Checked)
		for _, v := range a.Violations {
			ids := make([]string, len(v.Requests))
			for i, rr := range v.Requests {
				ids[i] = fmt.Sprintf("#%d", rr.ID)
			}
			p("      - %s: %s", v.Check, c(v.Evidence))
			if len(ids) > 0 {
				p(" (%s)", strings.Join(ids, ", "))
			}
			p("\n")
		}
	}
	if s := r.Seal; s != nil {
		p("\n%s: %s (%s %d, %s UTC)\n  %s: %s\n", t("seal_head"), s.Hash, t("seal_block"), s.Block, fmtWhen(s.SealedAt), t("seal_check"), s.Check)
	} else {
		p("\n%s: %s\n", t("seal_head"), t("seal_none"))
	}

	section("cycles")
	if len(r.Cycles) == 0 {
		p("  %s\n", t("no_requests"))
	}
	for i := range r.Cycles {
		cy := &r.Cycles[i]
		if cy.ID == 0 {
			p("\n-- %s\n", t("no_cycle"))
		} else {
			meta := []string{}
			if cy.StartedAt != nil {
				meta = append(meta, t("started")+" "+fmtWhen(*cy.StartedAt))
			}
			if cy.FinishedAt != nil {
				meta = append(meta, t("finished")+" "+fmtWhen(*cy.FinishedAt))
			}
			meta = append(meta, t("state")+": "+t("state_"+cy.Status))
			if cy.Node != "" {
				meta = append(meta, t("node")+": "+c(cy.Node))
			}
			meta = append(meta, t("delay")+": "+fmtMS(cy.DelayMS), fmt.Sprintf("%s: %d / %d", t("pages_budget"), cy.PageRequests, cy.Budget))
			if cy.Reason != "" {
				meta = append(meta, c(cycleReason(t, cy.Reason)))
			}
			p("\n-- %s %d (%s %d) · %s\n", t("cycle"), cy.Number, t("cycle_id"), cy.ID, strings.Join(meta, " · "))
		}
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  #\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t("col_sent"), t("col_kind"), t("col_status"), t("col_outcome"),
			t("col_bytes"), t("col_duration"), t("col_rule"), t("col_url"))
		for _, rq := range cy.Requests {
			outcome, dur := t("no_answer"), ""
			if rq.CompletedAt != nil {
				outcome, dur = c(outcomeWord(t, rq.Outcome)), fmtMS(rq.DurationMS)
			}
			rule := c(ruleWord(t, rq.RobotsRule))
			if rq.RobotsLine > 0 {
				rule += fmt.Sprintf(" (l. %d)", rq.RobotsLine)
			}
			url := c(rq.URL)
			var notes []string
			if rq.RedirectOf != nil {
				notes = append(notes, fmt.Sprintf("%s #%d", t("redirect_of"), *rq.RedirectOf))
			}
			if rq.Attempt > 0 {
				notes = append(notes, fmt.Sprintf("%s %d", t("retry"), rq.Attempt))
			}
			if rq.RetryAfter != "" {
				notes = append(notes, "Retry-After: "+c(rq.RetryAfter))
			}
			if rq.Error != "" {
				notes = append(notes, c(rq.Error))
			}
			if s := rq.Signature; s != nil {
				notes = append(notes, fmt.Sprintf("%s %s %s–%s", t("signed"), c(shortKeyID(s.KeyID)),
					s.Created.Format("15:04:05"), s.Expires.Format("15:04:05")))
			}
			if len(notes) > 0 {
				url += "  [" + strings.Join(notes, "; ") + "]"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", rq.ID, fmtWhenMS(rq.SentAt), t("kind_"+rq.Purpose),
				fmtStatus(rq.Status), outcome, rq.Bytes, dur, rule, url)
		}
		tw.Flush()
	}

	section("robots")
	if len(r.Robots) == 0 {
		p("  %s\n", t("no_robots"))
	}
	for _, s := range r.Robots {
		p("\n-- %s/robots.txt · %s %s\n", c(s.Origin), t("fetched"), fmtWhen(s.FetchedAt))
		status := fmt.Sprint(s.Status)
		if s.Status == 0 {
			status = t("no_answer")
		}
		if s.Error != "" {
			status += " · " + c(s.Error)
		}
		p("  %s: %s · %s: %s\n", t("col_status"), status, t("read_as"), t("out_"+s.Outcome))
		hash := "✓ " + t("hash_ok")
		if !s.HashOK {
			hash = "✗ " + t("hash_bad")
		}
		p("  %s: %s %s · %s: %d %s\n", t("hash"), c(s.Sha256), hash, t("size"), s.Size, t("col_bytes"))
		if s.Size > maxBodyShown {
			p("  (%s)\n", t("truncated"))
		}
		if s.Body == "" {
			p("  | %s\n", t("empty"))
			continue
		}
		for _, line := range strings.Split(strings.TrimRight(clean(s.Body, true), "\n"), "\n") {
			p("  | %s\n", line)
		}
	}

	section("index")
	p("%s\n", t("index_note"))
	if len(r.Pages) == 0 {
		p("  %s\n", t("nothing_stored"))
	}
	for _, pg := range r.Pages {
		p("\n  %s  (%s %d · %s %s)\n", c(pg.URL), t("col_status"), pg.Status, t("fetched"), fmtWhen(pg.FetchedAt))
		p("    %s: %s\n", t("col_title"), c(pg.Title))
		p("    %s: %s\n", t("col_desc"), c(pg.Description))
		for _, h := range []struct{ tag, v string }{{"h1", pg.H1}, {"h2", pg.H2}, {"h3", pg.H3}} {
			if h.v != "" {
				p("    %s: %s\n", h.tag, strings.ReplaceAll(c(strings.ReplaceAll(h.v, "\n", " / ")), "\n", " "))
			}
		}
	}
	p("\n  %s:\n", t("anchors"))
	if len(r.Anchors) == 0 {
		p("    %s\n", t("nothing_stored"))
	}
	for _, an := range r.Anchors {
		p("    %q → %s (%s %s)\n", c(an.AnchorText), c(an.ToURL), t("col_from"), c(an.FromURL))
	}

	section("mail")
	if len(r.Mail) == 0 {
		p("  %s\n", t("no_mail"))
	}
	for _, m := range r.Mail {
		p("\n  %s · %s · %q\n", fmtWhen(m.ReceivedAt), c(m.From), c(m.Subject))
		handled := c(mailWord(t, m.Outcome))
		if m.ReviewStatus != "" {
			handled += " · " + c(mailWord(t, m.ReviewStatus))
		}
		p("    %s: %s · %s: %s\n", t("read_as"), t("intent_"+m.Intent), t("col_handled"), handled)
		p("    %s: %s · sha256 %s\n", t("col_msgid"), c(m.MessageID), c(m.Sha256))
	}
	p("\n  %s:\n", t("replies"))
	if len(r.Replies) == 0 {
		p("    %s\n", t("no_replies"))
	}
	for _, rp := range r.Replies {
		p("    %s UTC · %s (%s) · %s · %s · %s\n", fmtWhen(rp.CreatedAt), t("reply_"+rp.Kind), c(rp.Lang), c(rp.To),
			t("reply_"+rp.Status), c(rp.MessageID))
	}

	section("events")
	if len(r.Events) == 0 {
		p("  %s\n", t("no_events"))
	}
	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	for _, e := range r.Events {
		what := t("ev_" + e.Kind)
		if n := e.IndexPurged; n != nil {
			what += " · " + fmt.Sprintf(t("index_purged"), n.Pages, n.Anchors)
		}
		fmt.Fprintf(tw, "  v%d\t%s\t%s\t%s\t%s\t%s\n", e.Version, fmtWhen(e.HappenedAt), what,
			c(e.Actor)+" ("+c(e.Source)+")", c(e.Evidence), c(e.Reason))
	}
	tw.Flush()
	p("\n%s\n", t("footer"))
	return bw.Flush()
}

// shortKeyID is the first 8 characters of a keyid, enough to tell the
// published keys apart in a table.
func shortKeyID(k string) string {
	if len(k) > 8 {
		return k[:8] + "…"
	}
	return k
}
