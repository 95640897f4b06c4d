// Package demo runs the whole story of lohibot on one machine with nothing
// but Go, for `lohibot demo`: a small web of sample sites on loopback
// (internal/localweb: its sites, DNS server and request record), an
// in-process IMAP server holding sample emails in several languages, and a
// fresh SQLite database.
// The mailbox watcher excludes the sites asked for, the crawler crawls the
// rest politely while a second email arrives and stops one site mid-crawl,
// the audit re-derives every promise from the records, a report is written
// for one site, and verify tells a genuine crawler address from an
// impostor. Each step is narrated in a few plain lines.
//
// Everything listens on 127.0.0.1 only and nothing leaves the machine.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/localweb/sampleweb"
	"github.com/lohisoft/lohibot/internal/localweb/webrecord"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

// Defaults of Options.
const (
	DefaultDelay      = 2500 * time.Millisecond
	DefaultCrawlDelay = 3 * time.Second
	DefaultRetryAfter = 3 * time.Second
)

// The addresses verify checks: one of the crawler fleet, whose PTR and A
// records agree, and an impostor whose PTR claims a crawler's name that
// does not point back to it.
const (
	GenuineIP  = "79.139.58.98"
	GenuinePTR = "crawler1.bot.lohisoft.com"
	ImpostorIP = "203.0.113.66"
)

// The sites the emails are about (see mail/), and the site reported on.
const (
	siteBig       = "library-example.org"  // 40 pages; excluded by the email that arrives mid-crawl
	siteMailedIT  = "trattoria-example.it" // excluded by the Italian email before the crawl
	siteMailedDA  = "cykel-example.dk"     // excluded by the Danish email before the crawl
	siteReported  = siteBig                // the site the HTML report is written for
	midCrawlAfter = 4                      // page requests the big site gets before its email arrives
)

// ErrNotEmpty is returned when Options.DSN names a database that already
// holds sites, exclusions, mail or requests: the demo never mixes its
// sample data into real records.
var ErrNotEmpty = errors.New("demo: the database already holds data; give a new file")

// Options configures Run. A nil *Options is the zero value.
type Options struct {
	// Out receives the narration. Nil means io.Discard.
	Out io.Writer
	// DSN is the database to use; it must be empty. Empty means a fresh
	// SQLite file in Dir.
	DSN string
	// Dir holds the database, the report and the log. Empty means a new
	// temporary folder, removed at the end unless Keep.
	Dir string
	// Keep leaves the database, the report and the log in place and ends
	// the narration with commands to try on them.
	Keep bool
	// Delay is the crawler's gap between requests to a host. Zero means
	// DefaultDelay (the crawl then takes about a minute).
	Delay time.Duration
	// CrawlDelay is the Crawl-delay one site's robots.txt asks for, in
	// whole seconds. Zero means DefaultCrawlDelay.
	CrawlDelay time.Duration
	// RetryAfter is the Retry-After of the site that answers 429, in whole
	// seconds. Zero means DefaultRetryAfter.
	RetryAfter time.Duration
	// Progress, when set, renders the crawl's progress line (the crawl
	// command's bar); Terminal redraws it in place. Nil means no bar.
	Progress func(s crawler.Stats, sites int) string
	Terminal bool
	// Command is how the narration names lohibot in the commands to try.
	// Empty means "lohibot".
	Command string
	// Logger receives the components' logs. Nil means a file demo.log in
	// Dir.
	Logger *slog.Logger
}

// Summary is what a demo run did, for tests and callers.
type Summary struct {
	Dir    string // the folder of the database, report and log
	DSN    string
	Kept   bool   // Dir was left in place
	Report string // the HTML report's path ("" when none was written)
	// Mail holds the watcher's results, in the order it applied them; the
	// last one is the email that arrived mid-crawl.
	Mail []*mailbot.Result
	// MidCrawl is the exclusion email that arrived during the crawl, and
	// DeliveredMidCrawl when it was delivered (zero if it never was).
	MidCrawl          *mailbot.WatchEvent
	DeliveredMidCrawl time.Time
	Sites             []crawler.SiteResult
	Stats             crawler.Stats
	// Hits is the web server's own record of every request it received.
	Hits []webrecord.Hit
	// Record is what the web server's record shows about the promises.
	Record     *sampleweb.Report
	Web        *sampleweb.Web // closed; for its Site lookups
	Audit      *audit.Summary
	Violations []audit.Violation
	Verify     []identity.Result
	Elapsed    time.Duration
}

