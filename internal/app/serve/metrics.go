package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lohisoft/lohibot/crawler"
	"github.com/lohisoft/lohibot/mailbot"
)

// Metrics are the daemon's Prometheus metrics, on a registry of their own
// (nothing is registered globally). The crawler and the watcher feed them
// through their hooks: ObserveSite fits crawler.Options.OnSite,
// ObserveMail fits mailbot.WatchOptions.OnMessage and ObserveWatchState
// fits mailbot.WatchOptions.OnState; the primitive methods (Request,
// Exclusions, ...) serve any other source. All methods are safe for
// concurrent use and never block.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	pages           prometheus.Counter
	robotsRefusals  prometheus.Counter
	sites           *prometheus.CounterVec
	crawlExclusions prometheus.Counter
	sitesRunning    prometheus.Gauge
	sitesDue        prometheus.Gauge
	scans           prometheus.Counter

	mail            *prometheus.CounterVec
	exclusions      *prometheus.CounterVec
	timeToExclusion prometheus.Histogram
	watcherUp       prometheus.Gauge

	reloads    *prometheus.CounterVec
	lastReload prometheus.Gauge
	httpReqs   *prometheus.CounterVec
}

// timeToExclusionBuckets are the histogram buckets of the time from an
// email's delivery to the commit of its exclusion, in seconds.
var timeToExclusionBuckets = []float64{0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600}

// NewMetrics returns the metrics on a new registry, with the Go runtime and
// process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a := promauto.With(m.reg)
	m.requests = a.NewCounterVec(prometheus.CounterOpts{
		Name: "lohibot_crawler_requests_total",
		Help: "HTTP requests of the crawler by purpose (page, robots) and status code (\"none\" when no answer came), read back from the request log as each site finishes.",
	}, []string{"purpose", "status"})
	m.pages = a.NewCounter(prometheus.CounterOpts{
		Name: "lohibot_crawler_pages_total",
		Help: "Pages fetched and indexed (2xx HTML answers).",
	})
	m.robotsRefusals = a.NewCounter(prometheus.CounterOpts{
		Name: "lohibot_crawler_robots_refusals_total",
		Help: "URLs not fetched because robots.txt disallows them for LohiSoftBot.",
	})
	m.sites = a.NewCounterVec(prometheus.CounterOpts{
		Name: "lohibot_crawler_sites_total",
		Help: "Sites taken up by the crawl scheduler, by how their crawl ended (crawled, stopped, skipped, excluded, failed).",
	}, []string{"status"})
	m.crawlExclusions = a.NewCounter(prometheus.CounterOpts{
		Name: "lohibot_crawler_exclusions_applied_total",
		Help: "Crawls refused or stopped because the site is excluded (by the policy gate, before a request).",
	})
	m.sitesRunning = a.NewGauge(prometheus.GaugeOpts{
		Name: "lohibot_crawler_sites_running",
		Help: "Sites being crawled now.",
	})
	m.sitesDue = a.NewGauge(prometheus.GaugeOpts{
		Name: "lohibot_crawler_sites_due",
		Help: "Sites of the crawl list due for a crawl at the last scan.",
	})
	m.scans = a.NewCounter(prometheus.CounterOpts{
		Name: "lohibot_crawler_scans_total",
		Help: "Scans of the crawl list for due sites.",
	})
	m.mail = a.NewCounterVec(prometheus.CounterOpts{
		Name: "lohibot_mail_processed_total",
		Help: "Emails the watcher committed and moved, by intent (exclude, reinclude, other, auto) and outcome (excluded, queued, ignored, failed, duplicate).",
	}, []string{"intent", "outcome"})
	m.exclusions = a.NewCounterVec(prometheus.CounterOpts{
		Name: "lohibot_exclusions_applied_total",
		Help: "Sites excluded by this process, by source (mail).",
	}, []string{"source"})
	m.timeToExclusion = a.NewHistogram(prometheus.HistogramOpts{
		Name:    "lohibot_mail_time_to_exclusion_seconds",
		Help:    "Time from an exclusion email's delivery to the mail server (INTERNALDATE) to the commit of its exclusion.",
		Buckets: timeToExclusionBuckets,
	})
	m.watcherUp = a.NewGauge(prometheus.GaugeOpts{
		Name: "lohibot_mail_watcher_connected",
		Help: "1 while the mailbox watcher is logged in with its mailbox selected.",
	})
	m.reloads = a.NewCounterVec(prometheus.CounterOpts{
		Name: "lohibot_config_reloads_total",
		Help: "Configuration reloads (SIGHUP) by result (ok, error).",
	}, []string{"result"})
	m.lastReload = a.NewGauge(prometheus.GaugeOpts{
		Name: "lohibot_config_last_reload_success_timestamp_seconds",
		Help: "When the configuration in force was loaded, in Unix seconds.",
	})
	m.httpReqs = a.NewCounterVec(prometheus.CounterOpts{
		Name: "lohibot_http_requests_total",
		Help: "Requests to lohibot's own HTTP server by handler and status code.",
	}, []string{"handler", "code"})
	// Series that exist from the start, so that rate() and alerts see a
	// zero before the first event.
	for _, s := range []string{crawler.SiteCrawled, crawler.SiteStopped, crawler.SiteSkipped, crawler.SiteExcluded, crawler.SiteFailed} {
		m.sites.WithLabelValues(s)
	}
	m.exclusions.WithLabelValues(mailbot.SourceMail)
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")
	return m
}

