package audit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/audit"
	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// t0 is when the clean log starts.
var t0 = time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// logWriter writes a request log straight into the database, the way the
// crawler would (or would not).
type logWriter struct {
	t     *testing.T
	ctx   context.Context
	store *db.Store
	slots map[int64]int
}

func newLogWriter(t *testing.T, dsn string) *logWriter {
	t.Helper()
	ctx := context.Background()
	s := dbtest.OpenDSN(t, dsn)
	return &logWriter{t: t, ctx: ctx, store: s, slots: make(map[int64]int)}
}

func (w *logWriter) create(v any) {
	w.t.Helper()
	if err := dbtest.Gorm(w.store).WithContext(w.ctx).Create(v).Error; err != nil {
		w.t.Fatalf("create %T: %v", v, err)
	}
}

func (w *logWriter) exec(q string, args ...any) {
	w.t.Helper()
	if err := dbtest.Gorm(w.store).WithContext(w.ctx).Exec(q, args...).Error; err != nil {
		w.t.Fatalf("%s: %v", q, err)
	}
}

// cycle starts a crawl cycle; finished is zero for one still running.
func (w *logWriter) cycle(site string, start, finished time.Time, delay time.Duration, budget int) int64 {
	c := &db.CrawlCycle{Site: site, StartedAt: start, Status: db.CycleDone, Budget: budget, DelayMS: delay.Milliseconds()}
	if finished.IsZero() {
		c.Status = db.CycleRunning
	} else {
		c.FinishedAt = &finished
	}
	w.create(c)
	return c.ID
}

type reqOpt func(*db.Request)

func status(s int) reqOpt        { return func(r *db.Request) { r.Status = &s } }
func outcome(o string) reqOpt    { return func(r *db.Request) { r.Outcome = o } }
func retryAfter(h string) reqOpt { return func(r *db.Request) { r.RetryAfter = h } }
func redirectOf(id int64) reqOpt { return func(r *db.Request) { r.RedirectOf = &id } }
func attempt(n int) reqOpt       { return func(r *db.Request) { r.Attempt = n } }
func snapshot(id int64) reqOpt   { return func(r *db.Request) { r.RobotsSnapshotID = &id } }
func noCycle() reqOpt            { return func(r *db.Request) { r.CycleID, r.BudgetSlot = nil, nil } }
func lasting(d time.Duration) reqOpt {
	return func(r *db.Request) { c := r.SentAt.Add(d); r.CompletedAt = &c }
}
func neverCompleted() reqOpt {
	return func(r *db.Request) { r.CompletedAt, r.Status, r.Outcome = nil, nil, "" }
}

// request logs one request, completed 200 ms later with 200 ok.
func (w *logWriter) request(cycle int64, purpose, rawURL string, sent time.Time, opts ...reqOpt) int64 {
	w.t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		w.t.Fatal(err)
	}
	site, err := policy.SiteOf(rawURL)
	if err != nil {
		w.t.Fatal(err)
	}
	done := sent.Add(200 * time.Millisecond)
	st := 200
	r := &db.Request{Site: site, Host: u.Hostname(), Origin: u.Scheme + "://" + u.Host, URL: rawURL, Method: "GET",
		Purpose: purpose, SentAt: sent, CompletedAt: &done, Status: &st, Bytes: 1234, Outcome: "ok",
		PolicyCheck: "allowed (policy v1)"}
	if cycle != 0 {
		r.CycleID = &cycle
		if purpose == db.PurposePage {
			w.slots[cycle]++
			slot := w.slots[cycle]
			r.BudgetSlot = &slot
		}
	}
	for _, o := range opts {
		o(r)
	}
	w.create(r)
	return r.ID
}

