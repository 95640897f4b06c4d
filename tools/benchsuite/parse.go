package main

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Result is one line of `go test -bench` output: a benchmark's name (with
// the -GOMAXPROCS suffix removed), its iteration count and every metric it
// printed, by unit ("ns/op", "B/op", "allocs/op", "load-s", ...).
type Result struct {
	Pkg     string // the package's import path (from the "pkg:" line or the caller)
	Name    string // BenchmarkX or BenchmarkX/sub
	Procs   int    // the -N suffix, 1 when absent
	N       int64
	Metrics map[string]float64
	MaxRSS  int64 // the benchmark process's peak resident memory in bytes; 0 when unknown
	// Problem says why there is no measurement: "skipped: REASON",
	// "failed: ...", "timed out", "build failed: ...". Empty for a result.
	Problem string
}

// procsSuffix is the "-N" GOMAXPROCS suffix go test appends to names.
var procsSuffix = regexp.MustCompile(`-(\d+)$`)

// ParseLine parses one result line of `go test -bench` output, such as
//
//	BenchmarkGateCheck-2   20000   25994 ns/op   4.244 load-s   415 B/op   15 allocs/op
//
// It reports false for any other line (headers, logs, PASS, ok).
func ParseLine(line string) (Result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return Result{}, false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || n <= 0 {
		return Result{}, false
	}
	r := Result{Name: f[0], Procs: 1, N: n, Metrics: map[string]float64{}}
	if m := procsSuffix.FindStringSubmatch(r.Name); m != nil {
		r.Procs, _ = strconv.Atoi(m[1])
		r.Name = strings.TrimSuffix(r.Name, m[0])
	}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false
		}
		r.Metrics[f[i+1]] = v
	}
	return r, true
}

// Output is what one run of a test binary printed, parsed.
type Output struct {
	Pkg     string
	Results []Result
	Skipped []string // "--- SKIP: BenchmarkX" names, with the reason when printed
	Failed  bool     // a "--- FAIL" or "FAIL" line
	Log     []string // every other non-empty line (for diagnostics)
}

// ParseOutput reads `go test -bench` output. Results carry the package of
// the last "pkg:" line seen, or pkg when there was none.
func ParseOutput(r io.Reader, pkg string) (*Output, error) {
	out := &Output{Pkg: pkg}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var lastSkip int = -1
	// before is the indented line just before this one: with -test.v a
	// benchmark's log, and so the reason it skipped, comes before its
	// "--- SKIP" line; without it, after.
	var before, prev string
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimSpace(line)
		before = prev
		prev = ""
		if strings.HasPrefix(line, " ") {
			prev = trimmed
		}
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "pkg: "):
			out.Pkg = strings.TrimPrefix(trimmed, "pkg: ")
		case strings.HasPrefix(trimmed, "--- SKIP: "):
			name := strings.Fields(strings.TrimPrefix(trimmed, "--- SKIP: "))
			if len(name) > 0 {
				skipped := procsSuffix.ReplaceAllString(name[0], "")
				lastSkip = -1
				if before != "" {
					skipped += ": " + stripFileLine(before)
				} else {
					lastSkip = len(out.Skipped)
				}
				out.Skipped = append(out.Skipped, skipped)
			}
		case strings.HasPrefix(trimmed, "--- FAIL"), trimmed == "FAIL", strings.HasPrefix(trimmed, "FAIL\t"):
			out.Failed = true
			out.Log = append(out.Log, trimmed)
		default:
			if res, ok := ParseLine(trimmed); ok {
				res.Pkg = out.Pkg
				out.Results = append(out.Results, res)
				continue
			}
			// The reason of a skip is the indented line after it.
			if lastSkip >= 0 && strings.HasPrefix(line, " ") && !strings.Contains(out.Skipped[lastSkip], ": ") {
				out.Skipped[lastSkip] += ": " + stripFileLine(trimmed)
				continue
			}
			lastSkip = -1
			out.Log = append(out.Log, trimmed)
		}
	}
	return out, sc.Err()
}

// stripFileLine removes the "file_test.go:12: " prefix of a test log line.
func stripFileLine(s string) string {
	if i := strings.Index(s, ": "); i > 0 && strings.Contains(s[:i], ".go:") {
		return s[i+2:]
	}
	return s
}
