package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/translog"
)

type logWatchOptions struct {
	printOptions
	URL   string // the log's base URL: URL/checkpoint, URL/tile/...
	State string // --state: the monitor's state file
	VKey  string // --vkey: the log's note verifier key
}

func newLogWatchCmd(a *app, runF func(*logWatchOptions) error) *cobra.Command {
	opts := &logWatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch URL [--state FILE] [--vkey KEY]",
		Short: "Check a published checkpoint: its signature, and that it extends the last one accepted",
		Long: `Do what a C2SP tlog-witness does for the log published at URL (its base,
like https://lohisoft.com/bot/log): fetch URL/checkpoint, verify its
signature with the log's verifier key, and check, with a consistency proof
computed from the published hash tiles (URL/tile/...), that its tree extends
the tree of the last checkpoint accepted. The new checkpoint is then stored
in the state file and becomes the last one accepted.

The first run must be given the verifier key (--vkey, as 'log vkey' prints
it and the bot page publishes it); it is kept in the state file, and later
runs take it from there (a --vkey that differs from it is refused: a new key
is a new log, to watch with a new state file). Without --state nothing is
remembered: only the signature is checked.

Exit 1 with a message when the signature does not verify, when the log
rolled back (a smaller tree than the one accepted), or when it forked (the
new tree does not extend the accepted one, or its tiles do not match its
root); exit 2 on bad usage or a state file that cannot be read. With --json:
{"url","origin","size","root","previous_size"}.`,
		Example: `  lohibot log watch https://lohisoft.com/bot/log --state log.state --vkey 'lohisoft.com/bot/log+...'
  lohibot log watch https://lohisoft.com/bot/log --state log.state`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url.Parse(args[0])
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return usageErrorf("log watch: %q is not an http(s) URL", args[0])
			}
			opts.URL = strings.TrimSuffix(args[0], "/")
			if opts.VKey != "" {
				if _, err := note.NewVerifier(opts.VKey); err != nil {
					return usageErrorf("log watch: --vkey %q: %v", opts.VKey, err)
				}
			}
			if opts.VKey == "" && opts.State == "" {
				return usageErrorf("log watch: give the log's verifier key (--vkey) on the first run\nSee '%s --help'.", cmd.CommandPath())
			}
			return runCommand(cmd, a, opts, runF, runLogWatch)
		},
	}
	cmd.Flags().StringVar(&opts.State, "state", "", "the state file: the verifier key and the last checkpoint accepted")
	cmd.Flags().StringVar(&opts.VKey, "vkey", "", "the log's note verifier key (origin+hhhhhhhh+base64); required on the first run")
	return cmd
}

// watchState is the state file of 'log watch'.
type watchState struct {
	URL        string `json:"url"`
	VKey       string `json:"vkey"`
	Checkpoint string `json:"checkpoint"` // the signed checkpoint accepted last
}

// watchLimit bounds what 'log watch' reads from the log: a checkpoint or
// a tile (8 KiB) is far smaller.
const watchLimit = 64 << 10

