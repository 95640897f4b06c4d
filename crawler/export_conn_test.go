package crawler

import "time"

// SetKeepAliveGap sets the longest gap across which the crawler keeps a
// host's connection open (maxKeepAliveGap), so a test need not wait seconds.
// Call it before crawling.
func (c *Crawler) SetKeepAliveGap(d time.Duration) { c.keepAliveGap = d }
