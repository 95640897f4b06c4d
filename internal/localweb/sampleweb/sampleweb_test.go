package sampleweb_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/internal/localweb/sampleweb"
	"github.com/lohisoft/lohibot/internal/resolver"
)

func start(t *testing.T) (*sampleweb.Web, *http.Client) {
	t.Helper()
	w, err := sampleweb.Start(&sampleweb.Options{RetryAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	res, err := resolver.New(w.DNSAddr)
	if err != nil {
		t.Fatal(err)
	}
	return w, &http.Client{Transport: &http.Transport{DialContext: resolver.DialContext(res, &net.Dialer{})}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, url, ua string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	req.Header.Set("User-Agent", ua)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

const ua = "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"

func TestSites(t *testing.T) {
	w, c := start(t)
	robots := w.Site(sampleweb.KindRobots).Name
	retry := w.Site(sampleweb.KindRetry).Name
	login := w.Site(sampleweb.KindLogin).Name
	big := w.Site(sampleweb.KindBig).Name
	tests := []struct {
		name       string
		host, path string
		wantStatus int
		wantBody   string
	}{
		{"robots.txt names the bot", robots, "/robots.txt", 200, "User-agent: LohiSoftBot\nDisallow: /private/"},
		{"crawl delay", w.Site(sampleweb.KindCrawlDelay).Name, "/robots.txt", 200, "Crawl-delay: 3"},
		{"no robots.txt", big, "/robots.txt", 404, ""},
		{"page with canary", big, "/p/39.html", 200, sampleweb.Canary},
		{"past the last page", big, "/p/40.html", 404, ""},
		{"first request gets 429", retry, "/a.html", 429, ""},
		{"second request passes", retry, "/a.html", 200, "Busy /a.html"},
		{"login wall", login, "/members/", 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := get(t, c, w.URL(tt.host, tt.path), ua)
			if status != tt.wantStatus {
				t.Errorf("GET %s%s status = %d, want %d", tt.host, tt.path, status, tt.wantStatus)
			}
			if !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s%s body = %q, want it to contain %q", tt.host, tt.path, body, tt.wantBody)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	w, c := start(t)
	robots := w.Site(sampleweb.KindRobots).Name
	retry := w.Site(sampleweb.KindRetry).Name
	login := w.Site(sampleweb.KindLogin).Name
	get(t, c, w.URL(robots, "/robots.txt"), ua)
	get(t, c, w.URL(robots, "/private/secret.html"), ua)
	get(t, c, w.URL(retry, "/"), ua)
	get(t, c, w.URL(retry, "/"), "curl/8")
	get(t, c, w.URL(login, "/members/"), ua)
	get(t, c, w.URL(login, "/login"), ua)

	rep := w.Check(w.Hits())
	if rep.Requests != 6 {
		t.Errorf("Requests = %d, want 6", rep.Requests)
	}
	if rep.BadUserAgent != 1 {
		t.Errorf("BadUserAgent = %d, want 1", rep.BadUserAgent)
	}
	if len(rep.Disallowed) != 1 || rep.Disallowed[0] != robots+"/private/secret.html" {
		t.Errorf("Disallowed = %q, want [%s/private/secret.html]", rep.Disallowed, robots)
	}
	if rep.AfterLogin != 1 || !rep.LoginFetched {
		t.Errorf("AfterLogin, LoginFetched = %d, %v, want 1, true", rep.AfterLogin, rep.LoginFetched)
	}
	if rep.RetryGap <= 0 {
		t.Errorf("RetryGap = %v, want the gap after the 429", rep.RetryGap)
	}
	if rep.PageRequests[robots] != 1 {
		t.Errorf("PageRequests[%s] = %d, want 1 (robots.txt does not count)", robots, rep.PageRequests[robots])
	}
	if rep.MaxOverlap != 1 {
		t.Errorf("MaxOverlap = %d, want 1", rep.MaxOverlap)
	}
}
