package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// These tests check each command's flags and arguments against the options
// its run function gets, through the command's test hook: no database is
// opened (--db names none, which the run would refuse with exit 2) and no
// process is started.

// runHooked runs lohibot in-process on a command tree holding only what mk
// makes (a command, or a group with it), with the environment env.
func runHooked(t *testing.T, env []string, mk func(a *app) *cobra.Command, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	newRoot := func(a *app) *cobra.Command {
		root := newBareRootCmd(a)
		root.AddCommand(mk(a))
		return root
	}
	// A --db that names no database: a run that opened it would exit 2.
	noDB := filepath.Join(t.TempDir(), "none.db")
	code := runRoot(context.Background(), newRoot, append([]string{"--db", noDB}, args...), strings.NewReader(""), &out, &errOut, envFunc(env))
	if _, err := os.Stat(noDB); err == nil {
		t.Errorf("lohibot %s created %s", strings.Join(args, " "), noDB)
	}
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// hookInto is a test hook that keeps the options it is given.
func hookInto[O any](got **O) func(*O) error {
	return func(o *O) error {
		*got = o
		return nil
	}
}

// in puts cmd under a group named name, as the root command tree does.
func in(name string, cmd *cobra.Command) *cobra.Command {
	g := groupCmd(name, name)
	g.AddCommand(cmd)
	return g
}

// hookCase is one command line and what the hook should see: want checks
// the options, or the run is refused before the hook with exit code code
// and a message holding errPart.
type hookCase[O any] struct {
	name    string
	env     []string
	args    []string
	want    func(t *testing.T, o *O)
	code    int
	errPart string
}

// runHookCases runs each case on the command mk makes with the hook.
func runHookCases[O any](t *testing.T, mk func(a *app, runF func(*O) error) *cobra.Command, cases []hookCase[O]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *O
			r := runHooked(t, tc.env, func(a *app) *cobra.Command { return mk(a, hookInto(&got)) }, tc.args...)
			if tc.want == nil {
				if r.code != tc.code || !strings.Contains(r.stderr, tc.errPart) {
					t.Errorf("lohibot %s: exit %d, stderr %q; want exit %d with %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.errPart)
				}
				if got != nil {
					t.Errorf("lohibot %s: the run was called with %+v after a refusal", strings.Join(tc.args, " "), got)
				}
				return
			}
			if r.code != 0 || got == nil {
				t.Fatalf("lohibot %s: exit %d, stderr %q, hook called: %v", strings.Join(tc.args, " "), r.code, r.stderr, got != nil)
			}
			tc.want(t, got)
		})
	}
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: (-want +got)\n%s", what, diff)
	}
}

