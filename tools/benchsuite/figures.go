package main

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// Metric is one way to read a figure's value from a Result: the unit as the
// benchmark printed it, and how to convert it to the figure's unit. The
// special unit "rss" reads the process's peak resident memory.
type Metric struct {
	Unit string
	Conv func(v float64) float64 // nil: as printed
}

// Figure is one row of the table: a speed promise of the issues, where to
// find its measurement, and how to judge it.
type Figure struct {
	Name   string // what is measured
	Target string // the target, as the issue states it
	Pkg    string // the package (import path below the module); "" means any
	Ours   string // regexp on the benchmark's full name (BenchmarkX or BenchmarkX/sub)
	Not    string // regexp on names to leave out (the peer, fuzz targets); "" none
	Value  []Metric
	Unit   string             // the unit shown: s, ms, µs, ns, MB, /s, x (× the politeness bound), × (a plain ratio)
	Pass   func(float64) bool // nil: no verdict
	Peer   string             // regexp on the same-run peer's name; "" none
	// PeerName names the peer in the table (e.g. "temoto").
	PeerName string
	// RatioGoal makes ours/peer ≤ 1 a target: the figure is missed when
	// the peer was faster in the same run.
	RatioGoal bool
}

func scale(f float64) func(float64) float64 { return func(v float64) float64 { return v * f } }

// perSec turns nanoseconds per item into items per second.
func perSec(v float64) float64 {
	if v <= 0 {
		return math.Inf(1)
	}
	return 1e9 / v
}

// Units as benchmarks print them, and their conversions.
var (
	nsToS  = Metric{"ns/op", scale(1e-9)}
	nsToMS = Metric{"ns/op", scale(1e-6)}
	nsToUS = Metric{"ns/op", scale(1e-3)}
	nsOp   = Metric{"ns/op", nil}
	rssMB  = Metric{"rss", scale(1.0 / (1 << 20))}
)

// crawlBound is the politeness bound, in seconds, of the crawl benchmark:
// 21 requests per host (robots.txt and 20 pages), so 20 gaps of
// 200 ms, all hosts in parallel.
const crawlBound = 20 * 0.2

func below(max float64) func(float64) bool   { return func(v float64) bool { return v < max } }
func atMost(max float64) func(float64) bool  { return func(v float64) bool { return v <= max } }
func atLeast(min float64) func(float64) bool { return func(v float64) bool { return v >= min } }

