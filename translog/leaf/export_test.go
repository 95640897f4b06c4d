package leaf

import "encoding/binary"

// AppendHeaderForTest appends a leaf's header without its field count.
func AppendHeaderForTest(b []byte) []byte {
	b = append(b, Version)
	b = appendBytes(b, "t")
	b = binary.BigEndian.AppendUint64(b, 1)
	b = appendBytes(b, []byte{})
	return appendBytes(b, "s")
}
