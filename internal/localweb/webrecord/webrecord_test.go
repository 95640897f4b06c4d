package webrecord_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/localweb/webrecord"
	"github.com/lohisoft/lohibot/internal/testenv/testutil"
)

func TestRecorder(t *testing.T) {
	var rec webrecord.Recorder
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sw, host, n, end := rec.Begin(rw, r, false)
		defer end()
		if r.URL.Path == "/slow" {
			<-release
		}
		if host != "site.test" {
			t.Errorf("Begin host = %q, want site.test", host)
		}
		if r.URL.Path == "/teapot" {
			sw.WriteHeader(http.StatusTeapot)
			return
		}
		sw.Write([]byte{byte('0' + n)})
	}))
	defer srv.Close()

	get := func(path string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Host = "Site.Test:8080"
		req.Header.Set("User-Agent", "LohiSoftBot/1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); get("/slow") }()
	go func() { defer wg.Done(); get("/slow") }()
	// Both slow requests are in flight before they are released.
	testutil.Eventually(t, 5*time.Second, "two requests in flight", func() bool { return rec.MaxInFlight()["site.test"] >= 2 })
	close(release)
	wg.Wait()
	get("/teapot")

	hits := rec.Hits()
	if len(hits) != 3 {
		t.Fatalf("Hits() = %d hits, want 3", len(hits))
	}
	if got := rec.MaxInFlight()["site.test"]; got != 2 {
		t.Errorf("MaxInFlight = %d, want 2", got)
	}
	last := hits[2]
	if last.Seq != 3 || last.Path != "/teapot" || last.Status != http.StatusTeapot || last.UserAgent != "LohiSoftBot/1.0" || last.End.Before(last.Start) {
		t.Errorf("last hit = %+v", last)
	}
	if hits[0].Status != http.StatusOK {
		t.Errorf("first hit status = %d, want 200 (implicit)", hits[0].Status)
	}
	if got := len(rec.HitsFor("site.test")); got != 3 {
		t.Errorf("HitsFor(site.test) = %d hits, want 3", got)
	}
	rec.Reset()
	if len(rec.Hits()) != 0 || rec.MaxInFlight()["site.test"] != 0 {
		t.Error("Reset kept hits or maxima")
	}
}

// TestRecorderTallies: the tallies per host are kept in both modes and
// agree with the hits; TallyOnly keeps no hit.
func TestRecorderTallies(t *testing.T) {
	for _, tallyOnly := range []bool{false, true} {
		rec := &webrecord.Recorder{TallyOnly: tallyOnly}
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			_, _, _, end := rec.Begin(rw, r, false)
			defer end()
		}))
		get := func(host, path string) {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		// Gaps of 30 ms and 300 ms: the least is the first, whatever a
		// loaded machine (CI, -race) adds to each (62 ms once with 60 ms).
		get("a.test", "/robots.txt")
		time.Sleep(30 * time.Millisecond)
		get("a.test", "/")
		time.Sleep(300 * time.Millisecond)
		get("a.test", "/p/1.html?x=1")
		get("b.test", "/")
		srv.Close()

		got := rec.Tallies()
		a, b := got["a.test"], got["b.test"]
		if len(got) != 2 || a.Requests != 3 || a.Pages != 2 || b.Requests != 1 || b.Pages != 1 || b.MinGap != -1 {
			t.Errorf("TallyOnly=%v: Tallies() = %+v", tallyOnly, got)
		}
		if a.MinGap < 30*time.Millisecond || a.MinGap >= 300*time.Millisecond {
			t.Errorf("TallyOnly=%v: MinGap of a.test = %v, want in [30ms, 300ms)", tallyOnly, a.MinGap)
		}
		hits := rec.Hits()
		if tallyOnly && len(hits) != 0 {
			t.Errorf("TallyOnly: %d hits kept, want none", len(hits))
		}
		if !tallyOnly {
			if len(hits) != 4 || hits[0].Header == nil {
				t.Errorf("%d hits (first with header %v), want 4 with headers", len(hits), hits[0].Header)
			} else if g := webrecord.MinGap(hits)["a.test"]; g != a.MinGap {
				t.Errorf("MinGap(hits) = %v, Tallies MinGap = %v", g, a.MinGap)
			}
		}
		rec.Reset()
		if n := len(rec.Tallies()); n != 0 {
			t.Errorf("TallyOnly=%v: %d tallies after Reset", tallyOnly, n)
		}
	}
}

// TestRecorderIdle: Idle waits for a handler still answering, after which
// its hit is in the record, and gives up after its time when one never
// ends.
func TestRecorderIdle(t *testing.T) {
	var rec webrecord.Recorder
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sw, _, _, end := rec.Begin(rw, r, false)
		defer end()
		started <- struct{}{}
		<-release
		sw.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	go http.Get(srv.URL + "/slow")
	<-started
	if rec.Idle(50 * time.Millisecond) {
		t.Fatal("Idle = true with a handler still answering")
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(release)
	}()
	if !rec.Idle(5 * time.Second) {
		t.Fatal("Idle = false once the handler was released")
	}
	if hs := rec.Hits(); len(hs) != 1 || hs[0].Path != "/slow" {
		t.Errorf("hits after Idle = %+v, want the one to /slow", hs)
	}
}
