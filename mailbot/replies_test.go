package mailbot_test

import (
	"context"
	"net"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/mailbot/reply"
	"github.com/lohisoft/lohibot/policy"
)

// A reply that cannot be sent stays queued; the exclusion it acknowledges
// is committed and stays.
func TestReplyFailureKeepsExclusion(t *testing.T) {
	dbtest.ForEach(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		store := dbtest.OpenDSN(t, dsn)
		// A port nothing listens on.
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		m, err := reply.ParseSMTPURL("smtp://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		m.Insecure = true
		replies := reply.New(store, &reply.Options{Sender: m, Logger: quietLogger()})
		pol := policy.New(store, nil)
		proc := mailbot.New(pol, &mailbot.Options{Parse: fakeParse, Logger: quietLogger(), Replies: replies})

		res, err := proc.Process(ctx, readTestdata(t, "exclude-one.eml"), "test")
		if err != nil || res.Outcome != mailbot.OutcomeExcluded || res.ReplyID == 0 {
			t.Fatalf("Process = %+v, %v; want excluded with a reply queued", res, err)
		}
		if sent, pending, err := replies.Flush(ctx); err != nil || sent != 0 || pending != 1 {
			t.Fatalf("Flush to a dead server = %d sent, %d pending, %v", sent, pending, err)
		}
		if got := excludedSites(t, pol); len(got) != 1 || got[0] != "bakery-example.com" {
			t.Errorf("exclusions after a failed reply = %v", got)
		}
		reps, err := store.MailRepliesOf(ctx, res.ID)
		if err != nil || len(reps) != 1 || reps[0].Status != db.ReplyQueued || reps[0].Attempts != 1 ||
			reps[0].NextAttemptAt == nil || reps[0].LastError == "" || len(reps[0].Raw) == 0 {
			t.Errorf("stored reply = %+v, %v; want queued for a retry with its bytes", reps, err)
		}
		// Automatic mail gets no reply; nothing is queued for it.
		res, err = proc.Process(ctx, readTestdata(t, "auto.eml"), "test")
		if err != nil || res.ReplyID != 0 || res.ReplySkipped == "" {
			t.Errorf("Process(auto) = %+v, %v; want no reply", res, err)
		}
		// A message for staff gets the "received" reply.
		res, err = proc.Process(ctx, readTestdata(t, "other.eml"), "test")
		if err != nil || res.ReplyID == 0 {
			t.Fatalf("Process(other) = %+v, %v; want a reply queued", res, err)
		}
		reps, _ = store.MailRepliesOf(ctx, res.ID)
		if len(reps) != 1 || reps[0].Kind != db.ReplyReceived {
			t.Errorf("reply to a queued message = %+v", reps)
		}
	})
}
