package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/translog"
	"github.com/lohisoft/lohibot/translog/leaf"
)

func newLogCmd(a *app) *cobra.Command {
	cmd := groupCmd("log", "The public transparency log of the records: keys, checkpoints, proofs")
	cmd.Long = `Every evidence record (policy events, completed requests, robots.txt
snapshots, mail out of review) is a leaf of an append-only Merkle tree (RFC
6962 hashing, as golang.org/x/mod/sumdb/tlog). A checkpoint is the tree's
size and root hash, signed by the log's Ed25519 key as a C2SP signed note
(origin ` + translog.DefaultOrigin + ` unless --origin says otherwise). Anyone
holding a checkpoint checks a record's inclusion proof, and that a later
checkpoint extends an earlier one, with golang.org/x/mod/sumdb/{note,tlog}
alone. See docs/audit-integrity.md.

The log key is its own key, not the request-signing key: make one with
'lohibot keys generate --out FILE'.`
	cmd.AddCommand(newLogVkeyCmd(a, nil), newLogCheckpointCmd(a, nil), newLogProveCmd(a, nil), newLogConsistencyCmd(a, nil), newLogWatchCmd(a, nil))
	return cmd
}

// logKeyOptions are the flags naming the log's key and origin.
type logKeyOptions struct {
	Key    string // --key: the log's private key file (PKCS#8 PEM)
	Origin string // --origin: the log's origin line
}

func (o *logKeyOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Key, "key", "", "the log's Ed25519 private key file (PKCS#8 PEM, as 'keys generate' writes)")
	cmd.Flags().StringVar(&o.Origin, "origin", translog.DefaultOrigin, "the log's origin (the checkpoints' first line and the key's name)")
}

// check rejects a missing --key or an empty --origin.
func (o *logKeyOptions) check(cmd *cobra.Command) error {
	if strings.TrimSpace(o.Key) == "" {
		return usageErrorf("--key FILE is required\nSee '%s --help'.", cmd.CommandPath())
	}
	if strings.TrimSpace(o.Origin) == "" || strings.ContainsAny(o.Origin, "+ \t\n") {
		return usageErrorf("--origin %q: want a non-empty name without spaces or '+'\nSee '%s --help'.", o.Origin, cmd.CommandPath())
	}
	return nil
}

// read reads the key; a file that is not a key is bad input (exit 2).
func (o *logKeyOptions) read() (*translog.Key, error) {
	k, err := translog.ReadKey(o.Key, o.Origin)
	if err != nil {
		return nil, &exitError{code: exitBadInput, err: err}
	}
	return k, nil
}

type logVkeyOptions struct {
	printOptions
	logKeyOptions
}

func newLogVkeyCmd(a *app, runF func(*logVkeyOptions) error) *cobra.Command {
	opts := &logVkeyOptions{}
	cmd := &cobra.Command{
		Use:   "vkey --key FILE [--origin O]",
		Short: "Print the log's note verifier key (O+hhhhhhhh+base64), to publish",
		Long: `Print the verifier key of the log key in FILE, in the form
golang.org/x/mod/sumdb/note reads (note.NewVerifier): origin+keyhash+base64.
Publish it: checkpoints verify with it. Nothing secret is printed. With
--json: {"origin","vkey"}.`,
		Example: `  lohibot log vkey --key /etc/lohibot/log.pem`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.check(cmd); err != nil {
				return err
			}
			return runCommand(cmd, a, opts, runF, runLogVkey)
		},
	}
	opts.flags(cmd)
	return cmd
}

func runLogVkey(_ context.Context, opts *logVkeyOptions, out io.Writer) error {
	k, err := opts.read()
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(out, map[string]string{"origin": opts.Origin, "vkey": k.VerifierKey()})
	}
	_, err = fmt.Fprintln(out, k.VerifierKey())
	return err
}

type logCheckpointOptions struct {
	printOptions
	storeOptions
	logKeyOptions
}

func newLogCheckpointCmd(a *app, runF func(*logCheckpointOptions) error) *cobra.Command {
	opts := &logCheckpointOptions{}
	cmd := &cobra.Command{
		Use:   "checkpoint --key FILE [--origin O]",
		Short: "Append what is final to the log, and print its signed checkpoint",
		Long: `Append to the log every record that became final, then print the log's
checkpoint (C2SP tlog-checkpoint: origin, tree size, base64 root hash) signed
with the key in FILE (a C2SP signed note). Keep it: 'log prove', 'log
consistency' and 'audit integrity --checkpoint' check against it. The key's
verifier key is recorded in the database, so that the integrity check knows
it. With --json: {"origin","size","root","checkpoint"}.`,
		Example: `  lohibot log checkpoint --key /etc/lohibot/log.pem > checkpoint.txt`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.check(cmd); err != nil {
				return err
			}
			return runOnStore(cmd, a, opts, runF, runLogCheckpoint)
		},
	}
	opts.flags(cmd)
	return cmd
}

