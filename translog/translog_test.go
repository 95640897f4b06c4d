package translog_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/translog"
	"github.com/lohisoft/lohibot/webbotauth"
)

// TestKeyFromKeysGenerate: a key file as 'keys generate' writes it is the
// log key; its verifier key is note's for that public key and origin, and
// a checkpoint it signs opens with it (and with note alone).
func TestKeyFromKeysGenerate(t *testing.T) {
	priv, err := webbotauth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "log.pem")
	if err := webbotauth.WritePrivateKey(path, priv); err != nil {
		t.Fatal(err)
	}
	k, err := translog.ReadKey(path, "example.org/log")
	if err != nil {
		t.Fatal(err)
	}
	want, err := note.NewEd25519VerifierKey("example.org/log", priv.Public().(ed25519.PublicKey))
	if err != nil || k.VerifierKey() != want {
		t.Fatalf("VerifierKey = %q, want %q (%v)", k.VerifierKey(), want, err)
	}
	c := translog.Checkpoint{Origin: "example.org/log", Size: 3, Hash: tlog.RecordHash([]byte("x"))}
	msg, err := k.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(msg), "example.org/log\n3\n") {
		t.Errorf("signed checkpoint %q", msg)
	}
	got, err := translog.OpenCheckpoint(msg, want)
	if err != nil || got != c {
		t.Errorf("OpenCheckpoint = %+v, %v; want %+v", got, err, c)
	}
	v, _ := note.NewVerifier(want)
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Errorf("note.Open: %v", err)
	}
	if _, err := k.Sign(translog.Checkpoint{Origin: "other"}); !errors.Is(err, translog.ErrKey) {
		t.Errorf("Sign of another origin = %v, want ErrKey", err)
	}
	if _, err := translog.ReadKey(filepath.Join(t.TempDir(), "none.pem"), "o"); !errors.Is(err, translog.ErrKey) {
		t.Errorf("ReadKey of no file = %v, want ErrKey", err)
	}
}

// TestOpenCheckpointRefuses: a wrong key, an edited body, bytes that are
// no note, a body that is no checkpoint.
func TestOpenCheckpointRefuses(t *testing.T) {
	_, p1, _ := ed25519.GenerateKey(nil)
	_, p2, _ := ed25519.GenerateKey(nil)
	k1, _ := translog.NewKey(p1, translog.DefaultOrigin)
	k2, _ := translog.NewKey(p2, translog.DefaultOrigin)
	msg, err := k1.Sign(translog.Checkpoint{Origin: translog.DefaultOrigin, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := translog.OpenCheckpoint(msg, k2.VerifierKey()); !errors.Is(err, translog.ErrSignature) {
		t.Errorf("another key: %v, want ErrSignature", err)
	}
	edited := strings.Replace(string(msg), "\n1\n", "\n2\n", 1)
	if _, err := translog.OpenCheckpoint([]byte(edited), k1.VerifierKey()); !errors.Is(err, translog.ErrSignature) {
		t.Errorf("edited size: %v, want ErrSignature", err)
	}
	if _, err := translog.OpenCheckpoint([]byte("hello"), k1.VerifierKey()); !errors.Is(err, translog.ErrCheckpoint) {
		t.Errorf("no note: %v, want ErrCheckpoint", err)
	}
	for _, body := range []string{"o\n", "o\n-1\nAAAA\n", "o\n01\n" + strings.Repeat("A", 44) + "\n", "o\n1\nAAAA\n", "\n1\n" + strings.Repeat("A", 43) + "=\n"} {
		if _, err := translog.ParseCheckpoint(body); !errors.Is(err, translog.ErrCheckpoint) {
			t.Errorf("ParseCheckpoint(%q) = %v, want ErrCheckpoint", body, err)
		}
	}
}

// TestProofs: a site's proofs and a consistency proof from the log check
// against its checkpoints; a checkpoint the log does not reproduce is
// refused.
func TestProofs(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := dbtest.OpenDSN(t, dsn)
		p := policy.New(s, nil)
		for _, site := range []string{"a.example", "b.example", "a.example"} {
			if _, err := p.Exclude(ctx, []string{site}, policy.Change{Actor: "staff", Reason: "asked", Source: "cli"}); err != nil {
				t.Fatal(err)
			}
		}
		_, priv, _ := ed25519.GenerateKey(nil)
		k, _ := translog.NewKey(priv, translog.DefaultOrigin)
		l := translog.New(s, "")
		msg1, c1, err := l.Checkpoint(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exclude(ctx, []string{"c.example"}, policy.Change{Actor: "staff", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
		msg2, c2, err := l.Checkpoint(ctx, k)
		if err != nil || c2.Size <= c1.Size {
			t.Fatalf("second checkpoint %+v, %v", c2, err)
		}
		for _, msg := range [][]byte{msg1, msg2} {
			if _, err := l.Open(ctx, msg); err != nil {
				t.Errorf("Open: %v", err)
			}
		}
		ps, err := l.ProveSite(ctx, "a.example", c1.Size)
		if err != nil || len(ps) == 0 {
			t.Fatalf("ProveSite = %v, %v", ps, err)
		}
		for _, pr := range ps {
			if err := pr.Check(c1); err != nil {
				t.Error(err)
			}
			if pr.Table != "policy_events" {
				t.Errorf("proof of %s %d, want policy events only", pr.Table, pr.ID)
			}
			idx, err := l.LeafIndex(ctx, pr.Table, pr.ID)
			if err != nil || idx != pr.Index {
				t.Errorf("LeafIndex = %d, %v; want %d", idx, err, pr.Index)
			}
			one, err := l.ProveRow(ctx, pr.Table, pr.ID, c2.Size)
			if err != nil || one.Check(c2) != nil {
				t.Errorf("ProveRow = %v, %v", one, err)
			}
		}
		tp, err := l.Consistency(ctx, c1.Size, c2.Size)
		if err != nil || tlog.CheckTree(tp, c2.Size, c2.Hash, c1.Size, c1.Hash) != nil {
			t.Errorf("Consistency = %v, %v", tp, err)
		}
		if err := dbtest.Gorm(s).Exec("UPDATE policy_events SET reason = 'never' WHERE id = 1").Error; err != nil {
			t.Fatal(err)
		}
		if err := dbtest.Gorm(s).Exec("UPDATE log_hashes SET hash = ?", make([]byte, 32)).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := l.Open(ctx, msg1); !errors.Is(err, translog.ErrMismatch) {
			t.Errorf("Open after the tree changed = %v, want ErrMismatch", err)
		}
	})
}
