package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/internal/human"
	"github.com/lohisoft/lohibot/internal/resolver"
	"github.com/lohisoft/lohibot/webbotauth"
)

// newVerifier builds the FCrDNS verifier on the DNS server addr (--resolver;
// "": the system's).
func newVerifier(addr string, timeout time.Duration) (*identity.Verifier, error) {
	r, err := resolver.New(addr)
	if err != nil {
		return nil, &exitError{code: exitBadInput, err: err}
	}
	return identity.New(r, &identity.Options{Timeout: timeout}), nil
}

type verifyOptions struct {
	printOptions
	Resolver string // --resolver: the DNS server ("": the system's)

	Addrs   []netip.Addr
	Timeout time.Duration // --timeout: for each DNS lookup
}

func newVerifyCmd(a *app, runF func(*verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify IP...",
		Short: "Tell whether addresses are LohiSoftBot's (forward-confirmed reverse DNS)",
		Long: `Check each address the way the bot page tells webmasters to: the PTR names of
the address must be strictly below .bot.lohisoft.com (never the bare
.lohisoft.com, never a look-alike such as bot.lohisoft.com.evil.example), and a
forward lookup (A records) of such a name must return the address again.
LohiSoftBot never uses IPv6, so an IPv6 address is never genuine.

Each address gets a verdict and the reason: genuine, impostor, or unverifiable
when a DNS lookup failed (SERVFAIL, timeout): that is not proof of an impostor;
try again later. --resolver sends every lookup to one DNS server.

Exit status: 0 when every address is genuine, 1 otherwise, 2 when an argument
is not an IP address. --json prints {"ip","verdict","genuine","hostnames",
"reason"} per address, one per line; verdict is genuine, impostor or
unverifiable.`,
		Example: `  lohibot verify 79.139.58.98 79.139.58.121
  lohibot verify 203.0.113.9 --json
  lohibot verify 66.249.66.1 --resolver 9.9.9.9:53 --timeout 2s`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var bad []string // every bad argument, reported at once
			opts.Addrs = nil
			for _, arg := range args {
				addr, err := identity.ParseIP(arg)
				if err != nil {
					bad = append(bad, fmt.Sprintf("%q is not an IP address", arg))
					continue
				}
				opts.Addrs = append(opts.Addrs, addr)
			}
			if opts.Timeout <= 0 {
				bad = append(bad, "--timeout must be positive")
			}
			if len(bad) > 0 {
				return usageErrorf("%s", strings.Join(bad, "\n"))
			}
			opts.Resolver = a.resolver
			return runCommand(cmd, a, opts, runF, runVerify)
		},
	}
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", identity.DefaultTimeout, "time allowed for each DNS lookup")
	return cmd
}

// runVerify prints a verdict per address and returns refused (exit 1)
// unless every one is genuine.
func runVerify(ctx context.Context, opts *verifyOptions, out io.Writer) error {
	v, err := newVerifier(opts.Resolver, opts.Timeout)
	if err != nil {
		return err
	}
	results := v.VerifyAll(ctx, opts.Addrs)
	allGenuine := true
	var tab table
	for _, r := range results {
		allGenuine = allGenuine && r.Genuine
		if opts.JSON {
			if err := printJSON(out, r); err != nil {
				return err
			}
			continue
		}
		tab.add(r.IP, string(r.Status), strings.TrimPrefix(r.Reason, "unverifiable: "))
	}
	if err := tab.write(out); err != nil {
		return err
	}
	if !allGenuine {
		return refused
	}
	return nil
}

type verifyLogOptions struct {
	printOptions
	Resolver string    // --resolver: the DNS server ("": the system's)
	In       io.Reader // standard input, read when Path is "-"
	// OpenStore opens the database with our request log; called only
	// when a genuine line is to be matched.
	OpenStore func(context.Context) (*db.Store, error)

	Path          string
	Format        identity.Format
	Tolerance     time.Duration
	AssumeClaimed bool
	Timeout       time.Duration
	Directory     string // --directory: check logged Web Bot Auth signatures
}

