package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
	"github.com/lohisoft/lohibot/webbotauth"
)

// writeLogKey writes a new Ed25519 key to a file and returns its path.
func writeLogKey(t *testing.T) string {
	t.Helper()
	key, err := webbotauth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "log.pem")
	if err := webbotauth.WritePrivateKey(path, key); err != nil {
		t.Fatal(err)
	}
	return path
}

// handlerTiles reads tiles from a serve handler, as a monitor does over
// HTTP, and records the Cache-Control of each.
type handlerTiles struct {
	t     *testing.T
	h     http.Handler
	cache map[string]string
}

func (r *handlerTiles) Height() int { return 8 }

func (r *handlerTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		resp, body := fetch(r.t, r.h, "/bot/log/"+t.Path())
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: status %d", t.Path(), resp.StatusCode)
		}
		r.cache[t.Path()] = resp.Header.Get("Cache-Control")
		out[i] = []byte(body)
	}
	return out, nil
}

func (r *handlerTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// openPublished fetches /bot/log/checkpoint and verifies it with vkey
// using only sumdb/note, returning its size and root hash.
func openPublished(t *testing.T, h http.Handler, vkey string) (int64, tlog.Hash) {
	t.Helper()
	resp, body := fetch(t, h, "/bot/log/checkpoint")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/bot/log/checkpoint: status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open([]byte(body), note.VerifierList(v))
	if err != nil {
		t.Fatalf("the published checkpoint does not verify: %v\n%s", err, body)
	}
	lines := strings.Split(n.Text, "\n")
	if lines[0] != "lohisoft.com/bot/log" {
		t.Fatalf("origin %q", lines[0])
	}
	var size int64
	fmt.Sscan(lines[1], &size)
	h2, err := tlog.ParseHash(lines[2])
	if err != nil {
		t.Fatal(err)
	}
	return size, h2
}

func TestLogPublished(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		writeStatusStory(t, dsn)
		// Enough leaves for a full tile at level 0.
		var many []string
		for i := range 300 {
			many = append(many, fmt.Sprintf("site%03d.example", i))
		}
		store := dbtest.OpenDSN(t, dsn)
		if _, err := policy.New(store, nil).Exclude(ctx, many, policy.Change{Actor: "anna", Source: "cli"}); err != nil {
			t.Fatal(err)
		}

		cfg := testConfig(dsn)
		cfg.Log.KeyFile = writeLogKey(t)
		srv, _ := newServer(t, cfg)
		h := srv.Handler()

		// The verifier key is the one the bot page names.
		resp, page := fetch(t, h, "/bot?lang=en", "Accept", "text/html")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/bot: %d", resp.StatusCode)
		}
		page = html.UnescapeString(page)
		i := strings.Index(page, "lohisoft.com/bot/log+")
		if i < 0 || !strings.Contains(page, "https://lohisoft.com/bot/log/checkpoint") {
			t.Fatalf("/bot names neither the log nor its verifier key")
		}
		vkey := page[i:]
		vkey = vkey[:strings.IndexAny(vkey, "<\n ")]
		_, status := fetch(t, h, "/bot/status.json?site=example.com")
		if !strings.Contains(status, `"log":{"url":"https://lohisoft.com/bot/log","verifier_key":"`+vkey+`"}`) {
			t.Errorf("/bot/status.json lacks the log: %s", status)
		}
		if _, st := fetch(t, h, "/bot/status?site=example.com&lang=en"); !strings.Contains(html.UnescapeString(st), vkey) {
			t.Errorf("/bot/status does not name the verifier key")
		}

		size, root := openPublished(t, h, vkey)
		if size < 300 {
			t.Fatalf("checkpoint of %d leaves, want every final row (300+)", size)
		}
		tiles := &handlerTiles{t: t, h: h, cache: map[string]string{}}
		thr := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, tiles)
		if got, err := tlog.TreeHash(size, thr); err != nil || got != root {
			t.Fatalf("tree hash from the published tiles = %v, %v; want %v", got, err, root)
		}
		if _, err := tiles.ReadTiles([]tlog.Tile{{H: 8, L: 0, N: 0, W: 256}, {H: 8, L: 0, N: 1, W: int(size - 256)}}); err != nil {
			t.Fatal(err)
		}
		full := tlog.Tile{H: 8, L: 0, N: 0, W: 256}.Path()
		if c := tiles.cache[full]; !strings.Contains(c, "immutable") {
			t.Errorf("full tile %s: Cache-Control %q, want immutable", full, c)
		}
		partial := tlog.Tile{H: 8, L: 0, N: 1, W: int(size - 256)}.Path()
		if c := tiles.cache[partial]; strings.Contains(c, "immutable") || !strings.Contains(c, "max-age=") {
			t.Errorf("partial tile %s: Cache-Control %q, want short-lived", partial, c)
		}

		// A new exclusion and a new checkpoint: the old tree is a prefix.
		if _, err := policy.New(srv.Store(), nil).Exclude(ctx, []string{"later.example"}, policy.Change{Actor: "anna", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
		if err := srv.PublishCheckpoint(ctx); err != nil {
			t.Fatal(err)
		}
		size2, root2 := openPublished(t, h, vkey)
		_, st := fetch(t, h, "/bot/status.json?site=later.example")
		var leaf struct {
			Index *int64 `json:"exclusion_leaf_index"`
		}
		if err := json.Unmarshal([]byte(st), &leaf); err != nil || leaf.Index == nil || *leaf.Index != size2-1 {
			t.Errorf("/bot/status.json?site=later.example: %s; want exclusion_leaf_index %d (the last leaf)", st, size2-1)
		}
		if _, st := fetch(t, h, "/bot/status.json?site=example.com"); strings.Contains(st, "exclusion_leaf_index") {
			t.Errorf("a site never excluded has an exclusion leaf: %s", st)
		}
		if size2 <= size {
			t.Fatalf("after an exclusion the checkpoint has %d leaves, before %d", size2, size)
		}
		thr2 := tlog.TileHashReader(tlog.Tree{N: size2, Hash: root2}, tiles)
		proof, err := tlog.ProveTree(size2, size, thr2)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckTree(proof, size2, root2, size, root); err != nil {
			t.Errorf("consistency from the published tiles: %v", err)
		}

		for _, path := range []string{
			"/bot/log/tile/entries/000",
			"/bot/log/tile/8/data/000",
			"/bot/log/" + tlog.Tile{H: 8, L: 0, N: 5, W: 256}.Path(), // past the tree
			"/bot/log/" + tlog.Tile{H: 8, L: 0, N: 1, W: int(size2-256) + 1}.Path(),
			"/bot/log/" + tlog.Tile{H: 4, L: 0, N: 0, W: 16}.Path(),
		} {
			if resp, _ := fetch(t, h, path); resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s: status %d, want 404", path, resp.StatusCode)
			}
		}
	})
}

func TestLogNotPublishedWithoutKey(t *testing.T) {
	srv, _ := newServer(t, testConfig(dbtest.DSN(t, "sqlite")))
	for _, path := range []string{"/bot/log/checkpoint", "/bot/log/tile/8/0/000"} {
		if resp, _ := fetch(t, srv.Handler(), path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s without log.key_file: status %d, want 404", path, resp.StatusCode)
		}
	}
	if _, page := fetch(t, srv.Handler(), "/bot?lang=en", "Accept", "text/html"); strings.Contains(page, "/bot/log") {
		t.Errorf("/bot names a log that is not published")
	}
}

func TestLogConfigKeys(t *testing.T) {
	c, err := serve.Parse([]byte("[log]\nkey_file = \"/k.pem\"\norigin = \"example.com/log\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.KeyFile != "/k.pem" || c.Log.Origin != "example.com/log" {
		t.Errorf("[log] = %+v", c.Log)
	}
	if err := c.Set("log.origin", "a b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "log.origin") {
		t.Errorf("origin with a space: Validate = %v", err)
	}
	if serve.EnvName("log.key_file") != "LOHIBOT_LOG_KEY_FILE" {
		t.Errorf("env name %s", serve.EnvName("log.key_file"))
	}
}
