package mailbot_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lohisoft/lohibot/mailbot"
)

var imapURLTests = []struct {
	in       string
	want     *mailbot.Endpoint
	addr     string
	loopback bool
}{
	{"imaps://bot@imap.example.com/INBOX", &mailbot.Endpoint{Security: mailbot.SecurityTLS, Host: "imap.example.com", Port: 993, Username: "bot", Mailbox: "INBOX"}, "imap.example.com:993", false},
	{"imap://bot@Mail.Example.com", &mailbot.Endpoint{Security: mailbot.SecurityStartTLS, Host: "mail.example.com", Port: 143, Username: "bot", Mailbox: "INBOX"}, "mail.example.com:143", false},
	{"imaps://message@lohisoft.com@127.0.0.1:10993/INBOX", &mailbot.Endpoint{Security: mailbot.SecurityTLS, Host: "127.0.0.1", Port: 10993, Username: "message@lohisoft.com", Mailbox: "INBOX"}, "127.0.0.1:10993", true},
	{"imaps://message%40lohisoft.com@localhost:993/Exclusions%2FNew", &mailbot.Endpoint{Security: mailbot.SecurityTLS, Host: "localhost", Port: 993, Username: "message@lohisoft.com", Mailbox: "Exclusions/New"}, "localhost:993", true},
	{"imap://bot@[::1]:1143/", &mailbot.Endpoint{Security: mailbot.SecurityStartTLS, Host: "::1", Port: 1143, Username: "bot", Mailbox: "INBOX"}, "[::1]:1143", true},
	{"imap://bot@[::1]/x", &mailbot.Endpoint{Security: mailbot.SecurityStartTLS, Host: "::1", Port: 143, Username: "bot", Mailbox: "x"}, "[::1]:143", true},
	{"http://bot@example.com/", nil, "", false},
	{"imaps://example.com/INBOX", nil, "", false},
	{"imaps://bot:secret@example.com/INBOX", nil, "", false},
	{"imaps://bot@example.com:99999/INBOX", nil, "", false},
	{"imaps://bot@example.com:x/INBOX", nil, "", false},
	{"imaps://bot@/INBOX", nil, "", false},
	{"imaps://bot@example.com/INBOX?x=1", nil, "", false},
}

func TestParseIMAPURL(t *testing.T) {
	for _, tt := range imapURLTests {
		got, err := mailbot.ParseIMAPURL(tt.in)
		if tt.want == nil {
			if err == nil || !errors.Is(err, mailbot.ErrBadURL) {
				t.Errorf("ParseIMAPURL(%q) = %+v, %v; want ErrBadURL", tt.in, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseIMAPURL(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseIMAPURL(%q) (-want +got):\n%s", tt.in, diff)
		}
		if got.Addr() != tt.addr || got.IsLoopback() != tt.loopback {
			t.Errorf("ParseIMAPURL(%q): Addr %q IsLoopback %v, want %q %v", tt.in, got.Addr(), got.IsLoopback(), tt.addr, tt.loopback)
		}
		// String round-trips.
		again, err := mailbot.ParseIMAPURL(got.String())
		if err != nil || !cmp.Equal(again, got) {
			t.Errorf("ParseIMAPURL(%q.String() = %q) = %+v, %v; want the same endpoint", tt.in, got.String(), again, err)
		}
	}
}