// robots logs a robots.txt fetch of origin sent at sent (100 ms long) and
// its snapshot, and returns the snapshot's id.
func (w *logWriter) robots(cycle int64, origin string, sent time.Time, st int, body string) int64 {
	w.t.Helper()
	id := w.request(cycle, db.PurposeRobots, origin+"/robots.txt", sent, status(st), lasting(100*time.Millisecond))
	sum := sha256.Sum256([]byte(body))
	outcome := db.RobotsParsed
	switch {
	case st == 401 || st == 403 || st == 429 || st >= 500:
		outcome = db.RobotsDisallowAll
	case st >= 400:
		outcome = db.RobotsAllowAll
	}
	sn := &db.RobotsSnapshot{Origin: origin, FetchedAt: sent.Add(100 * time.Millisecond), Status: st, FinalURL: origin + "/robots.txt",
		Body: []byte(body), Sha256: hex.EncodeToString(sum[:]), Outcome: outcome, RequestID: &id}
	w.create(sn)
	return sn.ID
}

func (w *logWriter) page(u, title string, reqID int64) {
	w.create(&db.Page{URL: u, Site: mustSite(w.t, u), Title: title, FetchedAt: t0, RequestID: &reqID})
}

func (w *logWriter) anchor(from, to, text string) {
	w.create(&db.Anchor{FromURL: from, ToURL: to, ToSite: mustSite(w.t, to), AnchorText: text, SeenAt: t0})
}

