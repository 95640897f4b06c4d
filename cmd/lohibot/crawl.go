package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/internal/redact"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/webbotauth"
)

// crawlOptions are the crawl command's flags and arguments.
type crawlOptions struct {
	printOptions
	policyOptions
	// Crawler are the crawler's options, made from the flags and the
	// global --resolver by the command.
	Crawler *crawler.Options
	// Terminal: out is a terminal, where a progress line is drawn (unless
	// --json or --verbose).
	Terminal bool

	sites        []string // the arguments
	all          bool
	add          bool   // --add: put named sites not on the crawl list on it, and crawl them
	by           string // who adds them (--add): the current user
	delay        time.Duration
	recrawlAfter time.Duration
	parallel     int
	inFlight     int
	conns        int
	zeroLimit    bool // a limit flag was given as 0
	allowPrivate bool
	sourceIP     string
	node         string
	userAgent    string
	timeout      time.Duration
	leaseTTL     time.Duration
	dbRetry      time.Duration // --db-retry: how long an unreachable database is waited for
	verbose      bool
	signingKey   string // --signing-key-file
	sigAgent     string // --signature-agent
	discover     bool
	minLinks     int  // --discover-min-links
	maxNew       int  // --discover-max-new
	discoverSet  bool // a --discover-* flag was given
}