func newVerifyLogCmd(a *app, runF func(*verifyLogOptions) error) *cobra.Command {
	opts := &verifyLogOptions{}
	var format string
	cmd := &cobra.Command{
		Use:   "verify-log ACCESS_LOG",
		Short: "Check a webmaster's access log: which LohiSoftBot lines are ours",
		Long: `Read a webmaster's access log (a file, or - for standard input; gzip is
recognised by its first bytes), take the lines whose user agent claims to be
LohiSoftBot (the product token, in any case), verify each distinct address once
by forward-confirmed reverse DNS (as 'lohibot verify' does), and match the
lines of genuine addresses against our own request log in --db: same request
target (and virtual host when the log has one), sent within --tolerance, each
of our requests matching one line.

Formats: combined (Apache/nginx, the default guess; vhost_combined too),
common, and json (one object per line; the usual field names of nginx, Apache,
Caddy and Traefik, such as remote_addr, time, request or method+uri, status,
user_agent). Without --log-format the format is detected from the first lines.
Malformed lines are counted and skipped.

With --directory (a URL such as https://lohisoft.com, or a saved directory or
key file), lines whose JSON log keeps the request's Signature-Input and
Signature (and Signature-Agent, and the host) are checked by their Web Bot
Auth signature, judged at the line's time: a valid one proves the line
genuine without DNS (column SIGNED, "signed" in JSON); an invalid one is
counted in "bad_signatures" and the address is judged by DNS as usual.

The common format has no user agent, so none of its lines claims to be
LohiSoftBot: only --assume-claimed checks them, treating every line as a claim
(for an excerpt holding just the lines the webmaster attributes to us).
--assume-claimed works with every format.

The answer says how many lines claimed to be LohiSoftBot, how many came from
genuine addresses (and how many of those match our log), how many from
impostors (with their addresses and counts), how many could not be verified
(DNS failure), and lists the genuine lines with no match: those need a human.
The log is streamed: its size does not matter.

Exit status: 0 when every claimed line is genuine and matched, 1 otherwise
(impostors, unverifiable addresses, unmatched lines), 2 on bad input (no such
file, an unknown --log-format, an unreadable or wholly malformed log).
--json prints one object:
{"claimed","genuine","impostor","unverifiable","matched","signed"*,"bad_signatures"*,"ips":[{"ip","genuine","requests","matched","signed"*}],
 "malformed","unmatched":[{"line","ip","time","method","host","target"}]};
the fields marked * appear only with --directory, when not zero.`,
		Example: `  lohibot verify-log access.log
  lohibot verify-log /var/log/nginx/access.log.2.gz --log-format combined --json
  lohibot verify-log excerpt.log --log-format common --assume-claimed --tolerance 5m
  zcat logs/*.gz | lohibot verify-log - --db postgres://lohibot@db/lohibot`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if cmd.Flags().Changed("format") && cmd.Flags().Changed("log-format") {
				return usageErrorf("verify-log: --format is the old name of --log-format: give one of them")
			}
			f, err := identity.ParseFormat(format)
			if err != nil {
				return usageErrorf("--log-format: %v", err)
			}
			opts.Format = f
			if opts.Tolerance < 0 {
				return usageErrorf("--tolerance must not be negative")
			}
			if opts.Timeout <= 0 {
				return usageErrorf("--timeout must be positive")
			}
			opts.Resolver, opts.In, opts.OpenStore = a.resolver, a.in, a.openStore
			return runCommand(cmd, a, opts, runF, runVerifyLog)
		},
	}
	cmd.Flags().StringVar(&format, "log-format", "", "format of the access log read: combined, common or json (default: detected)")
	// --format was the first name of --log-format; report --format names
	// an output format, so the input one was renamed. Kept for old scripts.
	cmd.Flags().StringVar(&format, "format", "", "old name of --log-format")
	_ = cmd.Flags().MarkHidden("format")
	cmd.Flags().DurationVar(&opts.Tolerance, "tolerance", identity.DefaultTolerance, "largest clock difference between a log line and our request")
	cmd.Flags().BoolVar(&opts.AssumeClaimed, "assume-claimed", false, "treat every line as claiming to be LohiSoftBot (needed for the common format)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", identity.DefaultTimeout, "time allowed for each DNS lookup")
	cmd.Flags().StringVar(&opts.Directory, "directory", "", "check logged Web Bot Auth signatures against this key directory (URL or file)")
	return cmd
}

