package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/robotstxt"
)

// robotsVectorsFile is Google's robots.txt test suite plus the RFC 9309
// examples (see robotstxt).
const robotsVectorsFile = "../../testdata/robots/vectors.json"

type robotsVector struct {
	Name    string `json:"name"`
	RFC     bool   `json:"rfc"`
	Robots  string `json:"robots"`
	Agent   string `json:"agent"`
	URL     string `json:"url"`
	Allowed bool   `json:"allowed"`
}

// TestRobotsTestVectors runs every vector through lohibot robots test
// --json: each RFC 9309 vector must be decided as the suite says, and every
// vector must print exactly the decision of the package, with exit 0 when
// allowed and 1 when not.
func TestRobotsTestVectors(t *testing.T) {
	data, err := os.ReadFile(robotsVectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Vectors []robotsVector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &suite); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "robots.txt")
	rfc := 0
	for _, v := range suite.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			if err := os.WriteFile(file, []byte(v.Robots), 0o644); err != nil {
				t.Fatal(err)
			}
			res := runCLI(t, nil, "robots", "test", "--robots", file, "--agent", v.Agent, "--json", v.URL)
			if !robotstxt.ValidProductToken(v.Agent) {
				if res.code != exitBadInput {
					t.Errorf("robots test --agent %q: exit %d, want %d", v.Agent, res.code, exitBadInput)
				}
				return
			}
			if !testableURL(v.URL) {
				// Such as "" in Google's suite: not a URL a user can ask
				// about, so bad input rather than a decision.
				if res.code != exitBadInput {
					t.Errorf("robots test %q: exit %d, want %d", v.URL, res.code, exitBadInput)
				}
				return
			}
			want := robotstxt.Parse([]byte(v.Robots)).Decide(v.Agent, v.URL)
			var got robotsTestJSON
			if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || strings.Count(res.stdout, "\n") != 1 {
				t.Fatalf("robots test --json %q printed %q (%v), want one JSON line; stderr %q", v.URL, res.stdout, err, res.stderr)
			}
			wantJSON := robotsTestJSON{URL: v.URL, Allowed: want.Allowed, Rule: want.Rule, Line: want.Line, Group: want.Group}
			if got != wantJSON {
				t.Errorf("robots test --json %q = %+v, want %+v", v.URL, got, wantJSON)
			}
			if v.RFC && got.Allowed != v.Allowed {
				t.Errorf("robots test --agent %s %q: allowed %v, want %v (RFC 9309)", v.Agent, v.URL, got.Allowed, v.Allowed)
			}
			wantCode := exitOK
			if !got.Allowed {
				wantCode = exitRefused
			}
			if res.code != wantCode {
				t.Errorf("robots test %q: exit %d, want %d", v.URL, res.code, wantCode)
			}
			if v.RFC && !t.Failed() {
				rfc++
			}
		})
	}
	t.Logf("%d rfc vectors decided right through lohibot robots test --json", rfc)
	if rfc != 178 {
		t.Errorf("%d rfc vectors passed through the command, want 178", rfc)
	}
}