func newCrawlCmd(a *app, runF func(*crawlOptions) error) *cobra.Command {
	o := &crawlOptions{}
	cmd := &cobra.Command{
		Use:   "crawl [SITE...]",
		Short: "Crawl sites politely, as LohiSoftBot",
		Long: `Crawl the named sites (domains or URLs; a URL sets where the crawl starts), or
with --all every site of the crawl list, keeping every promise of the bot page:
the policy gate before every request, robots.txt (RFC 9309) before every page,
one request per host at a time with at least --delay between them (longer if
robots.txt's Crawl-delay asks, up to 60s), Retry-After honoured, at most 20
page requests per site per cycle, a site visited at most once per
--recrawl-after. Every request is logged before it is sent.

Several crawlers may share one PostgreSQL database (--db postgres://...):
hosts and cycles are leased in the database, so a fleet never sends two
requests at once to a host nor spends a site's budget twice.

On a terminal a progress line shows sites done, pages, requests refused by
robots.txt and errors; otherwise one line per site. Ctrl-C stops cleanly: the
request log and the cycles stay consistent, and an interrupted cycle is taken
up again (with what is left of its budget) by the next crawl.

With --discover, every link of a crawled page to another site makes that site
a candidate ('lohibot sites candidates'); once --discover-min-links distinct
sites link to one, it joins the crawl list and is crawled in the same run, under
the same promises, up to --discover-max-new sites. An excluded site is never
added nor requested, however a link spells it.`,
		Example: `  lohibot crawl example.com
  lohibot crawl --all --delay 10s
  lohibot crawl https://shop.example.co.uk/start --node crawler1 --source-ip 79.139.58.98
  lohibot crawl --all --db postgres://crawler@db.internal/lohibot --node crawler2
  lohibot crawl --all --discover --discover-min-links 3 --discover-max-new 500`,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, name := range []string{"max-sites-parallel", "max-in-flight", "max-conns"} {
				if v, _ := cmd.Flags().GetInt(name); cmd.Flags().Changed(name) && v == 0 {
					o.zeroLimit = true
				}
			}
			o.sites = args
			o.discoverSet = cmd.Flags().Changed("discover-min-links") || cmd.Flags().Changed("discover-max-new")
			o.by = currentUser(a.getenv)
			if err := o.check(); err != nil {
				return err
			}
			copts, err := a.crawlerOptions(o.allowPrivate, o.sourceIP, o.userAgent, o.node)
			if err != nil {
				return err
			}
			if err := o.apply(copts); err != nil {
				return err
			}
			level := slog.LevelWarn
			if o.verbose {
				level = slog.LevelDebug
			}
			copts.Logger = a.printOptions().newLogger(level)
			o.Crawler = copts
			o.Terminal = isTerminal(a.out)
			return runOnPolicy(cmd, a, o, runF, runCrawl)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.all, "all", false, "crawl every site of the crawl list")
	f.BoolVar(&o.add, "add", false, "put the named sites that are not on the crawl list on it, and crawl them (without it they are refused)")
	f.DurationVar(&o.delay, "delay", crawler.DefaultDelay, "minimum gap between the end of one request to a host and the start of the next")
	o.recrawlAfter = crawler.DefaultRecrawlAfter
	f.Var((*daysDuration)(&o.recrawlAfter), "recrawl-after", "visit a site at most once per this interval (a Go duration, or days: 7d)")
	f.IntVar(&o.parallel, "max-sites-parallel", 0, "upper bound on the sites crawled at once; it does not set the speed (0: "+strconv.Itoa(crawler.SitesPerCPU)+" per CPU)")
	f.IntVar(&o.inFlight, "max-in-flight", 0, "requests in flight at once, across all hosts (0: "+strconv.Itoa(crawler.InFlightPerCPU)+" per CPU)")
	f.IntVar(&o.conns, "max-conns", 0, "idle connections kept open between requests (0: "+strconv.Itoa(crawler.DefaultMaxConns)+", or a quarter of the open-file limit)")
	f.BoolVar(&o.allowPrivate, "allow-private", false, "allow loopback, private and link-local addresses (tests, the demo)")
	f.StringVar(&o.sourceIP, "source-ip", "", "send requests from this local IPv4 address")
	f.StringVar(&o.node, "node", "", "this crawler's name in the request log (default: the host name)")
	f.StringVar(&o.userAgent, "user-agent", crawler.UserAgent, "user agent: \""+crawler.UserAgent+"\" or \""+crawler.UserAgentEmail+"\"")
	f.DurationVar(&o.timeout, "timeout", crawler.DefaultTimeout, "bound on one whole request")
	f.DurationVar(&o.leaseTTL, "lease-ttl", crawler.DefaultLeaseTTL, "how long a dead crawler's leases block a host or site")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log every decision to standard error")
	f.StringVar(&o.signingKey, "signing-key-file", "", "sign every request with this Ed25519 key (Web Bot Auth; 'lohibot keys generate')")
	f.StringVar(&o.sigAgent, "signature-agent", webbotauth.DefaultAgent, "the origin whose key directory signed requests name (Signature-Agent)")
	f.BoolVar(&o.discover, "discover", false, "add the sites that crawled pages link to (once --discover-min-links sites link to one) and crawl them in the same run")
	f.IntVar(&o.minLinks, "discover-min-links", crawler.DefaultDiscoverMinLinks, "distinct sites that must link to a site before --discover adds it")
	f.IntVar(&o.maxNew, "discover-max-new", crawler.DefaultDiscoverMaxNew, "most sites --discover adds in this run (0: record candidates, add none)")
	f.DurationVar(&o.dbRetry, "db-retry", db.RetryBudget, "how long the crawl waits for an unreachable database (a restart) before it gives up")
	f.MarkHidden("timeout")
	f.MarkHidden("db-retry")
	f.MarkHidden("lease-ttl")
	return cmd
}

// daysDuration is a duration flag that also takes whole or fractional days
// ("7d", "1.5d"), the natural unit of a recrawl interval.
type daysDuration time.Duration

func (d *daysDuration) String() string {
	dd := time.Duration(*d)
	if dd > 0 && dd%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(dd/(24*time.Hour)), 10) + "d"
	}
	return dd.String()
}

func (d *daysDuration) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil {
			return fmt.Errorf("invalid duration %q", s)
		}
		*d = daysDuration(n * float64(24*time.Hour))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = daysDuration(v)
	return nil
}

func (d *daysDuration) Type() string { return "duration" }

// crawlerOptions turns the shared network flags into crawler options.
func (a *app) crawlerOptions(allowPrivate bool, sourceIP, userAgent, node string) (*crawler.Options, error) {
	res, err := resolver.New(a.resolver)
	if err != nil {
		return nil, usageErrorf("--resolver: %v", err)
	}
	o := &crawler.Options{AllowPrivate: allowPrivate, Resolver: res, UserAgent: userAgent, Node: node}
	if sourceIP != "" {
		ip, err := netip.ParseAddr(sourceIP)
		if err != nil || !ip.Unmap().Is4() {
			return nil, usageErrorf("--source-ip %q: not an IPv4 address (the bot never uses IPv6)", sourceIP)
		}
		o.SourceIP = ip.Unmap()
	}
	if userAgent != crawler.UserAgent && userAgent != crawler.UserAgentEmail {
		return nil, usageErrorf("--user-agent must be %q or %q", crawler.UserAgent, crawler.UserAgentEmail)
	}
	return o, nil
}

