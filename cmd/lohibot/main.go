// Command lohibot is the admin toolkit behind LohiSoftBot: exclusions and the
// crawl list, the exclusion mailbox, the polite crawler, audits, reports and
// identity checks. See docs/commands.md for the command reference.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		// The first interrupt stops the command the way it stops itself:
		// what is under way is recorded (a crawl completes its requests'
		// rows, which may wait for an unreachable database). The next one
		// is not caught: it ends the process at once, as kill -9 would,
		// which every record survives.
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		if s == os.Interrupt {
			fmt.Fprintln(os.Stderr, "lohibot: interrupted: finishing what is under way (interrupt again to quit at once)")
		}
		cancel()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	cancel()
	os.Exit(code)
}