// lazyRequests opens the request log on first use, so a log without a
// genuine line never touches the database.
type lazyRequests struct {
	open  func(context.Context) (*db.Store, error)
	store *db.Store
}

func (l *lazyRequests) Sent(ctx context.Context, from, to time.Time, fn func(identity.SentRequest) error) error {
	if l.store == nil {
		s, err := l.open(ctx)
		if err != nil {
			return err
		}
		l.store = s
	}
	return identity.StoreRequests(l.store).Sent(ctx, from, to, fn)
}

func (l *lazyRequests) close() {
	if l.store != nil {
		l.store.Close()
	}
}

// ctxReader is r that stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// runVerifyLog prints the report on the access log and returns refused
// (exit 1) unless every claimed line is genuine and matched.
func runVerifyLog(ctx context.Context, opts *verifyLogOptions, out io.Writer) error {
	var in io.Reader = opts.In
	name := "standard input"
	if opts.Path != "-" {
		f, err := os.Open(opts.Path)
		if err != nil {
			return &exitError{code: exitBadInput, err: err}
		}
		defer f.Close()
		in, name = f, opts.Path
	}
	v, err := newVerifier(opts.Resolver, opts.Timeout)
	if err != nil {
		return err
	}
	lo := &identity.LogOptions{Format: opts.Format, Tolerance: opts.Tolerance, AssumeClaimed: opts.AssumeClaimed}
	if opts.Directory != "" {
		if lo.Keys, lo.Agent, err = loadDirectory(ctx, opts.Directory, 10*time.Second); err != nil {
			return err
		}
		if lo.Keys == nil {
			lo.Keys = []webbotauth.JWK{}
		}
	}
	reqs := &lazyRequests{open: opts.OpenStore}
	defer reqs.close()
	// An endless input (a pipe, /dev/zero) is read until ctx ends: on
	// Ctrl-C or SIGTERM the next read fails, whatever the parser is doing.
	rep, err := identity.VerifyLog(ctx, ctxReader{ctx, in}, v, reqs, lo)
	if errors.Is(err, identity.ErrBadLog) {
		return &exitError{code: exitBadInput, err: fmt.Errorf("%s: %w", name, err)}
	}
	if err != nil {
		return err
	}
	if rep.Format == identity.FormatCommon && !opts.AssumeClaimed {
		fmt.Fprintln(opts.errOut(), "lohibot: note: the common format has no user agent, so no line claims to be LohiSoftBot;"+
			" use --assume-claimed if the log holds only the lines attributed to LohiSoftBot")
	}
	if opts.JSON {
		if err := printJSON(out, rep); err != nil {
			return err
		}
	} else {
		printLogReport(out, name, rep)
	}
	if rep.Lines > 0 && rep.Malformed == rep.Lines {
		return usageErrorf("%s: none of its %d lines is in the %s format; see --log-format", name, rep.Lines, rep.Format)
	}
	if !rep.OK() {
		return refused
	}
	return nil
}

