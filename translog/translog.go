// Package translog is LohiSoftBot's public transparency log: every evidence
// row (policy events, completed requests, robots.txt snapshots, mail out of
// review) is a leaf of an append-only Merkle tree (RFC 6962, as
// golang.org/x/mod/sumdb/tlog computes it), and the tree's state is
// published as C2SP tlog-checkpoints signed as C2SP signed notes
// (golang.org/x/mod/sumdb/note, Ed25519). Anyone holding a checkpoint and a
// record's proof checks it with those two packages alone.
//
// The leaves and the stored hashes live in the database (package db); the
// leaf data is package translog/leaf.
package translog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/boundedread"
	"github.com/lohisoft/lohibot/webbotauth"
)

// DefaultOrigin is the log's origin line (and its key's name) unless
// configured otherwise.
const DefaultOrigin = "lohisoft.com/bot/log"

// Errors returned (wrapped) by this package.
var (
	// ErrCheckpoint: text that is not a checkpoint (C2SP tlog-checkpoint).
	ErrCheckpoint = errors.New("translog: not a checkpoint")
	// ErrSignature: a checkpoint whose signature does not verify with the
	// log's keys.
	ErrSignature = errors.New("translog: checkpoint signature")
	// ErrMismatch: the log does not reproduce a checkpoint (its records
	// differ from what the checkpoint committed to), or a proof fails.
	ErrMismatch = errors.New("translog: the log does not match")
	// ErrKey: a key file that holds no usable Ed25519 key.
	ErrKey = errors.New("translog: key")
)

// Checkpoint is the body of a C2SP tlog-checkpoint: the log's origin, its
// size and the root hash of the tree of its first Size leaves.
type Checkpoint struct {
	Origin string
	Size   int64
	Hash   tlog.Hash
}

// String returns the checkpoint's body: three lines, each ending in "\n".
func (c Checkpoint) String() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Hash[:]))
}

// ParseCheckpoint parses a checkpoint's body (a note's text). Extension
// lines after the root hash are allowed and ignored.
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 4 || !strings.HasSuffix(text, "\n") {
		return Checkpoint{}, fmt.Errorf("%w: want an origin line, a size line and a root hash line", ErrCheckpoint)
	}
	var c Checkpoint
	c.Origin = strings.TrimSuffix(lines[0], "\n")
	if c.Origin == "" {
		return Checkpoint{}, fmt.Errorf("%w: empty origin line", ErrCheckpoint)
	}
	size := strings.TrimSuffix(lines[1], "\n")
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != size {
		return Checkpoint{}, fmt.Errorf("%w: bad tree size %q", ErrCheckpoint, size)
	}
	c.Size = n
	h, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(lines[2], "\n"))
	if err != nil || len(h) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("%w: bad root hash %q", ErrCheckpoint, strings.TrimSuffix(lines[2], "\n"))
	}
	copy(c.Hash[:], h)
	return c, nil
}

// Key is the log's signing key: an Ed25519 key named by the log's origin.
type Key struct {
	signer note.Signer
	vkey   string
}

// NewKey returns the log key of origin made from priv.
func NewKey(priv ed25519.PrivateKey, origin string) (*Key, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: not an Ed25519 private key", ErrKey)
	}
	// note makes its keys from a seed it reads: handing it priv's seed
	// gives priv's key in note's encoding.
	skey, vkey, err := note.GenerateKey(bytes.NewReader(priv.Seed()), origin)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return &Key{signer: signer, vkey: vkey}, nil
}

// ReadKey reads the log key of origin from path: a PKCS#8 PEM Ed25519 key,
// as 'lohibot keys generate' writes.
func ReadKey(path, origin string) (*Key, error) {
	b, err := boundedread.ReadFile(path, boundedread.SecretLimit)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	priv, err := webbotauth.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKey, path, err)
	}
	return NewKey(priv, origin)
}

// VerifierKey returns the key's note verifier key, "origin+hhhhhhhh+base64",
// to publish.
func (k *Key) VerifierKey() string { return k.vkey }

// Signer returns the key's note signer.
func (k *Key) Signer() note.Signer { return k.signer }

// Sign returns the signed note of c.
func (k *Key) Sign(c Checkpoint) ([]byte, error) {
	if c.Origin != k.signer.Name() {
		return nil, fmt.Errorf("%w: the key is named %q, the checkpoint's origin is %q", ErrKey, k.signer.Name(), c.Origin)
	}
	return note.Sign(&note.Note{Text: c.String()}, k.signer)
}

