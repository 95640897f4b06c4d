// Command benchsuite runs every benchmark of lohibot and prints one table:
// each speed promise (figure, target, measured value, and the
// same-run ratio where a peer such as temoto/robotstxt or Colly is measured),
// then every other benchmark of the project.
//
// Usage, from the module's folder:
//
//	go run ./tools/benchsuite              # everything, about 5 to 10 minutes on 2 cores
//	go run ./tools/benchsuite -run robots  # only benchmarks whose "pkg.BenchmarkX" matches
//	go run ./tools/benchsuite -list        # what would run
//
// It compiles each package's test binary once and runs each benchmark in a
// process of its own, one at a time, so that the machine is not shared
// between two measurements and the process's peak memory is the
// benchmark's. A benchmark that does not exist yet shows as "missing"; one
// that skips (a real Dovecot that is not there), fails or does not build
// shows why. Progress goes to standard error, the table to standard output.
// The exit code is 0 when every figure measured met its target, 1 when one
// missed it, 2 on bad usage or when nothing could run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("benchsuite", flag.ContinueOnError)
	fs.SetOutput(errOut)
	filter := fs.String("run", "", "run only benchmarks whose `pkg.BenchmarkName` matches this regexp")
	list := fs.Bool("list", false, "list the benchmarks and the figures, run nothing")
	timeout := fs.Duration("timeout", 8*time.Minute, "time allowed for one benchmark process")
	markdown := fs.Bool("markdown", false, "print the table as Markdown (for a closing note)")
	fs.Usage = func() {
		fmt.Fprintln(errOut, "usage: go run ./tools/benchsuite [-run REGEXP] [-list] [-timeout D] [-markdown]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	var re *regexp.Regexp
	if *filter != "" {
		var err error
		if re, err = regexp.Compile(*filter); err != nil {
			fmt.Fprintln(errOut, "benchsuite: -run:", err)
			return 2
		}
	}
	root, module, err := moduleRoot(ctx)
	if err != nil {
		fmt.Fprintln(errOut, err)
		return 2
	}
	work, err := os.MkdirTemp("", "lohibot-bench-")
	if err != nil {
		fmt.Fprintln(errOut, "benchsuite:", err)
		return 2
	}
	defer os.RemoveAll(work)

	r := &Runner{Root: root, Nested: []string{filepath.Join(root, "compare")}, Module: module, Work: work, Timeout: *timeout, Filter: re, Log: errOut, Env: benchEnv()}
	pkgs, err := r.Packages(ctx)
	if err != nil {
		fmt.Fprintln(errOut, err)
		return 2
	}
	if *list {
		for _, p := range pkgs {
			for _, b := range p.Benchmarks {
				name := shortPkg(p.ImportPath, module) + "." + b
				if re == nil || re.MatchString(name) {
					fmt.Fprintln(out, name)
				}
			}
		}
		fmt.Fprintln(out)
		for _, f := range figures {
			fmt.Fprintf(out, "figure %q, target %s\n", f.Name, f.Target)
		}
		return 0
	}
	start := time.Now()
	results := r.Run(ctx, pkgs)
	if ctx.Err() != nil {
		fmt.Fprintln(errOut, "benchsuite: interrupted")
		return 2
	}
	rows := Evaluate(figures, results, module)
	if re != nil {
		rows = onlyMeasured(rows)
	}
	fmt.Fprintf(out, "lohibot benchmarks, %s, %d cores, total %s\n\n", time.Now().Format("2006-01-02 15:04"), runtime.NumCPU(), time.Since(start).Round(time.Second))
	if *markdown {
		printMarkdown(out, rows)
	} else {
		printTable(out, rows)
	}
	for _, row := range rows {
		if row.Verdict == "MISSED" {
			return 1
		}
	}
	return 0
}

// benchEnv is the environment of the benchmarks: this one, with the real
// Dovecot enabled (as ./test.sh does) when it is installed and we are root,
// so that time to exclusion is measured against it.
func benchEnv() []string {
	env := os.Environ()
	if os.Getenv("LOHIBOT_TEST_DOVECOT") == "" && os.Geteuid() == 0 {
		if _, err := exec.LookPath("dovecot"); err == nil {
			env = append(env, "LOHIBOT_TEST_DOVECOT=1")
		}
	}
	return env
}

// onlyMeasured drops the figures that a filtered run did not touch.
func onlyMeasured(rows []Row) []Row {
	var keep []Row
	for _, r := range rows {
		if r.Measured != "missing" || (r.Peer != "" && r.Peer != "missing") {
			keep = append(keep, r)
		}
	}
	return keep
}

// moduleRoot returns the folder and path of the main module.
func moduleRoot(ctx context.Context) (string, string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}\t{{.Path}}").Output()
	if err != nil {
		return "", "", fmt.Errorf("benchsuite: go list -m (run it inside the module): %w", err)
	}
	dir, path, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if !ok {
		return "", "", fmt.Errorf("benchsuite: go list -m: unexpected %q", out)
	}
	return dir, path, nil
}

var header = []string{"figure", "target", "measured", "peer, same run", "ratio", "verdict"}

func cells(r Row) []string {
	peer, ratio := r.Peer, r.Ratio
	if peer == "" {
		peer = "—"
	}
	if ratio == "" {
		ratio = "—"
	}
	v := r.Verdict
	if v == "" {
		v = "—"
	}
	return []string{r.Figure, r.Target, r.Measured, peer, ratio, v}
}

func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	fmt.Fprintln(tw, strings.Repeat("-", 6)+"\t"+strings.Repeat("-", 6)+"\t"+strings.Repeat("-", 8)+"\t"+strings.Repeat("-", 14)+"\t"+strings.Repeat("-", 5)+"\t"+strings.Repeat("-", 7))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(cells(r), "\t"))
	}
	tw.Flush()
}

func printMarkdown(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat(" --- |", len(header)))
	for _, r := range rows {
		c := cells(r)
		for i := range c {
			c[i] = strings.ReplaceAll(c[i], "|", `\|`)
		}
		fmt.Fprintln(w, "| "+strings.Join(c, " | ")+" |")
	}
}
