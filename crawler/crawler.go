// Package crawler is LohiSoftBot's polite crawler: an IPv4-only HTTP client
// that refuses private addresses, robots.txt fetching and caching (RFC 9309
// 2.3 and 2.4), per-host leases and gaps shared by a fleet through the
// database, the per-site budget, the crawl loop and the request log.
//
// Every promise of the bot page is kept here and written down so that
// audit can re-derive it from the records alone:
//
//   - before every request (robots.txt included) the policy version is read
//     inside the same database transaction that writes the request's log row
//     (sent_at, policy_check) and, for a page request, reserves its budget
//     slot (crawl_cycles.spent, requests.budget_slot); the policy gate's
//     answer for the site at exactly that version decides (the gate is asked
//     again whenever the version moved); a slot is never given back;
//   - the row is completed after the response (completed_at, status, bytes,
//     duration, Retry-After, outcome, error), so a request that died with its
//     process stays in the log as sent;
//   - one request in flight per host across processes (a lease row in
//     host_leases), and a gap of at least Options.Delay (or the robots.txt
//     Crawl-delay, capped at 60 s) from the end of one request to the start
//     of the next, stored in host_leases.next_at so a fleet shares it;
//   - every page request is checked against a robots.txt snapshot younger
//     than 24 hours (requests.robots_snapshot_id, robots_rule, robots_line).
//
// A cycle is also guarded by a lease row, keyed "cycle:SITE" in host_leases
// (a key that can never be a host name), so that one crawler at a time works
// on a site and a crawler that died has its cycle taken over once its lease
// expires; a fleet's crawler whose request slots hold its sites back hands a
// site over, between two requests, to one that asked for it (handover.go).
package crawler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/db/engine"
	"github.com/lohisoft/lohibot/internal/clock"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/webbotauth"
)

// maxNoindex bounds the noindex URLs a crawler remembers (about 100 bytes
// each).
const maxNoindex = 100_000

// User agents the bot page documents. Every request carries one of them.
const (
	UserAgent      = "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
	UserAgentEmail = "LohiSoftBot/1.0 (+message@lohisoft.com)"
)

// Limits that are promises; they are not configurable.
const (
	// Budget is the number of page requests a site's cycle may spend
	// (redirect hops and retries count, robots.txt does not).
	Budget = 20
	// MaxBody is how much of a text/html body is read (after decompression).
	MaxBody = 2 << 20
	// MaxRetries is how many times one URL is retried after 429, 5xx or a
	// timeout.
	MaxRetries = 2
	// MaxConsecutiveFailures is how many 5xx or timeouts in a row make the
	// crawler leave a host for the cycle.
	MaxConsecutiveFailures = 3
	// MaxRetryAfter is the longest Retry-After honoured; a longer one makes
	// the crawler leave the host for the cycle.
	MaxRetryAfter = time.Hour
	// MaxCrawlDelay caps robots.txt's Crawl-delay.
	MaxCrawlDelay = 60 * time.Second
	// SnapshotMaxAge is how long a robots.txt snapshot serves.
	SnapshotMaxAge = 24 * time.Hour
	// RobotsRetry is how long an unreachable robots.txt (429, 5xx, network
	// error: disallow all) is trusted before it is fetched again.
	RobotsRetry = 10 * time.Minute
	// MaxRedirects is the longest chain of redirects followed, for pages and
	// robots.txt alike (RFC 9309 2.3.1.2: at least five).
	MaxRedirects = 5
)

// Defaults of Options.
const (
	DefaultDelay        = 5 * time.Second
	DefaultRecrawlAfter = 7 * 24 * time.Hour
	DefaultTimeout      = 30 * time.Second
	DefaultLeaseTTL     = 60 * time.Second
)

// minStarting is the least bound on the sites starting at once (see
// Options.MaxInFlight), so that a small MaxInFlight still takes every site
// up at once.
const minStarting = 64