// check checks the flags and arguments, naming every bad one at once so
// that one correction fixes them all.
func (o *crawlOptions) check() error {
	args := o.sites
	var bad []string
	switch {
	case o.all && len(args) > 0:
		bad = append(bad, "name sites or give --all, not both")
	case !o.all && len(args) == 0:
		bad = append(bad, "name the sites to crawl, or give --all")
	}
	if o.all && o.add {
		bad = append(bad, "--add puts named sites on the crawl list: not with --all")
	}
	if o.delay <= 0 {
		bad = append(bad, "--delay must be positive")
	}
	if o.recrawlAfter <= 0 {
		bad = append(bad, "--recrawl-after must be positive")
	}
	if o.parallel < 0 || o.inFlight < 0 || o.conns < 0 || o.zeroLimit {
		bad = append(bad, "--max-sites-parallel, --max-in-flight and --max-conns must be at least 1 (leave them out for the machine-sized defaults)")
	}
	if o.discoverSet && !o.discover {
		bad = append(bad, "--discover-min-links and --discover-max-new need --discover")
	}
	if o.minLinks < 1 {
		bad = append(bad, "--discover-min-links must be at least 1")
	}
	if o.maxNew < 0 {
		bad = append(bad, "--discover-max-new must not be negative")
	}
	if o.timeout <= 0 || o.leaseTTL <= 0 || o.dbRetry <= 0 {
		bad = append(bad, "--timeout, --lease-ttl and --db-retry must be positive")
	}
	var plain []string // the arguments without credentials
	for i, arg := range args {
		if hasUserinfo(arg) {
			// Not echoed: the argument holds a password.
			bad = append(bad, fmt.Sprintf("argument %d: a start URL with credentials (user:password@) is refused: the bot never logs in", i+1))
			continue
		}
		plain = append(plain, arg)
	}
	if !o.all && len(plain) > 0 {
		if _, err := policy.SitesOf(plain); err != nil {
			bad = append(bad, userMessage(err))
		}
	}
	if len(bad) > 0 {
		return usageErrorf("%s", strings.Join(bad, "\n"))
	}
	return nil
}

// apply sets the crawl flags on copts (made from the network flags),
// reading the signing key when there is one.
func (o *crawlOptions) apply(copts *crawler.Options) error {
	copts.Delay, copts.RecrawlAfter, copts.MaxSitesParallel = o.delay, o.recrawlAfter, o.parallel
	copts.MaxInFlight, copts.MaxConns = o.inFlight, o.conns
	copts.Timeout, copts.LeaseTTL = o.timeout, o.leaseTTL
	if o.discover {
		copts.Discover = &crawler.DiscoverOptions{MinLinks: o.minLinks, MaxNew: o.maxNew}
	}
	if o.signingKey != "" {
		key, err := webbotauth.ReadPrivateKey(o.signingKey)
		if err != nil {
			return &exitError{code: exitBadInput, err: fmt.Errorf("--signing-key-file: %w", err)}
		}
		if copts.Signer, err = webbotauth.NewSigner(key, &webbotauth.SignerOptions{Agent: o.sigAgent}); err != nil {
			return usageErrorf("--signature-agent: %v", err)
		}
	} else if _, err := webbotauth.Origin(o.sigAgent); err != nil {
		return usageErrorf("--signature-agent: %v", err)
	}
	return nil
}

