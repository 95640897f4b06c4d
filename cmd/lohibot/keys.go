package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/lohisoft/lohibot/internal/app/serve"
	"github.com/lohisoft/lohibot/webbotauth"
)

func newKeysCmd(a *app) *cobra.Command {
	cmd := groupCmd("keys", "Make and show the Ed25519 key LohiSoftBot signs its requests with (Web Bot Auth)")
	cmd.Long = `The crawler signs every request with an Ed25519 key (Web Bot Auth: HTTP
Message Signatures, RFC 9421). 'keys generate' makes one; 'keys show' prints
its public half as a JSON Web Key (RFC 8037) and its keyid, the JWK
thumbprint (RFC 7638) that every signature names.

The private key file is what crawler.signing_key_file ('lohibot serve') and
--signing-key-file ('lohibot crawl') name; 'serve' publishes the public key
in its key directory. See docs/operations.md for rotation.`
	cmd.AddCommand(newKeysGenerateCmd(a, nil), newKeysShowCmd(a, nil))
	return cmd
}

// keyInfo is what the keys commands print with --json.
type keyInfo struct {
	File  string         `json:"file"`
	KeyID string         `json:"keyid"`
	JWK   webbotauth.JWK `json:"jwk"`
}

// printKey writes a key's file, keyid and public JWK: text, or a JSON
// line.
func printKey(out io.Writer, asJSON bool, file string, pub ed25519.PublicKey) error {
	info := keyInfo{File: file, KeyID: webbotauth.Thumbprint(pub), JWK: webbotauth.PublicJWK(pub)}
	if asJSON {
		return printJSON(out, info)
	}
	jwk, err := jsonLine(info.JWK)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "file:  %s\nkeyid: %s\njwk:   %s\n", info.File, info.KeyID, jwk)
	return err
}

type keysGenerateOptions struct {
	printOptions
	Out string // --out: the new key file, which must not exist
}

func newKeysGenerateCmd(a *app, runF func(*keysGenerateOptions) error) *cobra.Command {
	opts := &keysGenerateOptions{}
	cmd := &cobra.Command{
		Use:   "generate --out FILE",
		Short: "Make a new Ed25519 signing key (PKCS#8 PEM, mode 0600)",
		Long: `Write a new Ed25519 private key to FILE as PKCS#8 PEM, readable by its owner
only (mode 0600), and print its keyid and public JWK. An existing FILE is
never overwritten (exit 1).`,
		Example: `  lohibot keys generate --out /etc/lohibot/signing-2026-12.pem
  lohibot keys generate --out key.pem --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Out == "" {
				return usageErrorf("--out FILE is required\nSee '%s --help'.", cmd.CommandPath())
			}
			return runCommand(cmd, a, opts, runF, runKeysGenerate)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "the new key file (must not exist)")
	return cmd
}

// runKeysGenerate writes a new key to opts.Out, never over an existing
// file (exit 1), and prints its public half.
func runKeysGenerate(_ context.Context, opts *keysGenerateOptions, out io.Writer) error {
	key, err := webbotauth.GenerateKey()
	if err != nil {
		return err
	}
	if err := webbotauth.WritePrivateKey(opts.Out, key); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &exitError{code: exitRefused, err: fmt.Errorf("%s exists; not overwriting it", opts.Out)}
		}
		return &exitError{code: exitBadInput, err: err}
	}
	return printKey(out, opts.JSON, opts.Out, key.Public().(ed25519.PublicKey))
}

type keysShowOptions struct {
	printOptions
	File   string // the key file; "": the configuration's signing key
	Config string // --config, else $LOHIBOT_CONFIG: where to find the signing key without File
}

func newKeysShowCmd(a *app, runF func(*keysShowOptions) error) *cobra.Command {
	opts := &keysShowOptions{}
	cmd := &cobra.Command{
		Use:   "show [FILE]",
		Short: "Print a key's JWK and keyid (its JWK thumbprint)",
		Long: `Print the public JWK (RFC 8037) and keyid (RFC 7638 thumbprint) of FILE: a
private key (PKCS#8 PEM), a public key (SPKI PEM) or a JWK. Without FILE, the
signing key of the configuration (--config or $` + serveConfigEnv + `:
crawler.signing_key_file). Nothing secret is printed.`,
		Example: `  lohibot keys show /etc/lohibot/signing.pem
  lohibot keys show --config /etc/lohibot/lohibot.toml --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("at most one FILE\nSee '%s --help'.", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = ""
			if len(args) == 1 {
				opts.File = args[0]
			} else {
				if opts.Config == "" {
					opts.Config = a.getenv(serveConfigEnv)
				}
				if opts.Config == "" {
					return usageErrorf("name a key FILE, or a configuration with crawler.signing_key_file (--config)")
				}
			}
			return runCommand(cmd, a, opts, runF, runKeysShow)
		},
	}
	cmd.Flags().StringVar(&opts.Config, "config", "", "take the key file from this configuration (default $"+serveConfigEnv+")")
	return cmd
}

// runKeysShow prints the public half of opts.File, or of the
// configuration's signing key.
func runKeysShow(_ context.Context, opts *keysShowOptions, out io.Writer) error {
	file := opts.File
	if file == "" {
		cfg, err := serve.LoadFile(opts.Config)
		if err != nil {
			return serveError(err)
		}
		if file = cfg.Crawler.SigningKeyFile; file == "" {
			return usageErrorf("%s sets no crawler.signing_key_file", opts.Config)
		}
	}
	pub, err := webbotauth.ReadPublicKey(file)
	if err != nil {
		return &exitError{code: exitBadInput, err: err}
	}
	return printKey(out, opts.JSON, file, pub)
}

// jsonLine is v as compact JSON.
func jsonLine(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
