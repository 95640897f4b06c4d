package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Package is a package of the module with benchmarks in its test files.
type Package struct {
	ImportPath string
	Dir        string
	ModDir     string   // the folder of the module it belongs to
	Benchmarks []string // top-level benchmark names found in the source
}

// plan says how one benchmark is run. The zero plan probes: it runs the
// benchmark once (-benchtime 1x), keeps that when it took a while (the
// benchmark is heavy by itself), and otherwise runs it again for
// defaultBenchtime.
type plan struct {
	Pkg       string // the package below the module
	Bench     string // regexp on the top-level name
	Benchtime string // fixed -benchtime, "" to probe
	CPU       string // -cpu, "" for the machine's
}

// defaultBenchtime is the -benchtime of light benchmarks.
const defaultBenchtime = "1s"

// heavyAfter is how long a 1x probe must take to be kept as the
// measurement.
const heavyAfter = 3 * time.Second

// plans are the benchmarks that need a fixed plan: those whose set-up is
// costly (and is redone for every b.N go test tries) or that promise a
// figure on one core.
var plans = []plan{
	{Pkg: "policy", Bench: `^BenchmarkGateCheck$`, Benchtime: "20000x"},
	{Pkg: "mailbot", Bench: `(?i)^Benchmark\w*(Classif|Parse)\w*$`, CPU: "1"},
	{Pkg: "internal/testenv/e2e", Bench: `^BenchmarkTimeToExclusion$`, Benchtime: "5x"},
}

func planFor(pkg, name string) plan {
	for _, p := range plans {
		if p.Pkg == pkg && regexp.MustCompile(p.Bench).MatchString(name) {
			return p
		}
	}
	return plan{}
}

// benchFunc finds benchmark functions in Go source.
var benchFunc = regexp.MustCompile(`(?m)^func (Benchmark\w*)\(\w+ \*testing\.B\)`)

// Runner runs the benchmarks of one module.
type Runner struct {
	Root    string        // the module's folder
	Nested  []string      // folders of nested modules below Root whose benchmarks also run
	Module  string        // the module path
	Work    string        // a folder for test binaries
	Timeout time.Duration // per benchmark process
	Filter  *regexp.Regexp
	Log     io.Writer // progress, one line per step
	Env     []string  // the environment of every process; nil means os.Environ()
}

// Packages lists the packages of the module and of its nested modules
// whose test files hold benchmarks, sorted by import path within each
// module.
func (r *Runner) Packages(ctx context.Context) ([]Package, error) {
	var all []Package
	for _, dir := range append([]string{r.Root}, r.Nested...) {
		pkgs, err := r.packages(ctx, dir)
		if err != nil {
			return nil, err
		}
		all = append(all, pkgs...)
	}
	return all, nil
}

func (r *Runner) packages(ctx context.Context, modDir string) ([]Package, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}", "./...")
	cmd.Dir = modDir
	cmd.Env = r.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("benchsuite: go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []Package
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 {
			continue
		}
		p := Package{ImportPath: parts[0], Dir: parts[1], ModDir: modDir}
		for _, f := range strings.Fields(parts[2]) {
			src, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				continue
			}
			for _, m := range benchFunc.FindAllSubmatch(src, -1) {
				p.Benchmarks = append(p.Benchmarks, string(m[1]))
			}
		}
		if len(p.Benchmarks) > 0 {
			sort.Strings(p.Benchmarks)
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, sc.Err()
}

func (r *Runner) env() []string {
	if r.Env != nil {
		return r.Env
	}
	return os.Environ()
}

func (r *Runner) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, format+"\n", args...)
	}
}

// Run compiles the test binary of each package and runs each of its
// benchmarks in a process of its own (so its peak memory is its own), one
// at a time. Problems (a package that does not build, a benchmark that
// fails, skips or times out) become Results with Problem set; only a
// cancelled ctx stops it early.
func (r *Runner) Run(ctx context.Context, pkgs []Package) []Result {
	var all []Result
	for _, p := range pkgs {
		short := shortPkg(p.ImportPath, r.Module)
		var names []string
		for _, b := range p.Benchmarks {
			if r.Filter == nil || r.Filter.MatchString(short+"."+b) {
				names = append(names, b)
			}
		}
		if len(names) == 0 {
			continue
		}
		bin := filepath.Join(r.Work, strings.ReplaceAll(short, "/", "_")+".test")
		start := time.Now()
		r.logf("build  %-20s", short)
		if msg, err := r.build(ctx, p, bin); err != nil {
			if ctx.Err() != nil {
				return all
			}
			r.logf("       %-20s does not build: %s", short, firstLine(msg))
			all = append(all, Result{Pkg: p.ImportPath, Problem: clip("build failed: " + firstLine(msg))})
			continue
		}
		r.logf("       %-20s built in %s", short, time.Since(start).Round(100*time.Millisecond))
		for _, name := range names {
			if ctx.Err() != nil {
				return all
			}
			all = append(all, r.runOne(ctx, p, short, bin, name)...)
		}
	}
	return all
}