// run is one demo in progress.
type run struct {
	o     Options
	out   io.Writer
	log   *slog.Logger
	sum   *Summary
	start time.Time

	web   *sampleweb.Web
	mbox  *mailbox
	store *db.Store // the crawler's, the audit's and the report's connection
	pol   *policy.Policy

	events chan mailbot.WatchEvent // from the watcher

	mu    sync.Mutex // guards writes to out and bar
	bar   string     // the progress line on screen, "" when none
	steps int
}

// Run runs the demo. It blocks for about a minute with the default delays
// and does network I/O on loopback only. An error means a step could not
// run; the narration says how far it got.
func Run(ctx context.Context, opts *Options) (sum *Summary, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Delay <= 0 {
		o.Delay = DefaultDelay
	}
	if o.CrawlDelay <= 0 {
		o.CrawlDelay = DefaultCrawlDelay
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.Command == "" {
		o.Command = "lohibot"
	}
	r := &run{o: o, out: o.Out, sum: &Summary{}, start: time.Now(), events: make(chan mailbot.WatchEvent, 32)}
	sum = r.sum

	// The folder, the log and the database.
	created := false
	if o.Dir == "" {
		if o.Dir, err = os.MkdirTemp("", "lohibot-demo-"); err != nil {
			return sum, fmt.Errorf("demo: %w", err)
		}
		created = true
	}
	sum.Dir = o.Dir
	defer func() {
		sum.Elapsed = time.Since(r.start)
		if created && !o.Keep {
			os.RemoveAll(o.Dir)
		} else {
			sum.Kept = true
		}
	}()
	if o.Logger == nil {
		f, err := os.Create(filepath.Join(o.Dir, "demo.log"))
		if err != nil {
			return sum, fmt.Errorf("demo: %w", err)
		}
		defer f.Close()
		o.Logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	r.log = o.Logger
	sum.DSN = o.DSN
	if sum.DSN == "" {
		sum.DSN = filepath.Join(o.Dir, "lohibot.db")
	}
	if r.store, err = db.Open(ctx, sum.DSN); err != nil {
		return sum, err
	}
	defer r.store.Close()
	// The demo writes evidence as the watcher and the crawler do, and seals
	// it as they do: every few seconds, and at the end.
	r.store.StartSealer(0, r.log)
	if o.DSN != "" {
		if err := checkEmpty(ctx, r.store); err != nil {
			return sum, err
		}
	}
	r.pol = policy.New(r.store, nil)

	r.sayf("lohibot demo: the whole story on this machine, on loopback only, in about %s.", r.estimate())
	r.sayf("Everything is recorded in a fresh database: %s", sum.DSN)

	if err := r.startWeb(ctx); err != nil {
		return sum, err
	}
	defer r.web.Close()
	if err := r.startMail(ctx); err != nil {
		return sum, err
	}
	defer r.mbox.close()

	// The watcher runs from here to the end of the crawl, beside the
	// crawler, as `lohibot mail watch` and `lohibot crawl` would on one
	// database.
	wctx, cancelWatcher := context.WithCancel(ctx)
	watcherDone := make(chan error, 1)
	var stopOnce sync.Once
	stopWatcher := func() {
		stopOnce.Do(func() {
			cancelWatcher()
			<-watcherDone
		})
	}
	defer stopWatcher()
	r.startWatcher(wctx, watcherDone)
	if err := r.firstMail(ctx); err != nil {
		return sum, err
	}
	if err := r.crawl(ctx); err != nil {
		return sum, err
	}
	stopWatcher()
	if err := r.audit(ctx); err != nil {
		return sum, err
	}
	if err := r.report(ctx); err != nil {
		return sum, err
	}
	if err := r.verify(ctx); err != nil {
		return sum, err
	}
	r.finish(created)
	return sum, nil
}

// estimate says roughly how long the demo takes with these delays: the
// longest site is a plain one, 21 requests (robots.txt and 20 pages) apart
// by the delay.
func (r *run) estimate() string {
	d := time.Duration(crawler.Budget+1)*r.o.Delay + 3*time.Second
	switch {
	case d < 50*time.Second:
		return fmt.Sprintf("%d seconds", int(d.Round(5*time.Second)/time.Second))
	case d < 90*time.Second:
		return "a minute"
	default:
		return fmt.Sprintf("%d minutes", int(d.Round(time.Minute)/time.Minute))
	}
}

// checkEmpty refuses a database that holds anything a demo would write.
func checkEmpty(ctx context.Context, s *db.Store) error {
	empty, err := s.Empty(ctx)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if !empty {
		return ErrNotEmpty
	}
	return nil
}

// step starts a numbered step of the narration.
func (r *run) step(title string) {
	r.steps++
	r.sayf("")
	r.sayf("%d. %s", r.steps, title)
}

// sayf prints one line of narration (above the progress bar, if shown).
func (r *run) sayf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar != "" && r.o.Terminal {
		fmt.Fprint(r.out, "\r\033[K")
	}
	fmt.Fprintf(r.out, format+"\n", args...)
	if r.bar != "" && r.o.Terminal {
		fmt.Fprint(r.out, r.bar)
	}
}

// setBar shows (or, with "", clears) the progress line.
func (r *run) setBar(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.o.Terminal {
		r.bar = line
		return
	}
	fmt.Fprint(r.out, "\r\033[K"+line)
	r.bar = line
}

func (r *run) startWeb(ctx context.Context) error {
	r.step("A small web on loopback")
	web, err := sampleweb.Start(&sampleweb.Options{CrawlDelay: r.o.CrawlDelay, RetryAfter: r.o.RetryAfter})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	r.web, r.sum.Web = web, web
	// verify's DNS records live on the same server as the web's names.
	web.DNS.AddPTR(GenuineIP, GenuinePTR)
	web.DNS.AddA(GenuinePTR, GenuineIP)
	web.DNS.AddPTR(ImpostorIP, GenuinePTR)

	r.sayf("   %d sample sites on 127.0.0.1:%d; a DNS server on %s answers for their names.", len(web.Sites()), web.Port, web.DNSAddr)
	var starts []string
	for _, s := range web.Sites() {
		starts = append(starts, s.StartURL)
		r.sayf("   %-22s %s", s.Name, s.Says)
	}
	if _, err := r.pol.AddSites(ctx, starts, policy.Change{Actor: "demo", Reason: "demo crawl list", Source: "demo"}); err != nil {
		return err
	}
	r.sayf("   All are on the crawl list (lohibot sites add).")
	return nil
}

func (r *run) startMail(ctx context.Context) error {
	msgs, err := sampleMail()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	r.mbox, err = startMailbox(msgs)
	if err != nil {
		return err
	}
	return nil
}

// startWatcher runs the mailbox watcher until ctx ends; its error (or nil)
// is sent on done.
func (r *run) startWatcher(ctx context.Context, done chan<- error) {
	proc := mailbot.New(r.pol, &mailbot.Options{Logger: r.log})
	w := mailbot.NewWatcher(proc, &mailbot.WatchOptions{
		Endpoint:   r.mbox.endpoint(),
		Password:   imapPassword,
		Insecure:   true, // plain IMAP on loopback
		MinBackoff: 100 * time.Millisecond,
		MaxBackoff: time.Second,
		Logger:     r.log,
		OnMessage: func(ev mailbot.WatchEvent) {
			select {
			case r.events <- ev:
			default:
			}
		},
	})
	go func() { done <- w.Run(ctx) }()
}

// firstMail narrates the watcher's handling of the emails waiting at the
// start.
func (r *run) firstMail(ctx context.Context) error {
	waiting := r.mbox.count("INBOX")
	r.step("The exclusion mailbox")
	r.sayf("   An IMAP server on %s holds %d emails to message@lohisoft.com.", r.mbox.addr, waiting)
	r.sayf("   The watcher (lohibot mail watch) reads them, applies each, and moves it:")
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for i := 0; i < waiting; i++ {
		select {
		case ev := <-r.events:
			r.sum.Mail = append(r.sum.Mail, ev.Result)
			r.sayf("   %s", mailLine(ev.Result))
		case <-timeout.C:
			return fmt.Errorf("demo: the watcher handled %d of %d emails in 30 s (see %s)", i, waiting, filepath.Join(r.sum.Dir, "demo.log"))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.sayf("   Processed: %d, waiting for staff in Review: %d. The watcher keeps listening (IMAP IDLE).",
		max(r.mbox.count("Processed"), 0), max(r.mbox.count("Review"), 0))
	return nil
}

func mailLine(res *mailbot.Result) string {
	var what string
	switch {
	case res.Outcome == mailbot.OutcomeExcluded:
		what = "exclusion of " + strings.Join(res.Excluded, ", ") + ": excluded at once"
	case res.NeedsReview():
		what = string(res.Intent) + ": queued for staff (lohibot mail review list)"
	case res.Intent == mailbot.IntentAuto:
		what = "auto-reply: stored, nothing to do"
	default:
		what = string(res.Intent) + ": " + string(res.Outcome)
	}
	subj := res.Subject
	if len([]rune(subj)) > 44 {
		subj = string([]rune(subj)[:43]) + "…"
	}
	return fmt.Sprintf("%-28s %-46q → %s", res.From, subj, what)
}

// crawl crawls the crawl list politely while an exclusion email arrives.
func (r *run) crawl(ctx context.Context) error {
	r.step("The polite crawl")
	res, err := resolver.New(r.web.DNSAddr)
	if err != nil {
		return err
	}
	targets, err := crawler.Targets(ctx, r.pol, nil, true)
	if err != nil {
		return err
	}
	r.sayf("   lohibot crawl --all --delay %s: one request per host at a time, %s between them", r.o.Delay, r.o.Delay)
	r.sayf("   (longer if Crawl-delay asks), robots.txt before any page, at most %d page requests per site.", crawler.Budget)
	r.sayf("   Every request asks the policy first, and is logged before it is sent.")
	c, err := crawler.New(ctx, r.store, r.pol, &crawler.Options{
		Delay:            r.o.Delay,
		AllowPrivate:     true, // the sample web is on loopback
		Resolver:         res,
		Node:             "demo",
		MaxSitesParallel: len(targets),
		Timeout:          10 * time.Second,
		Logger:           r.log,
		OnSite:           func(s crawler.SiteResult) { r.sayf("   %s", siteLine(s)) },
	})
	if err != nil {
		return err
	}
	defer c.Close()

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // the progress bar
		defer bg.Done()
		if r.o.Progress == nil {
			return
		}
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			r.setBar(r.o.Progress(c.Stats(), len(targets)))
			select {
			case <-cctx.Done():
				r.setBar("")
				return
			case <-t.C:
			}
		}
	}()
	go func() { // the email that arrives mid-crawl
		defer bg.Done()
		r.midCrawl(cctx)
	}()
	results, err := c.Crawl(ctx, targets)
	cancel()
	bg.Wait()
	r.sum.Sites = results
	r.sum.Stats = c.Stats()
	if err != nil {
		return err
	}
	s := r.sum.Stats
	r.sayf("   Done: %s, %s indexed, %s refused by robots.txt, %s left as promised (login, bot protection, unreachable), %s.",
		plural(int(s.Requests), "request"), plural(int(s.Pages), "page"), plural(int(s.RobotsRefused), "URL"),
		plural(int(s.HostsLeft), "host"), plural(int(s.Errors), "error"))
	// The server records a request once it has answered it: a handler
	// still writing an answer the crawler did not need to read to its end
	// is waited for.
	r.web.Idle(5 * time.Second)
	r.sum.Hits = r.web.Hits()
	r.sayf("   What the web server itself saw:")
	for _, line := range r.serverRecord() {
		r.sayf("   %s", line)
	}
	return nil
}

// midCrawl delivers the second exclusion email once big.test has had a few
// page requests, and narrates the exclusion when the watcher applies it.
func (r *run) midCrawl(ctx context.Context) {
	big := r.web.Site(siteBig).Name
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if sampleweb.PageHits(r.web.HitsFor(big)) >= midCrawlAfter {
			break
		}
	}
	raw, err := mailFS.ReadFile(midCrawlMail)
	if err != nil {
		r.log.Error("demo: mid-crawl email", "err", err)
		return
	}
	r.sum.DeliveredMidCrawl = time.Now()
	if err := r.mbox.deliver(raw); err != nil {
		r.log.Error("demo: mid-crawl email", "err", err)
		return
	}
	r.sayf("   ✉ An email arrives while %s is being crawled: %q", siteBig, "Please stop crawling "+siteBig)
	select {
	case ev := <-r.events:
		r.sum.MidCrawl = &ev
		r.sum.Mail = append(r.sum.Mail, ev.Result)
		took := ev.Result.Committed.Sub(r.sum.DeliveredMidCrawl)
		r.sayf("   ✉ %s excluded %s after delivery; the crawler asks the policy before every request.",
			strings.Join(ev.Result.Excluded, ", "), took.Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		r.sayf("   ✉ The watcher did not apply the email within 30 s (see demo.log).")
	}
}

func siteLine(s crawler.SiteResult) string {
	const w = 21
	switch s.Status {
	case crawler.SiteExcluded:
		if strings.Contains(s.Reason, "while") {
			return fmt.Sprintf("%-*s excluded while being crawled: nothing more was sent", w, s.Site)
		}
		return fmt.Sprintf("%-*s excluded: refused before any request", w, s.Site)
	case crawler.SiteCrawled, crawler.SiteStopped:
		line := fmt.Sprintf("%-*s %s: %s, %s", w, s.Site, s.Status, plural(s.Requests, "request"), plural(s.Pages, "page"))
		if s.RobotsRefused > 0 {
			line += fmt.Sprintf(", %d refused by robots.txt", s.RobotsRefused)
		}
		if s.HostsLeft > 0 {
			line += ", " + plural(s.HostsLeft, "host") + " left as promised"
		}
		if s.Reason != "" {
			line += "; " + s.Reason
		}
		return line
	default:
		return fmt.Sprintf("%-*s %s: %s", w, s.Site, strings.ReplaceAll(s.Status, "-", " "), s.Reason)
	}
}

// plural writes n and the noun, with an s when n is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// serverRecord checks the promises against the web server's own record
// and says, in a few lines, what it shows.
func (r *run) serverRecord() []string {
	hits := r.sum.Hits
	rec := r.web.Check(hits)
	r.sum.Record = rec
	var lines []string
	ua := fmt.Sprintf("every one as %q", crawler.UserAgent)
	if rec.BadUserAgent > 0 {
		ua = fmt.Sprintf("%d of them WITHOUT the bot's user agent", rec.BadUserAgent)
	}
	lines = append(lines, fmt.Sprintf("%d requests, %s, none with a cookie or credentials%s", rec.Requests, ua, failIf(rec.WithCookie > 0, fmt.Sprintf(" (but %d!)", rec.WithCookie))))
	minGap := time.Duration(-1)
	for _, g := range rec.MinGap {
		if minGap < 0 || g < minGap {
			minGap = g
		}
	}
	lines = append(lines, fmt.Sprintf("at most %d request in flight per host; the shortest gap on any host: %s", rec.MaxOverlap, minGap.Round(time.Millisecond)))
	most, mostSite := 0, ""
	for s, n := range rec.PageRequests {
		if n > most || (n == most && s < mostSite) {
			most, mostSite = n, s
		}
	}
	lines = append(lines, fmt.Sprintf("at most %d page requests on one site (%s)", most, mostSite))
	lines = append(lines, fmt.Sprintf("%s: pages robots.txt disallows requested %d times", r.web.Site(sampleweb.KindRobots).Name, len(rec.Disallowed)))
	if rec.RetryGap > 0 {
		lines = append(lines, fmt.Sprintf("%s: after a 429 with Retry-After: %d, the next request came %s later", r.web.Site(sampleweb.KindRetry).Name, int(r.web.RetryAfter()/time.Second), rec.RetryGap.Round(100*time.Millisecond)))
	}
	cd := r.web.Site(sampleweb.KindCrawlDelay).Name
	if g, ok := rec.MinGap[cd]; ok {
		lines = append(lines, fmt.Sprintf("%s: the shortest gap was %s (Crawl-delay: %d)", cd, g.Round(100*time.Millisecond), int(r.web.CrawlDelay()/time.Second)))
	}
	login := r.web.Site(sampleweb.KindLogin).Name
	lines = append(lines, fmt.Sprintf("%s: /members/ answered 401; requests to the site after that: %d; the /login link followed: %v", login, rec.AfterLogin, rec.LoginFetched))
	for _, s := range []string{siteMailedIT, siteMailedDA} {
		lines = append(lines, fmt.Sprintf("%s: %d requests (excluded by email before the crawl)", s, len(rec.ByHost[s])))
	}
	if ev := r.sum.MidCrawl; ev != nil {
		before, after := 0, 0
		for _, h := range rec.ByHost[siteBig] {
			if h.Start.After(ev.Result.Committed) {
				after++
			} else {
				before++
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %d requests before its exclusion, %d after", siteBig, before, after))
	}
	return lines
}

func failIf(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}

// audit runs every audit rule on the records.
func (r *run) audit(ctx context.Context) error {
	r.step("The audit, from the records alone (lohibot audit)")
	// Append what the crawl and the watcher wrote to the log, so the
	// audit checks it and the report names the log it was built from.
	if _, err := r.store.AppendLog(ctx); err != nil {
		return err
	}
	sum, err := audit.Run(ctx, r.store, &audit.Options{Logger: r.log}, func(v audit.Violation) error {
		r.sum.Violations = append(r.sum.Violations, v)
		return nil
	})
	if err != nil {
		return err
	}
	r.sum.Audit = sum
	for _, rs := range sum.Rules {
		verdict := "ok"
		if !rs.OK() {
			verdict = "FAILED: " + plural(int(rs.Violations), "violation")
		}
		r.sayf("   %-11s %s (%d checked)", rs.Rule, verdict, rs.Checked)
	}
	for i, v := range r.sum.Violations {
		if i == 5 {
			r.sayf("   … and %d more", len(r.sum.Violations)-5)
			break
		}
		r.sayf("   ! %s %s/%s: %s", v.Site, v.Rule, v.Check, v.Evidence)
	}
	if sum.OK() {
		r.sayf("   Every promise held.")
	}
	return nil
}

// report writes the HTML report of one site.
func (r *run) report(ctx context.Context) error {
	r.step("A report for one site (lohibot report " + siteReported + " --format html)")
	path := filepath.Join(r.sum.Dir, "report-"+siteReported+".html")
	rep, err := writeReport(ctx, r.store, siteReported, path)
	if err != nil {
		return err
	}
	r.sum.Report = path
	requests := 0
	for _, c := range rep.Cycles {
		requests += len(c.Requests)
	}
	r.sayf("   Written: %s", path)
	r.sayf("   One self-contained page: the site's status (excluded by email, with the evidence), its %d", requests)
	r.sayf("   requests on a timeline, the robots.txt it served, the %d pages kept, the email, and each rule's verdict.", len(rep.Pages))
	return nil
}

// verify checks a genuine crawler address and an impostor.
func (r *run) verify(ctx context.Context) error {
	r.step("Who is LohiSoftBot? (lohibot verify, forward-confirmed reverse DNS)")
	res, err := resolver.New(r.web.DNSAddr)
	if err != nil {
		return err
	}
	v := identity.New(res, &identity.Options{Logger: r.log, Timeout: 2 * time.Second})
	for _, ip := range []string{GenuineIP, ImpostorIP} {
		out, err := v.Verify(ctx, ip)
		if err != nil {
			return err
		}
		r.sum.Verify = append(r.sum.Verify, out)
		verdict := "impostor"
		if out.Genuine {
			verdict = "genuine "
		} else if out.Status == identity.StatusUnverifiable {
			verdict = "unverifiable"
		}
		r.sayf("   %-15s %s  %s", out.IP, verdict, out.Reason)
	}
	return nil
}

// finish prints where things are and what to try next.
func (r *run) finish(created bool) {
	r.sayf("")
	r.sayf("Done in %s.", time.Since(r.start).Round(time.Second))
	elsewhere := r.o.DSN != "" // --db put the database outside the folder
	if !r.o.Keep {
		switch {
		case created && elsewhere:
			r.sayf("The database stays at %s; the report and the log were removed with their temporary folder. Run `%s demo --keep` to keep them too.", r.sum.DSN, r.o.Command)
		case created:
			r.sayf("The demo's files were removed. Run `%s demo --keep` to keep the database and report and try the other commands on them.", r.o.Command)
		}
		return
	}
	db := r.sum.DSN
	if strings.ContainsAny(db, " '\"") {
		db = "'" + db + "'"
	}
	if elsewhere {
		r.sayf("The database is %s; the report and the log are kept in %s. Try:", r.sum.DSN, r.sum.Dir)
	} else {
		r.sayf("The database, the report and the log are kept in %s. Try:", r.sum.Dir)
	}
	cmd := r.o.Command + " --db " + db
	for _, c := range []string{
		"exclude list",
		"mail review list",
		"sites list",
		"search page",
		"audit",
		"report " + siteBig,
		"report " + r.web.Site(sampleweb.KindRetry).Name + " --format html -o " + filepath.Join(r.sum.Dir, "busy.html"),
	} {
		r.sayf("  %s %s", cmd, c)
	}
	r.sayf("  %s ips", r.o.Command)
	if r.sum.Report != "" {
		r.sayf("and open %s in a browser.", r.sum.Report)
	}
}
