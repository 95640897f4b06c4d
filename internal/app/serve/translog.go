package serve

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/internal/app/botpage"
	"github.com/lohisoft/lohibot/translog"
)

// Paths of the published transparency log (C2SP tlog-tiles, without entry
// bundles: records stay private and are handed out with their proofs).
const (
	LogPath           = botpage.PagePath + "/log"
	LogCheckpointPath = LogPath + "/checkpoint"
	LogTilePrefix     = LogPath + "/tile/"
)

// CheckpointInterval is how often serve signs and publishes a checkpoint
// (besides after every exclusion by email).
const CheckpointInterval = time.Minute

// tileHeight is the height of the published tiles, as C2SP tlog-tiles
// fixes it.
const tileHeight = 8

// LogKey reads the log key of log.key_file named by log.origin; nil when
// log.key_file is empty. It does I/O.
func (c *Config) LogKey() (*translog.Key, error) {
	if c.Log.KeyFile == "" {
		return nil, nil
	}
	k, err := translog.ReadKey(c.Log.KeyFile, c.logOrigin())
	if err != nil {
		return nil, fmt.Errorf("%w: log.key_file: %w", ErrConfig, err)
	}
	return k, nil
}

func (c *Config) logOrigin() string {
	if c.Log.Origin == "" {
		return translog.DefaultOrigin
	}
	return c.Log.Origin
}

// LogURL is the public base address of the log: the page's URL + "/log".
func (c *Config) LogURL() string { return strings.TrimSuffix(c.Page.URL, "/") + "/log" }

// publisher signs and serves the log's checkpoints with one key.
type publisher struct {
	log *translog.Log
	key *translog.Key

	mu   sync.Mutex // serialises Checkpoint calls and guards msg and size
	msg  []byte     // the signed checkpoint published, nil before the first
	size int64
	at   time.Time
}

// publish appends what is final and signs and publishes a new checkpoint.
// It does I/O.
func (p *publisher) publish(ctx context.Context, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	msg, c, err := p.log.Checkpoint(ctx, p.key)
	if err != nil {
		return err
	}
	p.msg, p.size, p.at = msg, c.Size, now
	return nil
}

func (p *publisher) current() ([]byte, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.msg, p.size
}

// NextCheckpoint returns when the next checkpoint is due at the latest:
// CheckpointInterval after the last one published.
func (s *Server) NextCheckpoint() time.Time {
	p := s.pub.Load()
	if p == nil {
		return time.Time{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at.Add(CheckpointInterval)
}

// PublishCheckpoint signs and publishes a checkpoint now; nothing when no
// log key is configured. It does I/O.
func (s *Server) PublishCheckpoint(ctx context.Context) error {
	p := s.pub.Load()
	if p == nil {
		return nil
	}
	return p.publish(ctx, s.now())
}

// runCheckpoints publishes a checkpoint every CheckpointInterval and
// whenever an exclusion asks for one, until ctx ends. Failures are logged
// and retried at the next turn.
func (s *Server) runCheckpoints(ctx context.Context) {
	t := time.NewTicker(CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.excluded:
		}
		if err := s.PublishCheckpoint(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("checkpoint not published; retried within a minute", "err", err)
		}
	}
}

// serveCheckpoint serves the signed checkpoint published last; 404 when no
// log is published.
func (s *Server) serveCheckpoint(w http.ResponseWriter, r *http.Request) {
	p := s.pub.Load()
	if p == nil {
		http.NotFound(w, r)
		return
	}
	msg, _ := p.current()
	if msg == nil {
		http.Error(w, "no checkpoint yet", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	w.Write(msg)
}

// serveTile serves a hash tile (tlog.Tile.Path below LogPath) of the tree
// published last. Full tiles never change and are cached for a year;
// partial ones for a minute. Data tiles and entry bundles are 404.
func (s *Server) serveTile(w http.ResponseWriter, r *http.Request) {
	p := s.pub.Load()
	if p == nil {
		http.NotFound(w, r)
		return
	}
	t, err := tlog.ParseTilePath("tile/" + r.PathValue("path"))
	if err != nil || t.H != tileHeight || t.L < 0 {
		http.NotFound(w, r)
		return
	}
	_, size := p.current()
	// The tile's last hash, at storage level L*H, covers leaves up to
	// (N*2^H + W) << (L*H): it must be within the published tree.
	if t.L > 7 || t.N >= 1<<48 || t.N<<tileHeight+int64(t.W) > size>>(uint(t.L)*tileHeight) {
		http.NotFound(w, r)
		return
	}
	data, err := tlog.ReadTileData(t, p.log.Hashes(r.Context()))
	if err != nil {
		s.log.Warn("tile not served", "tile", t.Path(), "err", err)
		http.Error(w, "tile unavailable", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if t.W == 1<<tileHeight {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "public, max-age=60")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}