func (r *Runner) build(ctx context.Context, p Package, bin string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, p.ImportPath)
	cmd.Dir = p.ModDir
	cmd.Env = r.env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runOne runs one top-level benchmark according to its plan.
func (r *Runner) runOne(ctx context.Context, p Package, short, bin, name string) []Result {
	pl := planFor(short, name)
	bt := pl.Benchtime
	if bt == "" {
		bt = "1x"
	}
	res, took := r.exec(ctx, p, short, bin, name, bt, pl.CPU)
	if pl.Benchtime == "" && took < heavyAfter && ctx.Err() == nil && !hasProblem(res) {
		res, _ = r.exec(ctx, p, short, bin, name, defaultBenchtime, pl.CPU)
	}
	return res
}

func hasProblem(rs []Result) bool {
	for _, r := range rs {
		if r.Problem != "" {
			return true
		}
	}
	return len(rs) == 0
}

// exec runs the test binary for one benchmark and parses what it printed.
func (r *Runner) exec(ctx context.Context, p Package, short, bin, name, benchtime, cpu string) ([]Result, time.Duration) {
	// (-test.v: without it, a benchmark that skips prints nothing, and an
	// opt-in one showed as "no result printed" instead of why.)
	args := []string{"-test.run", "^$", "-test.bench", "^" + regexp.QuoteMeta(name) + "$",
		"-test.benchtime", benchtime, "-test.benchmem", "-test.count", "1", "-test.v",
		"-test.timeout", r.Timeout.String()}
	if cpu != "" {
		args = append(args, "-test.cpu", cpu)
	}
	cctx, cancel := context.WithTimeout(ctx, r.Timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.Dir = p.Dir // tests read testdata/ relative to their package
	cmd.Env = r.env()
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	label := fmt.Sprintf("%s.%s", short, name)
	r.logf("run    %-44s -benchtime %s%s", label, benchtime, map[bool]string{true: " -cpu " + cpu}[cpu != ""])
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var rss int64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss * 1024 // kilobytes on Linux
		}
	}
	parsed, _ := ParseOutput(bytes.NewReader(out.Bytes()), p.ImportPath)
	var res []Result
	for _, x := range parsed.Results {
		x.MaxRSS = rss
		res = append(res, x)
	}
	for _, s := range parsed.Skipped {
		n, reason, _ := strings.Cut(s, ": ")
		res = append(res, Result{Pkg: p.ImportPath, Name: n, Problem: clip(strings.TrimSpace("skipped: " + reason))})
	}
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) || strings.Contains(out.String(), "panic: test timed out"):
		res = append(res, Result{Pkg: p.ImportPath, Name: name, Problem: "timed out after " + r.Timeout.String()})
	case err != nil || parsed.Failed:
		res = append(res, Result{Pkg: p.ImportPath, Name: name, Problem: clip("failed: " + lastLines(parsed.Log, 1))})
	case len(res) == 0:
		res = append(res, Result{Pkg: p.ImportPath, Name: name, Problem: "no result printed"})
	}
	status := fmt.Sprintf("%d result(s)", len(parsed.Results))
	for _, x := range res {
		if x.Problem != "" {
			status = x.Problem
		}
	}
	r.logf("       %-44s %s in %s, peak RSS %d MB", label, status, took.Round(100*time.Millisecond), rss>>20)
	return res, took
}

// clip shortens a message for a table cell.
func clip(s string) string {
	const max = 72
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return strings.TrimSpace(s)
}

func lastLines(lines []string, n int) string {
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		l := lines[i]
		if l == "FAIL" || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "exit status") {
			continue
		}
		keep = append([]string{stripFileLine(l)}, keep...)
	}
	if len(keep) == 0 {
		return "see the log"
	}
	return strings.Join(keep, " / ")
}