// runCrawl crawls the sites (or with all, the crawl list), printing a line
// per site and a summary. It returns refused (exit 1) when a site failed,
// a named site is excluded, nothing at all was fetched, or the crawl was
// interrupted.
func runCrawl(ctx context.Context, o *crawlOptions, out io.Writer) error {
	p, store, copts := o.Policy, o.Policy.Store(), *o.Crawler
	// Unverified exclusions whose hold ended are purged before crawling.
	purgeDue(ctx, p, o.newLogger(slog.LevelWarn))
	targets, total, err := crawlTargets(ctx, o)
	if err != nil {
		return err
	}
	if total == 0 {
		// A remark, not data: stdout stays JSON-only with --json.
		fmt.Fprintln(o.errOut(), "nothing to crawl: the crawl list is empty")
		return nil
	}

	// While the database is unreachable (a restart), the crawl waits for
	// it and says so (db.Store.Retry).
	store.SetRetryLog(copts.Logger)
	store.SetRetryBudget(o.dbRetry)
	bar := &progressBar{out: out, json: o.JSON, draw: o.Terminal && !o.JSON && !o.verbose, total: total}
	copts.OnSite = bar.site
	c, err := crawler.New(ctx, store, p, &copts)
	if err != nil {
		if errors.Is(err, crawler.ErrBadOptions) {
			return usageErrorf("%v", err)
		}
		return err
	}
	// sealed is closed once the store's last seal, begun when the crawl
	// ended (below), is done.
	var sealed chan struct{}
	closeCrawler := sync.OnceValue(c.Close)
	defer func() {
		closeCrawler()
		if sealed != nil {
			<-sealed
		}
	}()
	// A crawl of the whole list on a database a fleet shares reports this
	// crawler's share of the fleet's requests from here on.
	fleet := o.all && store.Dialect == db.Postgres
	var fromID int64
	if fleet {
		if fromID, err = store.LastRequestID(ctx); err != nil {
			return err
		}
	}
	if o.all {
		targets = c.ListAll(ctx, total)
	}
	// With --discover, the sites added from links follow, in this run.
	targets = c.WithDiscovered(ctx, targets)

	bar.start(ctx, c.Stats)
	var (
		resMu   sync.Mutex // guards sites, nothing, pages and refuse
		sites   int
		nothing int  // sites where nothing was fetched
		pages   int  // pages fetched over all sites
		same    int  // pages answered 304 Not Modified over all sites
		refuse  bool // a site failed, or (sites named) was excluded
		failed  []crawler.SiteResult
	)
	err = c.CrawlEach(ctx, targets, func(r crawler.SiteResult) {
		resMu.Lock()
		defer resMu.Unlock()
		sites++
		pages += r.Pages
		same += r.NotModified
		if r.Status == crawler.SiteNothingFetched {
			nothing++
		}
		if r.Status == crawler.SiteFailed {
			failed = append(failed, r)
		}
		if r.Status == crawler.SiteFailed || (!o.all && r.Status == crawler.SiteExcluded) {
			refuse = true
		}
	})
	if err == nil {
		// The crawl's records are final: seal them while the crawler gives
		// back its leases and closes its connections, rather than after:
		// the last seal is most of the time between the crawl's end and
		// the command's return.
		sealed = make(chan struct{})
		go func() {
			defer close(sealed)
			store.StopSealer()
		}()
	}
	bar.stop()
	s := c.Stats()
	if !o.JSON {
		fmt.Fprintf(out, "%d %s (%d with nothing fetched): %d %s%s, %d %s, %d refused by robots.txt, %d %s left, %d %s\n",
			sites, plural(sites, "site", "sites"), nothing, s.Pages, plural(s.Pages, "page", "pages"), unchanged(same),
			s.Requests, plural(s.Requests, "request", "requests"), s.RobotsRefused, s.HostsLeft, plural(s.HostsLeft, "host", "hosts"),
			s.Errors, plural(s.Errors, "error", "errors"))
	}
	if fleet && err == nil && !o.JSON {
		// Its own leases given back first, the crawler that finds no
		// other holding any is the last of the fleet to finish.
		closeCrawler()
		if f, ferr := c.FleetShare(context.WithoutCancel(ctx), fromID); ferr == nil {
			fmt.Fprintln(out, fleetLine(f))
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(o.errOut(), "lohibot: crawl interrupted; interrupted cycles resume on the next crawl")
			return refused
		}
		return err
	}
	if len(failed) > 0 {
		fmt.Fprintln(o.errOut(), "lohibot:", failedLine(failed, store.GaveUp()))
	}
	if refuse {
		return refused
	}
	// A run that tried and got not a single page did not crawl.
	if nothing > 0 && pages == 0 {
		return refused
	}
	return nil
}

