// Command testsummary reads the output of `go test -json` on standard input,
// prints what a person needs as it comes (each package's result, the output
// of every failed test), and closes with a table of how many tests ran,
// passed, failed and were skipped per package, and one line
// "N passed, N failed, N skipped". It exits 1 when any test or package
// failed, or when a test was skipped for a reason matching -fail-skips (test.sh
// sets it under CI=true, so a missing PostgreSQL, Dovecot, Chromium or
// Postfix fails the run instead of passing with those tests skipped).
//
// It is a tool of test.sh, not part of lohibot.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type pkgStat struct {
	passed, failed, skipped int
	result                  string  // ok, FAIL, no tests
	elapsed                 float64 // seconds
	output                  []string
	skips                   map[string]string // test → its last output line
}

func main() {
	failSkips := flag.String("fail-skips", "", "a regular expression: a test skipped with a reason that matches it fails the run")
	flag.Parse()
	var re *regexp.Regexp
	if *failSkips != "" {
		re = regexp.MustCompile(*failSkips)
	}
	os.Exit(run(os.Stdin, os.Stdout, re))
}

func run(in io.Reader, out io.Writer, failSkips *regexp.Regexp) int {
	pkgs := map[string]*pkgStat{}
	testOut := map[string][]string{} // pkg+test → output lines
	get := func(p string) *pkgStat {
		s := pkgs[p]
		if s == nil {
			s = &pkgStat{skips: map[string]string{}}
			pkgs[p] = s
		}
		return s
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	status := 0
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // build errors and the like
			if len(line) > 0 {
				status = 1
			}
			continue
		}
		s := get(e.Package)
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "output":
			if e.Test != "" {
				testOut[key] = append(testOut[key], e.Output)
			} else {
				s.output = append(s.output, e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test == "" {
				s.elapsed = e.Elapsed
				switch e.Action {
				case "pass":
					s.result = "ok"
				case "fail":
					s.result = "FAIL"
					status = 1
				case "skip":
					s.result = "no tests"
				}
				fmt.Fprintf(out, "%-4s %-50s %6.1fs  %d passed, %d failed, %d skipped\n", s.result, e.Package, e.Elapsed, s.passed, s.failed, s.skipped)
				if e.Action == "fail" && s.failed == 0 {
					fmt.Fprint(out, strings.Join(s.output, ""))
				}
				continue
			}
			switch e.Action {
			case "pass":
				s.passed++
			case "fail":
				s.failed++
				status = 1
				fmt.Fprintf(out, "--- FAIL: %s (%s)\n%s", e.Test, e.Package, strings.Join(testOut[key], ""))
			case "skip":
				s.skipped++
				reason := lastReason(testOut[key])
				s.skips[e.Test] = reason
				if failSkips != nil && failSkips.MatchString(reason) {
					fmt.Fprintf(out, "--- SKIP not allowed here: %s (%s): %s\n", e.Test, e.Package, reason)
					status = 1
				}
			}
			delete(testOut, key)
		}
	}
	names := make([]string, 0, len(pkgs))
	var passed, failed, skipped int
	for p, s := range pkgs {
		if p == "" {
			continue
		}
		names = append(names, p)
		passed += s.passed
		failed += s.failed
		skipped += s.skipped
	}
	sort.Strings(names)
	fmt.Fprintln(out, "\ntests per package (passed / failed / skipped):")
	for _, p := range names {
		s := pkgs[p]
		if s.passed+s.failed+s.skipped == 0 {
			continue
		}
		fmt.Fprintf(out, "  %-50s %4d / %d / %d\n", p, s.passed, s.failed, s.skipped)
	}
	if skipped > 0 {
		fmt.Fprintln(out, "\nskipped:")
		for _, p := range names {
			s := pkgs[p]
			tests := make([]string, 0, len(s.skips))
			for t := range s.skips {
				tests = append(tests, t)
			}
			sort.Strings(tests)
			for _, t := range tests {
				fmt.Fprintf(out, "  %s %s: %s\n", p, t, s.skips[t])
			}
		}
	}
	if failed > 0 && status == 0 {
		status = 1
	}
	fmt.Fprintf(out, "\n%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return status
}

// lastReason returns the skip message of a test: the last output line that
// is not go test's own "--- SKIP" line.
func lastReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		return l
	}
	return ""
}