// figures are the project's speed and memory promises, each with its
// target, in the order of the table; docs/performance.md gives the current
// values and the commands behind them.
var figures = []Figure{
	{
		Name: "gate check, 1M exclusions (SQLite)", Target: "< 50 µs",
		Pkg: "policy", Ours: `^BenchmarkGateCheck$`,
		Value: []Metric{nsToUS}, Unit: "µs", Pass: below(50),
	},
	{
		Name: "gate load of 1M exclusions", Target: "< 5 s",
		Pkg: "policy", Ours: `^BenchmarkGate(Check|Load)$`,
		Value: []Metric{{"load-s", nil}, nsToS}, Unit: "s", Pass: below(5),
	},
	{
		Name: "robots.txt decision, LohiSoftBot group", Target: "≤ temoto",
		Pkg: "compare", Ours: `^BenchmarkDecide/lohibot-path/LohiSoftBot$`,
		Value: []Metric{nsOp}, Unit: "ns", RatioGoal: true,
		Peer: `^BenchmarkDecide/temoto-path/LohiSoftBot$`, PeerName: "temoto",
	},
	{
		Name: "robots.txt decision, long * group", Target: "≤ temoto",
		Pkg: "compare", Ours: `^BenchmarkDecide/lohibot-path/ExampleBot$`,
		Value: []Metric{nsOp}, Unit: "ns", RatioGoal: true,
		Peer: `^BenchmarkDecide/temoto-path/ExampleBot$`, PeerName: "temoto",
	},
	{
		Name: "robots.txt decision, RFC 9309 5.1 example", Target: "≤ temoto",
		Pkg: "compare", Ours: `^BenchmarkDecideSimple/lohibot-(path|url)/foobot$`,
		Value: []Metric{nsOp}, Unit: "ns", RatioGoal: true,
		Peer: `^BenchmarkDecideSimple/temoto-path/foobot$`, PeerName: "temoto",
	},
	{
		Name: "robots.txt parse of 500 KiB", Target: "< 20 ms",
		Pkg: "compare", Ours: `^BenchmarkParse/lohibot/500KiB$`,
		Value: []Metric{nsToMS}, Unit: "ms", Pass: below(20),
		Peer: `^BenchmarkParse/temoto/500KiB$`, PeerName: "temoto",
	},
	{
		Name: "mail parse + classify, one core", Target: "≥ 2,000 msg/s",
		Pkg: "mailbot", Ours: `^BenchmarkParseCorpus$`,
		Value: []Metric{{"msgs/s", nil}, {"ns/op", perSec}},
		Unit:  "/s", Pass: atLeast(2000),
	},
	{
		Name: "mail import, 10,000-message mbox", Target: "< 15 s",
		Pkg: "mailbot", Ours: `^BenchmarkImportMbox10k$`,
		Value: []Metric{{"s/op", nil}, nsToS}, Unit: "s", Pass: below(15),
	},
	{
		Name: "time to exclusion, Dovecot IDLE", Target: "< 2 s",
		Pkg: "internal/testenv/e2e", Ours: `^BenchmarkTimeToExclusion/dovecot$`,
		Value: []Metric{{"s/exclusion", nil}, nsToS}, Unit: "s", Pass: below(2),
	},
	{
		Name: "time to exclusion, in-process IMAP", Target: "< 2 s",
		Pkg: "internal/testenv/e2e", Ours: `^BenchmarkTimeToExclusion/in-process$`,
		Value: []Metric{{"s/exclusion", nil}, nsToS}, Unit: "s", Pass: below(2),
	},
	{
		Name: "crawl 500 sites × 30 pages, delay 200 ms", Target: "≤ 1.25 × bound",
		Pkg: "compare", Ours: `^BenchmarkCrawl/lohibot$`,
		Value: []Metric{{"x-bound", nil}, {"s/crawl", scale(1 / crawlBound)}},
		Unit:  "x", Pass: atMost(1.25),
	},
	{
		Name: "crawl of the local web vs Colly v2", Target: "≤ Colly",
		Pkg: "compare", Ours: `^BenchmarkCrawl/lohibot$`,
		Value: []Metric{{"s/crawl", nil}}, Unit: "s", RatioGoal: true,
		Peer: `^BenchmarkCrawl/colly$`, PeerName: "Colly",
	},
	{
		Name: "crawl peak memory (Go heap)", Target: "< 200 MB",
		Pkg: "compare", Ours: `^BenchmarkCrawl/lohibot$`,
		Value: []Metric{{"peak-heap-MB", nil}}, Unit: "MB", Pass: below(200),
		Peer: `^BenchmarkCrawl/colly$`, PeerName: "Colly",
	},
	{
		Name: "crawl 200 × 25 @ 200 ms, default settings", Target: "≤ 1.10 × bound",
		Pkg: "crawler", Ours: `^BenchmarkCrawlScale/200x25@200ms/lohibot$`,
		Value: []Metric{{"x-bound", nil}}, Unit: "x", Pass: atMost(1.10),
	},
	{
		Name: "crawl 3,000 × 25 @ 1 s, default settings", Target: "≤ 1.15 × bound",
		Pkg: "crawler", Ours: `^BenchmarkCrawlScale/3000x25@1s/lohibot$`,
		Value: []Metric{{"x-bound", nil}}, Unit: "x", Pass: atMost(1.15),
	},
	{
		Name: "crawl 8,000 × 25 @ 5 s (default delay)", Target: "≤ 1.10 × bound",
		Pkg: "crawler", Ours: `^BenchmarkCrawlScaleDefaultDelay/lohibot$`,
		Value: []Metric{{"x-bound", nil}}, Unit: "x", Pass: atMost(1.10),
	},
	{
		Name: "crawl 8,000 × 25 @ 5 s, peak RSS (with the local web)", Target: "< 250 MB",
		Pkg: "crawler", Ours: `^BenchmarkCrawlScaleDefaultDelay/lohibot$`,
		Value: []Metric{rssMB}, Unit: "MB", Pass: below(250),
	},
	{
		Name: "serve over 50,000 hosts in waves, live heap at the end / after 5,000", Target: "≤ 1.20 ×",
		Pkg: "internal/app/serve", Ours: `^BenchmarkServeMemory$`,
		Value: []Metric{{"heap-growth", nil}}, Unit: "×", Pass: atMost(1.20),
	},
	{
		Name: "due-site scan, 1M sites / 20M requests (SQLite)", Target: "< 1 s",
		Pkg: "crawler", Ours: `^BenchmarkCrawlList/sqlite$`,
		Value: []Metric{{"scan-s", nil}}, Unit: "s", Pass: below(1),
	},
	{
		Name: "report SITE, 1M sites / 20M requests (SQLite)", Target: "< 1 s",
		Pkg: "crawler", Ours: `^BenchmarkCrawlList/sqlite$`,
		Value: []Metric{{"report-s", nil}}, Unit: "s", Pass: below(1),
	},
	{
		Name: "audit SITE, 1M sites / 20M requests (SQLite)", Target: "< 1 s",
		Pkg: "crawler", Ours: `^BenchmarkCrawlList/sqlite$`,
		Value: []Metric{{"audit-s", nil}}, Unit: "s", Pass: below(1),
	},
	{
		Name: "due-site scan, 1M sites / 20M requests (PostgreSQL)", Target: "< 1 s",
		Pkg: "crawler", Ours: `^BenchmarkCrawlList/postgres$`,
		Value: []Metric{{"scan-s", nil}}, Unit: "s", Pass: below(1),
	},
	{
		Name: "report SITE, 1M sites / 20M requests (PostgreSQL)", Target: "< 1 s",
		Pkg: "crawler", Ours: `^BenchmarkCrawlList/postgres$`,
		Value: []Metric{{"report-s", nil}}, Unit: "s", Pass: below(1),
	},
	{
		Name: "audit SITE, 1M sites / 20M requests (PostgreSQL)", Target: "< 1 s",
		Pkg: "crawler", Ours: `^BenchmarkCrawlList/postgres$`,
		Value: []Metric{{"audit-s", nil}}, Unit: "s", Pass: below(1),
	},
	{
		Name: "crawl 1,000 × 25 @ 1 s on PostgreSQL, one crawler", Target: "≤ 1.25 × bound",
		Pkg: "crawler", Ours: `^BenchmarkCrawlFleet/one$`,
		Value: []Metric{{"x-bound", nil}}, Unit: "x", Pass: atMost(1.25),
	},
	{
		Name: "crawl 1,000 × 25 @ 1 s on PostgreSQL, two crawlers", Target: "≤ 1.25 × bound, never slower than one",
		Pkg: "crawler", Ours: `^BenchmarkCrawlFleet/two$`,
		Value: []Metric{{"x-bound", nil}}, Unit: "x", Pass: atMost(1.25),
		// The same run's one crawler: two must not be slower.
		Peer: `^BenchmarkCrawlFleet/one$`, PeerName: "one crawler", RatioGoal: true,
	},
	{
		Name: "audit of 1,000,000 request rows (SQLite)", Target: "< 20 s",
		Pkg: "audit", Ours: `^BenchmarkAuditMillion$`,
		Value: []Metric{{"s/audit", nil}, nsToS}, Unit: "s", Pass: below(20),
	},
	{
		Name: "audit peak memory (VmHWM)", Target: "< 300 MB",
		Pkg: "audit", Ours: `^BenchmarkAuditMillion$`,
		Value: []Metric{{"MB-VmHWM", nil}, rssMB}, Unit: "MB", Pass: below(300),
	},
	{
		Name: "verify-log, combined format", Target: "≥ 200,000 lines/s",
		Pkg: "identity", Ours: `^BenchmarkVerifyLog/combined$`,
		Value: []Metric{{"lines/s", nil}, {"ns/line", perSec}}, Unit: "/s", Pass: atLeast(200000),
	},
}

