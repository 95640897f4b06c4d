package mailbot_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/policy"
)

// fakeParse classifies by the X-Test-* headers of the test messages, so the
// tests of what happens to a message do not depend on the classifier.
func fakeParse(raw []byte) *mailbot.Message {
	m := &mailbot.Message{Intent: mailbot.IntentOther, Size: len(raw)}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.Review = "malformed: " + err.Error()
		return m
	}
	h := msg.Header
	m.MessageID = strings.Trim(strings.TrimSpace(h.Get("Message-Id")), "<>")
	if a, err := mail.ParseAddress(h.Get("From")); err == nil {
		m.From = strings.ToLower(a.Address)
	}
	m.Subject = h.Get("Subject")
	if d, err := mail.ParseDate(h.Get("Date")); err == nil {
		m.Date = d
	}
	if in := h.Get("X-Test-Intent"); in != "" {
		m.Intent = mailbot.Intent(in)
	}
	m.Domains = strings.Fields(h.Get("X-Test-Domains"))
	slices.Sort(m.Domains)
	m.Review = h.Get("X-Test-Review")
	// The classifier's act-alone verdict: an exclusion passes it unless
	// X-Test-Action says otherwise.
	m.Action = mailbot.Action(h.Get("X-Test-Action"))
	if m.Action == "" && m.Intent == mailbot.IntentExclude {
		m.Action = mailbot.ActionApply
	}
	if ar := h.Get("Authentication-Results"); strings.Contains(ar, "dkim=pass") {
		m.Auth = mailbot.Auth{DKIM: "pass", SPF: "pass", DMARC: "pass"}
		if at := strings.LastIndexByte(m.From, '@'); at >= 0 {
			m.Auth.Domain = m.From[at+1:]
			m.Auth.Aligned = m.Auth.Domain
		}
	} else if strings.Contains(ar, "spf=pass") {
		m.Auth = mailbot.Auth{SPF: "pass"}
		if at := strings.LastIndexByte(m.From, '@'); at >= 0 {
			m.Auth.Domain = m.From[at+1:]
			m.Auth.Aligned = m.Auth.Domain
		}
	}
	return m
}

// testMessage builds a message the fake parser understands.
func testMessage(id, intent, domains string) []byte {
	var b strings.Builder
	b.WriteString("From: Web Master <webmaster@example.net>\r\n")
	b.WriteString("To: message@lohisoft.com\r\n")
	b.WriteString("Subject: test " + intent + " " + domains + "\r\n")
	b.WriteString("Date: Mon, 02 Mar 2026 09:15:00 +0100\r\n")
	if id != "" {
		b.WriteString("Message-ID: <" + id + ">\r\n")
	}
	b.WriteString("X-Test-Intent: " + intent + "\r\n")
	b.WriteString("X-Test-Domains: " + domains + "\r\n")
	b.WriteString("\r\nPlease do what the headers say.\r\n")
	return []byte(b.String())
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "mailbot", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newProcessor opens the database at dsn and returns a processor with the
// fake parser.
func newProcessor(t testing.TB, dsn string) (*mailbot.Processor, *policy.Policy, *db.Store) {
	t.Helper()
	store := dbtest.OpenDSN(t, dsn)
	pol := policy.New(store, nil)
	return mailbot.New(pol, &mailbot.Options{Parse: fakeParse, Logger: quietLogger()}), pol, store
}

func newSQLiteProcessor(t testing.TB) (*mailbot.Processor, *policy.Policy, *db.Store) {
	t.Helper()
	return newProcessor(t, dbtest.DSN(t, "sqlite"))
}

func excludedSites(t testing.TB, pol *policy.Policy) []string {
	t.Helper()
	list, err := pol.Exclusions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ex := range list {
		out = append(out, ex.Site)
	}
	return out
}

func countRows(t testing.TB, store *db.Store, model any, where string, args ...any) int64 {
	t.Helper()
	var n int64
	q := dbtest.Gorm(store).Model(model)
	if where != "" {
		q = q.Where(where, args...)
	}
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func newPolicy(store *db.Store) *policy.Policy { return policy.New(store, nil) }
