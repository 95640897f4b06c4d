package serve_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/internal/app/serve"
)

func TestConfigSMTP(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "smtp-pw")
	os.WriteFile(pw, []byte("s3cret\n"), 0o600)
	file := filepath.Join(dir, "serve.toml")
	os.WriteFile(file, []byte(`[mail]
smtp = "smtp://bot%40lohisoft.com@smtp.example.com:587"
smtp_password_file = "`+pw+`"
from = "abuse@lohisoft.example"
`), 0o600)
	cfg, err := serve.LoadFile(file)
	if err != nil {
		t.Fatalf("LoadFile = %v", err)
	}
	if err := cfg.ReadSecrets(); err != nil {
		t.Fatal(err)
	}
	m, err := cfg.SMTPSender()
	if err != nil || m == nil || m.Addr() != "smtp.example.com:587" || m.User != "bot@lohisoft.com" || m.Password != "s3cret" || m.Insecure {
		t.Fatalf("SMTPSender() = %+v, %v", m, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	if d := serve.DefaultConfig(); d.Mail.SMTP != "" {
		t.Errorf("default mail.smtp %q, want none (no replies)", d.Mail.SMTP)
	}

	bad := []struct{ key, value, want string }{
		{"mail.smtp_insecure", "true", "loopback"},
		{"mail.smtp", "smtp://bot:pw@smtp.example.com", "no password in the URL"},
		{"mail.from", "not an address", "mail.from"},
		{"mail.smtp_password_file", "", "no SMTP password"},
	}
	for _, b := range bad {
		c := *cfg
		if err := c.Set(b.key, b.value); err != nil {
			t.Fatalf("Set(%s) = %v", b.key, err)
		}
		if b.key == "mail.smtp_password_file" {
			c.Mail.SMTPPassword = ""
		}
		err := c.Validate()
		if !errors.Is(err, serve.ErrConfig) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s=%q: Validate() = %v, want %q", b.key, b.value, err, b.want)
		}
	}
	// A password in the file itself is refused.
	os.WriteFile(file, []byte("[mail]\nsmtp_password = \"x\"\n"), 0o600)
	if _, err := serve.LoadFile(file); err == nil {
		t.Errorf("LoadFile accepted a password in the file")
	}
}