func mustSite(t *testing.T, u string) string {
	s, err := policy.SiteOf(u)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (w *logWriter) policyAt(when time.Time) *policy.Policy {
	return policy.New(w.store, &policy.Options{Now: func() time.Time { return when }})
}

const (
	www  = "https://www.example.com"
	shop = "https://shop.example.com"
	oth  = "https://other.org"
	blk  = "https://blocked.net"
)

// robotsBody disallows /private/ for LohiSoftBot and sets a Crawl-delay of
// 2 s, longer than the cycle's --delay of 1 s.
const robotsBody = "User-agent: *\nDisallow: /\n\nUser-agent: LohiSoftBot\nDisallow: /private/\nCrawl-delay: 2\n"

// clean is a log that keeps every promise, with what a real crawl meets:
// redirects, a retry after 503 with Retry-After, a robots.txt that is 404, a
// page marked noindex, a request that never completed, a second cycle a
// week later, and exclusions before and after the requests of a site.
type clean struct {
	c1, c2, c3, c4 int64
	snapWWW        int64 // the robots.txt of www.example.com in cycle 1
	snapShop       int64
	last           time.Duration // when the last page request of www in cycle 1 was sent
	slotsUsed      int
}

func writeClean(t *testing.T, w *logWriter) *clean {
	t.Helper()
	c := &clean{}
	c.c1 = w.cycle("example.com", t0, at(10*time.Minute), time.Second, 20)
	c.snapWWW = w.robots(c.c1, www, at(0), 200, robotsBody)
	c.snapShop = w.robots(c.c1, shop, at(time.Second), 404, "<html>not found</html>")
	p1 := w.request(c.c1, db.PurposePage, www+"/", at(3*time.Second), snapshot(c.snapWWW))
	p2 := w.request(c.c1, db.PurposePage, www+"/a", at(6*time.Second), snapshot(c.snapWWW), status(301), outcome("redirect"))
	p3 := w.request(c.c1, db.PurposePage, www+"/b", at(9*time.Second), snapshot(c.snapWWW), redirectOf(p2))
	w.request(c.c1, db.PurposePage, www+"/c", at(12*time.Second), snapshot(c.snapWWW), status(503), retryAfter("5"), outcome("retry"))
	p5 := w.request(c.c1, db.PurposePage, www+"/c", at(18*time.Second), snapshot(c.snapWWW), attempt(1))
	w.request(c.c1, db.PurposePage, www+"/n", at(21*time.Second), snapshot(c.snapWWW), outcome("noindex"))
	c.last = 21 * time.Second
	px := w.request(c.c1, db.PurposePage, shop+"/x", at(4*time.Second), snapshot(c.snapShop))
	w.request(c.c1, db.PurposePage, shop+"/y", at(8*time.Second), snapshot(c.snapShop), neverCompleted())
	c.slotsUsed = 8
	w.page(www+"/", "Home", p1)
	w.page(www+"/b", "B", p3)
	w.page(www+"/c", "C", p5)
	w.page(shop+"/x", "X", px)
	w.anchor(www+"/", www+"/b", "to b")

	// A week later.
	c.c2 = w.cycle("example.com", at(7*24*time.Hour), at(7*24*time.Hour+time.Minute), time.Second, 20)
	s2 := w.robots(c.c2, www, at(7*24*time.Hour), 200, robotsBody)
	w.request(c.c2, db.PurposePage, www+"/", at(7*24*time.Hour+3*time.Second), snapshot(s2))

	// other.org was excluded, then re-included before it was crawled.
	if _, err := w.policyAt(at(-time.Hour)).Exclude(w.ctx, []string{"other.org"}, policy.Change{Actor: "webmaster@other.org", Evidence: "abc@other.org", Source: "mail"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.policyAt(at(time.Hour)).Reinclude(w.ctx, "other.org", policy.Change{Actor: "anna", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	c.c3 = w.cycle("other.org", at(2*time.Hour), at(2*time.Hour+time.Minute), 500*time.Millisecond, 20)
	s3 := w.robots(c.c3, oth, at(2*time.Hour), 200, "")
	w.request(c.c3, db.PurposePage, oth+"/", at(2*time.Hour+time.Second), snapshot(s3))

	// blocked.net was crawled, then excluded.
	c.c4 = w.cycle("blocked.net", at(150*time.Minute), at(151*time.Minute), 500*time.Millisecond, 20)
	s4 := w.robots(c.c4, blk, at(150*time.Minute), 200, "User-agent: *\nAllow: /\n")
	w.request(c.c4, db.PurposePage, blk+"/", at(150*time.Minute+time.Second), snapshot(s4))
	if _, err := w.policyAt(at(3*time.Hour)).Exclude(w.ctx, []string{"blocked.net"}, policy.Change{Actor: "anna", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	return c
}

// found is a violation reduced to what a test compares.
type found struct {
	Site, Rule, Check string
	IDs               []int64
}

func runAudit(t *testing.T, w *logWriter, opts *audit.Options) ([]found, []audit.Violation, *audit.Summary) {
	t.Helper()
	var vs []audit.Violation
	sum, err := audit.Run(w.ctx, w.store, opts, func(v audit.Violation) error {
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		t.Fatalf("audit.Run: %v", err)
	}
	var out []found
	for _, v := range vs {
		f := found{Site: v.Site, Rule: v.Rule, Check: v.Check}
		for _, r := range v.Requests {
			f.IDs = append(f.IDs, r.ID)
		}
		out = append(out, f)
	}
	return out, vs, sum
}

func TestCleanLogPasses(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		writeClean(t, w)
		got, vs, sum := runAudit(t, w, nil)
		if len(got) != 0 {
			for _, v := range vs {
				t.Errorf("violation: %s %s %s: %s", v.Site, v.Rule, v.Check, v.Evidence)
			}
		}
		if !sum.OK() {
			t.Errorf("Summary.OK() = false, want true: %+v", sum.Rules)
		}
		wantRules := audit.Rules()
		var gotRules []string
		for _, r := range sum.Rules {
			gotRules = append(gotRules, r.Rule)
			if r.Checked == 0 {
				t.Errorf("rule %s checked nothing", r.Rule)
			}
		}
		if diff := cmp.Diff(wantRules, gotRules); diff != "" {
			t.Errorf("summary rules (-want +got):\n%s", diff)
		}
	})
}

// TestEachRuleCanFail writes, for every check of every rule, a clean log plus
// records that break it, and expects exactly that violation.
func TestEachRuleCanFail(t *testing.T) {
	type brk func(t *testing.T, w *logWriter, c *clean) []found
	tests := []struct {
		name  string
		rules []string
		brk   brk
	}{
		{name: "robots/no snapshot of the origin", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := w.request(c.c1, db.PurposePage, "https://blog.example.com/", at(30*time.Second))
			return []found{{"example.com", "robots", "no-snapshot", []int64{id}}}
		}},
		{name: "robots/page before the first robots.txt fetch", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := w.request(c.c1, db.PurposePage, "https://blog.example.com/", at(30*time.Second))
			sn := w.robots(c.c1, "https://blog.example.com", at(33*time.Second), 200, "")
			w.request(c.c1, db.PurposePage, "https://blog.example.com/ok", at(36*time.Second), snapshot(sn))
			return []found{{"example.com", "robots", "no-snapshot", []int64{id}}}
		}},
		{name: "robots/snapshot older than 24 h", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("example.com", at(25*time.Hour), at(26*time.Hour), time.Second, 20)
			id := w.request(cy, db.PurposePage, www+"/", at(25*time.Hour), snapshot(c.snapWWW))
			robotsReq := robotsRequestOf(t, w, c.snapWWW)
			return []found{{"example.com", "robots", "stale-snapshot", []int64{id, robotsReq}}}
		}},
		{name: "robots/body does not match its sha256", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			w.exec("UPDATE robots_snapshots SET body = ? WHERE id = ?", []byte("User-agent: *\nAllow: /\n"), c.snapShop)
			robotsReq := robotsRequestOf(t, w, c.snapShop)
			return []found{
				{"example.com", "robots", "hash-mismatch", []int64{pageIDs(t, w, shop+"/x")[0], robotsReq}},
				{"example.com", "robots", "hash-mismatch", []int64{pageIDs(t, w, shop+"/y")[0], robotsReq}},
			}
		}},
		{name: "robots/page while disallow-all (503) in force", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			sn := w.robots(c.c1, "https://down.example.com", at(40*time.Second), 503, "")
			id := w.request(c.c1, db.PurposePage, "https://down.example.com/", at(43*time.Second), snapshot(sn))
			return []found{{"example.com", "robots", "disallow-all", []int64{id, robotsRequestOf(t, w, sn)}}}
		}},
		{name: "robots/page while disallow-all (401) in force", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			sn := w.robots(c.c1, "https://down.example.com", at(40*time.Second), 401, "")
			id := w.request(c.c1, db.PurposePage, "https://down.example.com/", at(43*time.Second), snapshot(sn))
			return []found{{"example.com", "robots", "disallow-all", []int64{id, robotsRequestOf(t, w, sn)}},
				{"example.com", "politeness", "after-auth", []int64{robotsRequestOf(t, w, sn), id}}}
		}},
		{name: "robots/unreachable robots.txt the crawler called allow-all", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			sn := w.robots(c.c1, "https://down.example.com", at(40*time.Second), 500, "")
			w.exec("UPDATE robots_snapshots SET outcome = ? WHERE id = ?", db.RobotsAllowAll, sn)
			id := w.request(c.c1, db.PurposePage, "https://down.example.com/", at(43*time.Second), snapshot(sn))
			return []found{{"example.com", "robots", "disallow-all", []int64{id, robotsRequestOf(t, w, sn)}}}
		}},
		{name: "robots/URL disallowed by the rules", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := w.request(c.c1, db.PurposePage, www+"/private/x", at(c.last+30*time.Second), snapshot(c.snapWWW))
			return []found{{"example.com", "robots", "disallowed", []int64{id, robotsRequestOf(t, w, c.snapWWW)}}}
		}},
		{name: "robots/page request tied to no snapshot", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := w.request(c.c1, db.PurposePage, www+"/e", at(c.last+30*time.Second))
			return []found{{"example.com", "robots", "unlinked", []int64{id}}}
		}},
		{name: "robots/page request tied to another origin's snapshot", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := w.request(c.c1, db.PurposePage, www+"/e", at(c.last+30*time.Second), snapshot(c.snapShop))
			return []found{{"example.com", "robots", "unlinked", []int64{id}}}
		}},
		{name: "budget/21 pages in a cycle, hops, retries and unanswered included", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("big.org", at(time.Hour), at(2*time.Hour), 100*time.Millisecond, 20)
			sn := w.robots(cy, "https://big.org", at(time.Hour), 200, "")
			var ids []int64
			for i := range 21 {
				opts := []reqOpt{snapshot(sn)}
				switch i {
				case 5:
					opts = append(opts, status(302), outcome("redirect"))
				case 6:
					opts = append(opts, redirectOf(ids[5]))
				case 7:
					opts = append(opts, status(500), outcome("retry"))
				case 8:
					opts = append(opts, attempt(1))
				case 20:
					opts = append(opts, neverCompleted())
				}
				ids = append(ids, w.request(cy, db.PurposePage, "https://big.org/p"+string(rune('a'+i)), at(time.Hour+time.Duration(i+1)*time.Second), opts...))
			}
			return []found{{"big.org", "budget", "over-budget", []int64{ids[20]}}}
		}},
		{name: "budget/more pages than the cycle's own smaller budget", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("small.org", at(time.Hour), at(2*time.Hour), 100*time.Millisecond, 2)
			sn := w.robots(cy, "https://small.org", at(time.Hour), 200, "")
			var ids []int64
			for i := range 3 {
				ids = append(ids, w.request(cy, db.PurposePage, "https://small.org/"+string(rune('a'+i)), at(time.Hour+time.Duration(i+1)*time.Second), snapshot(sn)))
			}
			return []found{{"small.org", "budget", "over-budget", []int64{ids[2]}}}
		}},
		{name: "budget/page request outside any cycle", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := w.request(c.c1, db.PurposePage, www+"/e", at(c.last+30*time.Second), snapshot(c.snapWWW), noCycle())
			return []found{{"example.com", "budget", "no-cycle", []int64{id}}}
		}},
		{name: "politeness/two requests to one host at once", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("par.org", at(time.Hour), at(2*time.Hour), 0, 20)
			sn := w.robots(cy, "https://par.org", at(time.Hour), 200, "")
			a := w.request(cy, db.PurposePage, "https://par.org/a", at(time.Hour+time.Second), snapshot(sn), lasting(time.Second))
			b := w.request(cy, db.PurposePage, "https://par.org/b", at(time.Hour+1500*time.Millisecond), snapshot(sn))
			return []found{{"par.org", "politeness", "overlap", []int64{a, b}}}
		}},
		{name: "politeness/a request that never completed stays open", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("par.org", at(time.Hour), time.Time{}, 0, 20)
			sn := w.robots(cy, "https://par.org", at(time.Hour), 200, "")
			a := w.request(cy, db.PurposePage, "https://par.org/a", at(time.Hour+time.Second), snapshot(sn), neverCompleted())
			b := w.request(cy, db.PurposePage, "https://par.org/b", at(time.Hour+time.Minute), snapshot(sn))
			return []found{{"par.org", "politeness", "overlap", []int64{a, b}}}
		}},
		{name: "politeness/gap shorter than --delay", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("fast.org", at(time.Hour), at(2*time.Hour), 2*time.Second, 20)
			sn := w.robots(cy, "https://fast.org", at(time.Hour), 200, "")
			a := w.request(cy, db.PurposePage, "https://fast.org/a", at(time.Hour+3*time.Second), snapshot(sn))
			b := w.request(cy, db.PurposePage, "https://fast.org/b", at(time.Hour+4*time.Second), snapshot(sn))
			return []found{{"fast.org", "politeness", "too-soon", []int64{a, b}}}
		}},
		{name: "politeness/gap shorter than Crawl-delay", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			// 1.5 s after the end of the last request: more than the
			// --delay of 1 s, less than the Crawl-delay of 2 s.
			id := w.request(c.c1, db.PurposePage, www+"/e", at(c.last+200*time.Millisecond+1500*time.Millisecond), snapshot(c.snapWWW))
			return []found{{"example.com", "politeness", "too-soon", []int64{pageIDs(t, w, www+"/n")[0], id}}}
		}},
		{name: "politeness/Retry-After seconds not honoured", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("busy.org", at(time.Hour), at(2*time.Hour), time.Second, 20)
			sn := w.robots(cy, "https://busy.org", at(time.Hour), 200, "")
			a := w.request(cy, db.PurposePage, "https://busy.org/a", at(time.Hour+2*time.Second), snapshot(sn), status(429), retryAfter("30"), outcome("retry"))
			b := w.request(cy, db.PurposePage, "https://busy.org/a", at(time.Hour+20*time.Second), snapshot(sn), attempt(1))
			return []found{{"busy.org", "politeness", "retry-after", []int64{a, b}}}
		}},
		{name: "politeness/Retry-After HTTP-date not honoured", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("busy.org", at(time.Hour), at(2*time.Hour), time.Second, 20)
			sn := w.robots(cy, "https://busy.org", at(time.Hour), 200, "")
			date := at(time.Hour + 2*time.Minute).Format(time.RFC1123)
			date = date[:len(date)-3] + "GMT"
			a := w.request(cy, db.PurposePage, "https://busy.org/a", at(time.Hour+2*time.Second), snapshot(sn), status(503), retryAfter(date), outcome("retry"))
			b := w.request(cy, db.PurposePage, "https://busy.org/a", at(time.Hour+time.Minute), snapshot(sn), attempt(1))
			return []found{{"busy.org", "politeness", "retry-after", []int64{a, b}}}
		}},
		{name: "politeness/request after 403 in the same cycle", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("login.org", at(time.Hour), at(2*time.Hour), time.Second, 20)
			sn := w.robots(cy, "https://login.org", at(time.Hour), 200, "")
			a := w.request(cy, db.PurposePage, "https://login.org/a", at(time.Hour+2*time.Second), snapshot(sn), status(403), outcome("auth"))
			b := w.request(cy, db.PurposePage, "https://login.org/b", at(time.Hour+10*time.Second), snapshot(sn))
			return []found{{"login.org", "politeness", "after-auth", []int64{a, b}}}
		}},
		{name: "politeness/request after 407 in the same cycle", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("login.org", at(time.Hour), at(2*time.Hour), time.Second, 20)
			sn := w.robots(cy, "https://login.org", at(time.Hour), 200, "")
			a := w.request(cy, db.PurposePage, "https://login.org/a", at(time.Hour+2*time.Second), snapshot(sn), status(407), outcome("auth"))
			b := w.request(cy, db.PurposePage, "https://login.org/b", at(time.Hour+10*time.Second), snapshot(sn))
			return []found{{"login.org", "politeness", "after-auth", []int64{a, b}}}
		}},
		{name: "politeness/request after a challenge page", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("cf.org", at(time.Hour), at(2*time.Hour), time.Second, 20)
			sn := w.robots(cy, "https://cf.org", at(time.Hour), 200, "")
			a := w.request(cy, db.PurposePage, "https://cf.org/a", at(time.Hour+2*time.Second), snapshot(sn), status(503), outcome("challenge"))
			b := w.request(cy, db.PurposePage, "https://cf.org/b", at(time.Hour+10*time.Second), snapshot(sn))
			// The next cycle may come back.
			cy2 := w.cycle("cf.org", at(8*24*time.Hour), at(8*24*time.Hour+time.Hour), time.Second, 20)
			sn2 := w.robots(cy2, "https://cf.org", at(8*24*time.Hour), 200, "")
			w.request(cy2, db.PurposePage, "https://cf.org/a", at(8*24*time.Hour+2*time.Second), snapshot(sn2))
			return []found{{"cf.org", "politeness", "after-auth", []int64{a, b}}}
		}},
		{name: "exclusions/request after the exclusion was committed", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			cy := w.cycle("blocked.net", at(4*time.Hour), at(5*time.Hour), 500*time.Millisecond, 20)
			sn := w.robots(cy, blk, at(4*time.Hour), 200, "")
			id := w.request(cy, db.PurposePage, blk+"/again", at(4*time.Hour+time.Second), snapshot(sn))
			return []found{
				{"blocked.net", "exclusions", "excluded", []int64{robotsRequestOf(t, w, sn)}},
				{"blocked.net", "exclusions", "excluded", []int64{id}},
			}
		}},
		{name: "exclusions/request between exclusion and re-inclusion", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := w.request(c.c3, db.PurposePage, oth+"/early", at(-30*time.Minute))
			return []found{
				{"other.org", "robots", "no-snapshot", []int64{id}},
				{"other.org", "exclusions", "excluded", []int64{id}},
			}
		}},
		{name: "storage/extra column in the index", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			w.exec("ALTER TABLE pages ADD COLUMN body TEXT")
			t.Cleanup(func() { w.exec("ALTER TABLE pages DROP COLUMN body") })
			return []found{{"", "storage", "extra-column", nil}}
		}},
		{name: "storage/index entry and link text for a noindex page", brk: func(t *testing.T, w *logWriter, c *clean) []found {
			id := pageIDs(t, w, www+"/n")[0]
			w.page(www+"/n", "Secret", id)
			w.anchor(www+"/", www+"/n", "to n")
			return []found{
				{"example.com", "storage", "noindex-page", []int64{id}},
				{"example.com", "storage", "noindex-anchor", []int64{id}},
			}
		}},
	}
	// One database per engine, emptied before each case: a fresh
	// PostgreSQL database per case would cost a second each.
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		shared := newLogWriter(t, dsn)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				w := &logWriter{t: t, ctx: shared.ctx, store: shared.store, slots: make(map[int64]int)}
				w.reset()
				c := writeClean(t, w)
				want := tt.brk(t, w, c)
				got, vs, sum := runAudit(t, w, &audit.Options{Rules: tt.rules})
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("violations (-want +got):\n%s", diff)
					for _, v := range vs {
						t.Logf("%s %s %s: %s", v.Site, v.Rule, v.Check, v.Evidence)
					}
				}
				for _, v := range vs {
					if v.Evidence == "" {
						t.Errorf("violation %s/%s has no evidence", v.Rule, v.Check)
					}
				}
				if sum.OK() {
					t.Errorf("Summary.OK() = true, want false")
				}
			})
		}
	})
}

