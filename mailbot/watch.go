package mailbot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/lohisoft/lohibot/internal/clock"
)

// Default folder names and timings of a Watcher.
const (
	DefaultProcessedFolder = "Processed"
	DefaultReviewFolder    = "Review"
	DefaultPollInterval    = 30 * time.Second
	DefaultIdleRefresh     = 5 * time.Minute
	DefaultMinBackoff      = time.Second
	DefaultMaxBackoff      = 2 * time.Minute
)

// WatchOptions configures a Watcher. A nil *WatchOptions is the zero value,
// which is not usable: Endpoint and Password (or Token) are needed.
type WatchOptions struct {
	// Endpoint is the server and mailbox to watch.
	Endpoint Endpoint
	// Password is the IMAP password (LOGIN, or AUTHENTICATE PLAIN when the
	// server disables LOGIN). It is only sent to the server, never logged.
	// Ignored when Token is set.
	Password string
	// Token, when not nil, returns an OAuth 2.0 access token; it is called
	// on every connect (so a token refreshed by someone else is picked up)
	// and the watcher authenticates with OAUTHBEARER (RFC 7628) or
	// XOAUTH2, whichever the server offers. Nil means Password.
	Token func() (string, error)
	// Insecure allows a plaintext connection (imap:// to a server that
	// offers no STARTTLS) and an unverified certificate. Meant for tests on
	// loopback only.
	Insecure bool
	// TLSConfig is the TLS configuration. Nil means the defaults, with the
	// certificate verified against Endpoint.Host.
	TLSConfig *tls.Config
	// ProcessedFolder receives the messages that were applied; "" means
	// DefaultProcessedFolder. ReviewFolder receives those that wait for
	// staff; "" means DefaultReviewFolder. Both are created when missing.
	ProcessedFolder string
	ReviewFolder    string
	// Once makes Run process what is in the mailbox and return.
	Once bool
	// PollInterval is how often the mailbox is searched when the server
	// has no IDLE (RFC 2177); zero means DefaultPollInterval.
	PollInterval time.Duration
	// IdleRefresh is how long one IDLE lasts before the mailbox is searched
	// again anyway (a safety net for lost notifications and half-open
	// connections); zero means DefaultIdleRefresh.
	IdleRefresh time.Duration
	// MinBackoff and MaxBackoff bound the exponential wait before
	// reconnecting after a failure; zero means DefaultMinBackoff and
	// DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Dialer dials the server. Nil means a net.Dialer with a 30 s timeout.
	Dialer *net.Dialer
	// Logger receives connection and message events. Nil means
	// slog.Default().
	Logger *slog.Logger
	// DebugWriter, when not nil, receives the raw IMAP conversation. It
	// holds the credentials: never point it at a shared log.
	DebugWriter io.Writer
	// OnState, when not nil, is called whenever the connection state
	// changes (for health checks). It must not block.
	OnState func(WatchState)
	// OnMessage, when not nil, is called after each message was committed
	// and moved (for metrics: counts by intent, time to exclusion). It must
	// not block.
	OnMessage func(WatchEvent)
	// Clock times the waits (the reconnect backoff, the poll interval, the
	// IDLE refresh, the logout grace) and WatchState.Since. Nil means the
	// system clock (clock.Real); tests pass a fake (package clocktest),
	// on which a pending timer also tells that the watcher is waiting (in
	// IDLE, once the server has acknowledged it).
	Clock clock.Clock
}

// WatchState is a Watcher's connection state.
type WatchState struct {
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"` // when Connected last changed (zero before the first attempt)
	LastError string    `json:"last_error,omitempty"`
	Processed int64     `json:"processed"` // messages committed and moved since the start
}

// WatchEvent describes one message the Watcher handled.
type WatchEvent struct {
	Result *Result
	UID    uint32
	// Delivered is the server's INTERNALDATE of the message: when it
	// accepted it (whole seconds on most servers).
	Delivered time.Time
	// Folder is where the message was moved.
	Folder string
}

// TimeToExclusion is the time from delivery to the commit of the
// exclusion, or zero when the message excluded nothing new.
func (ev *WatchEvent) TimeToExclusion() time.Duration {
	if ev.Result == nil || ev.Result.Duplicate || ev.Result.Outcome != OutcomeExcluded || ev.Delivered.IsZero() {
		return 0
	}
	return max(ev.Result.Committed.Sub(ev.Delivered), 0)
}

