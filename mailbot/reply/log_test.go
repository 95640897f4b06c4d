package reply_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot/reply"
)

// TestAckNamesTheLog: with a log URL, an acknowledgement in every
// language says where the checkpoint including the exclusion is
// published; without one, it does not mention a log.
func TestAckNamesTheLog(t *testing.T) {
	ctx := context.Background()
	for i, lang := range append(reply.Languages(), "") {
		store := dbtest.OpenDSN(t, dbtest.DSN(t, "sqlite"))
		logURL := "https://lohisoft.com/bot/log"
		if lang == "" {
			logURL = ""
		}
		r := reply.New(store, &reply.Options{Now: func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) },
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LogURL: logURL})
		raw := []byte(baseHeader + "\r\nVi chiedo di non indicizzare forno-example.it.\r\n")
		rep, skip, err := r.Queue(ctx, reply.Request{MailID: int64(i + 1), Raw: raw, Kind: db.ReplyAck,
			Sites: []string{"forno-example.it"}, Lang: lang, Authenticated: "forno-example.it"})
		if err != nil || rep == nil {
			t.Fatalf("%s: Queue = %v, %q, %v", lang, rep, skip, err)
		}
		_, body := readReply(t, rep.Raw)
		flat := strings.Join(strings.Fields(body), " ")
		has := strings.Contains(flat, "https://lohisoft.com/bot/log/checkpoint")
		if logURL != "" && !has {
			t.Errorf("%s: the acknowledgement does not name the log's checkpoint:\n%s", lang, body)
		}
		if logURL == "" && strings.Contains(flat, "/bot/log") {
			t.Errorf("without a log URL the acknowledgement names a log:\n%s", body)
		}
	}
}