func TestExcludeOptions(t *testing.T) {
	group := func(mk func(*app, func(*excludeAddOptions) error) *cobra.Command) func(*app, func(*excludeAddOptions) error) *cobra.Command {
		return func(a *app, f func(*excludeAddOptions) error) *cobra.Command { return in("exclude", mk(a, f)) }
	}
	runHookCases(t, group(newExcludeAddCmd), []hookCase[excludeAddOptions]{
		{name: "flags", args: []string{"exclude", "add", "https://www.Example.co.uk/x", "bücher.de", "--by", "anna", "--reason", "asked", "--json"},
			want: func(t *testing.T, o *excludeAddOptions) {
				eq(t, "Inputs", o.Inputs, []string{"https://www.Example.co.uk/x", "bücher.de"})
				eq(t, "By, Reason, JSON", []any{o.By, o.Reason, o.JSON}, []any{"anna", "asked", true})
				if o.ErrOut == nil || o.Policy != nil {
					t.Errorf("ErrOut %v, Policy %v: want stderr and no policy (the hook runs instead)", o.ErrOut, o.Policy)
				}
			}},
		{name: "by defaults to the user", env: []string{"USER=zoe"}, args: []string{"exclude", "add", "example.com"},
			want: func(t *testing.T, o *excludeAddOptions) {
				if o.By == "" || o.JSON {
					t.Errorf("By %q, JSON %v; want the current user, false", o.By, o.JSON)
				}
			}},
		{name: "empty by", args: []string{"exclude", "add", "example.com", "--by", " "}, code: 2, errPart: "--by must name who makes the change"},
		{name: "public suffix", args: []string{"exclude", "add", "example.com", "co.uk"}, code: 2, errPart: "co.uk"},
		{name: "no site", args: []string{"exclude", "add"}, code: 2, errPart: "missing DOMAIN|URL"},
	})
	runHookCases(t, func(a *app, f func(*excludeRemoveOptions) error) *cobra.Command {
		return in("exclude", newExcludeRemoveCmd(a, f))
	}, []hookCase[excludeRemoveOptions]{
		{name: "flags", args: []string{"exclude", "remove", "example.com", "--by", "anna", "--reason", "back"},
			want: func(t *testing.T, o *excludeRemoveOptions) {
				eq(t, "options", []string{o.Input, o.By, o.Reason}, []string{"example.com", "anna", "back"})
			}},
		{name: "alias", args: []string{"exclude", "reinclude", "example.com", "--by", "anna"},
			want: func(t *testing.T, o *excludeRemoveOptions) { eq(t, "Input", o.Input, "example.com") }},
		{name: "no by", args: []string{"exclude", "remove", "example.com"}, code: 2, errPart: "re-inclusion needs --by WHO"},
		{name: "bad site", args: []string{"exclude", "remove", "192.0.2.1", "--by", "anna"}, code: 2, errPart: "192.0.2.1"},
	})
	runHookCases(t, func(a *app, f func(*excludeListOptions) error) *cobra.Command {
		return in("exclude", newExcludeListCmd(a, f))
	}, []hookCase[excludeListOptions]{
		{name: "unverified", args: []string{"exclude", "list", "--unverified", "--json"},
			want: func(t *testing.T, o *excludeListOptions) {
				eq(t, "Unverified, JSON", []bool{o.Unverified, o.JSON}, []bool{true, true})
			}},
		{name: "arguments", args: []string{"exclude", "list", "example.com"}, code: 2, errPart: "unexpected arguments"},
	})
	runHookCases(t, func(a *app, f func(*excludeCheckOptions) error) *cobra.Command {
		return in("exclude", newExcludeCheckCmd(a, f))
	}, []hookCase[excludeCheckOptions]{
		{name: "url", args: []string{"exclude", "check", "https://shop.example.co.uk/page"},
			want: func(t *testing.T, o *excludeCheckOptions) { eq(t, "Input", o.Input, "https://shop.example.co.uk/page") }},
		{name: "two sites", args: []string{"exclude", "check", "a.com", "b.com"}, code: 2, errPart: "takes one DOMAIN|URL, got 2"},
	})
}

func TestSitesOptions(t *testing.T) {
	runHookCases(t, func(a *app, f func(*sitesAddOptions) error) *cobra.Command {
		return in("sites", newSitesAddCmd(a, f))
	}, []hookCase[sitesAddOptions]{
		{name: "flags", args: []string{"sites", "add", "example.com", "https://shop.example.org/start", "--by", "anna"},
			want: func(t *testing.T, o *sitesAddOptions) {
				eq(t, "Inputs", o.Inputs, []string{"example.com", "https://shop.example.org/start"})
				eq(t, "By", o.By, "anna")
			}},
		{name: "bad site", args: []string{"sites", "add", "ftp://example.com/"}, code: 2, errPart: "ftp://example.com/"},
	})
	runHookCases(t, func(a *app, f func(*sitesListOptions) error) *cobra.Command {
		return in("sites", newSitesListCmd(a, f))
	}, []hookCase[sitesListOptions]{
		{name: "json", args: []string{"sites", "list", "--json"},
			want: func(t *testing.T, o *sitesListOptions) { eq(t, "JSON", o.JSON, true) }},
		{name: "arguments", args: []string{"sites", "list", "example.com"}, code: 2, errPart: "unexpected arguments"},
	})
	runHookCases(t, func(a *app, f func(*sitesRemoveOptions) error) *cobra.Command {
		return in("sites", newSitesRemoveCmd(a, f))
	}, []hookCase[sitesRemoveOptions]{
		{name: "a site named twice", args: []string{"sites", "remove", "example.com", "https://www.example.com/", "example.org", "--by", "anna"},
			want: func(t *testing.T, o *sitesRemoveOptions) {
				eq(t, "Inputs", o.Inputs, []string{"example.com", "example.org"})
			}},
	})
}