// OpenCheckpoint verifies the signed checkpoint msg with the verifier keys
// vkeys (at least one of them must have signed it) and returns its body.
func OpenCheckpoint(msg []byte, vkeys ...string) (Checkpoint, error) {
	var vs []note.Verifier
	for _, k := range vkeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("%w: verifier key %q: %v", ErrKey, k, err)
		}
		vs = append(vs, v)
	}
	n, err := note.Open(msg, note.VerifierList(vs...))
	if err != nil {
		var (
			unverified *note.UnverifiedNoteError
			invalid    *note.InvalidSignatureError
		)
		switch {
		case errors.As(err, &unverified):
			return Checkpoint{}, fmt.Errorf("%w: not signed by a key of this log (%v)", ErrSignature, err)
		case errors.As(err, &invalid):
			return Checkpoint{}, fmt.Errorf("%w: %v", ErrSignature, err)
		}
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(n.Sigs) == 0 || n.Sigs[0].Name != c.Origin {
		return Checkpoint{}, fmt.Errorf("%w: signed by %q, not by the log's origin %q", ErrSignature, n.Sigs[0].Name, c.Origin)
	}
	return c, nil
}

// ReadCheckpointFile reads a signed checkpoint from path (at most a few
// kilobytes).
func ReadCheckpointFile(path string) ([]byte, error) {
	b, err := boundedread.ReadFile(path, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	return b, nil
}

// Log is the transparency log of one database.
type Log struct {
	store  *db.Store
	origin string
}

// New returns the log of store with origin ("" means DefaultOrigin).
func New(store *db.Store, origin string) *Log {
	if origin == "" {
		origin = DefaultOrigin
	}
	return &Log{store: store, origin: origin}
}

// Origin returns the log's origin line.
func (l *Log) Origin() string { return l.origin }

// Hashes returns a tlog.HashReader over the log's stored hashes: for
// proofs, tree hashes and the tiles of C2SP tlog-tiles (tlog.ReadTileData).
func (l *Log) Hashes(ctx context.Context) tlog.HashReader { return l.store.LogHashes(ctx) }

// Size returns the number of leaves. It does I/O.
func (l *Log) Size(ctx context.Context) (int64, error) { return l.store.LogSize(ctx) }

// Append appends every row that became final and returns the log's size.
// It does I/O.
func (l *Log) Append(ctx context.Context) (int64, error) { return l.store.AppendLog(ctx) }

// Head returns the checkpoint of the log as it is (without appending). It
// does I/O.
func (l *Log) Head(ctx context.Context) (Checkpoint, error) {
	n, err := l.store.LogSize(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	return l.At(ctx, n)
}

// At returns the checkpoint of the log's first n leaves. It does I/O.
func (l *Log) At(ctx context.Context, n int64) (Checkpoint, error) {
	h, err := tlog.TreeHash(n, l.store.LogHashes(ctx))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("translog: tree hash at %d: %w", n, err)
	}
	return Checkpoint{Origin: l.origin, Size: n, Hash: h}, nil
}

// Checkpoint appends what is final, and returns the signed checkpoint of
// the log and its body. It records the key's verifier key in the database,
// so that the integrity check knows the log's keys. It does I/O.
func (l *Log) Checkpoint(ctx context.Context, key *Key) ([]byte, Checkpoint, error) {
	if err := l.store.RecordLogKey(ctx, key.VerifierKey()); err != nil {
		return nil, Checkpoint{}, err
	}
	if _, err := l.store.AppendLog(ctx); err != nil {
		return nil, Checkpoint{}, err
	}
	c, err := l.Head(ctx)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	msg, err := key.Sign(c)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	if err := l.store.SaveCheckpoint(ctx, c.Size, msg); err != nil {
		return nil, Checkpoint{}, err
	}
	return msg, c, nil
}

// Latest returns the latest signed checkpoint Checkpoint made (of the
// largest tree), verified with Open, or an error satisfying db.IsNotFound
// when none was made. It does I/O.
func (l *Log) Latest(ctx context.Context) ([]byte, Checkpoint, error) {
	msg, err := l.store.LatestCheckpoint(ctx)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	c, err := l.Open(ctx, msg)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	return msg, c, nil
}

// VerifierKeys returns the verifier keys the log's checkpoints were signed
// with, as recorded by Checkpoint. It does I/O.
func (l *Log) VerifierKeys(ctx context.Context) ([]string, error) { return l.store.LogKeys(ctx) }

// Open verifies a signed checkpoint of this log: its signature by one of
// the log's keys (VerifierKeys and extra), its origin, and that the log's
// first Size leaves have its root hash. It does I/O.
func (l *Log) Open(ctx context.Context, msg []byte, extra ...string) (Checkpoint, error) {
	keys, err := l.store.LogKeys(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	c, err := OpenCheckpoint(msg, append(keys, extra...)...)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != l.origin {
		return Checkpoint{}, fmt.Errorf("%w: the checkpoint is of log %q, this is %q", ErrCheckpoint, c.Origin, l.origin)
	}
	n, err := l.store.LogSize(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Size > n {
		return Checkpoint{}, fmt.Errorf("%w: the checkpoint has %d leaves, the log %d", ErrMismatch, c.Size, n)
	}
	mine, err := l.At(ctx, c.Size)
	if err != nil {
		return Checkpoint{}, err
	}
	if mine.Hash != c.Hash {
		return Checkpoint{}, fmt.Errorf("%w: the log's first %d leaves have root %s, the checkpoint %s", ErrMismatch, c.Size, mine.Hash, c.Hash)
	}
	return c, nil
}

// Proof is an inclusion proof of one record.
type Proof struct {
	Table  string           `json:"table"`
	ID     int64            `json:"id"`
	Index  int64            `json:"index"`
	Record []byte           `json:"record"` // the leaf data (translog/leaf), base64 in JSON
	Proof  tlog.RecordProof `json:"proof"`  // base64 hashes in JSON
}

// Check checks p against checkpoint c: the record's hash is leaf p.Index of
// the tree c commits to.
func (p *Proof) Check(c Checkpoint) error {
	if err := tlog.CheckRecord(p.Proof, c.Size, c.Hash, p.Index, tlog.RecordHash(p.Record)); err != nil {
		return fmt.Errorf("%w: %s %d (leaf %d): %v", ErrMismatch, p.Table, p.ID, p.Index, err)
	}
	return nil
}

// LeafIndex returns the leaf index of the row id of table, or an error
// satisfying db.IsNotFound while it has none. It does I/O.
func (l *Log) LeafIndex(ctx context.Context, table string, id int64) (int64, error) {
	return l.store.LeafIndex(ctx, table, id)
}

// ProveRow returns the inclusion proof of the row id of table in the tree
// of size n. It does I/O.
func (l *Log) ProveRow(ctx context.Context, table string, id, n int64) (*Proof, error) {
	idx, err := l.store.LeafIndex(ctx, table, id)
	if err != nil {
		return nil, err
	}
	if idx >= n {
		return nil, fmt.Errorf("translog: %s %d is leaf %d, past the tree of %d: %w", table, id, idx, n, db.ErrNotFound)
	}
	lf, err := l.store.LogLeafAt(ctx, idx)
	if err != nil {
		return nil, err
	}
	if lf.Data == nil {
		return nil, fmt.Errorf("translog: %s %d is gone: %w", table, id, db.ErrNotFound)
	}
	return l.prove(ctx, db.LogLeaf{Index: idx, Table: table, RowID: id, Data: lf.Data}, n)
}

func (l *Log) prove(ctx context.Context, lf db.LogLeaf, n int64) (*Proof, error) {
	p, err := tlog.ProveRecord(n, lf.Index, l.store.LogHashes(ctx))
	if err != nil {
		return nil, fmt.Errorf("translog: prove leaf %d: %w", lf.Index, err)
	}
	return &Proof{Table: lf.Table, ID: lf.RowID, Index: lf.Index, Record: lf.Data, Proof: p}, nil
}

// ProveSite returns the inclusion proofs in the tree of size n of every
// record of site in it: its requests, the robots.txt snapshots of its
// origins, the policy events naming it and the mail naming it, in leaf
// order. It does I/O.
func (l *Log) ProveSite(ctx context.Context, site string, n int64) ([]*Proof, error) {
	leaves, err := l.store.SiteLeaves(ctx, site, n)
	if err != nil {
		return nil, err
	}
	out := make([]*Proof, 0, len(leaves))
	for _, lf := range leaves {
		p, err := l.prove(ctx, lf, n)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Consistency returns the proof that the tree of size oldN is a prefix of
// the tree of size newN. It does I/O.
func (l *Log) Consistency(ctx context.Context, oldN, newN int64) (tlog.TreeProof, error) {
	p, err := tlog.ProveTree(newN, oldN, l.store.LogHashes(ctx))
	if err != nil {
		return nil, fmt.Errorf("translog: prove %d is a prefix of %d: %w", oldN, newN, err)
	}
	return p, nil
}
