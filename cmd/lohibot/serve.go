package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/internal/redact"
)

// serveConfigEnv names the configuration file when --config is not given.
const serveConfigEnv = "LOHIBOT_CONFIG"

type serveOptions struct {
	printOptions
	// Getenv reads the environment (LOHIBOT_* overrides and secrets), on
	// start and on every reload.
	Getenv func(string) string

	Config   string
	HTTP     string
	Check    bool
	dsn      string // --db
	dbSet    bool   // --db was given
	httpSet  bool   // --http was given
	resolver string

	signingKey string // --signing-key-file
	sigAgent   string // --signature-agent
	logKey     string // --log-key-file
}

func newServeCmd(a *app, runF func(*serveOptions) error) *cobra.Command {
	opts := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve [--config FILE] [--http ADDR]",
		Short: "Run the mailbox watcher, the crawl scheduler and the bot page in one process",
		Long: `Run LohiSoftBot: the exclusion mailbox watcher, a crawl scheduler (the sites
whose recrawl interval has passed, a limit on sites in parallel, the crawler's
politeness) and an HTTP server, all from one configuration:

  /bot            the bot's public page (en, it, da, hu; ?lang= or Accept-Language)
  /bot/ips.json   the crawler's addresses, the same JSON as 'lohibot ips'
  /.well-known/http-message-signatures-directory
                  the Web Bot Auth key directory (when crawler.signing_key_file
                  or crawler.published_keys is set), signed
  /healthz        200 when the database answers and the watcher is connected, else 503
  /metrics        Prometheus metrics

The configuration is a TOML file (--config, or $` + serveConfigEnv + `) over the
defaults; each key can be overridden by an environment variable named
LOHIBOT_ and the key in capitals with dots as underscores (crawler.delay:
LOHIBOT_CRAWLER_DELAY), and --db, --http and --resolver override both.
Secrets never come from the file: the IMAP password is read from
mail.password_file or LOHIBOT_IMAP_PASSWORD. With mail.smtp, exclusions are
acknowledged by email (mail.from, mail.smtp_password_file or
LOHIBOT_SMTP_PASSWORD, mail.smtp_insecure for a loopback server).

SIGHUP reloads the configuration: the page shows it at once, the watcher
reconnects if its settings changed, and sites taken up from then on are
crawled with new crawler settings (crawls in progress finish with theirs).
The database and the HTTP address need a restart. SIGTERM or SIGINT stops
gracefully: crawls in progress are interrupted and recorded (their cycles
resume on the next start), the watcher disconnects, and HTTP requests in
flight finish.

--check validates the configuration, prints it as it would run (without
secrets; TOML, or one JSON object with --json) and exits: 0 when it is
valid, 2 when not.`,
		Example: `  lohibot serve --config /etc/lohibot/lohibot.toml
  LOHIBOT_IMAP_PASSWORD=... lohibot serve --http 127.0.0.1:8080 --db postgres://lohibot@db/lohibot
  lohibot serve --config lohibot.toml --check
  kill -HUP $(pidof lohibot)    # reload the configuration`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.dsn, opts.dbSet = a.dsn, cmd.Flags().Changed("db")
			opts.httpSet = cmd.Flags().Changed("http")
			opts.resolver = a.resolver
			opts.Getenv = a.getenv
			if opts.Config == "" {
				opts.Config = a.getenv(serveConfigEnv)
			}
			return runCommand(cmd, a, opts, runF, runServe)
		},
	}
	cmd.Flags().StringVar(&opts.Config, "config", "", "configuration file (TOML; default $"+serveConfigEnv+", else the built-in defaults)")
	cmd.Flags().StringVar(&opts.HTTP, "http", serve.DefaultHTTP, "address the HTTP server listens on (env LOHIBOT_HTTP)")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "validate the configuration, print it and exit")
	cmd.Flags().StringVar(&opts.signingKey, "signing-key-file", "", "sign the crawler's requests with this key (crawler.signing_key_file)")
	cmd.Flags().StringVar(&opts.sigAgent, "signature-agent", "", "the Signature-Agent origin (crawler.signature_agent)")
	cmd.Flags().StringVar(&opts.logKey, "log-key-file", "", "publish the transparency log at /bot/log/, its checkpoints signed with this key (log.key_file)")
	return cmd
}