func TestCrawlOptions(t *testing.T) {
	runHookCases(t, newCrawlCmd, []hookCase[crawlOptions]{
		{name: "all", args: []string{"crawl", "--all", "--delay", "5s", "--recrawl-after", "1.5d", "--max-in-flight", "8", "--node", "crawler2", "--source-ip", "79.139.58.121"},
			want: func(t *testing.T, o *crawlOptions) {
				if !o.all || len(o.sites) != 0 || o.delay != 5*time.Second || o.recrawlAfter != 36*time.Hour {
					t.Errorf("all %v, sites %q, delay %v, recrawlAfter %v", o.all, o.sites, o.delay, o.recrawlAfter)
				}
				c := o.Crawler
				if c == nil || c.Delay != 5*time.Second || c.RecrawlAfter != 36*time.Hour || c.MaxInFlight != 8 ||
					c.Node != "crawler2" || c.SourceIP.String() != "79.139.58.121" || c.Logger == nil || c.Signer != nil {
					t.Errorf("Crawler = %+v", c)
				}
				if o.Terminal {
					t.Errorf("Terminal = true for a buffer")
				}
			}},
		{name: "sites", args: []string{"crawl", "example.com", "https://shop.example.org/start"},
			want: func(t *testing.T, o *crawlOptions) {
				eq(t, "sites", o.sites, []string{"example.com", "https://shop.example.org/start"})
			}},
		{name: "every bad flag at once", args: []string{"crawl", "--delay", "0s", "--max-conns", "0"}, code: 2,
			errPart: "name the sites to crawl, or give --all\n--delay must be positive\n--max-sites-parallel, --max-in-flight and --max-conns must be at least 1"},
		{name: "credentials", args: []string{"crawl", "https://bob:secret@example.com/"}, code: 2, errPart: "argument 1: a start URL with credentials"},
		{name: "ipv6 source", args: []string{"crawl", "--all", "--source-ip", "::1"}, code: 2, errPart: "not an IPv4 address"},
		{name: "user agent", args: []string{"crawl", "--all", "--user-agent", "Mozilla"}, code: 2, errPart: "--user-agent must be"},
		{name: "signing key", args: []string{"crawl", "--all", "--signing-key-file", "/nonexistent/key.pem"}, code: 2, errPart: "--signing-key-file"},
	})
}

func TestRobotsOptions(t *testing.T) {
	runHookCases(t, func(a *app, f func(*robotsTestOptions) error) *cobra.Command {
		return in("robots", newRobotsTestCmd(a, f))
	}, []hookCase[robotsTestOptions]{
		{name: "flags", args: []string{"robots", "test", "--robots", "-", "--agent", "Googlebot", "/a", "https://example.com/b"},
			want: func(t *testing.T, o *robotsTestOptions) {
				eq(t, "options", []any{o.RobotsFile, o.Agent, o.URLs}, []any{"-", "Googlebot", []string{"/a", "https://example.com/b"}})
				if o.In == nil {
					t.Error("In = nil, want standard input")
				}
			}},
		{name: "no robots", args: []string{"robots", "test", "/a"}, code: 2, errPart: "--robots FILE is required"},
		{name: "bad agent", args: []string{"robots", "test", "--robots", "r.txt", "--agent", "Google bot", "/a"}, code: 2, errPart: "is not a product token"},
		{name: "bad url", args: []string{"robots", "test", "--robots", "r.txt", "ftp://x/"}, code: 2, errPart: "is not an http(s) URL"},
	})
	runHookCases(t, func(a *app, f func(*robotsFetchOptions) error) *cobra.Command {
		return in("robots", newRobotsFetchCmd(a, f))
	}, []hookCase[robotsFetchOptions]{
		{name: "flags", args: []string{"robots", "fetch", "https://example.com/shop", "--delay", "2s", "--allow-private", "--user-agent", "LohiSoftBot/1.0 (+message@lohisoft.com)"},
			want: func(t *testing.T, o *robotsFetchOptions) {
				eq(t, "URL", o.URL, "https://example.com/shop")
				c := o.Crawler
				if c == nil || c.Delay != 2*time.Second || !c.AllowPrivate || c.UserAgent != "LohiSoftBot/1.0 (+message@lohisoft.com)" || c.Logger == nil {
					t.Errorf("Crawler = %+v", c)
				}
			}},
		{name: "zero delay", args: []string{"robots", "fetch", "https://example.com/", "--delay", "0s"}, code: 2, errPart: "--delay must be positive"},
		{name: "bad site", args: []string{"robots", "fetch", "https://co.uk/"}, code: 2, errPart: "co.uk"},
	})
}

