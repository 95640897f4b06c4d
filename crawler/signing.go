package crawler

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/clock"
	"github.com/lohisoft/lohibot/webbotauth"
)

// startSigningRun records in the database that node's crawler starts now,
// signing with s's key, or not signing (s nil): the audit then holds every
// request node sends against it. clk tells the time.
func startSigningRun(ctx context.Context, store *db.Store, node string, s *webbotauth.Signer, clk clock.Clock) error {
	keyID, jwk := "", ""
	if s != nil {
		b, err := json.Marshal(webbotauth.PublicJWK(s.Public()))
		if err != nil {
			return fmt.Errorf("crawler: %w", err)
		}
		keyID, jwk = s.KeyID(), string(b)
	}
	if err := store.StartSigningRun(ctx, node, keyID, jwk, clk.Now().UTC().Truncate(time.Microsecond)); err != nil {
		return fmt.Errorf("crawler: %w", err)
	}
	return nil
}
