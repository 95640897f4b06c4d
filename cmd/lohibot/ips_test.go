package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestIPsFromConfig checks that `ips --config` publishes the fleet of the
// configuration file, the same list `serve` puts at /bot/ips.json.
func TestIPsFromConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lohibot.toml")
	conf := `[crawler]
fleet = [
  { ip = "79.139.58.98", host = "crawler1.bot.lohisoft.com" },
  { ip = "79.139.58.130", host = "crawler3.bot.lohisoft.com" },
]
`
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	prefixes := func(r cliResult) []string {
		t.Helper()
		var list struct {
			Prefixes []struct {
				IPv4Prefix string `json:"ipv4Prefix"`
			} `json:"prefixes"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("ips output %q: %v", r.stdout, err)
		}
		var out []string
		for _, p := range list.Prefixes {
			out = append(out, p.IPv4Prefix)
		}
		return out
	}
	for _, r := range []cliResult{
		runCLI(t, nil, "ips", "--json", "--config", path),
		runCLI(t, []string{"LOHIBOT_CONFIG=" + path}, "ips", "--json"),
	} {
		if r.code != 0 {
			t.Fatalf("ips --config: exit %d: %s", r.code, r.stderr)
		}
		got := prefixes(r)
		if len(got) != 2 || got[0] != "79.139.58.98/32" || got[1] != "79.139.58.130/32" {
			t.Errorf("ips --config prefixes = %v, want the configured fleet", got)
		}
	}
	if r := runCLI(t, nil, "ips", "--config", filepath.Join(t.TempDir(), "missing.toml")); r.code != 2 {
		t.Errorf("ips --config MISSING: exit %d, want 2", r.code)
	}
}