// failedLine says in one sentence why the sites of failed failed: the
// database unreachable for too long (down, when not nil), or the first
// site's reason.
func failedLine(failed []crawler.SiteResult, down error) string {
	n := len(failed)
	var ue *db.UnavailableError
	if errors.As(down, &ue) {
		cause := ue.Err
		for next := errors.Unwrap(cause); next != nil; next = errors.Unwrap(cause) {
			cause = next
		}
		return fmt.Sprintf("the database was unreachable for %s (%s), so the crawl gave up: %d %s failed, and %s on the next crawl once the database is back",
			ue.For.Round(time.Second), redact.Error(cause), n, plural(n, "site", "sites"), plural(n, "its cycle resumes", "their cycles resume"))
	}
	first := failed[0]
	return fmt.Sprintf("%d %s failed (%s: %s)", n, plural(n, "site", "sites"), human.Site(first.Site), first.Reason)
}

// fleetLine is a fleet crawler's share of the crawl as it ends, and
// whether the crawl list is done: "fleet: this crawler sent 2,100 of the
// 4,200 requests since it started (50%); the crawl list is done".
func fleetLine(f db.FleetShare) string {
	share := 0.0
	if f.All > 0 {
		share = 100 * float64(f.Mine) / float64(f.All)
	}
	line := fmt.Sprintf("fleet: this crawler sent %d of the %d %s since it started (%.0f%%); ", f.Mine, f.All, plural(f.All, "request", "requests"), share)
	if f.Others == 0 {
		return line + "the crawl list is done"
	}
	return line + fmt.Sprintf("%d other %s still at work", f.Others, plural(f.Others, "crawler is", "crawlers are"))
}

// crawlTargets returns the sites to crawl and how many there are: the
// named ones, each once, or with all only how many the crawl list holds
// (the crawler reads it a block at a time as sites start, so that a list
// of any length costs one block of memory: crawler.Crawler.ListAll).
func crawlTargets(ctx context.Context, o *crawlOptions) (iter.Seq2[crawler.Target, error], int64, error) {
	if o.all {
		// Listed once the crawler is made (crawler.Crawler.ListAll).
		total, err := o.Policy.Store().CountSites(ctx)
		return nil, total, err
	}
	if err := o.onCrawlList(ctx); err != nil {
		return nil, 0, err
	}
	ts, err := crawler.Targets(ctx, o.Policy, o.sites, false)
	if err != nil {
		return nil, 0, err
	}
	return func(yield func(crawler.Target, error) bool) {
		seen := map[string]bool{}
		for _, t := range ts {
			if !seen[t.Site] {
				seen[t.Site] = true
				if !yield(t, nil) {
					return
				}
			}
		}
	}, int64(len(ts)), nil
}

// progressBar prints the crawl's lines, one per site as each ends (or a
// JSON object per site), safe for concurrent use. When draw is set (a
// terminal), a progress line stays below them between start and stop,
// redrawn every 200 ms.
type progressBar struct {
	out   io.Writer
	json  bool  // --json: a JSON object per site, no progress line
	draw  bool  // draw the progress line
	total int64 // the sites to crawl, for the progress line

	mu     sync.Mutex // guards writes to out
	cancel context.CancelFunc
	done   chan struct{} // closed when the drawing goroutine ends
}

// site prints one site's outcome, above the progress line; it is the
// crawler's OnSite.
func (b *progressBar) site(r crawler.SiteResult) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.json:
		printJSON(b.out, r)
	case b.draw:
		fmt.Fprintf(b.out, "\r\033[K%s\n", siteLine(r))
	default:
		fmt.Fprintln(b.out, siteLine(r))
	}
}

// start draws the progress line from stats until stop (or ctx ends);
// without draw it does nothing.
func (b *progressBar) start(ctx context.Context, stats func() crawler.Stats) {
	if !b.draw {
		return
	}
	ctx, b.cancel = context.WithCancel(ctx)
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			b.mu.Lock()
			fmt.Fprintf(b.out, "\r\033[K%s", progressLine(stats(), b.total))
			b.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// stop ends the drawing and clears the progress line; it waits for the
// drawing goroutine.
func (b *progressBar) stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	<-b.done
	b.cancel = nil
	fmt.Fprintf(b.out, "\r\033[K")
}

