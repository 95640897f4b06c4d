package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/redact"
)

var cases = []struct {
	name, in, want string
}{
	{"postgres URL", "postgres://bot:s3cret@db.example:5432/lohibot?sslmode=disable", "postgres://bot:xxxxx@db.example:5432/lohibot?sslmode=disable"},
	{"imaps URL", "refused imaps://u:pw@mail.example/INBOX: no password", "refused imaps://u:xxxxx@mail.example/INBOX: no password"},
	{"query password", "postgres://db.example/x?password=s3cret&sslmode=disable", "postgres://db.example/x?password=xxxxx&sslmode=disable"},
	{"libpq keywords", "host=db user=bot password='s 3cret' dbname=x", "host=db user=bot password=xxxxx dbname=x"},
	{"driver error", "cannot parse `postgres://a:%zz@h/?password=s3cret`: invalid URL escape", "cannot parse `postgres://a:xxxxx@h/?password=xxxxx`: invalid URL escape"},
	{"user only", "imaps://bot@mail.example/INBOX", "imaps://bot@mail.example/INBOX"},
	{"no secret", "lohibot: exclude: example.com is not excluded", "lohibot: exclude: example.com is not excluded"},
	{"crawl URL", "http://alice:s3cret@host.example/", "http://alice:xxxxx@host.example/"},
	{"slash in password", `refused imaps://u:pa/ss1@host/INBOX: no user`, `refused imaps://u:xxxxx@host/INBOX: no user`},
	{"blank in quoted URL", `bad IMAP URL "imaps://u:pa ss2@host/INBOX": a password`, `bad IMAP URL "imaps://u:xxxxx@host/INBOX": a password`},
	{"slash and blank in quoted URL", `parse "smtp://u:p/a s@s3@host:587": invalid`, `parse "smtp://u:xxxxx@host:587": invalid`},
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"imaps://u:pa/ss1@host/INBOX":    "imaps://u:xxxxx@host/INBOX",
		"smtp://u:pa ss@x@host:587":      "smtp://u:xxxxx@host:587",
		"smtp://bot%40lohisoft.com@host": "smtp://bot%40lohisoft.com@host",
		"imaps://host/INBOX":             "imaps://host/INBOX",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestString(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := redact.String(c.in); got != c.want {
				t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestReplaceAttr(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: redact.ReplaceAttr}))
	log.Info("open", "dsn", "postgres://u:s3cret@h/db", "err", errors.New("dial imaps://u:pw2@h: refused"))
	if strings.Contains(buf.String(), "s3cret") || strings.Contains(buf.String(), "pw2") {
		t.Errorf("log line holds a secret: %s", buf.String())
	}
}
