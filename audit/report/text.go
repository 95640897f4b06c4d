package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lohisoft/lohibot/internal/human"
)

// WriteText writes r as plain text for a terminal or an email, with the
// report's own words in lang. Control characters in crawled and emailed
// strings are shown as escapes, so a page title cannot drive the terminal.
func WriteText(w io.Writer, r *Report, lang string) error {
	lang, err := checkLang(lang)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	tx := &textWriter{w: bw, t: words(lang)}
	tx.header(r)
	tx.status(r)
	tx.audit(r)
	tx.cycles(r)
	tx.robots(r)
	tx.index(r)
	tx.mail(r)
	tx.events(r)
	tx.p("\n%s\n", tx.t("footer"))
	return bw.Flush()
}

// textWriter writes the sections of the text report. Write errors are
// kept by the bufio.Writer and returned by WriteText's final Flush.
type textWriter struct {
	w *bufio.Writer
	t func(string) string // the report's words in its language
}

func (x *textWriter) p(format string, args ...any) { fmt.Fprintf(x.w, format, args...) }

// section writes the heading of a section.
func (x *textWriter) section(key string) { x.p("\n== %s ==\n", x.t(key)) }

func (x *textWriter) yn(b bool) string {
	if b {
		return x.t("yes")
	}
	return x.t("no")
}

// table is a tabwriter for the aligned parts of the report; the caller
// flushes it.
func (x *textWriter) table() *tabwriter.Writer { return tabwriter.NewWriter(x.w, 0, 0, 2, ' ', 0) }

// cleanLine cleans a one-line string from the records (see clean).
func cleanLine(s string) string { return clean(s, false) }

// quoted is cleanLine(s) in double quotes, a quote inside escaped. It stands
// for %q, which would escape again the backslashes cleanLine wrote for
// control characters (ESC showing as \\x1b instead of \x1b).
func quoted(s string) string {
	return `"` + strings.ReplaceAll(cleanLine(s), `"`, `\"`) + `"`
}

// header writes the title, the generation time and the verdict.
func (x *textWriter) header(r *Report) {
	t := x.t
	x.p("LohiSoftBot/1.0 · %s: %s\n", t("title"), cleanLine(human.Site(r.Site)))
	x.p("%s %s\n", t("generated"), human.Time(r.GeneratedAt))
	x.p("%s\n", t("from_records"))
	switch {
	case !r.Checked():
		x.p("\n-- %s\n", t("verdict_none"))
	case r.OK():
		x.p("\n>> %s %s\n", t("verdict_ok"), verdictBasis(t, r))
	default:
		x.p("\n!! %s %s\n", t("verdict_fail"), verdictBasis(t, r))
	}
}

// status writes where the site stands: listing, crawling and exclusion.
func (x *textWriter) status(r *Report) {
	t := x.t
	x.section("status")
	tw := x.table()
	row := func(k, v string) { fmt.Fprintf(tw, "  %s:\t%s\n", t(k), v) }
	listed := x.yn(r.Status.Listed)
	if r.Status.ListedSince != nil {
		listed += " · " + t("listed_since") + " " + human.Time(*r.Status.ListedSince)
	}
	row("listed", listed)
	if r.Status.StartURL != "" {
		row("start_url", cleanLine(r.Status.StartURL))
	}
	row("crawled", x.yn(r.Status.Crawled))
	row("cycles_n", fmt.Sprint(r.Status.Cycles))
	row("requests_n", fmt.Sprint(r.Status.Requests))
	row("page_requests_n", fmt.Sprint(r.Status.PageRequests))
	if r.Status.FirstRequest != nil {
		row("first_request", human.Time(*r.Status.FirstRequest))
	}
	if r.Status.LastRequest != nil {
		row("last_request", human.Time(*r.Status.LastRequest))
	}
	row("excluded", x.yn(r.Status.Excluded))
	if ex := r.Status.Exclusion; ex != nil {
		row("excluded_since", human.Time(ex.Since))
		row("asked_by", cleanLine(ex.By))
		if ex.Reason != "" {
			row("reason", cleanLine(ex.Reason))
		}
		row("evidence", cleanLine(ex.Evidence))
		row("via", cleanLine(sourceWord(t, ex.Source)))
		row("policy_version", fmt.Sprintf("v%d", ex.Version))
		if ex.PurgeAfter != nil {
			row("index_now", fmt.Sprintf(t("index_kept"), human.Time(*ex.PurgeAfter)))
		} else if n := ex.IndexPurged; n != nil {
			row("index_now", fmt.Sprintf(t("index_purged"), n.Pages, n.Anchors))
		}
		for _, m := range r.Mail {
			if m.ID == ex.MailID && ex.MailID != 0 {
				row("exclusion_mail", fmt.Sprintf("%s · %s · %s", human.Time(m.ReceivedAt), cleanLine(m.From), quoted(m.Subject)))
			}
		}
		row("since_exclusion", fmt.Sprint(r.Status.RequestsSinceExclusion))
	}
	tw.Flush()
}