// reset empties every table the tests write.
func (w *logWriter) reset() {
	w.t.Helper()
	for _, table := range []string{"requests", "robots_snapshots", "crawl_cycles", "policy_events", "exclusions", "pages", "anchors", "sites"} {
		w.exec("DELETE FROM " + table)
	}
	w.exec("UPDATE policy_state SET version = 0")
}

func robotsRequestOf(t *testing.T, w *logWriter, snap int64) int64 {
	t.Helper()
	var sn db.RobotsSnapshot
	if err := dbtest.Gorm(w.store).First(&sn, snap).Error; err != nil {
		t.Fatal(err)
	}
	return *sn.RequestID
}

func pageIDs(t *testing.T, w *logWriter, u string) []int64 {
	t.Helper()
	var ids []int64
	if err := dbtest.Gorm(w.store).Model(&db.Request{}).Where("url = ?", u).Order("id").Pluck("id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestOptionsSelectRulesSitesAndTime(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		c := writeClean(t, w)
		// Break robots on example.com and politeness on fast.org.
		bad := w.request(c.c1, db.PurposePage, www+"/e", at(c.last+30*time.Second))
		cy := w.cycle("fast.org", at(time.Hour), at(2*time.Hour), 2*time.Second, 20)
		sn := w.robots(cy, "https://fast.org", at(time.Hour), 200, "")
		a := w.request(cy, db.PurposePage, "https://fast.org/a", at(time.Hour+3*time.Second), snapshot(sn))
		b := w.request(cy, db.PurposePage, "https://fast.org/b", at(time.Hour+4*time.Second), snapshot(sn))

		tests := []struct {
			name string
			opts audit.Options
			want []found
		}{
			{"all", audit.Options{}, []found{
				{"example.com", "robots", "unlinked", []int64{bad}},
				{"fast.org", "politeness", "too-soon", []int64{a, b}},
			}},
			{"robots only", audit.Options{Rules: []string{"robots"}}, []found{
				{"example.com", "robots", "unlinked", []int64{bad}},
			}},
			{"one site", audit.Options{Sites: []string{"fast.org"}}, []found{
				{"fast.org", "politeness", "too-soon", []int64{a, b}},
			}},
			{"since, with the request before it on the host", audit.Options{Since: at(time.Hour + 3500*time.Millisecond)}, []found{
				{"fast.org", "politeness", "too-soon", []int64{a, b}},
			}},
			{"since after everything", audit.Options{Since: at(30 * 24 * time.Hour)}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, _, _ := runAudit(t, w, &tt.opts)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Run(%+v) violations (-want +got):\n%s", tt.opts, diff)
				}
			})
		}
	})
}

