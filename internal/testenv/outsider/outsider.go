// Package outsider checks lohibot's transparency log as a webmaster would,
// with golang.org/x/mod/sumdb/{note,tlog} and the standard library alone:
// it imports no lohibot package (its test makes sure), so what it accepts
// is what anyone outside accepts. It parses the published forms: a signed
// checkpoint (C2SP signed note of a C2SP tlog-checkpoint), the lines of
// 'lohibot log prove --json' and the object of 'lohibot log consistency
// --json'.
package outsider

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is a verified checkpoint.
type Checkpoint struct {
	Origin string
	Size   int64
	Hash   tlog.Hash
}

// OpenCheckpoint verifies msg's signature with the verifier key vkey and
// parses the checkpoint it signs.
func OpenCheckpoint(msg []byte, vkey string) (Checkpoint, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Checkpoint{}, err
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, err
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[0] != v.Name() {
		return Checkpoint{}, fmt.Errorf("not a checkpoint of %s: %q", v.Name(), n.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		return Checkpoint{}, err
	}
	h, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(h) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("bad root hash %q", lines[2])
	}
	return Checkpoint{Origin: lines[0], Size: size, Hash: tlog.Hash(h)}, nil
}

// Record is one line of 'log prove --json'.
type Record struct {
	Table  string           `json:"table"`
	ID     int64            `json:"id"`
	Index  int64            `json:"index"`
	Record []byte           `json:"record"`
	Proof  tlog.RecordProof `json:"proof"`
}

// CheckRecords checks every line of 'log prove --json' against c, and
// returns the records.
func CheckRecords(c Checkpoint, jsonLines []byte) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(jsonLines))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, err
		}
		if err := tlog.CheckRecord(r.Proof, c.Size, c.Hash, r.Index, tlog.RecordHash(r.Record)); err != nil {
			return nil, fmt.Errorf("%s %d (leaf %d): %w", r.Table, r.ID, r.Index, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// CheckConsistency checks the output of 'log consistency --json': the tree
// of older is a prefix of the tree of newer.
func CheckConsistency(older, newer Checkpoint, jsonObject []byte) error {
	var p struct {
		OldSize int64          `json:"old_size"`
		NewSize int64          `json:"new_size"`
		Proof   tlog.TreeProof `json:"proof"`
	}
	if err := json.Unmarshal(jsonObject, &p); err != nil {
		return err
	}
	if p.OldSize != older.Size || p.NewSize != newer.Size {
		return errors.New("the proof is about other sizes")
	}
	return tlog.CheckTree(p.Proof, newer.Size, newer.Hash, older.Size, older.Hash)
}

// Names reports whether leaf data names the site in clear: the site field
// of the leaf (a uint32 length and the site's bytes, after the version,
// table, id and salt).
func Names(record []byte, site string) bool {
	want := binaryLen(site) + site
	return bytes.Contains(record, []byte(want))
}

func binaryLen(s string) string {
	n := len(s)
	return string([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}