// Machine-sized defaults of Options: what one core can keep busy.
const (
	// SitesPerCPU is the default of MaxSitesParallel per CPU: a site
	// waiting for its gap costs memory (its frontier and a timer, a few
	// KB; no goroutine, no open connection across a gap longer than
	// maxKeepAliveGap), not CPU, so at the default delay one core is kept
	// busy by about this many sites.
	SitesPerCPU = 10000
	// InFlightPerCPU is the default of MaxInFlight per CPU.
	InFlightPerCPU = 256
	// DefaultMaxConns is the default of MaxConns (lowered to a quarter of
	// the process's open-file limit when that is smaller). An idle
	// connection costs about 20 KB, and only hosts whose gap is 3 s or
	// less keep one (maxKeepAliveGap); with fewer than the hosts in such a
	// crawl, connections churn, and dialing cost a third of the CPU of
	// 3,000 sites at 1 s (BenchmarkCrawlScale: 3.4x the bound with 1,024,
	// 2.4x with 4,096).
	DefaultMaxConns = 4096
)

// Options configures a Crawler. A nil *Options is the zero value.
type Options struct {
	// UserAgent is sent with every request. Empty means UserAgent; it must
	// be UserAgent or UserAgentEmail.
	UserAgent string
	// Node names this crawler in the request log and the cycles. Empty means
	// the machine's host name.
	Node string
	// Delay is the minimum gap between the end of one request to a host and
	// the start of the next. Zero means DefaultDelay.
	Delay time.Duration
	// RecrawlAfter is how long after a cycle started the site may be visited
	// again. Zero means DefaultRecrawlAfter.
	RecrawlAfter time.Duration
	// MaxSitesParallel is an upper bound on the sites crawled at once (a
	// site in progress holds its frontier in memory; a site not yet
	// started costs nothing). It does not set the speed: a site waiting
	// for its host's gap, its Retry-After or a fleet lease holds no
	// request slot. Zero means SitesPerCPU per CPU.
	MaxSitesParallel int
	// MaxInFlight bounds the requests in flight at once, across all
	// hosts (each host has at most one); the sites starting at once (the
	// gate, the cycle's start: database work) are bounded by it too, but
	// never below 64, and the sites at work (not waiting for a host) by
	// twice that. Zero means InFlightPerCPU per CPU.
	MaxInFlight int
	// MaxConns bounds the connections kept open between requests (idle
	// keep-alive connections); connections in use are bounded by
	// MaxInFlight. Zero means DefaultMaxConns, or a quarter of the
	// process's open-file limit when that is smaller.
	MaxConns int
	// AllowPrivate lets the crawler connect to loopback, private and
	// link-local addresses (tests and the demo). Unspecified, multicast and
	// broadcast addresses are refused even then.
	AllowPrivate bool
	// SourceIP is the local IPv4 address requests are sent from. The zero
	// value lets the system choose.
	SourceIP netip.Addr
	// Resolver answers every DNS lookup (see internal/resolver.New for the
	// --resolver flag). Nil means net.DefaultResolver.
	Resolver resolver.Resolver
	// Timeout bounds one whole request, body included. Zero means
	// DefaultTimeout. Connecting and the TLS handshake each get at most 10 s
	// of it, the response headers at most 20 s.
	Timeout time.Duration
	// LeaseTTL is how long a host or cycle lease outlives the crawler's last
	// heartbeat (it is renewed every third of it). Zero means
	// DefaultLeaseTTL; it is raised to Timeout plus 1 s when shorter, so a
	// lease always outlives the request it covers.
	LeaseTTL time.Duration
	// Logger receives the crawler's log. Nil means slog.Default().
	Logger *slog.Logger
	// OnSite, when set, is called once per site as it finishes. It must not
	// block for long.
	OnSite func(SiteResult)
	// Signer signs every request, robots.txt included, with Web Bot Auth;
	// the request log keeps each request's keyid, created and expires. Nil
	// means requests are not signed.
	Signer *webbotauth.Signer
	// Discover, when set, turns on discovery from links (see
	// DiscoverOptions and WithDiscovered). Nil means links to other sites
	// only feed their anchor text.
	Discover *DiscoverOptions
	// Clock tells the time written to the request log, the cycles and the
	// leases, and times every wait: the gap, backoffs, Retry-After, the
	// waits for a lease held by another crawler, the lease heartbeat and
	// the database writer's own timers. Nil means the system clock (clock.Real).
	// Tests pass a fake (package clocktest); a fleet sharing a database
	// must share one time.
	Clock clock.Clock
}

