package mailbot

import (
	"context"
	"runtime"
	"sync"
)

// ImportOptions configures Import. A nil *ImportOptions is the zero value.
type ImportOptions struct {
	// Workers is how many messages are parsed and applied at once. Zero
	// means runtime.GOMAXPROCS(0).
	Workers int
	// OnResult, when not nil, is called after each message with its
	// result, or with the error that kept it from being stored. It may be
	// called from several goroutines at once, in no particular order.
	OnResult func(source string, res *Result, err error)
}

// ImportSummary counts what Import did. Excluded, Queued, Ignored and
// Failed count the messages stored by this import by outcome (Failed also
// counts messages that could not be stored at all); Duplicates counts
// messages that were already stored, which changed nothing.
type ImportSummary struct {
	Messages   int `json:"messages"`
	Excluded   int `json:"excluded"`
	Queued     int `json:"queued"`
	Ignored    int `json:"ignored"`
	Failed     int `json:"failed"`
	Duplicates int `json:"duplicates"`
	// RepliesSent and RepliesQueued count the replies sent, and those that
	// could not be sent yet (retried later), when replies are on.
	RepliesSent   int `json:"replies_sent"`
	RepliesQueued int `json:"replies_queued"`
}

// Count adds one message to the summary: res and err are what Process
// returned for it.
func (s *ImportSummary) Count(res *Result, err error) {
	s.Messages++
	switch {
	case err != nil:
		s.Failed++
	case res.Duplicate:
		s.Duplicates++
	default:
		switch res.Outcome {
		case OutcomeExcluded:
			s.Excluded++
		case OutcomeQueued:
			s.Queued++
		case OutcomeIgnored:
			s.Ignored++
		default:
			s.Failed++
		}
	}
}

// Import applies every message of the files and folders named by paths (see
// ReadSource: single messages, mboxes and Maildirs), several at a time. A
// message that cannot be stored is counted as failed and the import goes
// on; the error returned is a failure to read a source, or ctx's. The
// summary counts what was done either way. Import does I/O.
func (p *Processor) Import(ctx context.Context, paths []string, opts *ImportOptions) (*ImportSummary, error) {
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	type item struct {
		raw    []byte
		source string
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan item, 4*o.Workers)

	var (
		mu  sync.Mutex // guards sum
		sum ImportSummary
		wg  sync.WaitGroup
	)
	for range o.Workers {
		wg.Go(func() {
			for it := range items {
				res, err := p.Process(ctx, it.raw, it.source)
				mu.Lock()
				sum.Count(res, err)
				mu.Unlock()
				if o.OnResult != nil {
					o.OnResult(it.source, res, err)
				}
			}
		})
	}

	var readErr error
	for _, path := range paths {
		readErr = ReadSource(ctx, path, func(raw []byte, source string) error {
			select {
			case items <- item{raw, source}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if readErr != nil {
			break
		}
	}
	close(items)
	wg.Wait()
	if readErr == nil {
		readErr = ctx.Err()
	}
	return &sum, readErr
}