func TestBudgetSinceCountsTheWholeCycle(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		cy := w.cycle("big.org", at(0), at(time.Hour), 100*time.Millisecond, 20)
		sn := w.robots(cy, "https://big.org", at(0), 200, "")
		var ids []int64
		for i := range 22 {
			ids = append(ids, w.request(cy, db.PurposePage, "https://big.org/p"+string(rune('a'+i)), at(time.Duration(i+1)*time.Second), snapshot(sn)))
		}
		got, _, _ := runAudit(t, w, &audit.Options{Rules: []string{"budget"}, Since: at(21 * time.Second)})
		want := []found{{"big.org", "budget", "over-budget", []int64{ids[20], ids[21]}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("violations (-want +got):\n%s", diff)
		}
	})
}

func TestUnknownRule(t *testing.T) {
	w := newLogWriter(t, dbtest.DSN(t, "sqlite"))
	_, err := audit.Run(w.ctx, w.store, &audit.Options{Rules: []string{"speed"}}, nil)
	if !errors.Is(err, audit.ErrUnknownRule) {
		t.Errorf("Run(rules speed) = %v, want ErrUnknownRule", err)
	}
}

// TestWithdrawnRequestsWereNotSent checks how the audit reads a request
// withdrawn before its time (db.OutcomeWithdrawn: reserved ahead, then its
// site was excluded): never sent, so neither a request after an exclusion
// nor one overlapping another, nor unsigned, nor counted against its
// cycle's budget.
func TestWithdrawnRequestsWereNotSent(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		w := newLogWriter(t, dsn)
		c := writeClean(t, w)
		withdrawn := func(r *db.Request) {
			done := r.SentAt.Add(3 * time.Millisecond)
			r.CompletedAt, r.Status, r.Bytes, r.Outcome, r.Error = &done, nil, 0, db.OutcomeWithdrawn, "not sent"
		}
		// blocked.net was excluded at 3 h: its cycle's next request, planned
		// for just after, was withdrawn.
		w.request(c.c4, db.PurposePage, blk+"/next", at(3*time.Hour+10*time.Millisecond), withdrawn)
		// Two at once to one host, in a cycle of budget 1: the second was
		// withdrawn, and spent nothing.
		cy := w.cycle("par.org", at(time.Hour), at(2*time.Hour), 100*time.Millisecond, 1)
		sn := w.robots(cy, "https://par.org", at(time.Hour), 200, "")
		w.request(cy, db.PurposePage, "https://par.org/a", at(time.Hour+time.Second), snapshot(sn))
		w.request(cy, db.PurposePage, "https://par.org/b", at(time.Hour+time.Second+50*time.Millisecond), snapshot(sn), withdrawn)
		got, vs, _ := runAudit(t, w, nil)
		var want []found
		if diff := cmp.Diff(want, got); diff != "" {
			for _, v := range vs {
				t.Logf("violation: %s %s %s: %s", v.Site, v.Rule, v.Check, v.Evidence)
			}
			t.Errorf("violations (-want +got):\n%s", diff)
		}
	})
}
