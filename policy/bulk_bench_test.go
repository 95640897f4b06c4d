package policy_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/policy"
)

// BenchmarkAddSitesBulk adds b.N sites to the crawl list in batches of
// 5,000 (as sites add --from does) and reports the rate.
//
//	go test -run '^$' -bench AddSitesBulk -benchtime 200000x ./policy/
func BenchmarkAddSitesBulk(b *testing.B) {
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			store := dbtest.Open(b, engine)
			p := policy.New(store, nil)
			ctx := context.Background()
			b.ResetTimer()
			batch := make([]db.NewSite, 0, 5000)
			for i := 0; i < b.N; i++ {
				name := fmt.Sprintf("site%08d.com", i)
				batch = append(batch, db.NewSite{Name: name, StartURL: "https://" + name + "/"})
				if len(batch) == cap(batch) || i == b.N-1 {
					if _, err := p.AddSitesBulk(ctx, batch, policy.Change{Actor: "bench", Source: "cli"}); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sites/s")
		})
	}
}