// loadServeConfig reads the configuration: defaults, the file, the
// environment, the flags, then the secrets.
func loadServeConfig(opts *serveOptions) (*serve.Config, error) {
	cfg := serve.DefaultConfig()
	if opts.Config != "" {
		var err error
		if cfg, err = serve.LoadFile(opts.Config); err != nil {
			return nil, err
		}
	}
	for _, key := range serve.Keys() {
		if v := opts.Getenv(serve.EnvName(key)); v != "" {
			if err := cfg.Set(key, v); err != nil {
				return nil, fmt.Errorf("%s: %w", serve.EnvName(key), err)
			}
		}
	}
	if opts.dbSet {
		cfg.DB = opts.dsn
	}
	if opts.httpSet {
		cfg.HTTP = opts.HTTP
	}
	if opts.resolver != "" {
		cfg.Resolver = opts.resolver
	}
	if opts.signingKey != "" {
		cfg.Crawler.SigningKeyFile = opts.signingKey
	}
	if opts.sigAgent != "" {
		cfg.Crawler.SignatureAgent = opts.sigAgent
	}
	if opts.logKey != "" {
		cfg.Log.KeyFile = opts.logKey
	}
	if err := cfg.ReadSecrets(); err != nil {
		return nil, err
	}
	if cfg.Mail.SMTPPasswordFile == "" {
		cfg.Mail.SMTPPassword = opts.Getenv(smtpPasswordEnv)
	}
	if cfg.Mail.PasswordFile == "" {
		cfg.Mail.Password = opts.Getenv(imapPasswordEnv)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := cfg.Signing(); err != nil { // the key files must be readable
		return nil, err
	}
	return cfg, nil
}

// runServe runs the server until ctx ends; with --check it prints the
// configuration instead.
func runServe(ctx context.Context, opts *serveOptions, out io.Writer) error {
	cfg, err := loadServeConfig(opts)
	if err != nil {
		return serveError(err)
	}
	if opts.Check {
		// The database must be there, as serve itself asks (only init
		// creates one); nothing is created or changed.
		store, err := db.OpenExisting(ctx, cfg.DB)
		if err != nil {
			return serveError(err)
		}
		store.Close()
		if opts.JSON {
			return printConfigJSON(out, cfg)
		}
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
			return err
		}
		// The DSN (db) may hold a password; the IMAP URL a user's.
		_, err = io.WriteString(out, redact.String(buf.String()))
		return err
	}
	logger := opts.newLogger(slog.LevelInfo)
	srv, err := serve.New(ctx, cfg, &serve.Options{
		Load:   func() (*serve.Config, error) { return loadServeConfig(opts) },
		Logger: logger,
	})
	if err != nil {
		return serveError(err)
	}
	defer srv.Close()

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				logger.Info("SIGHUP: reloading the configuration")
				srv.Reload(ctx) // logs its own failure
			}
		}
	}()
	return srv.Run(ctx)
}

// printConfigJSON prints cfg as one JSON object with the configuration
// file's key names (serve --check --json).
func printConfigJSON(out io.Writer, cfg *serve.Config) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
		return err
	}
	var m map[string]any
	if _, err := toml.Decode(redact.String(buf.String()), &m); err != nil {
		return err
	}
	return printJSON(out, m)
}

// serveError maps a configuration error to exit 2.
func serveError(err error) error {
	if errors.Is(err, serve.ErrConfig) || errors.Is(err, os.ErrNotExist) || errors.Is(err, db.ErrNoDatabase) ||
		errors.Is(err, db.ErrBadDSN) {
		return &exitError{code: exitBadInput, err: err}
	}
	return err
}
