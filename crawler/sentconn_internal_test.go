package crawler

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
)

// TestSentMarks checks how fetch tells a request that never left the
// machine: a connection given to it that wrote nothing since (a kept-alive
// one included) says not sent; one that wrote a byte, or is writing, says
// sent; a connection of unknown kind says sent; TLS is looked through.
func TestSentMarks(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go io.Copy(io.Discard, b)
	sc := &sentConn{Conn: a}
	if _, err := sc.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil { // the host's last request
		t.Fatal(err)
	}

	var none sentMarks
	if none.wrote() {
		t.Errorf("no connection given: wrote() = true, want false")
	}
	var m sentMarks
	m.add(sc)
	if m.wrote() {
		t.Errorf("kept connection given, nothing written since: wrote() = true, want false")
	}
	sc.writing.Add(1)
	if !m.wrote() {
		t.Errorf("a write under way: wrote() = false, want true")
	}
	sc.writing.Add(-1)
	if _, err := sc.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if !m.wrote() {
		t.Errorf("a byte written since: wrote() = false, want true")
	}

	var viaTLS sentMarks
	viaTLS.add(tls.Client(sc, &tls.Config{}))
	if viaTLS.wrote() {
		t.Errorf("TLS over a connection that wrote nothing since: wrote() = true, want false")
	}
	var unknown sentMarks
	unknown.add(a)
	if !unknown.wrote() {
		t.Errorf("a connection that counts nothing: wrote() = false, want true")
	}
}
