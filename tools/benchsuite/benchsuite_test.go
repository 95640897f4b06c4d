package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Result
		ok   bool
	}{
		{
			name: "custom metric and memory",
			line: "BenchmarkGateCheck-2   \t   20000\t     25994 ns/op\t         4.244 load-s\t     415 B/op\t      15 allocs/op",
			want: Result{Name: "BenchmarkGateCheck", Procs: 2, N: 20000, Metrics: map[string]float64{"ns/op": 25994, "load-s": 4.244, "B/op": 415, "allocs/op": 15}},
			ok:   true,
		},
		{
			name: "sub-benchmark on one core",
			line: "BenchmarkDecide/lohibot-path/LohiSoftBot  1000000  512.5 ns/op  120 MB/s",
			want: Result{Name: "BenchmarkDecide/lohibot-path/LohiSoftBot", Procs: 1, N: 1000000, Metrics: map[string]float64{"ns/op": 512.5, "MB/s": 120}},
			ok:   true,
		},
		{name: "header", line: "goos: linux"},
		{name: "pass", line: "PASS"},
		{name: "ok line", line: "ok  \tgithub.com/lohisoft/lohibot/policy\t30.847s"},
		{name: "log line starting like a benchmark", line: "BenchmarkX: setting up 1000 rows"},
		{name: "odd fields", line: "BenchmarkX-2 10 5 ns/op 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseLine(tt.line)
			if ok != tt.ok {
				t.Fatalf("ParseLine(%q) ok = %v, want %v", tt.line, ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); ok && diff != "" {
				t.Errorf("ParseLine(%q) mismatch (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

const sample = `goos: linux
goarch: amd64
pkg: github.com/lohisoft/lohibot/robotstxt
cpu: Intel(R) Xeon(R) Processor
BenchmarkParse/lohibot/500KiB-2         	     100	   4000000 ns/op	 131.07 MB/s	 100 B/op	       1 allocs/op
BenchmarkParse/temoto/500KiB-2          	      50	  20000000 ns/op	  26.21 MB/s	 100 B/op	       1 allocs/op
--- SKIP: BenchmarkTimeToExclusion
    watch_test.go:40: no Dovecot (set LOHIBOT_TEST_DOVECOT=1)
--- FAIL: BenchmarkBroken-2
    x_test.go:9: boom
FAIL
`

// sampleVerbose is a benchmark that skips, as -test.v prints it: its
// reason before its "--- SKIP" line.
const sampleVerbose = `goos: linux
pkg: github.com/lohisoft/lohibot/internal/app/serve
BenchmarkServeMemory
    memory_bench_test.go:45: opt-in: set LOHIBOT_BENCH_SERVE_MEMORY=1 (50,000 hosts take about 8 minutes of CPU)
--- SKIP: BenchmarkServeMemory
BenchmarkOther
    other_test.go:9: a log line
BenchmarkOther-2   	       1	      1000 ns/op
PASS
`

func TestParseOutputVerboseSkip(t *testing.T) {
	out, err := ParseOutput(strings.NewReader(sampleVerbose), "fallback")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BenchmarkServeMemory: opt-in: set LOHIBOT_BENCH_SERVE_MEMORY=1 (50,000 hosts take about 8 minutes of CPU)"}
	if diff := cmp.Diff(want, out.Skipped); diff != "" {
		t.Errorf("ParseOutput skipped mismatch (-want +got):\n%s", diff)
	}
	if len(out.Results) != 1 || out.Results[0].Name != "BenchmarkOther" || out.Failed {
		t.Errorf("ParseOutput = %d results %+v, failed %v; want BenchmarkOther, not failed", len(out.Results), out.Results, out.Failed)
	}
}

func TestParseOutput(t *testing.T) {
	out, err := ParseOutput(strings.NewReader(sample), "fallback")
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2 || out.Results[0].Pkg != "github.com/lohisoft/lohibot/robotstxt" {
		t.Fatalf("ParseOutput results = %+v, want 2 in robotstxt", out.Results)
	}
	wantSkip := []string{"BenchmarkTimeToExclusion: no Dovecot (set LOHIBOT_TEST_DOVECOT=1)"}
	if diff := cmp.Diff(wantSkip, out.Skipped); diff != "" {
		t.Errorf("ParseOutput skipped mismatch (-want +got):\n%s", diff)
	}
	if !out.Failed {
		t.Errorf("ParseOutput Failed = false, want true")
	}
	if got := lastLines(out.Log, 1); got != "boom" {
		t.Errorf("lastLines = %q, want %q", got, "boom")
	}
}

func TestEvaluate(t *testing.T) {
	const mod = "example.com/m"
	figs := []Figure{
		{Name: "fast", Target: "< 20 ms", Pkg: "robots", Ours: `^BenchmarkParse/lohibot/500KiB$`,
			Value: []Metric{nsToMS}, Unit: "ms", Pass: below(20), Peer: `^BenchmarkParse/temoto/500KiB$`, PeerName: "temoto"},
		{Name: "ratio", Target: "≤ peer", Pkg: "robots", Ours: `^BenchmarkParse/temoto/500KiB$`,
			Value: []Metric{nsOp}, Unit: "ns", Peer: `^BenchmarkParse/lohibot/500KiB$`, PeerName: "ours", RatioGoal: true},
		{Name: "rate", Target: "≥ 2,000 msg/s", Pkg: "mail", Ours: `^BenchmarkClassify$`,
			Value: []Metric{{"msgs/s", nil}, {"ns/op", perSec}}, Unit: "/s", Pass: atLeast(2000)},
		{Name: "memory", Target: "< 300 MB", Pkg: "audit", Ours: `^BenchmarkAudit$`,
			Value: []Metric{{"MB-VmHWM", nil}, rssMB}, Unit: "MB", Pass: below(300)},
		{Name: "absent", Target: "< 2 s", Ours: `^BenchmarkTimeToExclusion$`, Value: []Metric{nsToS}, Unit: "s", Pass: below(2)},
		{Name: "skipped", Target: "< 2 s", Pkg: "mail", Ours: `^BenchmarkSkipped$`, Value: []Metric{nsToS}, Unit: "s"},
		{Name: "failed sub", Target: "< 2 s", Pkg: "mail", Ours: `^BenchmarkFails/fast$`, Value: []Metric{nsToS}, Unit: "s"},
	}
	results := []Result{
		{Pkg: mod + "/robots", Name: "BenchmarkParse/lohibot/500KiB", Metrics: map[string]float64{"ns/op": 4e6}},
		{Pkg: mod + "/robots", Name: "BenchmarkParse/temoto/500KiB", Metrics: map[string]float64{"ns/op": 2e7}},
		{Pkg: mod + "/mail", Name: "BenchmarkClassify", Metrics: map[string]float64{"ns/op": 250000}},
		{Pkg: mod + "/audit", Name: "BenchmarkAudit", Metrics: map[string]float64{"ns/op": 1}, MaxRSS: 350 << 20},
		{Pkg: mod + "/mail", Name: "BenchmarkSkipped", Problem: "skipped: no Dovecot"},
		{Pkg: mod + "/mail", Name: "BenchmarkFails", Problem: "failed: boom"},
		{Pkg: mod + "/other", Name: "BenchmarkElse", Metrics: map[string]float64{"ns/op": 1500}},
	}
	got := Evaluate(figs, results, mod)
	type row struct{ Figure, Measured, Peer, Ratio, Verdict string }
	var rows []row
	for _, r := range got {
		rows = append(rows, row{r.Figure, r.Measured, r.Peer, r.Ratio, r.Verdict})
	}
	want := []row{
		{"fast", "4.00 ms", "temoto: 20.0 ms", "0.20×", "ok"},
		{"ratio", "20.0 ms", "ours: 4.00 ms", "5.00×", "MISSED"},
		{"rate", "4,000/s", "", "", "ok"},
		{"memory", "350 MB", "", "", "MISSED"},
		{"absent", "missing", "", "", ""},
		{"skipped", "skipped: no Dovecot", "", "", ""},
		{"failed sub", "failed: boom", "", "", ""},
		{"other: other BenchmarkElse", "1.50 µs/op", "", "", ""},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Evaluate mismatch (-want +got):\n%s", diff)
	}
}

// TestFleetNeverSlower checks the fleet's figure as the suite states it:
// two crawlers within 1.25 × the bound are still a miss when
// the same run's one crawler was faster.
func TestFleetNeverSlower(t *testing.T) {
	const mod = "github.com/lohisoft/lohibot"
	var fleet []Figure
	for _, f := range figures {
		if strings.Contains(f.Ours, "BenchmarkCrawlFleet/two") {
			fleet = append(fleet, f)
		}
	}
	if len(fleet) != 1 {
		t.Fatalf("figures name the two-crawler fleet %d times, want once", len(fleet))
	}
	for _, tt := range []struct {
		one, two     float64
		ratio, state string
	}{
		{1.07, 1.10, "1.03×", "MISSED"},
		{1.10, 1.07, "0.97×", "ok"},
		{1.30, 1.28, "0.98×", "MISSED"},    // not slower, but over 1.25 × the bound
		{1.080, 1.083, "1.003×", "MISSED"}, // slower by less than 1 %
	} {
		results := []Result{
			{Pkg: mod + "/crawler", Name: "BenchmarkCrawlFleet/one", Metrics: map[string]float64{"x-bound": tt.one}},
			{Pkg: mod + "/crawler", Name: "BenchmarkCrawlFleet/two", Metrics: map[string]float64{"x-bound": tt.two}},
		}
		rows := Evaluate(fleet, results, mod)
		if len(rows) == 0 {
			t.Fatal("Evaluate returned no row")
		}
		if r := rows[0]; r.Ratio != tt.ratio || r.Verdict != tt.state {
			t.Errorf("one %.3f, two %.3f: ratio %q, verdict %q; want %q, %q", tt.one, tt.two, r.Ratio, r.Verdict, tt.ratio, tt.state)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{0.0018, "s", "1.80 ms"},
		{21.4, "s", "21.4 s"},
		{38.5, "µs", "38.5 µs"},
		{112, "ns", "112 ns"},
		{1310, "ns", "1.31 µs"},
		{1267688.4, "/s", "1,267,688/s"},
		{5.391, "x", "5.39 × bound"},
		{1.051, "×", "1.05 ×"},
		{58.2, "MB", "58 MB"},
	}
	for _, tt := range tests {
		if got := format(tt.v, tt.unit); got != tt.want {
			t.Errorf("format(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}
