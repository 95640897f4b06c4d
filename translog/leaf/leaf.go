// Package leaf is the byte encoding of one record of the transparency log:
// the leaf data that the log's Merkle tree commits to (RFC 6962 record
// hashing of these bytes).
//
// A leaf is computed from typed values, never from an engine's rendering of
// them, so one row gives the same bytes on SQLite and PostgreSQL. Every item
// is length-prefixed and taken as it is, every byte value (NUL included)
// counts, and no two different records encode alike. The leaf carries a
// random salt of its own: its hash, published in the log's tiles, reveals
// nothing about the row to anyone not handed the leaf data.
//
// Layout (integers big-endian):
//
//	version   1 byte (Version)
//	table     string
//	id        int64
//	salt      bytes
//	site      string (the site the record names, in clear; "" for none)
//	count     uint32, then count fields, each:
//	  name    string
//	  kind    1 byte (Null, Int, Text, Bytes, Time)
//	  value   Int: int64; Text, Bytes: bytes; Time: int64 Unix seconds then
//	          uint32 nanoseconds, UTC; Null: nothing
//
// where string and bytes are a uint32 length followed by that many bytes.
package leaf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Version is the format version of the leaves this package writes.
const Version = 1

// SaltSize is the length of the salt each leaf is given.
const SaltSize = 16

// Kind is the type of a field's value.
type Kind byte

// The kinds of values a field holds.
const (
	Null  Kind = 'n'
	Int   Kind = 'i'
	Text  Kind = 's'
	Bytes Kind = 'b'
	Time  Kind = 't'
)

// Field is one named column value of a record.
type Field struct {
	Name  string
	Kind  Kind
	Int   int64     // Int
	Bytes []byte    // Text, Bytes
	Time  time.Time // Time
}

// String returns a readable rendering of the field's value.
func (f Field) String() string {
	switch f.Kind {
	case Null:
		return "NULL"
	case Int:
		return fmt.Sprint(f.Int)
	case Text:
		return fmt.Sprintf("%q", f.Bytes)
	case Bytes:
		return fmt.Sprintf("%d bytes", len(f.Bytes))
	case Time:
		return f.Time.UTC().Format(time.RFC3339Nano)
	}
	return "?"
}

// Record is a leaf's content: one row of an evidence table.
type Record struct {
	Table  string
	ID     int64
	Salt   []byte
	Site   string
	Fields []Field
}

// Field returns the field named name, and whether there is one.
func (r *Record) Field(name string) (Field, bool) {
	for _, f := range r.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Append appends the record's leaf data to b.
func (r *Record) Append(b []byte) []byte {
	b = append(b, Version)
	b = appendBytes(b, r.Table)
	b = binary.BigEndian.AppendUint64(b, uint64(r.ID))
	b = appendBytes(b, r.Salt)
	b = appendBytes(b, r.Site)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Fields)))
	for _, f := range r.Fields {
		b = appendBytes(b, f.Name)
		b = append(b, byte(f.Kind))
		switch f.Kind {
		case Int:
			b = binary.BigEndian.AppendUint64(b, uint64(f.Int))
		case Text, Bytes:
			b = appendBytes(b, f.Bytes)
		case Time:
			t := f.Time.UTC()
			b = binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
			b = binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
		}
	}
	return b
}

// Marshal returns the record's leaf data.
func (r *Record) Marshal() []byte { return r.Append(nil) }

func appendBytes[T string | []byte](b []byte, x T) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(x)))
	return append(b, x...)
}

// ErrFormat is returned (wrapped) by Parse for bytes that are not leaf data.
var ErrFormat = errors.New("leaf: not leaf data")

// Parse decodes leaf data. It refuses trailing bytes and versions it does
// not know.
func Parse(data []byte) (*Record, error) {
	d := decoder{b: data}
	if v := d.byte(); v != Version {
		if d.err == nil {
			d.err = fmt.Errorf("version %d", v)
		}
		return nil, fmt.Errorf("%w: %v", ErrFormat, d.err)
	}
	r := &Record{Table: string(d.bytes()), ID: int64(d.u64()), Salt: d.bytes(), Site: string(d.bytes())}
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		d.err = errors.New("field count past the end")
	}
	for i := uint32(0); i < n && d.err == nil; i++ {
		f := Field{Name: string(d.bytes()), Kind: Kind(d.byte())}
		switch f.Kind {
		case Null:
		case Int:
			f.Int = int64(d.u64())
		case Text, Bytes:
			f.Bytes = d.bytes()
		case Time:
			sec, ns := int64(d.u64()), d.u32()
			if ns >= 1e9 {
				d.fail("nanoseconds out of range")
			}
			f.Time = time.Unix(sec, int64(ns)).UTC()
		default:
			d.fail(fmt.Sprintf("unknown kind %q", f.Kind))
		}
		r.Fields = append(r.Fields, f)
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes past the end", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, d.err)
	}
	return r, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = errors.New(msg)
	}
}

func (d *decoder) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("truncated")
		return nil
	}
	x := d.b[:n:n]
	d.b = d.b[n:]
	return x
}

func (d *decoder) byte() byte {
	if x := d.take(1); x != nil {
		return x[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if x := d.take(4); x != nil {
		return binary.BigEndian.Uint32(x)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if x := d.take(8); x != nil {
		return binary.BigEndian.Uint64(x)
	}
	return 0
}

func (d *decoder) bytes() []byte {
	n := d.u32()
	return d.take(uint64(n))
}
