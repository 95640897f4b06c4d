package demo

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"log"
	"net"
	"path"
	"sort"
	"strconv"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/lohisoft/lohibot/mailbot"
)

// The sample emails: the first four wait in the mailbox when the demo
// starts, the last one arrives in the middle of the crawl.
//
//go:embed mail/*.eml
var mailFS embed.FS

// midCrawlMail is the file of the email that arrives during the crawl.
const midCrawlMail = "mail/5-en-stop.eml"

// The mailbox account of the in-process IMAP server.
const (
	imapUser     = "message@lohisoft.test"
	imapPassword = "demo"
)

// SampleMail returns the demo's sample emails: those waiting in the mailbox
// at the start (Italian and Danish exclusions, a Hungarian question, a
// German auto-reply), and the English exclusion that arrives mid-crawl. The
// end-to-end test delivers the same emails to a real Dovecot.
func SampleMail() (initial [][]byte, midCrawl []byte, err error) {
	if initial, err = sampleMail(); err != nil {
		return nil, nil, err
	}
	if midCrawl, err = mailFS.ReadFile(midCrawlMail); err != nil {
		return nil, nil, err
	}
	return initial, midCrawl, nil
}

// sampleMail returns the sample emails waiting at the start, in order.
func sampleMail() ([][]byte, error) {
	names, err := mailFS.ReadDir("mail")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, n := range names {
		if p := path.Join("mail", n.Name()); p != midCrawlMail {
			files = append(files, p)
		}
	}
	sort.Strings(files)
	var out [][]byte
	for _, f := range files {
		b, err := mailFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// mailbox is go-imap's in-memory IMAP server on a loopback port, holding
// the exclusion mailbox.
type mailbox struct {
	user *imapmemserver.User
	srv  *imapserver.Server
	addr string
}

// startMailbox serves an IMAP server (IMAP4rev2: IDLE, MOVE) on
// 127.0.0.1 with msgs in INBOX.
func startMailbox(msgs [][]byte) (*mailbox, error) {
	mem := imapmemserver.New()
	user := imapmemserver.NewUser(imapUser, imapPassword)
	if err := user.Create("INBOX", nil); err != nil {
		return nil, fmt.Errorf("demo: imap: %w", err)
	}
	mem.AddUser(user)
	m := &mailbox{user: user}
	for _, raw := range msgs {
		if err := m.deliver(raw); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: imap: %w", err)
	}
	m.addr = ln.Addr().String()
	m.srv = imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	})
	go m.srv.Serve(ln)
	return m, nil
}

// deliver appends a message to INBOX, as a mail server does on delivery.
func (m *mailbox) deliver(raw []byte) error {
	if _, err := m.user.Append("INBOX", bytes.NewReader(raw), &imap.AppendOptions{}); err != nil {
		return fmt.Errorf("demo: imap append: %w", err)
	}
	return nil
}

// count returns how many messages a folder holds (-1: no such folder).
func (m *mailbox) count(folder string) int {
	st, err := m.user.Status(folder, &imap.StatusOptions{NumMessages: true})
	if err != nil || st.NumMessages == nil {
		return -1
	}
	return int(*st.NumMessages)
}

// endpoint is the watcher's view of the mailbox: plain IMAP on loopback.
func (m *mailbox) endpoint() mailbot.Endpoint {
	host, port, _ := net.SplitHostPort(m.addr)
	p, _ := strconv.Atoi(port)
	return mailbot.Endpoint{Security: mailbot.SecurityStartTLS, Host: host, Port: p, Username: imapUser, Mailbox: "INBOX"}
}

func (m *mailbox) close() {
	if m.srv != nil {
		m.srv.Close()
	}
}
