package leaf_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/translog/leaf"
)

func sample() *leaf.Record {
	return &leaf.Record{Table: "policy_events", ID: 7, Salt: bytes.Repeat([]byte{0xaa}, leaf.SaltSize), Site: "example.com",
		Fields: []leaf.Field{
			{Name: "version", Kind: leaf.Int, Int: -3},
			{Name: "happened_at", Kind: leaf.Time, Time: time.Date(2026, 8, 1, 12, 0, 0, 123456789, time.UTC)},
			{Name: "reason", Kind: leaf.Text, Bytes: []byte("asked\x00 and more")},
			{Name: "body", Kind: leaf.Bytes, Bytes: []byte{0, 1, 2}},
			{Name: "reviewed_at", Kind: leaf.Null},
		}}
}

// TestRoundTrip: Parse gives back what Marshal encoded, NUL bytes and
// nanoseconds included.
func TestRoundTrip(t *testing.T) {
	r := sample()
	got, err := leaf.Parse(r.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("Parse(Marshal(r)) differs (-want +got):\n%s", diff)
	}
}

// TestEveryByteCounts: records that differ in any way, a NUL and what
// follows it included, encode differently; moving bytes from one field to
// the next does too (every item is length-prefixed).
func TestEveryByteCounts(t *testing.T) {
	base := sample().Marshal()
	edits := map[string]func(r *leaf.Record){
		"text after a NUL": func(r *leaf.Record) { r.Fields[2].Bytes = []byte("asked\x00 and less") },
		"text cut at NUL":  func(r *leaf.Record) { r.Fields[2].Bytes = []byte("asked") },
		"site":             func(r *leaf.Record) { r.Site = "example.com\x00" },
		"salt":             func(r *leaf.Record) { r.Salt[0] = 0 },
		"id":               func(r *leaf.Record) { r.ID = -1 },
		"time":             func(r *leaf.Record) { r.Fields[1].Time = r.Fields[1].Time.Add(time.Nanosecond) },
		"kind":             func(r *leaf.Record) { r.Fields[3].Kind = leaf.Text },
		"null to empty":    func(r *leaf.Record) { r.Fields[4] = leaf.Field{Name: "reviewed_at", Kind: leaf.Text} },
		"bytes moved": func(r *leaf.Record) {
			r.Fields[2].Bytes = []byte("asked\x00 and mor")
			r.Fields[3].Bytes = []byte{'e', 0, 1, 2}
		},
	}
	for name, edit := range edits {
		r := sample()
		edit(r)
		if bytes.Equal(r.Marshal(), base) {
			t.Errorf("%s: same leaf data", name)
		}
	}
}

// TestParseRefuses: truncated data, trailing bytes, an unknown version or
// kind are not leaf data.
func TestParseRefuses(t *testing.T) {
	good := sample().Marshal()
	for name, data := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte{}, good...), 0),
		"version 2": append([]byte{2}, good[1:]...),
		"huge count": func() []byte {
			b := leaf.AppendHeaderForTest(nil)
			return append(b, 0xff, 0xff, 0xff, 0xff)
		}(),
	} {
		if _, err := leaf.Parse(data); !errors.Is(err, leaf.ErrFormat) {
			t.Errorf("%s: Parse = %v, want ErrFormat", name, err)
		}
	}
}