func runLogCheckpoint(ctx context.Context, opts *logCheckpointOptions, out io.Writer) error {
	k, err := opts.read()
	if err != nil {
		return err
	}
	msg, c, err := translog.New(opts.Store, opts.Origin).Checkpoint(ctx, k)
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(out, struct {
			Origin     string `json:"origin"`
			Size       int64  `json:"size"`
			Root       string `json:"root"`
			Checkpoint string `json:"checkpoint"`
		}{c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Hash[:]), string(msg)})
	}
	_, err = out.Write(msg)
	return err
}

// openCheckpoint reads the signed checkpoint in path and checks it against
// the log: signed by a key of the log, and reproduced by the log's first
// leaves. A file that is no checkpoint is bad input (exit 2); a checkpoint
// the log does not reproduce, or signed by another key, is refused (exit 1).
func openCheckpoint(ctx context.Context, l *translog.Log, path string) (translog.Checkpoint, error) {
	msg, err := translog.ReadCheckpointFile(path)
	if err != nil {
		return translog.Checkpoint{}, &exitError{code: exitBadInput, err: err}
	}
	c, err := l.Open(ctx, msg)
	switch {
	case errors.Is(err, translog.ErrSignature), errors.Is(err, translog.ErrMismatch):
		return translog.Checkpoint{}, &exitError{code: exitRefused, err: fmt.Errorf("%s: %w", path, err)}
	case errors.Is(err, translog.ErrCheckpoint), errors.Is(err, translog.ErrKey):
		return translog.Checkpoint{}, &exitError{code: exitBadInput, err: fmt.Errorf("%s: %w", path, err)}
	case err != nil:
		return translog.Checkpoint{}, err
	}
	return c, nil
}

// checkpointOrigin returns the origin line of the checkpoint in path, or
// "" when it cannot be read (openCheckpoint then says why).
func checkpointOrigin(path string) string {
	msg, err := translog.ReadCheckpointFile(path)
	if err != nil {
		return ""
	}
	origin, _, _ := strings.Cut(string(msg), "\n")
	return origin
}

type logProveOptions struct {
	printOptions
	storeOptions
	Site       string
	Checkpoint string // --checkpoint: the signed checkpoint to prove against
}

func newLogProveCmd(a *app, runF func(*logProveOptions) error) *cobra.Command {
	opts := &logProveOptions{}
	cmd := &cobra.Command{
		Use:   "prove SITE --checkpoint FILE [--json]",
		Short: "Print the inclusion proof of every record of a site",
		Long: `Print, against the signed checkpoint in FILE, the inclusion proof of every
record of SITE in the log: its requests, the robots.txt snapshots of the
origins it was crawled at, the policy events naming it and the mail naming
it. The checkpoint must be signed by the log's key and reproduced by the log
(exit 1 when not).

With --json, one line per record: {"table","id","index","record","proof"},
where table is requests, policy_events, robots_snapshots or mail_messages,
index the leaf index, record the base64 leaf data (it names the site in
clear) and proof the base64 hashes of the tlog.RecordProof against the
checkpoint's tree size. tlog.CheckRecord(proof, size, root, index,
tlog.RecordHash(record)) checks one.`,
		Example: `  lohibot log prove example.com --checkpoint checkpoint.txt --json`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			site, err := policy.SiteOf(args[0])
			if err != nil {
				return usageErrorf("log prove: %v", err)
			}
			opts.Site = site
			if strings.TrimSpace(opts.Checkpoint) == "" {
				return usageErrorf("--checkpoint FILE is required\nSee '%s --help'.", cmd.CommandPath())
			}
			return runOnStore(cmd, a, opts, runF, runLogProve)
		},
	}
	cmd.Flags().StringVar(&opts.Checkpoint, "checkpoint", "", "the signed checkpoint to prove against ('log checkpoint')")
	return cmd
}