// Crawler crawls sites politely and logs every request. It is safe for
// concurrent use; Close it when done.
type Crawler struct {
	store  *db.Store
	pol    *policy.Policy
	gate   *policy.Gate
	opts   Options
	clock  clock.Clock // opts.Clock
	ua     string
	log    *slog.Logger
	client *httpClients
	// lookups resolves names for the client and for redirect checks.
	lookups *lookuper
	sites   siteNames // the sites of the links' hosts
	holder  string    // this process's lease holder id: node/pid/random
	// w commits every write of the crawl; traits are what its engine
	// lets the crawler rely on.
	w      db.Writer
	traits db.Traits
	// reserveTook is the moving average of the time a request's
	// reservation took, in nanoseconds (noteReserve).
	reserveTook atomic.Int64
	// keepAliveGap is maxKeepAliveGap (tests shorten it).
	keepAliveGap time.Duration
	// othersAfter is how long ListAll waits, once this crawler's own
	// sites have started, before it yields the blocks other crawlers
	// claimed (othersWait; tests shorten it).
	othersAfter time.Duration

	inFlight chan struct{} // one token per request in flight (Options.MaxInFlight)
	starting chan struct{} // one token per site starting (Options.MaxInFlight)

	stepsMu    sync.Mutex             // guards steps and stepsReady
	steps      int                    // sites' steps running (see step)
	stepsReady []func()               // steps due, waiting for one of maxSteps
	maxSteps   int                    // 2 × Options.MaxInFlight
	leaseReads keyReads[db.HostLease] // the reads of leases other crawlers hold (startCycle)
	// robotsReads are the reads of robots.txt snapshots, batched
	// (db.Traits.Batched: loadSnapshot).
	robotsReads keyReads[*db.RobotsSnapshot]
	starts      cycleStarts // the starts of due sites waiting for a batch (db.Traits.Batched: startCycleLeased)

	robotsMu sync.Mutex // guards robots
	robots   map[string]*robotsEntry

	hostsMu sync.Mutex // guards hosts
	hosts   map[string]*hostState

	// verdicts holds the policy gate's last answer per site (string →
	// policy.Verdict), valid while the policy version stays the same.
	verdicts sync.Map

	// disc aggregates and writes the sites found through links (nil
	// without Options.Discover).
	disc *discoverer

	// anchors holds the link texts of the pages fetched and writes them
	// in the background.
	anchors *anchorSink

	// noindex holds the URLs this crawler found marked noindex (the
	// newest maxNoindex), so no link text pointing at them is stored
	// afterwards. It is safe for concurrent use.
	noindex *lru.Cache[string, struct{}]

	// pace measures what the request slots serve (SiteCapacity).
	pace pace

	// The fleet's handover of started sites (handover.go). fleetWatch
	// says this crawler takes the crawl list as a fleet's crawler
	// (ListAll on a shared engine): a site another crawler is on is
	// watched to its end, and asked for once listDone (the list gone
	// through) while this crawler has room; wants counts the requests
	// standing. runs holds the sites under way, by name, for the
	// requests other crawlers make for them (grantLoop).
	fleetWatch atomic.Bool
	listDone   atomic.Bool
	wants      atomic.Int64
	runs       sync.Map // site → *siteRun
	// work is the page requests the sites under way have left (noteWork).
	work      atomic.Int64
	grantDone chan struct{}

	// sitesRunning counts the sites whose cycle is under way.
	sitesRunning atomic.Int64

	stats struct {
		sites, sitesDone, pages, requests, robotsRefused, hostsLeft, errors atomic.Int64
		anchors, anchorsRepeated, anchorsCoalesced, anchorsDropped          atomic.Int64
	}

	stopHeartbeat context.CancelFunc
	heartbeatDone chan struct{}
}

// ErrBadOptions is wrapped by New's errors about its options.
var ErrBadOptions = errors.New("crawler: bad options")

