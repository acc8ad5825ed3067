// Package email is leadline's transport for mailboxes: it sends over SMTP
// (go-mail) and reads replies, bounces and auto-replies over IMAP
// (go-imap v2), for the senders whose transport is smtp.
package email

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"

	"github.com/leadline/leadline/senders"
)

// Reasons a mailbox cannot be used: the codes of sender-level transport
// errors, the sender's health reasons and why-not-sending.
const (
	CodeAuthFailed         = senders.SignalAuthFailed
	CodeConnectionFailed   = "connection_failed"
	CodeCredentialsMissing = "credentials_missing"
)

// dialTimeout bounds connecting to a mail server and its greeting.
const dialTimeout = 30 * time.Second

// login is what a mail server is signed in with.
type login struct {
	username string
	secret   string
	oauth    bool // secret is an OAuth 2.0 access token (XOAUTH2)
	// connected: the access token is leadline's, for the account
	// connected with the provider (auth: oauth); a refused one is
	// refreshed once.
	connected bool
}

// keys are where the secrets come from: the credentials the settings name,
// and the access tokens of connected accounts.
type keys struct {
	creds  senders.Credentials
	tokens senders.Tokens
}

// loginOf reads the secret m names for sender s; for auth: oauth, the
// connected account's access token (a new one when fresh).
func loginOf(ctx context.Context, k keys, s *senders.Sender, m *Server, which string, fresh bool) (login, error) {
	if m.Auth == "oauth" {
		return oauthLogin(ctx, k, s, m, which, fresh)
	}
	name, oauth := m.PasswordEnv, false
	if m.Auth == "xoauth2" {
		name, oauth = m.TokenEnv, true
	}
	v, err := k.creds.Secret(ctx, s, name)
	if err != nil {
		if errors.Is(err, senders.ErrCredentialsMissing) {
			return login{}, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeCredentialsMissing, Signal: CodeCredentialsMissing,
				Message: fmt.Sprintf("%s: set %s in the server's environment and restart.", which, name)}
		}
		return login{}, err
	}
	return login{username: m.Username, secret: v, oauth: oauth}, nil
}

// oauthLogin is the access token of the account s is connected with. An
// account never connected is credentials_missing; one whose refresh token
// the provider refused is auth_failed, whose remedy is to reconnect it
// (nothing asks the provider again until then); a token endpoint that
// cannot be reached is connection_failed.
func oauthLogin(ctx context.Context, k keys, s *senders.Sender, m *Server, which string, fresh bool) (login, error) {
	provider := m.OAuth.Provider
	if k.tokens == nil {
		return login{}, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeCredentialsMissing, Signal: CodeCredentialsMissing,
			Message: which + ": this program connects no " + provider + " accounts (it has no OAuth token store); sign in with a password or token_env."}
	}
	tok, err := k.tokens.AccessToken(ctx, s, provider, fresh)
	switch {
	case err == nil:
		return login{username: m.Username, secret: tok, oauth: true, connected: true}, nil
	case errors.Is(err, senders.ErrNotConnected):
		return login{}, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeCredentialsMissing, Signal: CodeCredentialsMissing,
			Message: fmt.Sprintf("%s: %v.", which, err)}
	case errors.Is(err, senders.ErrReconnect):
		return login{}, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeAuthFailed, Signal: CodeAuthFailed,
			Message: fmt.Sprintf("%s: %v.", which, err)}
	case ctx.Err() != nil:
		return login{}, ctx.Err()
	}
	return login{}, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeConnectionFailed, Signal: CodeConnectionFailed,
		Message: fmt.Sprintf("%s: no access token for %s: %v.", which, m.Username, err)}
}