// Registry returns the registry the metrics are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: false})
}

// instrument counts the requests h serves under the label name.
func (m *Metrics) instrument(name string, h http.Handler) http.Handler {
	return promhttp.InstrumentHandlerCounter(m.httpReqs.MustCurryWith(prometheus.Labels{"handler": name}), h)
}

// Request counts one crawler request of purpose (db.PurposePage or
// db.PurposeRobots) answered with status; 0 means no answer.
func (m *Metrics) Request(purpose string, status int, n int) {
	s := "none"
	if status != 0 {
		s = strconv.Itoa(status)
	}
	m.requests.WithLabelValues(purpose, s).Add(float64(n))
}

// ObserveSite counts a finished site: its pages, robots.txt refusals and
// how it ended. It fits crawler.Options.OnSite.
func (m *Metrics) ObserveSite(r crawler.SiteResult) {
	m.sites.WithLabelValues(r.Status).Inc()
	m.pages.Add(float64(r.Pages))
	m.robotsRefusals.Add(float64(r.RobotsRefused))
	if r.Status == crawler.SiteExcluded {
		m.crawlExclusions.Inc()
	}
}

// Exclusions counts n sites excluded from source.
func (m *Metrics) Exclusions(source string, n int) {
	m.exclusions.WithLabelValues(source).Add(float64(n))
}

// ObserveMail counts a message the watcher handled: by intent and outcome,
// the exclusions it applied, and its time to exclusion. It fits
// mailbot.WatchOptions.OnMessage.
func (m *Metrics) ObserveMail(ev mailbot.WatchEvent) {
	if ev.Result == nil {
		return
	}
	outcome := string(ev.Result.Outcome)
	if ev.Result.Duplicate {
		outcome = "duplicate"
	}
	m.mail.WithLabelValues(string(ev.Result.Intent), outcome).Inc()
	if d := ev.TimeToExclusion(); d > 0 {
		m.Exclusions(mailbot.SourceMail, len(ev.Result.Excluded))
		m.timeToExclusion.Observe(d.Seconds())
	} else if !ev.Result.Duplicate && ev.Result.Outcome == mailbot.OutcomeExcluded {
		m.Exclusions(mailbot.SourceMail, len(ev.Result.Excluded))
	}
}

// ObserveWatchState records whether the watcher is connected. It fits
// mailbot.WatchOptions.OnState.
func (m *Metrics) ObserveWatchState(st mailbot.WatchState) {
	if st.Connected {
		m.watcherUp.Set(1)
	} else {
		m.watcherUp.Set(0)
	}
}

// observeDB exports retries, how many times work was run again while the
// database was unreachable (db.Store.Retries), as lohibot_db_retries_total.
func (m *Metrics) observeDB(retries func() int64) {
	promauto.With(m.reg).NewCounterFunc(prometheus.CounterOpts{
		Name: "lohibot_db_retries_total",
		Help: "Database work run again, after a backoff, because the database was unreachable (a restart, a failover).",
	}, func() float64 { return float64(retries()) })
}

// loaded records the configuration's first load, at start: not a reload,
// so the reload counters stay at 0.
func (m *Metrics) loaded(at time.Time) {
	m.lastReload.Set(float64(at.Unix()))
}

// reloaded records a configuration reload.
func (m *Metrics) reloaded(err error, at time.Time) {
	if err != nil {
		m.reloads.WithLabelValues("error").Inc()
		return
	}
	m.reloads.WithLabelValues("ok").Inc()
	m.lastReload.Set(float64(at.Unix()))
}