// audit writes the verdict of every rule with its violations, and the
// transparency log's state.
func (x *textWriter) audit(r *Report) {
	t := x.t
	x.section("audit")
	x.p("%s\n", t("audit_note"))
	for _, a := range r.Audit {
		verdict := "[" + t("kept") + "]"
		if a.OK && a.Checked == 0 {
			verdict = "[" + t("not_checked") + "]"
		}
		if !a.OK {
			verdict = fmt.Sprintf("[%s: %d]", t("broken"), len(a.Violations))
		}
		x.p("  %-16s %s (%s: %d)\n", verdict, t("rule_"+a.Rule), t("checked"), a.Checked)
		for _, v := range a.Violations {
			ids := make([]string, len(v.Requests))
			for i, rr := range v.Requests {
				ids[i] = fmt.Sprintf("#%d", rr.ID)
			}
			x.p("      - %s: %s", v.Check, cleanLine(v.Evidence))
			if len(ids) > 0 {
				x.p(" (%s)", strings.Join(ids, ", "))
			}
			x.p("\n")
		}
	}
	if s := r.Log; s != nil {
		x.p("\n%s: %d %s, %s %s\n  %s: %s\n", t("log_head"), s.Size, t("log_records"), t("log_root"), s.Root, t("log_check"), s.Check)
	} else {
		x.p("\n%s: %s\n", t("log_head"), t("log_none"))
	}
}

// cycles writes every crawl cycle with its requests.
func (x *textWriter) cycles(r *Report) {
	x.section("cycles")
	if len(r.Cycles) == 0 {
		x.p("  %s\n", x.t("no_requests"))
	}
	for i := range r.Cycles {
		x.cycle(&r.Cycles[i])
	}
}

// cycle writes one cycle's heading and its table of requests (none for a
// cycle without requests: a line says so).
func (x *textWriter) cycle(cy *Cycle) {
	t := x.t
	if cy.ID == 0 {
		x.p("\n-- %s\n", t("no_cycle"))
	} else {
		meta := []string{}
		if cy.StartedAt != nil {
			meta = append(meta, t("started")+" "+human.Time(*cy.StartedAt))
		}
		if cy.FinishedAt != nil {
			meta = append(meta, t("finished")+" "+human.Time(*cy.FinishedAt))
		}
		meta = append(meta, t("state")+": "+t("state_"+cy.Status))
		if cy.Node != "" {
			meta = append(meta, t("node")+": "+cleanLine(cy.Node))
		}
		meta = append(meta, t("delay")+": "+fmtMS(cy.DelayMS), fmt.Sprintf("%s: %d / %d", t("pages_budget"), cy.PageRequests, cy.Budget))
		if cy.Reason != "" {
			meta = append(meta, cleanLine(cycleReason(t, cy.Reason)))
		}
		x.p("\n-- %s %d (%s %d) · %s\n", t("cycle"), cy.Number, t("cycle_id"), cy.ID, strings.Join(meta, " · "))
	}
	defer x.refused(cy)
	if len(cy.Requests) == 0 {
		x.p("  %s\n", t("cycle_no_requests"))
		return
	}
	tw := x.table()
	fmt.Fprintf(tw, "  #\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t("col_sent"), t("col_kind"), t("col_status"), t("col_outcome"),
		t("col_bytes"), t("col_duration"), t("col_rule"), t("col_url"))
	for _, rq := range cy.Requests {
		outcome, dur := t("no_answer"), ""
		if rq.CompletedAt != nil {
			outcome, dur = cleanLine(outcomeWord(t, rq.Outcome)), fmtMS(rq.DurationMS)
		}
		rule := cleanLine(ruleWord(t, rq.RobotsRule))
		if rq.RobotsLine > 0 {
			rule += fmt.Sprintf(" (l. %d)", rq.RobotsLine)
		}
		url := cleanLine(rq.URL)
		if notes := x.requestNotes(&rq); len(notes) > 0 {
			url += "  [" + strings.Join(notes, "; ") + "]"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", rq.ID, human.TimeMS(rq.SentAt), t("kind_"+rq.Purpose),
			fmtStatus(rq.Status), outcome, rq.Bytes, dur, rule, url)
	}
	tw.Flush()
}

