package mailbot

import (
	"context"
	"runtime"
	"sync"

	"github.com/lohisoft/lohibot/internal/batch"
	"golang.org/x/sync/semaphore"
)

// ImportOptions configures Import. A nil *ImportOptions is the zero value.
type ImportOptions struct {
	// Workers is how many messages are parsed at once (one writer applies
	// them, in groups). Zero means runtime.GOMAXPROCS(0).
	Workers int
	// OnResult, when not nil, is called after each message with its
	// result, or with the error that kept it from being stored, one call at
	// a time, in the order the messages were read.
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

// importGroup is the most messages Import applies in one transaction.
const importGroup = 256

// importBytes bounds the bytes of the messages Import has read and not yet
// applied, whatever their sizes.
const importBytes = 64 << 20

// Count counts one message's result (or the error that kept it from being
// stored).
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
// ReadSource: single messages, mboxes and Maildirs), parsing several at a
// time and storing them in the order they were read: the ids, which copy of
// a repeated Message-ID is stored (the first read) and the order of
// OnResult calls are the same on every run. A
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
		seq    int // the order of reading
		raw    []byte
		source string
	}
	type parsedItem struct {
		seq int
		p   *pending
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan item, 4*o.Workers)
	// Messages are parsed by the workers, several at a time, and applied
	// by one writer in groups: one transaction per group, one savepoint
	// per message (applyGroup).
	parsed := make(chan parsedItem, 4*importGroup)
	// The bytes read and not yet applied are bounded (a large message
	// weighs up to importBytes).
	inFlight := semaphore.NewWeighted(importBytes)
	weight := func(raw []byte) int64 { return min(int64(len(raw)), importBytes) }

	var (
		sum     ImportSummary
		workers sync.WaitGroup
		writer  sync.WaitGroup
	)
	for range o.Workers {
		workers.Go(func() {
			for it := range items {
				parsed <- parsedItem{it.seq, p.prepare(it.raw, it.source)}
			}
		})
	}
	writer.Go(func() {
		// Workers finish out of order: a message waits in held until
		// those read before it are applied. held is bounded by inFlight,
		// as the bytes of what it holds are not released yet.
		held := map[int]*pending{}
		next := 0 // the seq to apply next
		for first := range parsed {
			for _, it := range batch.Drain(parsed, []parsedItem{first}, importGroup) {
				held[it.seq] = it.p
			}
			for {
				var group []*pending
				for len(group) < importGroup {
					it, ok := held[next]
					if !ok {
						break
					}
					delete(held, next)
					group = append(group, it)
					next++
				}
				if len(group) == 0 {
					break
				}
				p.applyGroup(ctx, group)
				for _, it := range group {
					inFlight.Release(weight(it.raw))
					sum.Count(it.res, it.err)
					if o.OnResult != nil {
						o.OnResult(it.source, it.res, it.err)
					}
				}
			}
		}
	})

	var readErr error
	seq := 0
	for _, path := range paths {
		readErr = ReadSource(ctx, path, func(raw []byte, source string) error {
			if err := inFlight.Acquire(ctx, weight(raw)); err != nil {
				return err
			}
			select {
			case items <- item{seq, raw, source}:
				seq++
				return nil
			case <-ctx.Done():
				inFlight.Release(weight(raw))
				return ctx.Err()
			}
		})
		if readErr != nil {
			break
		}
	}
	close(items)
	workers.Wait()
	close(parsed)
	writer.Wait()
	if readErr == nil {
		readErr = ctx.Err()
	}
	return &sum, readErr
}
