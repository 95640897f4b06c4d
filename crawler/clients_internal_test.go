package crawler

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// TestHTTPClientReplaced: once the crawler's HTTP client has opened its
// share of connections it is replaced by a fresh one, and the idle
// connections it kept are closed, so that the per-host entries an
// http.Transport never gives back go with it (serve's memory
// must not grow with every host it ever crawled).
func TestHTTPClientReplaced(t *testing.T) {
	var closed atomic.Int32
	var servers []*httptest.Server
	for range 3 {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "ok")
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed {
				closed.Add(1)
			}
		}
		srv.Start()
		t.Cleanup(srv.Close)
		servers = append(servers, srv)
	}
	h := newClient(&Options{Timeout: 5 * time.Second, AllowPrivate: true, MaxConns: 16}, newLookuper(nil, time.Now))
	h.every, h.next = 2, 2
	get := func(c *http.Client, url string) {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	first := h.get()
	get(first, servers[0].URL) // a connection, kept idle
	if c := h.get(); c != first {
		t.Fatal("the client was replaced after one connection, want after two")
	}
	get(first, servers[1].URL) // the second
	second := h.get()
	if second == first {
		t.Fatal("the client was not replaced after two connections")
	}
	// The replaced client's two idle connections are closed, long before
	// they would time out.
	deadline := time.Now().Add(idleConnTimeout / 2)
	for closed.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := closed.Load(); n != 2 {
		t.Errorf("%d connections closed when the client was replaced, want its 2 idle ones", n)
	}
	get(second, servers[2].URL)
	if c := h.get(); c != second {
		t.Error("the new client was replaced after one connection of its own, want after two")
	}
	if n := closed.Load(); n != 2 {
		t.Errorf("%d connections closed, want the new client's kept open", n)
	}
}

// TestReadUpTo: a body is read whole whatever length it announces, and no
// more than limit+1 bytes of a longer one; a read error is returned with
// what was read.
func TestReadUpTo(t *testing.T) {
	body := strings.Repeat("x", 1000)
	for _, tc := range []struct {
		name      string
		announced int64
		limit     int64
		want      int
	}{
		{"known", 1000, 4096, 1000},
		{"unknown", -1, 4096, 1000},
		{"announced short", 10, 4096, 1000},
		{"announced long", 3000, 4096, 1000},
		{"over the limit", 1000, 100, 101},
		{"unknown over the limit", -1, 100, 101},
		{"empty", 0, 100, 0},
	} {
		r := io.Reader(strings.NewReader(body))
		if tc.name == "empty" {
			r = strings.NewReader("")
		}
		b, err := readUpTo(r, tc.announced, tc.limit)
		if err != nil || len(b) != tc.want || strings.Trim(string(b), "x") != "" {
			t.Errorf("%s: %d bytes, %v; want %d bytes of the body", tc.name, len(b), err, tc.want)
		}
	}
	boom := errors.New("boom")
	b, err := readUpTo(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), -1, 100)
	if !errors.Is(err, boom) || string(b) != "abc" {
		t.Errorf("failing reader: %q, %v; want \"abc\", boom", b, err)
	}
}
