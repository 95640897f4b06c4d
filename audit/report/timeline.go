package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/lohisoft/lohibot/internal/retryafter"
)

// timeline is the geometry of one cycle's SVG timeline: one lane per host,
// one bar per request, the minimum delay after each request and the
// Retry-After waits. Coordinates are in SVG user units.
type timeline struct {
	Width, Height float64
	Left, Right   float64 // x of the plot area
	Lanes         []lane
	Ticks         []tick
	Axis          float64 // y of the time axis
}

type lane struct {
	Host   string
	Y      float64 // top of the lane
	Mid    float64
	Bars   []bar
	Delays []span
	Waits  []span
}

type bar struct {
	X, W  float64
	Class string
	Title string
}

type span struct {
	X, W  float64
	Title string
}

type tick struct {
	X     float64
	Label string
}

// Layout of the timeline.
const (
	tlWidth     = 960.0
	tlLabels    = 190.0 // width of the host names
	tlLaneH     = 22.0
	tlBarH      = 12.0
	tlTop       = 6.0
	tlAxisSpace = 22.0
	tlMinBar    = 2.0
)

// requestClass sorts a request into the legend's classes.
func requestClass(r *Request) string {
	st := 0
	if r.Status != nil {
		st = *r.Status
	}
	switch {
	case r.CompletedAt == nil || r.Outcome == "error" || r.Outcome == "refused" || (r.Error != "" && st == 0):
		return "error"
	case st == 401 || st == 403 || st == 407 || r.Outcome == "challenge" || r.Outcome == "auth":
		return "stop"
	case r.Purpose == "robots":
		return "robots"
	case st == 429 || st >= 500 || r.Outcome == "retry":
		return "retry"
	case (st >= 300 && st < 400) || r.Outcome == "redirect":
		return "redirect"
	case r.Outcome == "noindex":
		return "noindex"
	}
	return "ok"
}

// retryUntil is when the next request to the host may start after r, by its
// Retry-After, if it had one.
func retryUntil(r *Request) (time.Time, bool) {
	if r.RetryNotBefore != nil {
		return *r.RetryNotBefore, true
	}
	if r.CompletedAt == nil {
		return time.Time{}, false
	}
	return retryafter.NotBefore(r.RetryAfter, *r.CompletedAt)
}

// newTimeline lays out a cycle's requests.
func newTimeline(c *Cycle, t func(string) string) *timeline {
	if len(c.Requests) == 0 {
		return nil
	}
	start := c.Requests[0].SentAt
	end := start
	ends := make([]time.Time, len(c.Requests))
	for i := range c.Requests {
		r := &c.Requests[i]
		e := r.SentAt
		switch {
		case r.CompletedAt != nil:
			e = *r.CompletedAt
		case c.FinishedAt != nil && c.FinishedAt.After(r.SentAt):
			e = *c.FinishedAt
		}
		ends[i] = e
		end = maxTime(end, e)
		if until, ok := retryUntil(r); ok && until.Sub(e) < 24*time.Hour {
			end = maxTime(end, until)
		}
		if r.SentAt.Before(start) {
			start = r.SentAt
		}
	}
	// Room for the delay after the last request.
	end = end.Add(time.Duration(c.DelayMS) * time.Millisecond)
	spanD := end.Sub(start)
	if spanD < time.Second {
		spanD = time.Second
	}
	tl := &timeline{Width: tlWidth, Left: tlLabels, Right: tlWidth - 12}
	plot := tl.Right - tl.Left
	x := func(t time.Time) float64 {
		return tl.Left + plot*float64(t.Sub(start))/float64(spanD)
	}
	w := func(a, b time.Time) float64 {
		return max(x(b)-x(a), 0)
	}
	laneOf := make(map[string]int)
	prevEnd := make(map[string]time.Time)
	for i := range c.Requests {
		r := &c.Requests[i]
		host := r.Host
		if host == "" {
			host = "?"
		}
		li, ok := laneOf[host]
		if !ok {
			li = len(tl.Lanes)
			laneOf[host] = li
			y := tlTop + float64(li)*tlLaneH
			tl.Lanes = append(tl.Lanes, lane{Host: host, Y: y, Mid: y + tlLaneH/2})
		}
		ln := &tl.Lanes[li]
		if pe, ok := prevEnd[host]; ok {
			delay := time.Duration(r.DelayMS) * time.Millisecond
			if delay == 0 {
				delay = time.Duration(c.DelayMS) * time.Millisecond
			}
			if delay > 0 {
				ln.Delays = append(ln.Delays, span{X: x(pe), W: w(pe, pe.Add(delay)),
					Title: fmt.Sprintf("%s: %s", t("legend_delay"), fmtMS(delay.Milliseconds()))})
			}
		}
		bw := max(w(r.SentAt, ends[i]), tlMinBar)
		title := fmt.Sprintf("#%d %s %s", r.ID, fmtClock(r.SentAt), r.URL)
		if r.Status != nil {
			title += fmt.Sprintf(" → %d", *r.Status)
		}
		if r.Outcome != "" {
			title += " " + outcomeWord(t, r.Outcome)
		}
		if r.CompletedAt != nil {
			title += fmt.Sprintf(" (%s)", fmtMS(r.CompletedAt.Sub(r.SentAt).Milliseconds()))
		}
		ln.Bars = append(ln.Bars, bar{X: x(r.SentAt), W: bw, Class: requestClass(r), Title: title})
		if until, ok := retryUntil(r); ok && until.After(ends[i]) && until.Sub(ends[i]) < 24*time.Hour {
			ln.Waits = append(ln.Waits, span{X: x(ends[i]), W: w(ends[i], until),
				Title: fmt.Sprintf("Retry-After %s → %s", r.RetryAfter, fmtClock(until))})
		}
		prevEnd[host] = maxTime(prevEnd[host], ends[i])
	}
	tl.Axis = tlTop + float64(len(tl.Lanes))*tlLaneH + 4
	tl.Height = tl.Axis + tlAxisSpace
	step := tickStep(spanD)
	first := start.Truncate(step)
	if first.Before(start) {
		first = first.Add(step)
	}
	for at := first; !at.After(end); at = at.Add(step) {
		tl.Ticks = append(tl.Ticks, tick{X: x(at), Label: tickLabel(at, step)})
	}
	return tl
}

// tickStep picks a round step giving at most ten ticks over d.
func tickStep(d time.Duration) time.Duration {
	for _, s := range []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
	} {
		if d/s <= 10 {
			return s
		}
	}
	return 30 * 24 * time.Hour
}

func tickLabel(t time.Time, step time.Duration) string {
	switch {
	case step < time.Second:
		return t.UTC().Format("15:04:05.0")
	case step >= 24*time.Hour:
		return t.UTC().Format("01-02")
	}
	return t.UTC().Format("15:04:05")
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// fmtClock renders a time of day with milliseconds, UTC.
func fmtClock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// fmtMS renders a duration given in milliseconds.
func fmtMS(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 60000:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", float64(ms)/1000), "0"), ".") + " s"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}
