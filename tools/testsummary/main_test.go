package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	const p = `{"Action":"run","Package":"x","Test":"TestA"}
{"Action":"pass","Package":"x","Test":"TestA"}
{"Action":"output","Package":"x","Test":"TestPG","Output":"    db_test.go:1: LOHIBOT_TEST_POSTGRES not set\n"}
{"Action":"output","Package":"x","Test":"TestPG","Output":"--- SKIP: TestPG (0.00s)\n"}
{"Action":"skip","Package":"x","Test":"TestPG"}
{"Action":"pass","Package":"x","Elapsed":0.5}
`
	tests := []struct {
		name       string
		in         string
		failSkips  string
		wantStatus int
		wantLine   string
	}{
		{"clean", p, "", 0, "1 passed, 0 failed, 1 skipped"},
		{"forbidden skip", p, "not set", 1, "1 passed, 0 failed, 1 skipped"},
		{"failed test", p + `{"Action":"output","Package":"y","Test":"TestB","Output":"boom\n"}
{"Action":"fail","Package":"y","Test":"TestB"}
{"Action":"fail","Package":"y","Elapsed":1}
`, "", 1, "1 passed, 1 failed, 1 skipped"},
		{"build error", "# x\nx.go:1: syntax error\n", "", 1, "0 passed, 0 failed, 0 skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var re *regexp.Regexp
			if tt.failSkips != "" {
				re = regexp.MustCompile(tt.failSkips)
			}
			var out bytes.Buffer
			if got := run(strings.NewReader(tt.in), &out, re); got != tt.wantStatus {
				t.Errorf("run() = %d, want %d\n%s", got, tt.wantStatus, out.String())
			}
			if !strings.Contains(out.String(), "\n"+tt.wantLine+"\n") {
				t.Errorf("output lacks %q:\n%s", tt.wantLine, out.String())
			}
		})
	}
}