func TestSearchAuditReportOptions(t *testing.T) {
	runHookCases(t, newSearchCmd, []hookCase[searchOptions]{
		{name: "flags", args: []string{"search", "opening", "hours", "--limit", "5", "--offset", "10"},
			want: func(t *testing.T, o *searchOptions) {
				eq(t, "options", []any{o.Query, o.Limit, o.Offset}, []any{"opening hours", 5, 10})
			}},
		{name: "defaults", args: []string{"search", "bakery"},
			want: func(t *testing.T, o *searchOptions) { eq(t, "Limit, Offset", []int{o.Limit, o.Offset}, []int{20, 0}) }},
		{name: "bad", args: []string{"search", " ", "--limit", "0", "--offset", "-1"}, code: 2,
			errPart: "search: --limit must be at least 1; --offset must not be negative; the query is empty"},
	})
	since := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	runHookCases(t, newAuditCmd, []hookCase[auditOptions]{
		{name: "rules and sites", args: []string{"audit", "Robots", "https://www.example.com/", "budget", "--since", "2026-05-01"},
			want: func(t *testing.T, o *auditOptions) {
				eq(t, "options", []any{o.Rules, o.Sites, o.Since, o.Checkpoint == nil}, []any{[]string{"robots", "budget"}, []string{"example.com"}, since, true})
			}},
		{name: "checkpoint", args: []string{"audit", "integrity", "--checkpoint", checkpointFile(t)},
			want: func(t *testing.T, o *auditOptions) { eq(t, "Checkpoint", string(o.Checkpoint), testCheckpoint) }},
		{name: "checkpoint missing", args: []string{"audit", "integrity", "--checkpoint", filepath.Join(t.TempDir(), "none")}, code: 2, errPart: "none"},
		{name: "checkpoint not one", args: []string{"audit", "integrity", "--checkpoint", writeTemp(t, "hello\n")}, code: 2, errPart: "not a checkpoint"},
		{name: "checkpoint with a site", args: []string{"audit", "example.com", "--checkpoint", checkpointFile(t)}, code: 2, errPart: "--checkpoint checks the integrity rule only"},
		{name: "head is gone", args: []string{"audit", "integrity", "--head", strings.Repeat("3f2a", 16)}, code: 2, errPart: "unknown flag: --head"},
		{name: "neither rule nor site", args: []string{"audit", "speed"}, code: 2, errPart: `"speed" is neither a rule`},
	})
	dir := t.TempDir()
	runHookCases(t, newReportCmd, []hookCase[reportOptions]{
		{name: "flags", args: []string{"report", "https://WWW.Example.com/", "--format", "HTML", "-o", filepath.Join(dir, "r.html"), "--lang", "IT"},
			want: func(t *testing.T, o *reportOptions) {
				eq(t, "options", []string{o.Site, o.Format, o.Output, o.Lang}, []string{"example.com", "html", filepath.Join(dir, "r.html"), "it"})
			}},
		{name: "json", args: []string{"report", "example.com", "--json"},
			want: func(t *testing.T, o *reportOptions) {
				eq(t, "Format, JSON", []any{o.Format, o.JSON}, []any{"json", true})
			}},
		{name: "json and html", args: []string{"report", "example.com", "--json", "--format", "html"}, code: 2, errPart: "--json prints JSON"},
		{name: "format", args: []string{"report", "example.com", "--format", "pdf"}, code: 2, errPart: `--format "pdf"`},
		{name: "folder", args: []string{"report", "example.com", "-o", dir}, code: 2, errPart: "is a folder"},
	})
}

