package serve_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/app/botpage"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/webbotauth"
)

// TestOperationsGuide checks docs/operations.md against the code: its
// production configuration ("every key") names every key of serve.Config,
// and its path table and nginx snippet every public path serve answers
// (the bot page links to the status page and the key directory), with
// the client's Host passed on.
func TestOperationsGuide(t *testing.T) {
	b, err := os.ReadFile("../../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "The full production configuration")
	if i < 0 {
		t.Fatal("operations.md has no full production configuration")
	}
	_, rest, _ := strings.Cut(doc[i:], "```toml")
	block, _, _ := strings.Cut(rest, "```")
	written := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if k, _, ok := strings.Cut(line, "="); ok {
			written[strings.TrimSpace(k)] = true
		}
	}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft.NumField() > 0 && ft.Field(0).Tag.Get("toml") != "" {
				walk(prefix+name+".", ft)
				continue
			}
			if !written[name] {
				t.Errorf("operations.md's full configuration lacks %s%s", prefix, name)
			}
		}
	}
	walk("", reflect.TypeFor[serve.Config]())

	_, rest, _ = strings.Cut(doc, "```nginx")
	nginx, _, _ := strings.Cut(rest, "```")
	table := doc[strings.Index(doc, "| path | what |"):]
	table, _, _ = strings.Cut(table, "\n\n")
	for _, p := range []string{botpage.PagePath, botpage.IPsPath, botpage.StatusPath, botpage.StatusJSONPath, webbotauth.DirectoryPath,
		"/bot/log/checkpoint", "/bot/log/tile/"} {
		if !strings.Contains(table, "`"+p) {
			t.Errorf("operations.md's path table lacks %s", p)
		}
		if !strings.Contains(nginx, " "+p+" ") {
			t.Errorf("operations.md's nginx snippet lacks %s", p)
		}
	}
	if !strings.Contains(nginx, "proxy_set_header Host $host;") {
		t.Errorf("operations.md's nginx snippet does not pass the client's Host on")
	}
}