func runLogWatch(ctx context.Context, opts *logWatchOptions, out io.Writer) error {
	var st watchState
	if opts.State != "" {
		b, err := boundedread.ReadFile(opts.State, watchLimit)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return &exitError{code: exitBadInput, err: fmt.Errorf("log watch: state: %w", err)}
		default:
			if err := json.Unmarshal(b, &st); err != nil || st.VKey == "" {
				return &exitError{code: exitBadInput, err: fmt.Errorf("log watch: %s is not a state file of 'log watch'", opts.State)}
			}
		}
	}
	switch {
	case st.VKey == "" && opts.VKey == "":
		return usageErrorf("log watch: %s holds no verifier key yet: give it with --vkey on the first run", opts.State)
	case st.VKey != "" && opts.VKey != "" && st.VKey != opts.VKey:
		return usageErrorf("log watch: --vkey differs from the key in %s (%s): a new key is a new log; watch it with a new state file", opts.State, st.VKey)
	case st.VKey == "":
		st.VKey = opts.VKey
	}
	client := &http.Client{Timeout: 30 * time.Second}
	msg, err := httpGet(ctx, client, opts.URL+"/checkpoint")
	if err != nil {
		return err
	}
	c, err := translog.OpenCheckpoint(msg, st.VKey)
	if err != nil {
		return &exitError{code: exitRefused, err: fmt.Errorf("log watch: %s/checkpoint: %w", opts.URL, err)}
	}
	prev := int64(-1)
	if st.Checkpoint != "" {
		old, err := translog.OpenCheckpoint([]byte(st.Checkpoint), st.VKey)
		if err != nil {
			return &exitError{code: exitBadInput, err: fmt.Errorf("log watch: the checkpoint in %s: %w", opts.State, err)}
		}
		if err := checkExtends(ctx, client, opts.URL, old, c); err != nil {
			return &exitError{code: exitRefused, err: fmt.Errorf("log watch: %s: %w", opts.URL, err)}
		}
		prev = old.Size
	}
	if opts.State != "" {
		st.URL, st.Checkpoint = opts.URL, string(msg)
		if err := writeState(opts.State, &st); err != nil {
			return err
		}
	}
	root := base64.StdEncoding.EncodeToString(c.Hash[:])
	if opts.JSON {
		var p *int64
		if prev >= 0 {
			p = &prev
		}
		return printJSON(out, struct {
			URL          string `json:"url"`
			Origin       string `json:"origin"`
			Size         int64  `json:"size"`
			Root         string `json:"root"`
			PreviousSize *int64 `json:"previous_size"`
		}{opts.URL, c.Origin, c.Size, root, p})
	}
	if prev < 0 {
		_, err = fmt.Fprintf(out, "%s: checkpoint of %d leaves (root %s), signature ok; accepted as the first.\n", c.Origin, c.Size, root)
	} else {
		_, err = fmt.Fprintf(out, "%s: checkpoint of %d leaves (root %s), signature ok, extends the %d leaves accepted before.\n", c.Origin, c.Size, root, prev)
	}
	return err
}

// checkExtends checks that the tree of c extends the tree of old, with
// the published tiles: a smaller tree is a rollback, any other mismatch a
// fork.
func checkExtends(ctx context.Context, client *http.Client, base string, old, c translog.Checkpoint) error {
	switch {
	case c.Origin != old.Origin:
		return fmt.Errorf("the checkpoint is of log %q, the one accepted of %q", c.Origin, old.Origin)
	case c.Size < old.Size:
		return fmt.Errorf("rollback: the log shows %d leaves, it had %d in the checkpoint accepted before", c.Size, old.Size)
	case c.Size == old.Size && c.Hash != old.Hash:
		return fmt.Errorf("fork: two checkpoints of %d leaves with different roots (%s accepted, %s now)", c.Size, old.Hash, c.Hash)
	case c.Size == old.Size || old.Size == 0:
		return nil
	}
	tiles := &httpTiles{ctx: ctx, client: client, base: base}
	thr := tlog.TileHashReader(tlog.Tree{N: c.Size, Hash: c.Hash}, tiles)
	p, err := tlog.ProveTree(c.Size, old.Size, thr)
	if err != nil {
		if tiles.err != nil {
			return tiles.err // the tiles could not be fetched: not a fork
		}
		return fmt.Errorf("fork: the published tiles do not match the checkpoint of %d leaves: %v", c.Size, err)
	}
	if err := tlog.CheckTree(p, c.Size, c.Hash, old.Size, old.Hash); err != nil {
		return fmt.Errorf("fork: the tree of %d leaves does not extend the %d accepted before (root %s): %v", c.Size, old.Size, old.Hash, err)
	}
	return nil
}

// httpTiles reads the hash tiles of a log over HTTP (C2SP tlog-tiles paths
// as tlog.Tile.Path gives them, below base).
type httpTiles struct {
	ctx    context.Context
	client *http.Client
	base   string
	err    error // the first fetch that failed
}

func (r *httpTiles) Height() int { return 8 }

func (r *httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		b, err := httpGet(r.ctx, r.client, r.base+"/"+t.Path())
		if err != nil {
			r.err = err
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (r *httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// httpGet fetches url (at most watchLimit bytes); anything but 200 is an
// error.
func httpGet(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("log watch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("log watch: %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, watchLimit+1))
	if err != nil {
		return nil, fmt.Errorf("log watch: %s: %w", url, err)
	}
	if len(b) > watchLimit {
		return nil, fmt.Errorf("log watch: %s: more than %d bytes", url, watchLimit)
	}
	return b, nil
}

// writeState replaces the state file atomically: a crash leaves the old
// one or the new one, never half.
func writeState(path string, st *watchState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".log-watch-*")
	if err != nil {
		return fmt.Errorf("log watch: state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("log watch: state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("log watch: state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("log watch: state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("log watch: state: %w", err)
	}
	return nil
}