// siteLine is one site's outcome: its status, why in one clause, and what
// was sent: "example.com: crawled, nothing left to fetch; 5 requests, ...".
func siteLine(r crawler.SiteResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", human.Site(r.Site), strings.ReplaceAll(r.Status, "-", " "))
	if r.Reason != "" {
		fmt.Fprintf(&b, ", %s", r.Reason)
	}
	switch r.Status {
	case crawler.SiteCrawled, crawler.SiteStopped, crawler.SiteNothingFetched, crawler.SiteFailed:
		// Every request sent, robots.txt included, as the summary counts.
		n := r.Requests + r.RobotsRequests
		fmt.Fprintf(&b, "; %d %s, %d %s, %d refused by robots.txt, %d %s left, %d %s", n, plural(n, "request", "requests"),
			r.Pages, plural(r.Pages, "page", "pages")+unchanged(r.NotModified), r.RobotsRefused, r.HostsLeft, plural(r.HostsLeft, "host", "hosts"),
			r.Errors, plural(r.Errors, "error", "errors"))
	}
	return b.String()
}

func progressLine(s crawler.Stats, total int64) string {
	const width = 24
	filled := 0
	if total > 0 {
		filled = int(s.SitesDone * width / total)
	}
	return fmt.Sprintf("[%s%s] %d/%d sites · %d pages · %d refused by robots.txt · %d errors",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), s.SitesDone, total, s.Pages, s.RobotsRefused, s.Errors)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// hasUserinfo reports whether a site argument is a URL carrying
// credentials (user[:password]@host), with or without a scheme.
func hasUserinfo(arg string) bool {
	s := strings.TrimSpace(arg)
	if !strings.Contains(s, "://") {
		s = "https://" + strings.TrimPrefix(s, "//")
	}
	u, err := url.Parse(s)
	if err != nil {
		// Unparsable: an @ before the first "/" is still userinfo.
		rest := s[strings.Index(s, "://")+3:]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		return strings.Contains(rest, "@")
	}
	return u.User != nil
}

// onCrawlList makes sure every named site is on the crawl list: a typo
// must not crawl a stranger. With --add the sites not listed are put on
// it (recorded as added by the current user); without, they are refused
// (exit 2), each with the closest listed site named, and nothing is
// crawled.
func (o *crawlOptions) onCrawlList(ctx context.Context) error {
	sites, err := policy.SitesOf(o.sites)
	if err != nil {
		return err
	}
	var unlisted, inputs []string
	seen := map[string]bool{}
	store := o.Policy.Store()
	for i, site := range sites {
		if seen[site] {
			continue
		}
		seen[site] = true
		if _, err := store.Site(ctx, site); err == nil {
			continue
		} else if !errors.Is(err, db.ErrNotFound) {
			return err
		}
		unlisted = append(unlisted, site)
		inputs = append(inputs, o.sites[i])
	}
	if len(unlisted) == 0 {
		return nil
	}
	if o.add {
		_, err := o.Policy.AddSites(ctx, inputs, policy.Change{Actor: o.by, Reason: "crawl --add", Source: "cli"})
		return err
	}
	listed, err := o.Policy.Sites(ctx)
	if err != nil {
		return err
	}
	names := make([]string, len(listed))
	for i, l := range listed {
		names[i] = l.Name
	}
	var lines []string
	for _, site := range unlisted {
		line := fmt.Sprintf("%s is not on the crawl list", human.Site(site))
		if c := closest(site, names); c != "" {
			line += fmt.Sprintf(" (the closest listed site is %s)", human.Site(c))
		}
		lines = append(lines, line)
	}
	lines = append(lines, "crawl only sites of the crawl list: add them with 'lohibot sites add', or give --add to add and crawl them")
	return usageErrorf("%s", strings.Join(lines, "\n"))
}

// closest returns the name of names nearest to site by edit distance (the
// first of equals), or "" when names is empty.
func closest(site string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		if d := levenshtein.ComputeDistance(site, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// unchanged is ", N unchanged" for N pages answered 304 Not Modified (a
// recrawl of pages as they were: fetched, and their index entries still
// right), and "" for none.
func unchanged(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d unchanged", n)
}