// Row is a figure as measured: the table's line.
type Row struct {
	Figure   string
	Target   string
	Measured string // "missing" when no benchmark gave it
	Peer     string // the peer's value in the same run
	Ratio    string // ours / peer
	Verdict  string // ok, MISSED, or ""
	Source   string // the benchmark it came from
	value    float64
	found    bool
}

// Evaluate computes the table's rows from every result of the run. Results
// that no figure claims are added as rows of their own, so that every
// benchmark of the project shows.
func Evaluate(figs []Figure, results []Result, module string) []Row {
	used := map[int]bool{}
	var rows []Row
	for _, f := range figs {
		row := Row{Figure: f.Name, Target: f.Target, Measured: "missing"}
		i, v, ok := pick(f, f.Ours, f.Value, results, module)
		if ok {
			used[i] = true
			row.value, row.found = v, true
			row.Measured = format(v, f.Unit)
			row.Source = shortPkg(results[i].Pkg, module) + " " + results[i].Name
			if f.Pass != nil {
				row.Verdict = "ok"
				if !f.Pass(v) {
					row.Verdict = "MISSED"
				}
			}
		}
		if !ok {
			if j := problem(f, f.Ours, results, module); j >= 0 {
				row.Measured = results[j].Problem
				if results[j].Name != "" {
					used[j] = true
				}
			}
		}
		if f.Peer != "" {
			row.Peer = "missing"
			pf := f
			pf.Not = ""
			j, pv, pok := pick(pf, f.Peer, f.Value, results, module)
			if pok && (!ok || j != i) {
				used[j] = true
				row.Peer = f.PeerName + ": " + format(pv, f.Unit)
				if ok && pv > 0 {
					r := v / pv
					// Three decimals within half a hundredth of 1, never
					// "1.00×" beside MISSED: a ratio goal is missed by
					// any margin.
					prec := 2
					if r != 1 && math.Abs(r-1) < 0.005 {
						prec = 3
					}
					row.Ratio = fmt.Sprintf("%.*f×", prec, r)
					if f.RatioGoal {
						if row.Verdict == "" {
							row.Verdict = "ok"
						}
						if r > 1 {
							row.Verdict = "MISSED"
						}
					}
				}
			}
		}
		rows = append(rows, row)
	}
	for i, r := range results {
		if used[i] {
			continue
		}
		row := Row{Figure: "other: " + shortPkg(r.Pkg, module) + " " + r.Name, Target: "—", Source: shortPkg(r.Pkg, module) + " " + r.Name, found: true}
		if v, ok := r.Metrics["ns/op"]; ok {
			row.Measured = formatDuration(v) + "/op"
		}
		if r.Problem != "" {
			row.Measured = r.Problem
		}
		rows = append(rows, row)
	}
	return rows
}

