package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/webbotauth"
)

type verifySignatureOptions struct {
	printOptions
	In  io.Reader        // standard input, read when File is "" or "-"
	Now func() time.Time // the time expiry is judged at without --at; nil: time.Now

	File      string
	Directory string
	Authority string
	At        string
	Timeout   time.Duration
}

// signatureVerdict is one line of verify-signature's output.
type signatureVerdict struct {
	Valid     bool       `json:"valid"`
	Code      string     `json:"code,omitempty"`
	Reason    string     `json:"reason"`
	Method    string     `json:"method"`
	URL       string     `json:"url"`
	Authority string     `json:"authority"`
	KeyID     string     `json:"keyid,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	Created   *time.Time `json:"created,omitempty"`
	Expires   *time.Time `json:"expires,omitempty"`
}

func newVerifySignatureCmd(a *app, runF func(*verifySignatureOptions) error) *cobra.Command {
	opts := &verifySignatureOptions{}
	cmd := &cobra.Command{
		Use:   "verify-signature [FILE]",
		Short: "Check a captured request's Web Bot Auth signature against LohiSoftBot's key directory",
		Long: `Check that a request really came from LohiSoftBot by its signature (Web Bot
Auth: HTTP Message Signatures, RFC 9421), from any address and without DNS.

The request is read from FILE (or standard input): its header fields as text,
with or without the request line ("GET /path HTTP/1.1", then "Host: ...",
"Signature-Input: ...", ...; HTTP/2 ":authority:" lines work too), or a HAR
file saved from a browser or proxy (every entry that carries Signature-Input
is checked), or one HAR entry.

The keys come from --directory: a URL (an origin such as
https://lohisoft.com, or the directory's full URL; its own signature is
checked, and the request's Signature-Agent must name that origin) or a file
(a saved directory, or one key: PEM or JWK) to check offline. Default:
` + webbotauth.DefaultAgent + `.

A signature is valid when it is tagged web-bot-auth, covers the host the
request went to (@authority) and Signature-Agent, was made by a key of the
directory within that key's window, has not expired (judged now, or at --at),
and verifies. Otherwise the reason says which: missing, malformed, expired,
not-yet-valid, unknown-key, key-not-valid, wrong-authority, wrong-agent,
bad-signature (the request was changed, or sent to another host).

Exit status: 0 when every request checked is valid, 1 when one is not, 2 when
the input or the directory cannot be read. --json prints
{"valid","code","reason","method","url","authority","keyid","agent","created","expires"}
per request, one per line.`,
		Example: `  lohibot verify-signature request.txt
  curl -s ... | lohibot verify-signature --directory https://lohisoft.com
  lohibot verify-signature capture.har --directory directory.json --json
  lohibot verify-signature request.txt --authority www.example.org --at 2026-12-01T12:00:00Z`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("at most one FILE\nSee '%s --help'.", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			opts.In = a.in
			return runCommand(cmd, a, opts, runF, runVerifySignature)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Directory, "directory", webbotauth.DefaultAgent, "the key directory: a URL, or a file (directory JSON, or one PEM/JWK key) to check offline")
	f.StringVar(&opts.Authority, "authority", "", "the host[:port] the request must have been sent to (default: its own Host)")
	f.StringVar(&opts.At, "at", "", "judge expiry at this time (RFC 3339) instead of now")
	f.DurationVar(&opts.Timeout, "timeout", 10*time.Second, "bound on fetching the directory")
	return cmd
}

// runVerifySignature prints a verdict per captured request and returns
// refused (exit 1) unless every one is valid.
func runVerifySignature(ctx context.Context, opts *verifySignatureOptions, out io.Writer) error {
	var raw []byte
	var err error
	if opts.File == "" || opts.File == "-" {
		raw, err = io.ReadAll(io.LimitReader(opts.In, boundedread.CaptureLimit))
	} else {
		raw, err = boundedread.ReadFile(opts.File, boundedread.CaptureLimit)
	}
	if err != nil {
		return &exitError{code: exitBadInput, err: err}
	}
	captures, err := webbotauth.ParseCapture(raw)
	if err != nil {
		return &exitError{code: exitBadInput, err: err}
	}
	now := time.Now()
	if opts.Now != nil {
		now = opts.Now()
	}
	if opts.At != "" {
		if now, err = time.Parse(time.RFC3339, opts.At); err != nil {
			return usageErrorf("--at %q: not an RFC 3339 time (2026-12-01T12:00:00Z)", opts.At)
		}
	}
	vo := &webbotauth.VerifyOptions{Now: now, Authority: opts.Authority}
	keys, agent, err := loadDirectory(ctx, opts.Directory, opts.Timeout)
	if err != nil {
		return err
	}
	vo.Agent = agent
	allValid := true
	for _, c := range captures {
		m := c.Message
		v := signatureVerdict{Method: m.Method, URL: m.URL.String(), Authority: strings.ToLower(m.Authority)}
		res, err := webbotauth.Verify(m, keys, vo)
		var ve *webbotauth.VerifyError
		switch {
		case err == nil:
			v.Valid, v.Reason = true, "signed by LohiSoftBot's key "+res.KeyID
			v.Authority, v.KeyID, v.Agent = res.Authority, res.KeyID, res.Agent
			v.Created, v.Expires = &res.Created, &res.Expires
		case errors.As(err, &ve):
			allValid = false
			v.Code, v.Reason = ve.Code, ve.Reason
		default:
			return err
		}
		if err := printVerdict(out, opts.JSON, v); err != nil {
			return err
		}
	}
	if !allValid {
		return refused
	}
	return nil
}

// printVerdict writes one request's verdict: text, or a JSON line.
func printVerdict(out io.Writer, asJSON bool, v signatureVerdict) error {
	if asJSON {
		return printJSON(out, v)
	}
	if v.Valid {
		_, err := fmt.Fprintf(out, "valid: %s %s\n  keyid %s, Signature-Agent %s, created %s, expires %s\n", v.Method, v.URL,
			v.KeyID, v.Agent, v.Created.Format(time.RFC3339), v.Expires.Format(time.RFC3339))
		return err
	}
	_, err := fmt.Fprintf(out, "NOT VALID (%s): %s %s\n  %s\n", v.Code, v.Method, v.URL, v.Reason)
	return err
}

// originOf is the scheme://host of a URL (the directory's origin).
func originOf(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	host, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + host
}
