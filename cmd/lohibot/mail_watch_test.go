package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/testenv/dbtest"
	"github.com/lohisoft/lohibot/internal/testenv/imaptest"
)

// TestMailWatchSummaryOnlyWhenRead: mail watch prints its summary ("processed
// N messages") only when it read the mailbox. Against a server that does
// not answer or refuses the login it prints the error alone, with the exit
// code it had (1); against a mailbox it read, empty, it says it processed 0
// messages.
func TestMailWatchSummaryOnlyWhenRead(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	srv := imaptest.Start(t, nil) // bot@test, secret
	env := []string{"LOHIBOT_DB=" + dbtest.DSN(t, "sqlite"), "LOHIBOT_IMAP_PASSWORD=secret"}
	wrongPw := []string{env[0], "LOHIBOT_IMAP_PASSWORD=wrong"}
	for _, c := range []struct {
		name string
		env  []string
		imap string
	}{
		{"unreachable", env, "imap://bot@" + closed + "/INBOX"},
		{"login refused", wrongPw, "imap://bot%40test@" + srv.Addr + "/INBOX"},
	} {
		for _, asJSON := range []bool{false, true} {
			args := []string{"mail", "watch", "--imap", c.imap, "--insecure", "--once"}
			if asJSON {
				args = append(args, "--json")
			}
			r := runCLI(t, c.env, args...)
			if r.code != 1 || r.stdout != "" || r.stderr == "" {
				t.Errorf("%s, json %v: exit %d, stdout %q, stderr %q; want exit 1, the error alone", c.name, asJSON, r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "processed") {
				t.Errorf("%s, json %v: stderr %q has a summary", c.name, asJSON, r.stderr)
			}
		}
	}
	r := runCLI(t, env, "mail", "watch", "--imap", "imap://bot%40test@"+srv.Addr+"/INBOX", "--insecure", "--once")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "processed 0 messages") {
		t.Errorf("mail watch of an empty mailbox: exit %d, stdout %q, stderr %q; want processed 0 messages", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, env, "mail", "watch", "--imap", "imap://bot%40test@"+srv.Addr+"/INBOX", "--insecure", "--once", "--json")
	var sum map[string]int
	if err := json.Unmarshal([]byte(r.stdout), &sum); r.code != 0 || err != nil || sum["messages"] != 0 {
		t.Errorf("mail watch --json of an empty mailbox: exit %d, stdout %q (%v); want a summary of 0 messages", r.code, r.stdout, err)
	}
}
