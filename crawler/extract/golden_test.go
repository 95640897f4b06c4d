package extract_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/crawler/extract"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/extract")

const goldenDir = "../../testdata/extract"

// golden is the expected extraction of testdata/extract/NAME.html, kept in
// NAME.json beside it. URL and ContentType are the page's inputs (the URL it
// was fetched from, its Content-Type header); -update keeps them and
// rewrites the rest.
type golden struct {
	URL         string         `json:"url"`
	ContentType string         `json:"content_type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	H1          []string       `json:"h1"`
	H2          []string       `json:"h2"`
	H3          []string       `json:"h3"`
	Links       []extract.Link `json:"links"`
	NoIndex     bool           `json:"noindex"`
	NoFollow    bool           `json:"nofollow"`
}

func TestGolden(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(goldenDir, "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in %s (%v)", goldenDir, err)
	}
	for _, page := range pages {
		name := strings.TrimSuffix(filepath.Base(page), ".html")
		t.Run(name, func(t *testing.T) {
			goldenPath := strings.TrimSuffix(page, ".html") + ".json"
			want := golden{URL: "https://www.example.com/" + name + "/"}
			raw, err := os.ReadFile(goldenPath)
			switch {
			case err == nil:
				if err := json.Unmarshal(raw, &want); err != nil {
					t.Fatalf("%s: %v", goldenPath, err)
				}
			case errors.Is(err, fs.ErrNotExist) && *update:
			default:
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			base, err := url.Parse(want.URL)
			if err != nil {
				t.Fatal(err)
			}
			body, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			p, err := extract.Parse(bytes.NewReader(body), want.ContentType, base, nil)
			if err != nil {
				t.Fatal(err)
			}
			if pb, err := extract.ParseBytes(body, want.ContentType, base, nil); err != nil || !reflect.DeepEqual(pb, p) {
				t.Errorf("ParseBytes() = %+v, %v; Parse() = %+v", pb, err, p)
			}
			p = unparsed(t, p)
			got := golden{URL: want.URL, ContentType: want.ContentType, Title: p.Title, Description: p.Description,
				H1: p.H1, H2: p.H2, H3: p.H3, Links: p.Links, NoIndex: p.NoIndex, NoFollow: p.NoFollow}
			if *update {
				out, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(goldenPath, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse(%s) differs from %s (-want +got):\n%s", page, goldenPath, diff)
			}
		})
	}
}
