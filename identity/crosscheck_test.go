package identity_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/identity"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
)

// ourRequests is the request log that goes with the access logs of
// testdata/identity.
var ourRequests = []struct {
	url    string
	sentAt string
}{
	{"https://www.example.com/robots.txt", "2026-05-01T10:00:01Z"},
	{"https://WWW.Example.com:443/a.html", "2026-05-01T10:00:09Z"},
	{"https://www.example.com/b.html?x=1", "2026-05-01T10:01:00Z"},
	{"https://www.example.com/c.html", "2026-05-01T10:11:00Z"},
	{"https://www.example.com/far.html", "2026-05-01T09:00:00Z"},
	{"http://other.example/zzz", "2026-05-01T10:00:05Z"},
	{"https://www.example.com/missing.html", "2026-05-01T10:08:00.5Z"}, // 3 minutes off: outside the tolerance
}

// insertRequests writes ourRequests into s.
func insertRequests(t testing.TB, s *db.Store) {
	t.Helper()
	for _, r := range ourRequests {
		sent, err := time.Parse(time.RFC3339Nano, r.sentAt)
		if err != nil {
			t.Fatal(err)
		}
		host, _, _ := strings.Cut(strings.SplitN(r.url, "/", 4)[2], ":")
		row := db.Request{Site: "example.com", Host: strings.ToLower(host), Origin: "https://" + host, URL: r.url,
			Method: "GET", Purpose: db.PurposePage, SentAt: sent}
		if err := dbtest.Gorm(s).Create(&row).Error; err != nil {
			t.Fatal(err)
		}
	}
}

func openFixture(t testing.TB, name string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "identity", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

func ipReport(ip string, genuine bool, requests, matched int) identity.IPReport {
	return identity.IPReport{IP: ip, Genuine: genuine, Requests: requests, Matched: matched}
}

var combinedWant = &identity.LogReport{
	Format: identity.FormatCombined, Lines: 16,
	Claimed: 10, Genuine: 6, Impostor: 3, Unverifiable: 1, Matched: 4, Malformed: 3,
	IPs: []identity.IPReport{
		ipReport(crawler1, true, 4, 3),
		ipReport(crawler2, true, 2, 1),
		ipReport(forgedPTR, false, 1, 0),
		ipReport(noPTR, false, 1, 0),
		ipReport(ptrServFail, false, 1, 0),
		ipReport(ipv6Claiming, false, 1, 0),
	},
	Unmatched: []identity.Unmatched{
		{Line: 8, IP: crawler2, Time: time.Date(2026, 5, 1, 10, 5, 0, 0, time.UTC), Method: "GET", Target: "/missing.html"},
		{Line: 13, IP: crawler1, Time: time.Date(2026, 5, 1, 10, 0, 15, 0, time.UTC), Method: "GET", Target: "/a.html"},
	},
}

func TestVerifyLog(t *testing.T) {
	_, v := fleetDNS(t)
	ignoreVerification := cmpopts.IgnoreFields(identity.IPReport{}, "Verification")
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		s := dbtest.OpenDSN(t, dsn)
		insertRequests(t, s)
		reqs := identity.StoreRequests(s)
		tests := []struct {
			name string
			file string
			opts identity.LogOptions
			want *identity.LogReport
		}{
			{"combined", "combined.log", identity.LogOptions{Format: identity.FormatCombined}, combinedWant},
			{"combined gzip detected", "combined.log.gz", identity.LogOptions{}, combinedWant},
			{"combined small batches", "combined.log", identity.LogOptions{BatchSize: 1, Concurrency: 1}, combinedWant},
			{"json", "json.log", identity.LogOptions{Format: identity.FormatJSON}, &identity.LogReport{
				Format: identity.FormatJSON, Lines: 9,
				Claimed: 5, Genuine: 4, Impostor: 1, Matched: 3, Malformed: 3,
				IPs: []identity.IPReport{
					ipReport(crawler1, true, 3, 3),
					ipReport(crawler2, true, 1, 0),
					ipReport(noPTR, false, 1, 0),
				},
				Unmatched: []identity.Unmatched{
					{Line: 6, IP: crawler2, Time: time.Date(2026, 5, 1, 10, 1, 0, 0, time.UTC), Method: "GET", Host: "other.example", Target: "/b.html?x=1"},
				},
			}},
			{"common: no user agent, no claims", "common.log", identity.LogOptions{Format: identity.FormatCommon}, &identity.LogReport{
				Format: identity.FormatCommon, Lines: 4, Malformed: 1, IPs: []identity.IPReport{}, Unmatched: []identity.Unmatched{},
			}},
			{"common detected, every line a claim", "common.log", identity.LogOptions{AssumeClaimed: true}, &identity.LogReport{
				Format: identity.FormatCommon, Lines: 4, Claimed: 3, Genuine: 2, Impostor: 1, Matched: 2, Malformed: 1,
				IPs:       []identity.IPReport{ipReport(crawler1, true, 2, 2), ipReport(noPTR, false, 1, 0)},
				Unmatched: []identity.Unmatched{},
			}},
			{"tolerance wide enough for missing.html", "combined.log", identity.LogOptions{Tolerance: 4 * time.Minute}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := identity.VerifyLog(context.Background(), openFixture(t, tt.file), v, reqs, &tt.opts)
				if err != nil {
					t.Fatalf("VerifyLog(%s) error %v", tt.file, err)
				}
				if tt.want == nil { // the tolerance case
					if got.Matched != 5 || len(got.Unmatched) != 1 || got.Unmatched[0].Line != 13 {
						t.Errorf("VerifyLog(%s, tolerance 4m) matched %d, unmatched %+v; want 5 and line 13", tt.file, got.Matched, got.Unmatched)
					}
					return
				}
				if diff := cmp.Diff(tt.want, got, ignoreVerification); diff != "" {
					t.Errorf("VerifyLog(%s) mismatch (-want +got):\n%s", tt.file, diff)
				}
				if got.OK() != (tt.want.Claimed == tt.want.Matched) {
					t.Errorf("VerifyLog(%s).OK() = %v", tt.file, got.OK())
				}
			})
		}
	})
}