// printLogReport writes the report of verify-log for staff.
func printLogReport(w io.Writer, name string, rep *identity.LogReport) {
	fmt.Fprintf(w, "%s: %d lines, %s format, %d malformed (skipped)\n", name, rep.Lines, rep.Format, rep.Malformed)
	if rep.Claimed == 0 {
		fmt.Fprintln(w, "No line claims to be LohiSoftBot.")
		return
	}
	fmt.Fprintf(w, "%d lines claim to be LohiSoftBot, from %d addresses:\n", rep.Claimed, len(rep.IPs))
	fmt.Fprintf(w, "  genuine:      %d (%d found in our request log, %d not found)\n", rep.Genuine, rep.Matched, rep.Genuine-rep.Matched)
	fmt.Fprintf(w, "  impostor:     %d\n", rep.Impostor)
	fmt.Fprintf(w, "  unverifiable: %d (DNS failed: try again later)\n", rep.Unverifiable)
	if rep.Signed > 0 || rep.BadSignatures > 0 {
		fmt.Fprintf(w, "  signed:       %d (proven by their Web Bot Auth signature, without DNS; %d with a signature that did not verify)\n",
			rep.Signed, rep.BadSignatures)
	}
	fmt.Fprintln(w)
	var tab table
	sigCol := rep.Signed > 0 || rep.BadSignatures > 0 // the SIGNED column, when signatures were found
	if sigCol {
		tab.add("ADDRESS", "VERDICT", "LINES", "MATCHED", "SIGNED", "WHY")
	} else {
		tab.add("ADDRESS", "VERDICT", "LINES", "MATCHED", "WHY")
	}
	for _, ip := range rep.IPs {
		matched := "-"
		if ip.Genuine {
			matched = fmt.Sprint(ip.Matched)
		}
		verdict, why := string(ip.Verification.Status), strings.TrimPrefix(ip.Verification.Reason, "unverifiable: ")
		if verdict == "" {
			verdict, why = "genuine", "every line signed with a published key (no DNS lookup)"
		}
		if sigCol {
			tab.add(ip.IP, verdict, strconv.Itoa(ip.Requests), matched, strconv.Itoa(ip.Signed), why)
		} else {
			tab.add(ip.IP, verdict, strconv.Itoa(ip.Requests), matched, why)
		}
	}
	tab.write(w)
	if n := rep.Genuine - rep.Matched; n > 0 {
		fmt.Fprintf(w, "\n%d genuine lines have no match in our request log: they need a human.\n", n)
		if len(rep.Unmatched) < n {
			fmt.Fprintf(w, "The first %d:\n", len(rep.Unmatched))
		}
		var tab table
		tab.add("LINE", "TIME", "ADDRESS", "REQUEST")
		for _, u := range rep.Unmatched {
			tab.add(strconv.Itoa(u.Line), human.Time(u.Time), u.IP, u.Method+" "+u.Host+u.Target)
		}
		tab.write(w)
	}
	fmt.Fprintln(w)
	if rep.OK() {
		fmt.Fprintln(w, "Verdict: every line that claims to be LohiSoftBot is ours, and in our request log.")
		return
	}
	var why []string
	if rep.Impostor > 0 {
		why = append(why, fmt.Sprintf("%d from impostors", rep.Impostor))
	}
	if rep.Unverifiable > 0 {
		why = append(why, fmt.Sprintf("%d unverifiable", rep.Unverifiable))
	}
	if n := rep.Genuine - rep.Matched; n > 0 {
		why = append(why, fmt.Sprintf("%d genuine but missing from our request log", n))
	}
	fmt.Fprintf(w, "Verdict: of %d lines claiming to be LohiSoftBot, %s.\n", rep.Claimed, strings.Join(why, ", "))
}

// loadDirectory reads a Web Bot Auth key directory: fetched (its own
// signature checked) when src is a URL, whose origin is then the
// Signature-Agent signatures must name; read offline from a file otherwise.
func loadDirectory(ctx context.Context, src string, timeout time.Duration) ([]webbotauth.JWK, string, error) {
	if strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://") {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		d, err := webbotauth.FetchDirectory(ctx, &http.Client{Timeout: timeout}, src, time.Now())
		if err != nil {
			return nil, "", &exitError{code: exitBadInput, err: err}
		}
		agent, err := webbotauth.Origin(originOf(src))
		if err != nil {
			return nil, "", &exitError{code: exitBadInput, err: err}
		}
		return d.Keys, agent, nil
	}
	b, err := boundedread.ReadFile(src, boundedread.ConfigLimit)
	if err != nil {
		return nil, "", &exitError{code: exitBadInput, err: fmt.Errorf("--directory: %w", err)}
	}
	d, err := webbotauth.ParseDirectory(b)
	if err != nil {
		return nil, "", &exitError{code: exitBadInput, err: fmt.Errorf("--directory %s: %w", src, err)}
	}
	return d.Keys, "", nil
}