// Watcher watches an IMAP mailbox and applies every message that arrives
// through a Processor: it fetches it (BODY.PEEK[]), processes it, and only
// once the database has committed moves it to the processed folder, or to
// the review folder when it waits for staff. A crash between the two only
// means the message is seen again and skipped as a duplicate. It moves
// with MOVE (RFC 6851), or with COPY, \Deleted and (UID) EXPUNGE when the
// server lacks it (without UIDPLUS, a plain EXPUNGE also removes other
// messages already marked \Deleted in the mailbox). It waits with IDLE
// (RFC 2177), or polls when the server has no IDLE, and reconnects with
// exponential backoff after network and server failures.
//
// A Watcher's methods are safe for concurrent use; Run must not be called
// twice at once.
type Watcher struct {
	proc *Processor
	opts WatchOptions
	log  *slog.Logger

	mu    sync.Mutex // guards state
	state WatchState
}

// NewWatcher returns a Watcher applying messages with proc.
func NewWatcher(proc *Processor, opts *WatchOptions) *Watcher {
	var o WatchOptions
	if opts != nil {
		o = *opts
	}
	if o.ProcessedFolder == "" {
		o.ProcessedFolder = DefaultProcessedFolder
	}
	if o.ReviewFolder == "" {
		o.ReviewFolder = DefaultReviewFolder
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.IdleRefresh <= 0 {
		o.IdleRefresh = DefaultIdleRefresh
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Clock = clock.Or(o.Clock)
	return &Watcher{proc: proc, opts: o, log: o.Logger.With("imap", o.Endpoint.String())}
}

// State returns the current connection state.
func (w *Watcher) State() WatchState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

func (w *Watcher) setConnected(connected bool, err error) {
	w.mu.Lock()
	changed := w.state.Connected != connected || w.state.Since.IsZero()
	if changed {
		w.state.Connected = connected
		w.state.Since = w.opts.Clock.Now().UTC()
	}
	if err != nil {
		w.state.LastError = err.Error()
	}
	st := w.state
	w.mu.Unlock()
	if changed && w.opts.OnState != nil {
		w.opts.OnState(st)
	}
}

func (w *Watcher) countProcessed() {
	w.mu.Lock()
	w.state.Processed++
	w.mu.Unlock()
}

// Run watches the mailbox until ctx ends, then returns nil. With Once, it
// processes what the mailbox holds and returns; then an error means it
// could not finish (the messages left are handled on the next run).
// Without Once, failures are logged and retried with backoff, never
// returned. Run blocks; it does network and database I/O.
func (w *Watcher) Run(ctx context.Context) error {
	backoff := w.opts.MinBackoff
	for {
		connected, err := w.session(ctx)
		if ctx.Err() != nil {
			w.setConnected(false, nil)
			return nil
		}
		w.setConnected(false, err)
		if w.opts.Once {
			return err
		}
		if err == nil {
			err = errors.New("mailbot: imap session ended")
		}
		if connected {
			backoff = w.opts.MinBackoff
		}
		w.log.Warn("imap connection lost", "err", err, "retry_in", backoff.String())
		if clock.Sleep(ctx, w.opts.Clock, backoff) != nil {
			w.setConnected(false, nil)
			return nil
		}
		backoff = min(2*backoff, w.opts.MaxBackoff)
	}
}

// session runs one connection: log in, make the folders, select the
// mailbox, then process and wait in turn. connected reports whether the
// mailbox was selected.
// logoutGrace is how long a stopping session may take to finish its
// command and log out before its connection is closed.
const logoutGrace = 3 * time.Second

func (w *Watcher) session(ctx context.Context) (connected bool, err error) {
	newMail := make(chan struct{}, 1)
	copts := &imapclient.Options{
		DebugWriter: w.opts.DebugWriter,
		Dialer:      w.opts.Dialer,
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					select {
					case newMail <- struct{}{}:
					default:
					}
				}
			},
		},
	}
	c, plaintext, err := w.dial(copts)
	if err != nil {
		return false, err
	}
	// go-imap has no ctx. When ctx ends, the session logs out as soon as
	// the command in progress has finished; if that takes longer than
	// logoutGrace, the connection is closed, which unblocks whatever
	// command is waiting.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ctx.Done():
			t := w.opts.Clock.NewTimer(logoutGrace)
			defer t.Stop()
			select {
			case <-t.C():
				c.Close()
			case <-stop:
			}
		case <-stop:
		}
	})
	defer func() {
		if ctx.Err() != nil {
			select {
			case <-c.Closed():
			default:
				if err := c.Logout().Wait(); err != nil {
					w.log.Debug("imap logout", "err", err)
				}
			}
		}
		close(stop)
		wg.Wait()
		c.Close()
	}()

	if err := c.WaitGreeting(); err != nil {
		return false, fmt.Errorf("mailbot: imap greeting: %w", err)
	}
	if plaintext {
		w.log.Warn("imap connection is not encrypted (--insecure)")
	}
	if w.opts.Token != nil {
		token, err := w.opts.Token()
		if err != nil {
			return false, fmt.Errorf("mailbot: imap oauth token: %w", err)
		}
		ep := &w.opts.Endpoint
		if err := oauthLogin(c, ep.Username, token, ep.Host, ep.Port); err != nil {
			return false, fmt.Errorf("mailbot: imap login as %s: %w", ep.Username, err)
		}
	} else if err := passwordLogin(c, w.opts.Endpoint.Username, w.opts.Password); err != nil {
		return false, fmt.Errorf("mailbot: imap login as %s: %w", w.opts.Endpoint.Username, err)
	}
	for _, f := range []string{w.opts.ProcessedFolder, w.opts.ReviewFolder} {
		if err := ensureFolder(c, f); err != nil {
			return false, err
		}
	}
	if _, err := c.Select(w.opts.Endpoint.Mailbox, nil).Wait(); err != nil {
		return false, fmt.Errorf("mailbot: imap select %s: %w", w.opts.Endpoint.Mailbox, err)
	}
	idle := c.Caps().Has(imap.CapIdle)
	w.setConnected(true, nil)
	w.log.Info("imap connected", "mailbox", w.opts.Endpoint.Mailbox, "idle", idle)

	retry := w.opts.MinBackoff
	for {
		select { // anything that arrives from here on is seen by drain
		case <-newMail:
		default:
		}
		failed, err := w.drain(ctx, c)
		if err != nil {
			return true, err
		}
		if w.opts.Once {
			if failed > 0 {
				return true, fmt.Errorf("mailbot: %d messages could not be stored; they stay in %s", failed, w.opts.Endpoint.Mailbox)
			}
			if err := c.Logout().Wait(); err != nil {
				w.log.Debug("imap logout", "err", err)
			}
			return true, nil
		}
		wait := w.opts.IdleRefresh
		if !idle {
			wait = w.opts.PollInterval
		}
		if failed > 0 {
			// The database refused some messages: try them again soon,
			// backing off while it keeps failing.
			wait = min(wait, retry)
			retry = min(2*retry, w.opts.MaxBackoff)
		} else {
			retry = w.opts.MinBackoff
		}
		if idle {
			err = waitIdle(ctx, w.opts.Clock, c, newMail, wait)
		} else {
			err = waitPoll(ctx, w.opts.Clock, c, wait)
		}
		if err != nil {
			return true, err
		}
		if err := ctx.Err(); err != nil {
			return true, err
		}
	}
}