// refused writes the URLs of a cycle robots.txt refused, each with its
// rule; nothing when there are none.
func (x *textWriter) refused(cy *Cycle) {
	if len(cy.RobotsRefused) == 0 {
		return
	}
	t := x.t
	x.p("  %s (%d):\n", t("robots_refused"), len(cy.RobotsRefused))
	tw := x.table()
	for _, f := range cy.RobotsRefused {
		rule := cleanLine(ruleWord(t, f.RobotsRule))
		if f.RobotsLine > 0 {
			rule += fmt.Sprintf(" (l. %d)", f.RobotsLine)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", human.TimeMS(f.RefusedAt), rule, cleanLine(f.URL))
	}
	tw.Flush()
}

// requestNotes are the remarks shown after a request's URL: redirect,
// retry, Retry-After, error and signature.
func (x *textWriter) requestNotes(rq *Request) []string {
	t := x.t
	var notes []string
	if rq.RedirectOf != nil {
		notes = append(notes, fmt.Sprintf("%s #%d", t("redirect_of"), *rq.RedirectOf))
	}
	if rq.Attempt > 0 {
		notes = append(notes, fmt.Sprintf("%s %d", t("retry"), rq.Attempt))
	}
	if rq.RetryAfter != "" {
		notes = append(notes, "Retry-After: "+cleanLine(rq.RetryAfter))
	}
	if rq.Error != "" {
		notes = append(notes, cleanLine(rq.Error))
	}
	if s := rq.Signature; s != nil {
		notes = append(notes, fmt.Sprintf("%s %s %s–%s", t("signed"), cleanLine(shortKeyID(s.KeyID)),
			s.Created.Format("15:04:05"), s.Expires.Format("15:04:05")))
	}
	return notes
}

// robots writes every robots.txt snapshot with its hash check and body.
func (x *textWriter) robots(r *Report) {
	t := x.t
	x.section("robots")
	if len(r.Robots) == 0 {
		x.p("  %s\n", t("no_robots"))
	}
	for _, s := range r.Robots {
		x.p("\n-- %s/robots.txt · %s %s\n", cleanLine(s.Origin), t("fetched"), human.Time(s.FetchedAt))
		status := fmt.Sprint(s.Status)
		if s.Status == 0 {
			status = t("no_answer")
		}
		if s.Error != "" {
			status += " · " + cleanLine(s.Error)
		}
		x.p("  %s: %s · %s: %s\n", t("col_status"), status, t("read_as"), t("out_"+s.Outcome))
		hash := "✓ " + t("hash_ok")
		if !s.HashOK {
			hash = "✗ " + t("hash_bad")
		}
		x.p("  %s: %s %s · %s: %d %s\n", t("hash"), cleanLine(s.Sha256), hash, t("size"), s.Size, t("col_bytes"))
		if s.Size > maxBodyShown {
			x.p("  (%s)\n", t("truncated"))
		}
		if s.Body == "" {
			x.p("  | %s\n", t("empty"))
			continue
		}
		for _, line := range strings.Split(strings.TrimRight(clean(s.Body, true), "\n"), "\n") {
			x.p("  | %s\n", line)
		}
	}
}

// index writes what the index keeps of the site: pages and link texts.
func (x *textWriter) index(r *Report) {
	t := x.t
	x.section("index")
	x.p("%s\n", t("index_note"))
	if len(r.Pages) == 0 {
		x.p("  %s\n", t("nothing_stored"))
	}
	for _, pg := range r.Pages {
		x.p("\n  %s  (%s %d · %s %s)\n", cleanLine(pg.URL), t("col_status"), pg.Status, t("fetched"), human.Time(pg.FetchedAt))
		x.p("    %s: %s\n", t("col_title"), cleanLine(pg.Title))
		x.p("    %s: %s\n", t("col_desc"), cleanLine(pg.Description))
		for _, h := range []struct{ tag, v string }{{"h1", pg.H1}, {"h2", pg.H2}, {"h3", pg.H3}} {
			if h.v != "" {
				x.p("    %s: %s\n", h.tag, strings.ReplaceAll(cleanLine(strings.ReplaceAll(h.v, "\n", " / ")), "\n", " "))
			}
		}
	}
	x.p("\n  %s:\n", t("anchors"))
	if len(r.Anchors) == 0 {
		x.p("    %s\n", t("nothing_stored"))
	}
	for _, an := range r.Anchors {
		x.p("    %s → %s (%s %s)\n", quoted(an.AnchorText), cleanLine(an.ToURL), t("col_from"), cleanLine(an.FromURL))
	}
}

// mail writes the emails about the site and the replies sent.
func (x *textWriter) mail(r *Report) {
	t := x.t
	x.section("mail")
	if len(r.Mail) == 0 {
		x.p("  %s\n", t("no_mail"))
	}
	for _, m := range r.Mail {
		x.p("\n  %s · %s · %s\n", human.Time(m.ReceivedAt), cleanLine(m.From), quoted(m.Subject))
		handled := cleanLine(mailWord(t, m.Outcome))
		if m.ReviewStatus != "" {
			handled += " · " + cleanLine(mailWord(t, m.ReviewStatus))
		}
		x.p("    %s: %s · %s: %s\n", t("read_as"), t("intent_"+m.Intent), t("col_handled"), handled)
		x.p("    %s: %s · sha256 %s\n", t("col_msgid"), cleanLine(m.MessageID), cleanLine(m.Sha256))
	}
	x.p("\n  %s:\n", t("replies"))
	if len(r.Replies) == 0 {
		x.p("    %s\n", t("no_replies"))
	}
	for _, rp := range r.Replies {
		x.p("    %s · %s (%s) · %s · %s · %s\n", human.Time(rp.CreatedAt), t("reply_"+rp.Kind), cleanLine(rp.Lang), cleanLine(rp.To),
			t("reply_"+rp.Status), cleanLine(rp.MessageID))
	}
}

// events writes the site's policy log.
func (x *textWriter) events(r *Report) {
	t := x.t
	x.section("events")
	if len(r.Events) == 0 {
		x.p("  %s\n", t("no_events"))
	}
	tw := x.table()
	for _, e := range r.Events {
		what := t("ev_" + e.Kind)
		if n := e.IndexPurged; n != nil {
			what += " · " + fmt.Sprintf(t("index_purged"), n.Pages, n.Anchors)
		}
		fmt.Fprintf(tw, "  v%d\t%s\t%s\t%s\t%s\t%s\n", e.Version, human.Time(e.HappenedAt), what,
			cleanLine(e.Actor)+" ("+cleanLine(e.Source)+")", cleanLine(e.Evidence), cleanLine(e.Reason))
	}
	tw.Flush()
}

// shortKeyID is the first 8 characters of a keyid, enough to tell the
// published keys apart in a table.
func shortKeyID(k string) string {
	if len(k) > 8 {
		return k[:8] + "…"
	}
	return k
}