func runLogProve(ctx context.Context, opts *logProveOptions, out io.Writer) error {
	l := translog.New(opts.Store, checkpointOrigin(opts.Checkpoint))
	c, err := openCheckpoint(ctx, l, opts.Checkpoint)
	if err != nil {
		return err
	}
	proofs, err := l.ProveSite(ctx, opts.Site, c.Size)
	if err != nil {
		return err
	}
	for _, p := range proofs {
		if err := p.Check(c); err != nil {
			return &exitError{code: exitRefused, err: err}
		}
		if opts.JSON {
			if err := printJSON(out, p); err != nil {
				return err
			}
			continue
		}
		printProof(out, p)
	}
	if !opts.JSON {
		fmt.Fprintf(out, "%d %s of %s in the log of %d leaves (root %s), each proved.\n", len(proofs),
			plural(len(proofs), "record", "records"), opts.Site, c.Size, c.Hash)
	}
	return nil
}

// printProof writes one proof for people: the record's table, id and leaf,
// its fields, and the proof's hashes.
func printProof(w io.Writer, p *translog.Proof) {
	fmt.Fprintf(w, "%s %d: leaf %d\n", p.Table, p.ID, p.Index)
	if r, err := leaf.Parse(p.Record); err == nil {
		for _, f := range r.Fields {
			if f.Kind == leaf.Null {
				continue
			}
			fmt.Fprintf(w, "    %-18s %s\n", f.Name, f.String())
		}
	}
	fmt.Fprintf(w, "    record hash        %s\n", tlog.RecordHash(p.Record))
	for i, h := range p.Proof {
		fmt.Fprintf(w, "    proof[%d]%s %s\n", i, strings.Repeat(" ", max(0, 10-len(fmt.Sprint(i)))), h)
	}
}

type logConsistencyOptions struct {
	printOptions
	storeOptions
	Old, New string // --old, --new: the checkpoints
}

func newLogConsistencyCmd(a *app, runF func(*logConsistencyOptions) error) *cobra.Command {
	opts := &logConsistencyOptions{}
	cmd := &cobra.Command{
		Use:   "consistency --old FILE --new FILE [--json]",
		Short: "Prove that the tree of an older checkpoint is a prefix of a newer one's",
		Long: `Print the proof that the log's tree of the --old checkpoint is a prefix of the
tree of the --new one (a tlog.TreeProof): nothing the old one committed to
was changed, deleted or reordered since. Both checkpoints must be signed by
the log's key and reproduced by the log (exit 1 when not).

With --json: {"old_size","new_size","proof"}, proof the base64 hashes;
tlog.CheckTree(proof, new_size, new_root, old_size, old_root) checks it.`,
		Example: `  lohibot log consistency --old monday.txt --new tuesday.txt --json`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(opts.Old) == "" || strings.TrimSpace(opts.New) == "" {
				return usageErrorf("--old FILE and --new FILE are required\nSee '%s --help'.", cmd.CommandPath())
			}
			return runOnStore(cmd, a, opts, runF, runLogConsistency)
		},
	}
	cmd.Flags().StringVar(&opts.Old, "old", "", "the older signed checkpoint")
	cmd.Flags().StringVar(&opts.New, "new", "", "the newer signed checkpoint")
	return cmd
}

func runLogConsistency(ctx context.Context, opts *logConsistencyOptions, out io.Writer) error {
	l := translog.New(opts.Store, checkpointOrigin(opts.New))
	oldC, err := openCheckpoint(ctx, l, opts.Old)
	if err != nil {
		return err
	}
	newC, err := openCheckpoint(ctx, l, opts.New)
	if err != nil {
		return err
	}
	if oldC.Size > newC.Size {
		return usageErrorf("log consistency: --old has %d leaves, more than --new's %d: swap them", oldC.Size, newC.Size)
	}
	p := tlog.TreeProof{} // the empty tree is a prefix of every tree
	if oldC.Size > 0 {
		if p, err = l.Consistency(ctx, oldC.Size, newC.Size); err != nil {
			return err
		}
		if err := tlog.CheckTree(p, newC.Size, newC.Hash, oldC.Size, oldC.Hash); err != nil {
			return &exitError{code: exitRefused, err: fmt.Errorf("log consistency: %w", err)}
		}
	}
	if opts.JSON {
		return printJSON(out, struct {
			OldSize int64          `json:"old_size"`
			NewSize int64          `json:"new_size"`
			Proof   tlog.TreeProof `json:"proof"`
		}{oldC.Size, newC.Size, p})
	}
	fmt.Fprintf(out, "The log of %d leaves (root %s) is a prefix of the log of %d leaves (root %s).\n", oldC.Size, oldC.Hash, newC.Size, newC.Hash)
	for i, h := range p {
		fmt.Fprintf(out, "    proof[%d] %s\n", i, h)
	}
	return nil
}