// New returns a Crawler over store and the policy pol. It loads the policy
// gate (I/O) and starts the lease heartbeat.
func New(ctx context.Context, store *db.Store, pol *policy.Policy, opts *Options) (*Crawler, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.withDefaults(); err != nil {
		return nil, err
	}
	gate, err := pol.NewGate(ctx)
	if err != nil {
		return nil, fmt.Errorf("crawler: %w", err)
	}
	if err := startSigningRun(ctx, store, o.Node, o.Signer, o.Clock); err != nil {
		return nil, err
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	c := &Crawler{
		store:  store,
		pol:    pol,
		gate:   gate,
		opts:   o,
		clock:  o.Clock,
		ua:     o.UserAgent,
		log:    o.Logger,
		holder: fmt.Sprintf("%s/%d/%s", o.Node, os.Getpid(), hex.EncodeToString(rnd[:])),
		robots: map[string]*robotsEntry{},
		hosts:  map[string]*hostState{},

		keepAliveGap: maxKeepAliveGap,
		othersAfter:  othersWait(o.Delay, o.LeaseTTL),
	}
	c.noindex, _ = lru.New[string, struct{}](maxNoindex) // fails only for a size < 1
	c.lookups = newLookuper(o.Resolver, c.clock.Now)
	c.client = newClient(&o, c.lookups)
	c.inFlight = make(chan struct{}, o.MaxInFlight)
	c.starting = make(chan struct{}, max(o.MaxInFlight, minStarting))
	c.maxSteps = 2 * max(o.MaxInFlight, minStarting)
	c.leaseReads.read = retried(store, store.Leases)
	c.robotsReads.read = retried(store, store.LatestRobotsSnapshots)
	w, err := engine.NewWriter(ctx, store, db.WriterOptions{Clock: c.clock, Log: c.log, Refused: logicalError})
	if err != nil {
		gate.Close()
		return nil, fmt.Errorf("crawler: %w", err)
	}
	c.w, c.traits = w, w.Traits()
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stopHeartbeat = cancel
	c.heartbeatDone = make(chan struct{})
	go c.heartbeat(hctx)
	c.anchors = newAnchorSink(c)
	c.grantDone = make(chan struct{})
	if c.traits.Shared {
		go c.grantLoop(hctx)
	} else {
		close(c.grantDone)
	}
	if o.Discover != nil {
		c.disc = newDiscoverer(c, *o.Discover)
	}
	return c, nil
}

// withDefaults checks o and fills in the default of every zero field.
func (o *Options) withDefaults() error {
	if o.UserAgent == "" {
		o.UserAgent = UserAgent
	}
	if o.UserAgent != UserAgent && o.UserAgent != UserAgentEmail {
		return fmt.Errorf("%w: user agent %q: must be %q or %q", ErrBadOptions, o.UserAgent, UserAgent, UserAgentEmail)
	}
	if o.Node == "" {
		o.Node, _ = os.Hostname()
		if o.Node == "" {
			o.Node = "crawler"
		}
	}
	if o.Delay < 0 || o.RecrawlAfter < 0 || o.Timeout < 0 || o.LeaseTTL < 0 ||
		o.MaxSitesParallel < 0 || o.MaxInFlight < 0 || o.MaxConns < 0 {
		return fmt.Errorf("%w: negative duration or count", ErrBadOptions)
	}
	if o.Delay == 0 {
		o.Delay = DefaultDelay
	}
	if o.RecrawlAfter == 0 {
		o.RecrawlAfter = DefaultRecrawlAfter
	}
	if o.MaxSitesParallel == 0 {
		o.MaxSitesParallel = SitesPerCPU * runtime.GOMAXPROCS(0)
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = InFlightPerCPU * runtime.GOMAXPROCS(0)
	}
	if o.MaxConns == 0 {
		o.MaxConns = defaultMaxConns()
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.LeaseTTL < o.Timeout+time.Second {
		o.LeaseTTL = o.Timeout + time.Second
	}
	if o.SourceIP.IsValid() && !o.SourceIP.Unmap().Is4() {
		return fmt.Errorf("%w: source address %s is not IPv4", ErrBadOptions, o.SourceIP)
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Clock = clock.Or(o.Clock)
	return nil
}

// defaultMaxConns is DefaultMaxConns, or a quarter of the open-file limit
// when that is smaller (the rest is for connections in use, the database
// and the listeners of serve).
func defaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 0 && rl.Cur/4 < DefaultMaxConns {
		return max(int(rl.Cur/4), 16)
	}
	return DefaultMaxConns
}

// Close writes the link texts and candidates the crawler still holds,
// stops the heartbeat, releases every lease this crawler still holds and
// closes idle connections. It blocks until those are written and the
// heartbeat has stopped.
func (c *Crawler) Close() error {
	if c.disc != nil {
		c.disc.close()
	}
	c.anchors.close()
	if n, m := c.stats.anchorsCoalesced.Load(), c.stats.anchorsDropped.Load(); n+m > 0 {
		c.log.Warn("link texts not kept: found faster than they could be written", "coalesced", n, "dropped", m)
	}
	c.stopHeartbeat()
	<-c.heartbeatDone
	<-c.grantDone
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.releaseAll(ctx)
	c.w.Close()
	c.client.closeIdle()
	c.gate.Close()
	return err
}

// MaxSitesParallel returns the bound on the sites crawled at once in force
// (Options.MaxSitesParallel, or its default).
func (c *Crawler) MaxSitesParallel() int { return c.opts.MaxSitesParallel }

// Holder returns the id this crawler holds leases under.
func (c *Crawler) Holder() string { return c.holder }

// Stats is a snapshot of a Crawler's counters.
type Stats struct {
	Sites         int64 // sites taken up
	SitesDone     int64 // sites finished (crawled, skipped or refused)
	Pages         int64 // pages fetched with a 2xx HTML answer
	Requests      int64 // HTTP requests sent, robots.txt included
	RobotsRefused int64 // URLs not fetched because robots.txt disallows them
	HostsLeft     int64 // hosts left for their cycle, as promised (login, bot protection, robots.txt unreachable, failures)
	Errors        int64 // requests that failed or were answered 5xx, and sites that failed (SiteFailed)
	// LinkTexts counts the link texts written to the index (each write of
	// the same source, target and text counted again).
	LinkTexts int64
	// LinkTextsCoalesced and LinkTextsDropped count the link texts not
	// kept because they came faster than they could be written: those
	// whose target and text were held already from another page, and
	// the others.
	LinkTextsCoalesced, LinkTextsDropped int64
	// LinkTextsRepeated counts the link texts not kept because
	// MaxSourcesPerText pages linked to their target with their text
	// already.
	LinkTextsRepeated int64
}

// Stats returns the counters so far. It is safe to call while crawling.
func (c *Crawler) Stats() Stats {
	return Stats{
		Sites:         c.stats.sites.Load(),
		SitesDone:     c.stats.sitesDone.Load(),
		Pages:         c.stats.pages.Load(),
		Requests:      c.stats.requests.Load(),
		RobotsRefused: c.stats.robotsRefused.Load(),
		HostsLeft:     c.stats.hostsLeft.Load(),
		Errors:        c.stats.errors.Load(),

		LinkTexts:          c.stats.anchors.Load(),
		LinkTextsCoalesced: c.stats.anchorsCoalesced.Load(),
		LinkTextsRepeated:  c.stats.anchorsRepeated.Load(),
		LinkTextsDropped:   c.stats.anchorsDropped.Load(),
	}
}

// heartbeat renews every lease of this crawler until ctx ends.
func (c *Crawler) heartbeat(ctx context.Context) {
	defer close(c.heartbeatDone)
	t := c.clock.NewTicker(c.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := c.renewAll(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("lease heartbeat failed", "holder", c.holder, "err", err)
			}
		}
	}
}

// sleep waits d on the crawler's clock, or until ctx ends.
func (c *Crawler) sleep(ctx context.Context, d time.Duration) error {
	return clock.Sleep(ctx, c.clock, d)
}

// now is the time on the crawler's clock as the database keeps it (UTC,
// microseconds), as db.Now is on the system clock.
func (c *Crawler) now() time.Time { return c.clock.Now().UTC().Truncate(time.Microsecond) }

// until is the time from now on the crawler's clock until t.
func (c *Crawler) until(t time.Time) time.Duration { return clock.Until(c.clock, t) }
