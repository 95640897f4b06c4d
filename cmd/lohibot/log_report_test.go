package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/outsider"
)

// TestLogReportCarriesProofs: 'report --format json' carries the latest
// signed checkpoint and every record's proof against it, which an outsider
// checks with sumdb/{note,tlog} alone.
func TestLogReportCarriesProofs(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		env := []string{"LOHIBOT_DB=" + dsn}
		for _, args := range [][]string{
			{"exclude", "add", "a-shop.example", "--by", "staff", "--reason", "asked by phone"},
			{"exclude", "add", "other.example", "--by", "staff"},
		} {
			if r := runCLI(t, env, args...); r.code != 0 {
				t.Fatalf("%q: exit %d\n%s", args, r.code, r.stderr)
			}
		}
		report := func() (out struct {
			Log *struct {
				Size       int64             `json:"size"`
				Checkpoint string            `json:"checkpoint"`
				Proofs     []json.RawMessage `json:"proofs"`
			} `json:"log"`
		}) {
			t.Helper()
			r := runCLI(t, env, "report", "a-shop.example", "--format", "json")
			if r.code != 0 {
				t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatal(err)
			}
			return out
		}
		f := newLogFiles(t)
		before := report()
		if before.Log != nil && before.Log.Checkpoint != "" {
			t.Fatalf("a checkpoint before any was made: %+v", before.Log)
		}
		_, first := f.checkpoint(t, env, "cp1.txt")
		if r := runCLI(t, env, "exclude", "add", "later.example", "--by", "staff"); r.code != 0 {
			t.Fatal(r.stderr)
		}
		_, msg := f.checkpoint(t, env, "cp2.txt")
		got := report()
		if got.Log == nil || got.Log.Checkpoint != string(msg) || got.Log.Checkpoint == string(first) {
			t.Fatalf("report's checkpoint = %+v, want the latest made:\n%s", got.Log, msg)
		}
		c, err := outsider.OpenCheckpoint([]byte(got.Log.Checkpoint), f.vkey(t))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, p := range got.Log.Proofs {
			lines = append(lines, string(p))
		}
		recs, err := outsider.CheckRecords(c, []byte(strings.Join(lines, "\n")))
		if err != nil || len(recs) != 1 || recs[0].Table != "policy_events" || !outsider.Names(recs[0].Record, "a-shop.example") {
			t.Errorf("report's proofs: %d records, %v; want the exclusion event of a-shop.example, proved", len(recs), err)
		}
	})
}