// tlsConfig is how m's certificate is verified: against the system's
// roots, or the private CA in ca_file. It is always verified.
func tlsConfig(m *Server) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: m.Host, MinVersion: tls.VersionTLS12}
	if m.CAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(m.CAFile)
	if err != nil {
		return nil, fmt.Errorf("ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca_file %s holds no PEM certificate", m.CAFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}

// isLocal reports whether host is this machine, where a relay may take
// mail without TLS.
func isLocal(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// warnInsecure logs, once per connection, that m is used without TLS on
// another host.
func warnInsecure(log *slog.Logger, s *senders.Sender, m *Server, which string) {
	if m.Security == "none" && !isLocal(m.Host) {
		log.Warn("email: "+which+" without TLS to another host: the password and the mail cross the network in the clear",
			"sender", s.Name, "host", m.Host)
	}
}

func addr(m *Server) string { return net.JoinHostPort(m.Host, strconv.Itoa(m.Port)) }

// connectionFailed is a sender-level error for a server that could not be
// reached or spoke no TLS.
func connectionFailed(which string, m *Server, err error) error {
	return &senders.TransportError{Kind: senders.SenderLevel, Code: CodeConnectionFailed, Signal: CodeConnectionFailed,
		Message: fmt.Sprintf("%s %s: %v. Check the host, port and security (tls, starttls or none) in the sender's %s settings.", which, addr(m), err, which)}
}

// authFailed is a sender-level error for credentials a server refused.
func authFailed(which string, m *Server, err error) error {
	if m.Auth == "oauth" {
		return &senders.TransportError{Kind: senders.SenderLevel, Code: CodeAuthFailed, Signal: CodeAuthFailed,
			Message: fmt.Sprintf("%s %s refused a fresh access token for %s: %v. Check that the mailbox may use %s with OAuth (an admin may have to allow it), or reconnect the account.",
				which, addr(m), m.Username, err, strings.ToUpper(which))}
	}
	name := m.secretEnv()
	return &senders.TransportError{Kind: senders.SenderLevel, Code: CodeAuthFailed, Signal: CodeAuthFailed,
		Message: fmt.Sprintf("%s %s refused %s: %v. Check the username and the secret in %s (an app password where the provider asks for one).", which, addr(m), m.Username, err, name)}
}

// dialIMAP connects to sender s's IMAP server and signs in. A failure is a
// sender-level *senders.TransportError: connection_failed, auth_failed or
// credentials_missing.
func dialIMAP(ctx context.Context, k keys, log *slog.Logger, s *senders.Sender, opts *imapclient.Options) (*imapclient.Client, error) {
	m := imapOf(s)
	if m == nil {
		return nil, &senders.TransportError{Kind: senders.SenderLevel, Code: CodeConnectionFailed, Signal: CodeConnectionFailed,
			Message: "the sender has no imap settings"}
	}
	who, err := loginOf(ctx, k, s, m, "imap", false)
	if err != nil {
		return nil, err
	}
	cfg, err := tlsConfig(m)
	if err != nil {
		return nil, connectionFailed("imap", m, err)
	}
	if opts == nil {
		opts = &imapclient.Options{}
	}
	opts.TLSConfig = cfg
	warnInsecure(log, s, m, "imap")
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr(m))
	if err != nil {
		return nil, connectionFailed("imap", m, err)
	}
	var c *imapclient.Client
	switch m.Security {
	case "tls":
		tc := tls.Client(conn, cfg)
		hctx, cancel := context.WithTimeout(ctx, dialTimeout)
		err = tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			conn.Close()
			return nil, connectionFailed("imap", m, err)
		}
		c = imapclient.New(tc, opts)
	case "starttls":
		if c, err = imapclient.NewStartTLS(conn, opts); err != nil {
			conn.Close()
			return nil, connectionFailed("imap", m, err)
		}
	default:
		c = imapclient.New(conn, opts)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := c.WaitGreeting(); err != nil {
		c.Close()
		return nil, connectionFailed("imap", m, err)
	}
	if who.oauth {
		err = c.Authenticate(xoauth2(who.username, who.secret))
		if err != nil && who.connected && ctx.Err() == nil {
			// The server refused the token: a new one, once, on the same
			// connection.
			if who, err = loginOf(ctx, k, s, m, "imap", true); err != nil {
				c.Close()
				return nil, err
			}
			err = c.Authenticate(xoauth2(who.username, who.secret))
		}
	} else {
		err = c.Login(who.username, who.secret).Wait()
	}
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, authFailed("imap", m, err)
	}
	return c, nil
}

// xoauth2 is the XOAUTH2 mechanism of Google and Microsoft: the username
// and an OAuth 2.0 access token, sent once.
type xoauth2Client struct{ user, token string }

func xoauth2(user, token string) sasl.Client { return &xoauth2Client{user: user, token: token} }

func (x *xoauth2Client) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

// Next answers the server's error challenge with an empty response, as
// the mechanism asks; the server then fails the exchange with its reason.
func (x *xoauth2Client) Next([]byte) ([]byte, error) { return []byte{}, nil }
