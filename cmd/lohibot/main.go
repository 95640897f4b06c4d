// Command lohibot is the admin toolkit behind LohiSoftBot: exclusions and the
// crawl list, the exclusion mailbox, the polite crawler, audits, reports and
// identity checks. See docs/commands.md for the command reference.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