func TestMailOptions(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mbox := mailTestdata("exclude-one.eml")
	runHookCases(t, func(a *app, f func(*mailImportOptions) error) *cobra.Command {
		return in("mail", newMailImportCmd(a, f))
	}, []hookCase[mailImportOptions]{
		{name: "smtp", env: []string{"LOHIBOT_SMTP_PASSWORD=pw"},
			args: []string{"mail", "import", mbox, "--authserv-id", "mx1.lohisoft.com", "--smtp", "smtp://bot@127.0.0.1:2525", "--from", "message@lohisoft.com", "--insecure"},
			want: func(t *testing.T, o *mailImportOptions) {
				eq(t, "Paths, AuthservID", []any{o.Paths, o.AuthservID}, []any{[]string{mbox}, "mx1.lohisoft.com"})
				if o.Sender == nil || o.Sender.Password != "pw" || !o.Sender.Insecure {
					t.Errorf("Sender = %+v, want the password of the environment, insecure", o.Sender)
				}
			}},
		{name: "no smtp", args: []string{"mail", "import", mbox},
			want: func(t *testing.T, o *mailImportOptions) {
				if o.Sender != nil {
					t.Errorf("Sender = %+v without --smtp", o.Sender)
				}
			}},
		{name: "password without smtp", args: []string{"mail", "import", mbox, "--smtp-password-file", pw}, code: 2, errPart: "--smtp-password-file needs --smtp URL"},
		{name: "missing file", args: []string{"mail", "import", filepath.Join(dir, "none.mbox")}, code: 2, errPart: "none.mbox"},
	})
	runHookCases(t, func(a *app, f func(*mailWatchOptions) error) *cobra.Command {
		return in("mail", newMailWatchCmd(a, f))
	}, []hookCase[mailWatchOptions]{
		{name: "password file", args: []string{"mail", "watch", "--imap", "imaps://bot@127.0.0.1:10993/INBOX", "--password-file", pw, "--insecure", "--once"},
			want: func(t *testing.T, o *mailWatchOptions) {
				if o.Endpoint == nil || o.Endpoint.Host != "127.0.0.1" || o.Endpoint.Username != "bot" {
					t.Errorf("Endpoint = %+v", o.Endpoint)
				}
				if o.Password != "s3cret" || o.Token != nil || !o.Once || !o.Insecure {
					t.Errorf("Password %q, Token set %v, Once %v, Insecure %v", o.Password, o.Token != nil, o.Once, o.Insecure)
				}
			}},
		{name: "token", env: []string{"LOHIBOT_IMAP_OAUTH_TOKEN=tok"}, args: []string{"mail", "watch", "--imap", "imaps://bot@imap.example.com/INBOX"},
			want: func(t *testing.T, o *mailWatchOptions) {
				if o.Token == nil {
					t.Fatal("Token = nil with LOHIBOT_IMAP_OAUTH_TOKEN")
				}
				if tok, err := o.Token(); tok != "tok" || err != nil {
					t.Errorf("Token() = %q, %v", tok, err)
				}
			}},
		{name: "no imap", args: []string{"mail", "watch"}, code: 2, errPart: "mail watch needs --imap"},
		{name: "insecure remote", args: []string{"mail", "watch", "--imap", "imaps://bot@imap.example.com/INBOX", "--password-file", pw, "--insecure"},
			code: 2, errPart: "--insecure is only allowed for a server on loopback"},
		{name: "no password", args: []string{"mail", "watch", "--imap", "imaps://bot@imap.example.com/INBOX"}, code: 2, errPart: "no IMAP password"},
	})
	runHookCases(t, func(a *app, f func(*mailShowOptions) error) *cobra.Command {
		return in("mail", newMailShowCmd(a, f))
	}, []hookCase[mailShowOptions]{
		{name: "raw", args: []string{"mail", "show", "12", "--raw"},
			want: func(t *testing.T, o *mailShowOptions) {
				if o.ID != 12 || !o.Raw || o.RawOut == nil {
					t.Errorf("ID %d, Raw %v, RawOut %v", o.ID, o.Raw, o.RawOut)
				}
			}},
		{name: "bad id", args: []string{"mail", "show", "x12"}, code: 2, errPart: `bad message id "x12"`},
	})
	review := func(mk func(*app, func(*mailReviewOptions) error) *cobra.Command) func(*app, func(*mailReviewOptions) error) *cobra.Command {
		return func(a *app, f func(*mailReviewOptions) error) *cobra.Command {
			r := groupCmd("review", "review")
			r.AddCommand(mk(a, f))
			return in("mail", r)
		}
	}
	runHookCases(t, func(a *app, f func(*mailReviewListOptions) error) *cobra.Command {
		r := groupCmd("review", "review")
		r.AddCommand(newMailReviewListCmd(a, f))
		return in("mail", r)
	}, []hookCase[mailReviewListOptions]{
		{name: "list", args: []string{"mail", "review", "list", "--json"},
			want: func(t *testing.T, o *mailReviewListOptions) { eq(t, "JSON", o.JSON, true) }},
	})
	runHookCases(t, review(newMailReviewApproveCmd), []hookCase[mailReviewOptions]{
		{name: "approve", args: []string{"mail", "review", "approve", "15", "--by", "anna", "--site", "example.com", "--site", "example.org"},
			want: func(t *testing.T, o *mailReviewOptions) {
				eq(t, "options", []any{o.ID, o.By, o.Sites}, []any{int64(15), "anna", []string{"example.com", "example.org"}})
			}},
		{name: "approve by default", env: []string{"USER=zoe"}, args: []string{"mail", "review", "approve", "15"},
			want: func(t *testing.T, o *mailReviewOptions) {
				if o.By == "" {
					t.Error("By empty, want the current user")
				}
			}},
		{name: "bad id", args: []string{"mail", "review", "approve", "0"}, code: 2, errPart: `bad message id "0"`},
	})
	runHookCases(t, review(newMailReviewDismissCmd), []hookCase[mailReviewOptions]{
		{name: "dismiss", args: []string{"mail", "review", "dismiss", "13", "--by", "anna"},
			want: func(t *testing.T, o *mailReviewOptions) { eq(t, "ID, By", []any{o.ID, o.By}, []any{int64(13), "anna"}) }},
		{name: "empty by", args: []string{"mail", "review", "dismiss", "13", "--by", ""}, code: 2, errPart: "--by must name who makes the change"},
	})
	runHookCases(t, review(newMailReviewExcludeCmd), []hookCase[mailReviewOptions]{
		{name: "exclude", args: []string{"mail", "review", "exclude", "14", "--site", "example.com", "--by", "anna"},
			want: func(t *testing.T, o *mailReviewOptions) {
				eq(t, "options", []any{o.Action, o.ID, o.By, o.Sites}, []any{"exclude", int64(14), "anna", []string{"example.com"}})
			}},
	})
	runHookCases(t, review(newMailReviewReincludeCmd), []hookCase[mailReviewOptions]{
		{name: "reinclude", args: []string{"mail", "review", "reinclude", "9", "--by", "anna"},
			want: func(t *testing.T, o *mailReviewOptions) {
				eq(t, "options", []any{o.Action, o.ID, o.By}, []any{"reinclude", int64(9), "anna"})
			}},
		{name: "no by", env: []string{"USER=zoe"}, args: []string{"mail", "review", "reinclude", "9"}, code: 2,
			errPart: "re-including needs --by WHO (the staff member who decides)\nSee 'lohibot mail review reinclude --help'."},
	})
	runHookCases(t, func(a *app, f func(*mailParseOptions) error) *cobra.Command {
		return in("mail", newMailParseCmd(a, f))
	}, []hookCase[mailParseOptions]{
		{name: "files", args: []string{"mail", "parse", "a.eml", "b.eml", "--json"},
			want: func(t *testing.T, o *mailParseOptions) {
				eq(t, "Files, JSON", []any{o.Files, o.JSON}, []any{[]string{"a.eml", "b.eml"}, true})
			}},
	})
}

