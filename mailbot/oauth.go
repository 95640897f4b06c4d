package mailbot

import (
	"errors"
	"fmt"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
)

// The SASL mechanisms of OAuth 2.0 bearer tokens: OAUTHBEARER (RFC 7628)
// and Google's and Microsoft's older XOAUTH2.
const (
	MechOAuthBearer = "OAUTHBEARER"
	MechXOAuth2     = "XOAUTH2"
)

// ErrNoOAuthMechanism is returned when a token is given but the server
// offers neither OAUTHBEARER nor XOAUTH2.
var ErrNoOAuthMechanism = errors.New("mailbot: the IMAP server offers neither OAUTHBEARER nor XOAUTH2")

// xoauth2Client is the client side of XOAUTH2
// (https://developers.google.com/gmail/imap/xoauth2-protocol): one initial
// response "user=U^Aauth=Bearer T^A^A"; on failure the server sends a JSON
// error as a challenge, answered with an empty response.
type xoauth2Client struct {
	user, token string
	// failure is the server's error challenge, kept for the error message.
	failure string
}

func (c *xoauth2Client) Start() (mech string, ir []byte, err error) {
	return MechXOAuth2, []byte("user=" + c.user + "\x01auth=Bearer " + c.token + "\x01\x01"), nil
}

func (c *xoauth2Client) Next(challenge []byte) ([]byte, error) {
	c.failure = string(challenge)
	return []byte{}, nil
}

// oauthLogin authenticates c with token, by OAUTHBEARER when the server
// offers it, else XOAUTH2. host and port go into the OAUTHBEARER message.
func oauthLogin(c *imapclient.Client, user, token, host string, port int) error {
	caps := c.Caps()
	switch {
	case caps.Has(imap.Cap("AUTH=" + MechOAuthBearer)):
		cl := sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: user, Token: token, Host: host, Port: port})
		if err := c.Authenticate(cl); err != nil {
			return fmt.Errorf("%s: %w", MechOAuthBearer, err)
		}
		return nil
	case caps.Has(imap.Cap("AUTH=" + MechXOAuth2)):
		cl := &xoauth2Client{user: user, token: token}
		if err := c.Authenticate(cl); err != nil {
			if cl.failure != "" {
				return fmt.Errorf("%s: %w (server said %s)", MechXOAuth2, err, strings.TrimSpace(cl.failure))
			}
			return fmt.Errorf("%s: %w", MechXOAuth2, err)
		}
		return nil
	}
	return ErrNoOAuthMechanism
}

// passwordLogin logs in with LOGIN, or with AUTHENTICATE PLAIN when the
// server disables LOGIN.
func passwordLogin(c *imapclient.Client, user, password string) error {
	caps := c.Caps()
	if caps.Has(imap.CapLoginDisabled) && caps.Has(imap.Cap("AUTH=PLAIN")) {
		return c.Authenticate(sasl.NewPlainClient("", user, password))
	}
	return c.Login(user, password).Wait()
}