// dial connects as the endpoint's Security says. With Insecure, imap://
// uses STARTTLS when the server offers it and plaintext otherwise.
func (w *Watcher) dial(copts *imapclient.Options) (c *imapclient.Client, plaintext bool, err error) {
	ep := &w.opts.Endpoint
	var tlsConf *tls.Config
	if w.opts.TLSConfig != nil {
		tlsConf = w.opts.TLSConfig.Clone()
	} else {
		tlsConf = &tls.Config{}
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = ep.Host
	}
	if w.opts.Insecure {
		tlsConf.InsecureSkipVerify = true
	}
	copts.TLSConfig = tlsConf
	addr := ep.Addr()
	switch {
	case ep.Security == SecurityTLS:
		c, err = imapclient.DialTLS(addr, copts)
	case w.opts.Insecure:
		c, err = imapclient.DialInsecure(addr, copts)
		if err != nil {
			break
		}
		if err = c.WaitGreeting(); err != nil {
			c.Close()
			break
		}
		if !c.Caps().Has(imap.CapStartTLS) {
			return c, true, nil
		}
		c.Close()
		c, err = imapclient.DialStartTLS(addr, copts)
	default:
		c, err = imapclient.DialStartTLS(addr, copts)
	}
	if err != nil {
		return nil, false, fmt.Errorf("mailbot: imap connect %s: %w", addr, err)
	}
	return c, false, nil
}

// ensureFolder creates a mailbox unless it exists.
func ensureFolder(c *imapclient.Client, name string) error {
	list, err := c.List("", name, nil).Collect()
	if err != nil {
		return fmt.Errorf("mailbot: imap list %s: %w", name, err)
	}
	for _, d := range list {
		if d.Mailbox == name {
			return nil
		}
	}
	if err := c.Create(name, nil).Wait(); err != nil {
		var ierr *imap.Error
		if errors.As(err, &ierr) && ierr.Code == imap.ResponseCodeAlreadyExists {
			return nil
		}
		return fmt.Errorf("mailbot: imap create %s: %w", name, err)
	}
	_ = c.Subscribe(name).Wait() // so mail clients show it; optional
	return nil
}