func TestIdentityOptions(t *testing.T) {
	runHookCases(t, newVerifyCmd, []hookCase[verifyOptions]{
		{name: "flags", args: []string{"--resolver", "127.0.0.1:5353", "verify", "79.139.58.98", "2001:db8::1", "--timeout", "2s"},
			want: func(t *testing.T, o *verifyOptions) {
				var addrs []string
				for _, a := range o.Addrs {
					addrs = append(addrs, a.String())
				}
				eq(t, "options", []any{addrs, o.Timeout, o.Resolver}, []any{[]string{"79.139.58.98", "2001:db8::1"}, 2 * time.Second, "127.0.0.1:5353"})
			}},
		{name: "every bad argument", args: []string{"verify", "x", "y", "--timeout", "0s"}, code: 2,
			errPart: "\"x\" is not an IP address\n\"y\" is not an IP address\n--timeout must be positive"},
	})
	runHookCases(t, newVerifyLogCmd, []hookCase[verifyLogOptions]{
		{name: "flags", args: []string{"verify-log", "-", "--log-format", "json", "--tolerance", "5m", "--assume-claimed", "--directory", "d.json"},
			want: func(t *testing.T, o *verifyLogOptions) {
				eq(t, "options", []any{o.Path, string(o.Format), o.Tolerance, o.AssumeClaimed, o.Directory}, []any{"-", "json", 5 * time.Minute, true, "d.json"})
				if o.In == nil || o.OpenStore == nil {
					t.Error("In or OpenStore not set")
				}
			}},
		{name: "old flag name", args: []string{"verify-log", "a.log", "--format", "common"},
			want: func(t *testing.T, o *verifyLogOptions) { eq(t, "Format", string(o.Format), "common") }},
		{name: "both names", args: []string{"verify-log", "a.log", "--format", "common", "--log-format", "json"}, code: 2, errPart: "--format is the old name of --log-format"},
		{name: "bad format", args: []string{"verify-log", "a.log", "--log-format", "xml"}, code: 2, errPart: "--log-format"},
	})
	runHookCases(t, newVerifySignatureCmd, []hookCase[verifySignatureOptions]{
		{name: "flags", args: []string{"verify-signature", "req.txt", "--directory", "dir.json", "--authority", "www.example.org", "--at", "2026-12-01T12:00:00Z"},
			want: func(t *testing.T, o *verifySignatureOptions) {
				eq(t, "options", []string{o.File, o.Directory, o.Authority, o.At}, []string{"req.txt", "dir.json", "www.example.org", "2026-12-01T12:00:00Z"})
			}},
		{name: "two files", args: []string{"verify-signature", "a", "b"}, code: 2, errPart: "at most one FILE"},
	})
	runHookCases(t, newIPsCmd, []hookCase[ipsOptions]{
		{name: "config from the environment", env: []string{"LOHIBOT_CONFIG=/etc/lohibot.toml"}, args: []string{"ips"},
			want: func(t *testing.T, o *ipsOptions) { eq(t, "Config", o.Config, "/etc/lohibot.toml") }},
		{name: "flag over environment", env: []string{"LOHIBOT_CONFIG=/etc/lohibot.toml"}, args: []string{"ips", "--config", "mine.toml"},
			want: func(t *testing.T, o *ipsOptions) { eq(t, "Config", o.Config, "mine.toml") }},
	})
	runHookCases(t, func(a *app, f func(*keysShowOptions) error) *cobra.Command {
		return in("keys", newKeysShowCmd(a, f))
	}, []hookCase[keysShowOptions]{
		{name: "file", args: []string{"keys", "show", "k.pem"},
			want: func(t *testing.T, o *keysShowOptions) { eq(t, "File", o.File, "k.pem") }},
		{name: "config", env: []string{"LOHIBOT_CONFIG=c.toml"}, args: []string{"keys", "show"},
			want: func(t *testing.T, o *keysShowOptions) {
				eq(t, "File, Config", []string{o.File, o.Config}, []string{"", "c.toml"})
			}},
		{name: "neither", args: []string{"keys", "show"}, code: 2, errPart: "name a key FILE"},
	})
	runHookCases(t, func(a *app, f func(*keysGenerateOptions) error) *cobra.Command {
		return in("keys", newKeysGenerateCmd(a, f))
	}, []hookCase[keysGenerateOptions]{
		{name: "out", args: []string{"keys", "generate", "--out", "k.pem"},
			want: func(t *testing.T, o *keysGenerateOptions) { eq(t, "Out", o.Out, "k.pem") }},
		{name: "no out", args: []string{"keys", "generate"}, code: 2, errPart: "--out FILE is required"},
	})
}