func TestVerifyLogReasons(t *testing.T) {
	_, v := fleetDNS(t)
	got, err := identity.VerifyLog(context.Background(), openFixture(t, "combined.log"), v, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Matched != 0 || len(got.Unmatched) != got.Genuine {
		t.Errorf("VerifyLog without a request log: matched %d, unmatched %d; want 0 and %d", got.Matched, len(got.Unmatched), got.Genuine)
	}
	want := map[string]identity.Status{crawler1: identity.StatusGenuine, forgedPTR: identity.StatusImpostor, ptrServFail: identity.StatusUnverifiable}
	for _, ip := range got.IPs {
		if st, ok := want[ip.IP]; ok && (ip.Verification.Status != st || ip.Verification.Reason == "") {
			t.Errorf("VerifyLog: %s verified as %+v, want status %s with a reason", ip.IP, ip.Verification, st)
		}
	}
}

// countingLog is a RequestLog that records its queries.
type countingLog struct {
	rows    []identity.SentRequest
	queries int
}

func (l *countingLog) Sent(ctx context.Context, from, to time.Time, fn func(identity.SentRequest) error) error {
	l.queries++
	for _, r := range l.rows {
		if !r.SentAt.Before(from) && !r.SentAt.After(to) {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestVerifyLogOneRequestMatchesOneLine(t *testing.T) {
	_, v := fleetDNS(t)
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	// Our crawler fetched /p twice; the server logged /p three times, in
	// separate batches.
	reqs := &countingLog{rows: []identity.SentRequest{
		{ID: 1, URL: "https://example.com/p", SentAt: base},
		{ID: 2, URL: "https://example.com/p", SentAt: base.Add(30 * time.Second)},
	}}
	var log strings.Builder
	for i := range 3 {
		fmt.Fprintf(&log, "%s - - [%s] \"GET /p HTTP/1.1\" 200 1 \"-\" \"LohiSoftBot/1.0\"\n", crawler1,
			base.Add(time.Duration(i)*10*time.Second).Format("02/Jan/2006:15:04:05 -0700"))
	}
	got, err := identity.VerifyLog(context.Background(), strings.NewReader(log.String()), v, reqs, &identity.LogOptions{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Genuine != 3 || got.Matched != 2 || len(got.Unmatched) != 1 {
		t.Errorf("VerifyLog: genuine %d matched %d unmatched %+v; want 3, 2 and one line", got.Genuine, got.Matched, got.Unmatched)
	}
	if reqs.queries != 3 {
		t.Errorf("VerifyLog with BatchSize 1 queried the request log %d times, want 3", reqs.queries)
	}
}

func TestVerifyLogMaxUnmatched(t *testing.T) {
	_, v := fleetDNS(t)
	var log strings.Builder
	for i := range 50 {
		fmt.Fprintf(&log, "%s - - [01/May/2026:10:%02d:00 +0000] \"GET /p%d HTTP/1.1\" 200 1 \"-\" \"LohiSoftBot/1.0\"\n", crawler2, 49-i, i)
	}
	got, err := identity.VerifyLog(context.Background(), strings.NewReader(log.String()), v, &countingLog{},
		&identity.LogOptions{MaxUnmatched: 5, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got.Genuine != 50 || len(got.Unmatched) != 5 {
		t.Fatalf("VerifyLog: genuine %d, %d unmatched listed; want 50 and 5", got.Genuine, len(got.Unmatched))
	}
	for i, u := range got.Unmatched {
		if u.Line != i+1 {
			t.Errorf("VerifyLog: unmatched[%d] is line %d, want %d (the first lines of the log)", i, u.Line, i+1)
		}
	}
}

func TestVerifyLogBadInput(t *testing.T) {
	_, v := fleetDNS(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("x"), 100000))
	zw.Close()
	truncated := gz.Bytes()[:gz.Len()/2]
	_, err := identity.VerifyLog(context.Background(), bytes.NewReader(truncated), v, nil, nil)
	if !errors.Is(err, identity.ErrBadLog) {
		t.Errorf("VerifyLog(truncated gzip) error = %v, want ErrBadLog", err)
	}
	// A huge line is malformed, not fatal.
	long := strings.Repeat("a", identity.MaxLineSize+10) + "\n" +
		crawler1 + ` - - [01/May/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"` + "\n"
	got, err := identity.VerifyLog(context.Background(), strings.NewReader(long), v, nil, nil)
	if err != nil || got.Malformed != 1 || got.Genuine != 1 || got.Format != identity.FormatCombined {
		t.Errorf("VerifyLog(long line) = %+v, %v; want 1 malformed, 1 genuine, combined", got, err)
	}
}

func TestVerifyLogCanceled(t *testing.T) {
	_, v := fleetDNS(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := identity.VerifyLog(ctx, openFixture(t, "combined.log"), v, nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("VerifyLog(canceled) error = %v, want context.Canceled", err)
	}
}

// benchLog generates an access log of n lines in format f: mostly browsers
// from many addresses, one line in ten claiming to be LohiSoftBot (our two
// crawlers and a few impostors), a malformed line now and then.
func benchLog(f identity.Format, n int) []byte {
	var b bytes.Buffer
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	claimers := []string{crawler1, crawler2, forgedPTR, noPTR, crawler1}
	for i := range n {
		t := base.Add(time.Duration(i) * 50 * time.Millisecond)
		ip := fmt.Sprintf("198.51.%d.%d", i/256%256, i%256)
		ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
		if i%10 == 0 {
			ip = claimers[i/10%len(claimers)]
			ua = "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
		}
		path := fmt.Sprintf("/articles/%d/some-readable-slug-of-an-article?page=%d", i%5000, i%7)
		switch {
		case i%1000 == 999:
			b.WriteString("malformed line\n")
		case f == identity.FormatJSON:
			fmt.Fprintf(&b, `{"remote_addr":%q,"time_iso8601":%q,"request":"GET %s HTTP/1.1","status":200,"body_bytes_sent":5120,"http_referer":"https://www.example.com/","http_user_agent":%q}`+"\n",
				ip, t.Format(time.RFC3339), path, ua)
		default:
			fmt.Fprintf(&b, "%s - - [%s] \"GET %s HTTP/1.1\" 200 5120 \"https://www.example.com/\" \"%s\"\n",
				ip, t.Format("02/Jan/2006:15:04:05 -0700"), path, ua)
		}
	}
	return b.Bytes()
}

// BenchmarkVerifyLog measures parsing, claim detection and cached
// verification (DNS on loopback, each address once) of a generated log; the
// goal is at least 200,000 lines per second. The request log is in memory
// and empty, so every genuine line is unmatched (and batched).
func BenchmarkVerifyLog(b *testing.B) {
	_, v := fleetDNS(b)
	const lines = 200000
	for _, f := range []identity.Format{identity.FormatCombined, identity.FormatJSON} {
		for _, gz := range []bool{false, true} {
			data := benchLog(f, lines)
			size := int64(len(data)) // MB/s counts the uncompressed log
			name := string(f)
			if gz {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write(data)
				zw.Close()
				data = buf.Bytes()
				name += ".gz"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					rep, err := identity.VerifyLog(context.Background(), bytes.NewReader(data), v, &countingLog{}, nil)
					if err != nil {
						b.Fatal(err)
					}
					if rep.Claimed != lines/10 || rep.Malformed != lines/1000 {
						b.Fatalf("VerifyLog: claimed %d, malformed %d; want %d, %d", rep.Claimed, rep.Malformed, lines/10, lines/1000)
					}
				}
				b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
			})
		}
	}
}