// waitIdle waits in IDLE until the server announces new mail, d passes on
// clk, or the connection or ctx ends. Its timer starts once the server has
// acknowledged the IDLE.
func waitIdle(ctx context.Context, clk clock.Clock, c *imapclient.Client, newMail <-chan struct{}, d time.Duration) error {
	cmd, err := c.Idle()
	if err != nil {
		return fmt.Errorf("mailbot: imap idle: %w", err)
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-newMail:
	case <-t.C():
	case <-ctx.Done():
	case <-c.Closed():
	}
	if err := cmd.Close(); err != nil {
		return fmt.Errorf("mailbot: imap idle: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("mailbot: imap idle: %w", err)
	}
	return nil
}

// waitPoll waits d on clk, or until the connection or ctx ends.
func waitPoll(ctx context.Context, clk clock.Clock, c *imapclient.Client, d time.Duration) error {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.Closed():
		return errors.New("mailbot: imap connection closed")
	}
}

// drain processes every message of the selected mailbox. It returns the
// number of messages the database refused (they stay in the mailbox) and
// an error when the connection failed.
func (w *Watcher) drain(ctx context.Context, c *imapclient.Client) (failed int, err error) {
	data, err := c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagDeleted}}, nil).Wait()
	if err != nil {
		return 0, fmt.Errorf("mailbot: imap search: %w", err)
	}
	uids := data.AllUIDs()
	if len(uids) == 0 {
		return 0, nil
	}
	slices.Sort(uids)
	infos, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, RFC822Size: true, InternalDate: true}).Collect()
	if err != nil {
		return 0, fmt.Errorf("mailbot: imap fetch: %w", err)
	}
	slices.SortFunc(infos, func(a, b *imapclient.FetchMessageBuffer) int { return int(a.UID) - int(b.UID) })
	for _, info := range infos {
		if ctx.Err() != nil {
			return failed, ctx.Err()
		}
		ok, err := w.handle(ctx, c, info)
		if err != nil {
			return failed, err
		}
		if !ok {
			failed++
		}
	}
	return failed, nil
}

// handle fetches, processes and moves one message. ok is false when the
// database refused it (it stays in the mailbox for a later try); err means
// the connection failed.
func (w *Watcher) handle(ctx context.Context, c *imapclient.Client, info *imapclient.FetchMessageBuffer) (ok bool, err error) {
	uid := info.UID
	section := &imap.FetchItemBodySection{Peek: true}
	if info.RFC822Size > MaxSize {
		// Too large to parse: fetch enough to show it is too large; the
		// whole message stays in the review folder.
		section.Partial = &imap.SectionPartial{Offset: 0, Size: MaxSize + 1}
	}
	msgs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return false, fmt.Errorf("mailbot: imap fetch uid %d: %w", uid, err)
	}
	if len(msgs) == 0 || len(msgs[0].BodySection) == 0 {
		return true, nil // expunged meanwhile by someone else
	}
	raw := msgs[0].BodySection[0].Bytes
	source := w.opts.Endpoint.String() + "/;UID=" + strconv.FormatUint(uint64(uid), 10)
	// While the database is unreachable (a restart) the message waits for
	// it (db.Store.Retry): processed twice, a message is stored once.
	var res *Result
	perr := w.proc.store.Retry(ctx, func() (err error) {
		res, err = w.proc.Process(ctx, raw, source)
		return err
	})
	if perr != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		w.log.Error("mail not stored; left in the mailbox", "uid", uid, "err", perr)
		return false, nil
	}
	folder := w.opts.ProcessedFolder
	if res.NeedsReview() {
		folder = w.opts.ReviewFolder
	}
	if _, err := c.Move(imap.UIDSetNum(uid), folder).Wait(); err != nil {
		return true, fmt.Errorf("mailbot: imap move uid %d to %s: %w", uid, folder, err)
	}
	w.countProcessed()
	if res.Duplicate {
		w.log.Info("mail already applied; moved", "uid", uid, "message_id", res.MessageID, "folder", folder)
	}
	if w.opts.OnMessage != nil {
		w.opts.OnMessage(WatchEvent{Result: res, UID: uint32(uid), Delivered: info.InternalDate, Folder: folder})
	}
	return true, nil
}