func TestInitServeDemoOptions(t *testing.T) {
	runHookCases(t, newInitCmd, []hookCase[initOptions]{
		{name: "env", env: []string{"LOHIBOT_DB=/var/lib/lohibot/x.db"}, args: []string{"init"},
			want: func(t *testing.T, o *initOptions) {
				// runHooked gives --db, which wins over LOHIBOT_DB.
				if !strings.HasSuffix(o.DSN, "none.db") {
					t.Errorf("DSN = %q, want --db", o.DSN)
				}
			}},
	})
	runHookCases(t, newServeCmd, []hookCase[serveOptions]{
		{name: "flags", env: []string{"LOHIBOT_CONFIG=/etc/lohibot.toml"}, args: []string{"--resolver", "127.0.0.1:53", "serve", "--http", "127.0.0.1:8080", "--check", "--signing-key-file", "k.pem"},
			want: func(t *testing.T, o *serveOptions) {
				eq(t, "options", []any{o.Config, o.HTTP, o.Check, o.dbSet, o.httpSet, o.resolver, o.signingKey},
					[]any{"/etc/lohibot.toml", "127.0.0.1:8080", true, true, true, "127.0.0.1:53", "k.pem"})
				if o.Getenv == nil || o.Getenv("LOHIBOT_CONFIG") != "/etc/lohibot.toml" {
					t.Error("Getenv does not read the environment")
				}
			}},
	})
	runHookCases(t, newDemoCmd, []hookCase[demoOptions]{
		{name: "flags", args: []string{"demo", "--keep", "--delay", "500ms", "--dir", "d"},
			want: func(t *testing.T, o *demoOptions) {
				if !o.keep || o.delay != 500*time.Millisecond || o.dir != "d" || o.DSN == "" || o.Command == "" {
					t.Errorf("options = %+v", o)
				}
			}},
		{name: "zero delay", args: []string{"demo", "--delay", "0s"}, code: 2, errPart: "--delay must be positive"},
	})
}

// testCheckpoint is a signed checkpoint, as 'log checkpoint' prints one.
const testCheckpoint = "lohisoft.com/bot/log\n1\nniy/DH5gVBcl+B2zOt/aiCmA2jwHR9wPw9BzNHMfFxE=\n\n" +
	"\u2014 lohisoft.com/bot/log DlFyJM0oIh23EEGv/RB9nJJ7Xh+zV08FiH9dfcSDiravA8mMP6btDgJkMy8ZU14Wdxa2ZmHg1JUj867pm0T95380mAk=\n"

// checkpointFile writes testCheckpoint to a file and returns its path.
func checkpointFile(t *testing.T) string { return writeTemp(t, testCheckpoint) }

// writeTemp writes text to a new file and returns its path.
func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