// pick finds the first result matching name (in package f.Pkg) that has one
// of the metrics, and returns its index and converted value.
func pick(f Figure, name string, metrics []Metric, results []Result, module string) (int, float64, bool) {
	re := regexp.MustCompile(name)
	var not *regexp.Regexp
	if f.Not != "" {
		not = regexp.MustCompile(f.Not)
	}
	for _, m := range metrics {
		for i, r := range results {
			if f.Pkg != "" && shortPkg(r.Pkg, module) != f.Pkg {
				continue
			}
			if r.Problem != "" || !re.MatchString(r.Name) || (not != nil && not.MatchString(r.Name)) {
				continue
			}
			var v float64
			if m.Unit == "rss" {
				if r.MaxRSS <= 0 {
					continue
				}
				v = float64(r.MaxRSS)
			} else {
				var ok bool
				if v, ok = r.Metrics[m.Unit]; !ok {
					continue
				}
			}
			if m.Conv != nil {
				v = m.Conv(v)
			}
			return i, v, true
		}
	}
	return -1, 0, false
}

// problem returns the index of the result that says why a benchmark that
// would have given the figure gave nothing (skipped, failed, timed out, did
// not build), or -1.
func problem(f Figure, name string, results []Result, module string) int {
	re := regexp.MustCompile(name)
	// A top-level benchmark that failed stands for its sub-benchmarks.
	prefix, _ := regexp.MustCompile(strings.TrimPrefix(name, "^")).LiteralPrefix()
	for i, r := range results {
		if r.Problem == "" || (f.Pkg != "" && shortPkg(r.Pkg, module) != f.Pkg) {
			continue
		}
		if (r.Name == "" && f.Pkg != "") || (r.Name != "" && re.MatchString(r.Name)) || (r.Name != "" && strings.HasPrefix(prefix, r.Name+"/")) {
			return i
		}
	}
	return -1
}

// shortPkg strips the module path from an import path.
func shortPkg(pkg, module string) string {
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

// format prints v in unit u with three significant digits or so.
func format(v float64, u string) string {
	switch u {
	case "/s":
		return fmt.Sprintf("%s/s", group(v))
	case "x":
		return fmt.Sprintf("%.2f × bound", v)
	case "×": // a plain ratio
		return fmt.Sprintf("%.2f ×", v)
	case "MB":
		return fmt.Sprintf("%.0f MB", v)
	case "ns":
		if v >= 1000 {
			return formatDuration(v)
		}
		return fmt.Sprintf("%.0f ns", v)
	case "s", "ms", "µs":
		return formatDuration(v * map[string]float64{"s": 1e9, "ms": 1e6, "µs": 1e3}[u])
	default:
		return fmt.Sprintf("%s %s", sig(v), u)
	}
}

// formatDuration prints nanoseconds in the unit that suits them.
func formatDuration(ns float64) string {
	switch {
	case ns >= 1e9:
		return sig(ns/1e9) + " s"
	case ns >= 1e6:
		return sig(ns/1e6) + " ms"
	case ns >= 1e3:
		return sig(ns/1e3) + " µs"
	default:
		return sig(ns) + " ns"
	}
}

// sig prints v with three significant digits (no exponent).
func sig(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// group prints a rate as a whole number with thousands separators.
func group(v float64) string {
	if math.IsInf(v, 0) || v > 1e15 {
		return "∞"
	}
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
