package demo

import (
	"context"
	"fmt"
	"os"

	"github.com/lohisoft/lohibot/audit/report"
	"github.com/lohisoft/lohibot/db"
)

// writeReport writes the HTML report of site to path, as `lohibot report
// SITE --format html -o PATH` does, and returns the report.
func writeReport(ctx context.Context, store *db.Store, site, path string) (*report.Report, error) {
	rep, err := report.Build(ctx, store, site, nil)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := report.WriteHTML(f, rep, "en"); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return rep, nil
}