func TestRobotsTest(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	body := "User-agent: *\nDisallow: /private/\nAllow: /private/ok$\n\nUser-agent: LohiSoftBot\nDisallow: /cart\nDisallow: /\x1b[2J\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.txt")
	if err := os.WriteFile(other, []byte("User-agent: OtherBot\nDisallow: /\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	joined := filepath.Join(dir, "joined.txt")
	if err := os.WriteFile(joined, []byte("User-Agent: *\nCrawl-delay: 120\n\nUser-agent: 008\nDisallow: /\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte("User-agent: *\nDisallow: /a\n#"+strings.Repeat("x", robotstxt.MaxSize)+"\nDisallow: /b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string // lines, fields separated by blanks
		wantStderr string
	}{
		{"default agent is LohiSoftBot", []string{"--robots", file, "https://example.com/cart", "https://example.com/private/x"}, exitRefused,
			[]string{"disallowed https://example.com/cart Disallow: /cart (line 6; group: LohiSoftBot, line 5)",
				"allowed https://example.com/private/x no rule matched (group: LohiSoftBot, line 5)"}, ""},
		{"all allowed", []string{"--robots", file, "/", "/robots.txt"}, exitOK,
			[]string{"allowed / no rule matched (group: LohiSoftBot, line 5)", "allowed /robots.txt robots.txt always allowed"}, ""},
		{"other agent gets star", []string{"--robots=" + file, "--agent", "Other", "/private/x", "/private/ok"}, exitRefused,
			[]string{"disallowed /private/x Disallow: /private/ (line 2; group: *, line 1)", "allowed /private/ok Allow: /private/ok$ (line 3; group: *, line 1)"}, ""},
		{"agent case-insensitive", []string{"--robots", file, "--agent", "lohisoftbot", "/cart"}, exitRefused,
			[]string{"disallowed /cart Disallow: /cart (line 6; group: LohiSoftBot, line 5)"}, ""},
		{"control characters escaped", []string{"--robots", file, "/\x1b[2J"}, exitRefused,
			[]string{`disallowed /\x1b[2J Disallow: /\x1b[2J (line 7; group: LohiSoftBot, line 5)`}, ""},
		{"only the first 500 KiB", []string{"--robots", big, "/a", "/b"}, exitRefused,
			[]string{"disallowed /a Disallow: /a (line 2; group: *, line 1)", "allowed /b no rule matched (group: *, line 1)"}, "only the first 512000"},
		{"no group applies", []string{"--robots", other, "/a"}, exitOK,
			[]string{"allowed /a no rule matched (no group applies)"}, ""},
		{"user-agent lines joined across a crawl-delay", []string{"--robots", joined, "/a"}, exitRefused,
			[]string{"disallowed /a Disallow: / (line 5; group: *, line 1)"}, ""},
		{"no --robots", []string{"/"}, exitBadInput, nil, "--robots FILE is required"},
		{"missing file", []string{"--robots", filepath.Join(dir, "nope.txt"), "/"}, exitBadInput, nil, "no such file"},
		{"directory", []string{"--robots", dir, "/"}, exitBadInput, nil, "is a directory"},
		{"no URL", []string{"--robots", file}, exitBadInput, nil, "missing URL"},
		{"bad agent", []string{"--robots", file, "--agent", "LohiSoftBot/1.0", "/"}, exitBadInput, nil, "not a product token"},
		{"empty agent", []string{"--robots", file, "--agent", "", "/"}, exitBadInput, nil, "not a product token"},
		{"unknown flag", []string{"--robot", file, "/"}, exitBadInput, nil, "unknown flag"},
		{"port out of range", []string{"--robots", file, "http://example.com:99999/"}, exitBadInput, nil, `bad port "99999"`},
		{"port zero", []string{"--robots", file, "https://example.com:0/cart"}, exitBadInput, nil, `bad port "0"`},
		{"port not a number", []string{"--robots", file, "https://example.com:abc/"}, exitBadInput, nil, `bad port "abc"`},
		{"host with a bad port", []string{"--robots", file, "example.com:99999"}, exitBadInput, nil, `bad port "99999"`},
		{"highest port", []string{"--robots", file, "https://example.com:65535/cart"}, exitRefused,
			[]string{"disallowed https://example.com:65535/cart Disallow: /cart (line 6; group: LohiSoftBot, line 5)"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, nil, append([]string{"robots", "test"}, tt.args...)...)
			if res.code != tt.wantCode {
				t.Errorf("robots test %q: exit %d, want %d; stderr %q", tt.args, res.code, tt.wantCode, res.stderr)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n") {
				if l != "" {
					got = append(got, strings.Join(strings.Fields(l), " "))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.wantOut, "\n") {
				t.Errorf("robots test %q printed\n%s\nwant\n%s", tt.args, strings.Join(got, "\n"), strings.Join(tt.wantOut, "\n"))
			}
			if !strings.Contains(res.stderr, tt.wantStderr) {
				t.Errorf("robots test %q: stderr %q, want it to contain %q", tt.args, res.stderr, tt.wantStderr)
			}
		})
	}
}

func TestRobotsTestStdinJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	in := strings.NewReader("User-agent: LohiSoftBot\nDisallow: /x\n")
	code := run(context.Background(), []string{"robots", "test", "--robots", "-", "--json", "/x?y", "/z"}, in, &out, &errOut, func(string) string { return "" })
	if code != exitRefused {
		t.Errorf("robots test --robots - : exit %d, want %d; stderr %q", code, exitRefused, errOut.String())
	}
	want := `{"url":"/x?y","allowed":false,"rule":"Disallow: /x","line":2,"group":"LohiSoftBot"}` + "\n" +
		`{"url":"/z","allowed":true,"rule":"no rule matched","line":0,"group":"LohiSoftBot"}` + "\n"
	if out.String() != want {
		t.Errorf("robots test --json printed\n%s\nwant\n%s", out.String(), want)
	}
}
