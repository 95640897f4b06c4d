package main

import (
	"io"
	"strings"

	"github.com/lohisoft/lohibot/internal/termsafe"
)

// table lays out text output in columns. Each cell is escaped for the
// terminal (termsafe.String: control characters, tabs and newlines become
// visible escapes) before it is measured, and measured in terminal columns
// (termsafe.Width: 漢 takes two), so a cell holding an escape or wide
// characters keeps the columns after it in line; text/tabwriter measured the
// text before out escaped it, in runes. Two spaces separate columns; the last
// cell of a row is not padded. The zero table is empty and ready to use.
type table struct {
	rows [][]string // escaped cells
}

// add appends a row of cells.
func (t *table) add(cells ...string) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = termsafe.String(c)
	}
	t.rows = append(t.rows, row)
}

// lines returns the rows laid out, without newlines. A column is as wide as
// its widest cell that another cell follows.
func (t *table) lines() []string {
	var widths []int
	for _, row := range t.rows {
		for i, c := range row[:max(len(row)-1, 0)] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], termsafe.Width(c))
		}
	}
	out := make([]string, len(t.rows))
	var b strings.Builder
	for r, row := range t.rows {
		b.Reset()
		for i, c := range row {
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-termsafe.Width(c)+2))
			}
		}
		out[r] = b.String()
	}
	return out
}

// write writes the rows laid out, one a line.
func (t *table) write(w io.Writer) error {
	for _, l := range t.lines() {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}
