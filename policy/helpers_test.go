package policy_test

import (
	"strconv"
	"time"
)

func siteName(i int) string { return "site" + strconv.Itoa(i) + ".example" }

func testingNow() time.Time { return time.Now() }
