package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/policy"
)

// sitesFromBatch is how many sites of a --from list are added in one
// transaction: memory stays bounded whatever the list's length, and a
// million lines take a few hundred commits.
const sitesFromBatch = 5000

// maxSiteLine bounds a line of a --from list; a longer one is invalid.
const maxSiteLine = 8 << 10

// sitesFromCounts is what sites add --from prints.
type sitesFromCounts struct {
	Added    int `json:"added"`
	Listed   int `json:"already_listed"`
	Excluded int `json:"excluded"`
	Invalid  int `json:"invalid"`
}

// listLine returns the domain or URL a line of a --from list names, or ""
// for a blank line or a comment. A line is a domain or URL, or "rank,domain"
// (the Tranco list's CSV); '#' starts a comment at the start of a line or
// after a space.
func listLine(line string) (string, error) {
	s := strings.TrimSpace(line)
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if i := strings.Index(s, "\t#"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if s == "" || strings.HasPrefix(s, "#") {
		return "", nil
	}
	if !utf8.ValidString(s) {
		return "", errors.New("not valid UTF-8")
	}
	if rank, domain, ok := strings.Cut(s, ","); ok {
		if rank = strings.TrimSpace(rank); rank == "" || strings.Trim(rank, "0123456789") != "" {
			return "", errors.New(`a CSV line must be "rank,domain"`)
		}
		domain, _, _ = strings.Cut(domain, ",")
		if s = strings.TrimSpace(domain); s == "" {
			return "", errors.New(`a CSV line must be "rank,domain"`)
		}
	}
	return s, nil
}

// runSitesAddFrom adds the sites listed in opts.From ("-": opts.In), a
// batch at a time, and prints the counts. Each invalid line is named on
// ErrOut with its number; it returns refused (exit 1) when there was one,
// and an input error (exit 2) when the list cannot be read.
func runSitesAddFrom(ctx context.Context, opts *sitesAddOptions, out io.Writer) error {
	in := opts.In
	if opts.From != "-" {
		f, err := os.Open(opts.From)
		if err != nil {
			return &exitError{code: exitBadInput, err: fmt.Errorf("--from: %w", err)}
		}
		defer f.Close()
		in = f
	}
	var (
		counts sitesFromCounts
		batch  []db.NewSite
	)
	change := policy.Change{Actor: opts.By, Source: "cli", Reason: "bulk import"}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := opts.Policy.AddSitesBulk(ctx, batch, change)
		if err != nil {
			return err
		}
		counts.Added += res.Added
		counts.Listed += res.Listed
		counts.Excluded += res.Excluded
		batch = batch[:0]
		return nil
	}
	r := bufio.NewReaderSize(in, maxSiteLine)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r)
		if err == io.EOF && line == nil {
			break
		}
		if err != nil && err != io.EOF {
			return &exitError{code: exitBadInput, err: fmt.Errorf("--from: line %d: %w", n, err)}
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		bad := func(input string, why string) {
			counts.Invalid++
			if input != "" {
				fmt.Fprintf(opts.errOut(), "lohibot: line %d: %s: %s\n", n, policy.MaskPassword(input), why)
			} else {
				fmt.Fprintf(opts.errOut(), "lohibot: line %d: %s\n", n, why)
			}
		}
		if tooLong {
			bad("", fmt.Sprintf("longer than %d bytes", maxSiteLine))
			continue
		}
		input, lerr := listLine(string(line))
		switch {
		case lerr != nil:
			bad("", lerr.Error())
		case input == "":
		default:
			entry, err := policy.SiteEntry(input)
			if err != nil {
				var se *policy.SiteError
				if errors.As(err, &se) {
					bad(input, se.Reason)
				} else {
					bad(input, userMessage(err))
				}
				continue
			}
			batch = append(batch, entry)
			if len(batch) >= sitesFromBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			break
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if opts.JSON {
		if err := printJSON(out, counts); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "%d added, %d already on the list, %d skipped because excluded, %d invalid\n",
			counts.Added, counts.Listed, counts.Excluded, counts.Invalid)
	}
	if counts.Invalid > 0 {
		return refused
	}
	return nil
}

// readLine reads one line of r without its line ending. A line longer than
// r's buffer is skipped to its end and reported tooLong. At the end of the
// input it returns io.EOF, with the last line when it had no line ending.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	line, err = r.ReadSlice('\n')
	for errors.Is(err, bufio.ErrBufferFull) {
		tooLong = true
		_, err = r.ReadSlice('\n')
	}
	if err == io.EOF && len(line) == 0 && !tooLong {
		return nil, false, io.EOF
	}
	line = bytes.TrimRight(line, "\r\n")
	return line, tooLong, err
}
