package crawler

import "time"

// SetKeepAliveGap sets the longest gap across which the crawler keeps a
// host's connection open (maxKeepAliveGap), so a test need not wait seconds.
// Call it before crawling.
func (c *Crawler) SetKeepAliveGap(d time.Duration) { c.keepAliveGap = d }

// SetWorkBounds sets how many sites may start at once and how many sites'
// steps may run at once, so a test need not crawl hundreds of sites to
// reach them. Call it before crawling.
func (c *Crawler) SetWorkBounds(starting, steps int) {
	c.starting = make(chan struct{}, starting)
	c.maxSteps = steps
}
