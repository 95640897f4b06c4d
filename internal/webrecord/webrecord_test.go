package webrecord_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/clock/clocktest"
	"github.com/lohisoft/lohibot/internal/webrecord"
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
	clocktest.Eventually(t, 5*time.Second, "two requests in flight", func() bool { return rec.MaxInFlight()["site.test"] >= 2 })
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
