package mailbot_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lohisoft/lohibot/mailbot"
)

// BenchmarkParseCorpus parses and classifies every corpus message; the
// msgs/s metric is the figure the speed goal (2,000 per second on one
// core) is about: run it with -cpu 1.
func BenchmarkParseCorpus(b *testing.B) {
	files, err := filepath.Glob("../testdata/mail/*.eml")
	if err != nil || len(files) == 0 {
		b.Fatalf("no corpus: %v", err)
	}
	var raws [][]byte
	size := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
		size += len(raw)
	}
	b.SetBytes(int64(size / len(raws)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		mailbot.Parse(raws[n%len(raws)])
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}
