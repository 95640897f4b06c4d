package serve

import (
	"context"
	"sync"
	"time"

	"github.com/lohisoft/lohibot/mailbot"
	"github.com/lohisoft/lohibot/mailbot/reply"
)

// runWatcher runs the mailbox watcher of the configuration in force until
// ctx ends, and starts it again whenever a reload changes its settings.
// Without mail.imap there is no watcher.
func (s *Server) runWatcher(ctx context.Context) {
	for {
		cfg := s.cfg.Load()
		wctx, cancel := context.WithCancel(ctx)
		var done chan struct{}
		if cfg.Mail.IMAP != "" {
			w, replies, err := s.newWatcher(cfg)
			if err != nil {
				// Validate parsed the URL already; this cannot happen.
				s.log.Error("mailbox watcher not started", "err", err)
			} else {
				s.setWatcher(w)
				done = make(chan struct{})
				go func() {
					defer close(done)
					var wg sync.WaitGroup
					if replies != nil {
						// Replies go out beside the watcher: a slow mail
						// server never holds up an exclusion.
						wg.Go(func() { _ = replies.Run(wctx) })
					}
					if err := w.Run(wctx); err != nil {
						s.log.Error("mailbox watcher stopped", "err", err)
					}
					wg.Wait()
				}()
			}
		} else {
			s.setWatcher(nil)
		}
		select {
		case <-ctx.Done():
		case <-s.mailChanged:
		}
		cancel()
		if done != nil {
			<-done
		}
		if ctx.Err() != nil {
			return
		}
		s.log.Info("mailbox watcher restarts with the reloaded settings")
	}
}

// newWatcher returns a watcher applying mail to the daemon's policy and
// feeding its metrics, and the replier of mail.smtp (nil without it).
func (s *Server) newWatcher(cfg *Config) (*mailbot.Watcher, *reply.Replier, error) {
	ep, err := mailbot.ParseIMAPURL(cfg.Mail.IMAP)
	if err != nil {
		return nil, nil, err
	}
	sender, err := cfg.SMTPSender()
	if err != nil {
		return nil, nil, err
	}
	var replies *reply.Replier
	if sender != nil {
		var logURL string
		if cfg.Log.KeyFile != "" {
			logURL = cfg.LogURL()
		}
		replies = reply.New(s.pol.Store(), &reply.Options{From: cfg.Mail.From, Own: []string{ep.Username}, Sender: sender, Logger: s.log,
			MaxPerRecipient: cfg.Mail.ReplyLimit, MaxPerDay: cfg.Mail.ReplyDailyLimit, LogURL: logURL})
	}
	pol := s.pol.WithUnverifiedHold(time.Duration(cfg.Mail.UnverifiedHold))
	proc := mailbot.New(pol, &mailbot.Options{Logger: s.log, AuthservID: cfg.Mail.AuthservID, Replies: replies,
		UnverifiedLimit: cfg.Mail.UnverifiedLimit})
	return mailbot.NewWatcher(proc, &mailbot.WatchOptions{
		Endpoint:        *ep,
		Password:        cfg.Mail.Password,
		Insecure:        cfg.Mail.Insecure,
		ProcessedFolder: cfg.Mail.ProcessedFolder,
		ReviewFolder:    cfg.Mail.ReviewFolder,
		Logger:          s.log,
		OnState:         s.metrics.ObserveWatchState,
		OnMessage:       s.onMail,
	}), replies, nil
}

// onMail is the watcher's OnMessage hook.
func (s *Server) onMail(ev mailbot.WatchEvent) {
	s.metrics.ObserveMail(ev)
	if ev.Result != nil && !ev.Result.Duplicate && ev.Result.Outcome == mailbot.OutcomeExcluded {
		s.log.Info("excluded by email", "sites", ev.Result.Excluded, "message_id", ev.Result.MessageID,
			"time_to_exclusion", ev.TimeToExclusion().String())
		signal(s.excluded)
	}
}

func (s *Server) setWatcher(w watcherState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watcher = w
}

// watcherStatus returns the running watcher, or nil when there is none.
func (s *Server) watcherStatus() watcherState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watcher
}
