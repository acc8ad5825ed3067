package email

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/leadline/leadline/senders"
)

// Name is the transport kind of mailboxes reached over SMTP and IMAP.
const Name = "smtp"

// Server is an SMTP or IMAP server a mailbox uses: the smtp and imap
// sections of a sender's settings.
type Server struct {
	Host string `json:"host" yaml:"host"`
	Port int    `json:"port" yaml:"port"`
	// Security is tls, starttls or none (a relay on the same host).
	Security string `json:"security" yaml:"security"`
	Username string `json:"username" yaml:"username"`
	// Auth is password (the default), xoauth2 (an access token in
	// token_env, obtained by a program of the user's) or oauth (the
	// account connected with Google or Microsoft: leadline obtains and
	// refreshes the tokens).
	Auth        string `json:"auth,omitempty" yaml:"auth"`
	PasswordEnv string `json:"password_env,omitempty" yaml:"password_env"`
	TokenEnv    string `json:"token_env,omitempty" yaml:"token_env"`
	// OAuth names the provider of auth: oauth.
	OAuth *OAuth `json:"oauth,omitempty" yaml:"oauth"`
	// CAFile trusts a private certificate authority.
	CAFile string `json:"ca_file,omitempty" yaml:"ca_file"`
	// DisplayName is the name in the From header (SMTP only).
	DisplayName string `json:"display_name,omitempty" yaml:"display_name"`
	// DKIMSelector is the selector the provider signs the mailbox's mail
	// with (SMTP only): the domain check looks for its key at
	// <selector>._domainkey.<domain>; empty, it tries the usual ones.
	DKIMSelector string `json:"dkim_selector,omitempty" yaml:"dkim_selector"`
	// Inbox and Sent are the IMAP folders read (IMAP only).
	Inbox string `json:"inbox,omitempty" yaml:"inbox"`
	Sent  string `json:"sent,omitempty" yaml:"sent"`
}

// OAuth is how a server's auth: oauth signs in: with an access token for
// the account connected at Provider (google or microsoft), over XOAUTH2.
type OAuth struct {
	Provider string `json:"provider" yaml:"provider"`
}

// oauthProviders are the providers a mailbox can be connected at.
var oauthProviders = []string{"google", "microsoft"}

// secretEnv is the name of the variable that holds m's secret ("" for
// auth: oauth, which names none).
func (m *Server) secretEnv() string {
	switch m.Auth {
	case "xoauth2":
		return m.TokenEnv
	case "oauth":
		return ""
	}
	return m.PasswordEnv
}

// Provider is the provider the sender's mailbox is connected at (auth:
// oauth on its smtp or imap server), "" when it signs in otherwise.
func Provider(set senders.Settings) string {
	for _, which := range []string{"smtp", "imap"} {
		if m, _ := senders.Section[Server](set, which); m != nil && m.Auth == "oauth" && m.OAuth != nil {
			return m.OAuth.Provider
		}
	}
	return ""
}

// Sections are a mailbox's settings sections, as a setup's sender or a
// program gives them: smtp for sending, imap for replies.
func Sections(smtp, imap *Server) map[string]any {
	return map[string]any{"smtp": smtp, "imap": imap}
}

// Settings are a mailbox's settings.
func Settings(smtp, imap *Server) senders.Settings {
	return senders.Settings{}.With("smtp", smtp).With("imap", imap)
}

// smtpOf and imapOf are s's servers (nil when its settings have none).
func smtpOf(s *senders.Sender) *Server { m, _ := senders.Section[Server](s.Settings, "smtp"); return m }
func imapOf(s *senders.Sender) *Server { m, _ := senders.Section[Server](s.Settings, "imap"); return m }

func init() {
	senders.Register(senders.Plugin{
		TransportKind: senders.TransportKind{Name: Name, Channel: senders.Email, Threads: true, Actions: []senders.Action{senders.SendEmail},
			Sections: []string{"smtp", "imap"}, Check: check, Secrets: secrets},
		New: func(env senders.Env) senders.Transport {
			return New(Config{Credentials: env.Credentials, Tokens: env.Tokens, Clock: env.Clock, Logger: env.Logger, PublicURL: env.PublicURL, Token: env.UnsubscribeToken})
		},
		Reader: func(env senders.Env) senders.Runner {
			list := func(ctx context.Context) ([]*senders.Sender, error) { return env.Senders(ctx, Name) }
			r := NewReader(list, env.Sink, NewStates(env.DB), env.Credentials, env.Clock, env.Logger)
			r.Tokens = env.Tokens
			return r
		},
		Form: &senders.Form{Fieldsets: fieldsets, Read: readForm},
	})
}

func check(set senders.Settings) error {
	for _, which := range []string{"smtp", "imap"} {
		m, err := senders.Section[Server](set, which)
		if err != nil {
			return err
		}
		if err := m.check(which); err != nil {
			return err
		}
	}
	return nil
}

func secrets(set senders.Settings) []string {
	var out []string
	for _, which := range []string{"smtp", "imap"} {
		if m, _ := senders.Section[Server](set, which); m != nil {
			out = append(out, m.PasswordEnv, m.TokenEnv)
		}
	}
	return out
}

// dkimSelector is a DKIM selector: one or more DNS labels (RFC 6376 3.1).
var dkimSelector = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

func (m *Server) check(which string) error {
	if strings.TrimSpace(m.Host) == "" {
		return fmt.Errorf("%s.host is required", which)
	}
	if m.Port < 1 || m.Port > 65535 {
		return fmt.Errorf("%s.port must be 1 to 65535", which)
	}
	if !slices.Contains(securities, m.Security) {
		return fmt.Errorf("%s.security is tls, starttls or none, not %q", which, m.Security)
	}
	if strings.TrimSpace(m.Username) == "" {
		return fmt.Errorf("%s.username is required", which)
	}
	switch m.Auth {
	case "", "password":
		if m.TokenEnv != "" {
			return fmt.Errorf("%s.token_env goes with auth: xoauth2", which)
		}
		if err := senders.CheckEnv(which+".password_env", m.PasswordEnv, true); err != nil {
			return err
		}
	case "xoauth2":
		if m.PasswordEnv != "" {
			return fmt.Errorf("%s.password_env goes with password authentication, not xoauth2 (use token_env)", which)
		}
		if err := senders.CheckEnv(which+".token_env", m.TokenEnv, true); err != nil {
			return err
		}
	case "oauth":
		if m.PasswordEnv != "" || m.TokenEnv != "" {
			return fmt.Errorf("%s: auth oauth names no password_env or token_env (leadline keeps the connected account's tokens)", which)
		}
		if m.OAuth == nil || !slices.Contains(oauthProviders, m.OAuth.Provider) {
			return fmt.Errorf("%s.oauth.provider is google or microsoft (the provider the account is connected at)", which)
		}
	default:
		return fmt.Errorf("%s.auth is password, xoauth2 or oauth, not %q", which, m.Auth)
	}
	if m.OAuth != nil && m.Auth != "oauth" {
		return fmt.Errorf("%s.oauth goes with auth: oauth", which)
	}
	if which == "smtp" && (m.Inbox != "" || m.Sent != "") {
		return errors.New("smtp takes no inbox or sent folder (those are imap's)")
	}
	if which == "imap" && m.DisplayName != "" {
		return errors.New("imap takes no display_name (the From name is smtp's)")
	}
	if which == "imap" && m.DKIMSelector != "" {
		return errors.New("imap takes no dkim_selector (mail is signed when it is sent: it is smtp's)")
	}
	if m.DKIMSelector != "" && !dkimSelector.MatchString(m.DKIMSelector) {
		return fmt.Errorf("smtp.dkim_selector %q is not a DKIM selector (letters, digits, - and dots, as in google or selector1)", m.DKIMSelector)
	}
	if len(m.DisplayName) > 100 || strings.ContainsFunc(m.DisplayName, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%s.display_name must be one line of at most 100 characters", which)
	}
	return nil
}

var (
	securities = []string{"tls", "starttls", "none"}
	auths      = []string{"password", "xoauth2", "oauth"}
)

// fieldsets are the console's form for a mailbox: one fieldset per server.
func fieldsets(set senders.Settings) []senders.Fieldset {
	var out []senders.Fieldset
	for _, which := range []string{"smtp", "imap"} {
		m, _ := senders.Section[Server](set, which)
		if m == nil {
			m = &Server{Security: "tls"}
		}
		port := ""
		if m.Port != 0 {
			port = strconv.Itoa(m.Port)
		}
		f := func(name, label, typ, value string) senders.Field {
			return senders.Field{Name: which + "." + name, Label: label, Type: typ, Value: value}
		}
		fields := []senders.Field{
			f("host", "Host", "text", m.Host),
			f("port", "Port", "number", port),
			{Name: which + ".security", Label: "Security", Type: "select", Value: m.Security, Options: securities},
			f("username", "Username", "text", m.Username),
			{Name: which + ".auth", Label: "Authentication (oauth: the account connected with Google or Microsoft on the sender's page)", Type: "select", Value: m.Auth, Options: auths},
			{Name: which + ".oauth_provider", Label: "OAuth provider (auth oauth)", Type: "select", Value: providerOf(m), Options: append([]string{""}, oauthProviders...)},
			f("secret", "Password or token (typed in: stored sealed; leave empty to keep the stored one or use the variable)", "password", ""),
			{Name: which + ".secret_env", Label: "…or the environment variable that holds it", Type: "text", Value: m.secretEnv(), Placeholder: "MAILBOX_PASSWORD"},
			f("ca_file", "CA file (a private certificate authority)", "text", m.CAFile),
		}
		if which == "smtp" {
			fields = append(fields, f("display_name", "From name", "text", m.DisplayName),
				senders.Field{Name: "smtp.dkim_selector", Label: "DKIM selector (empty: the domain check tries the usual ones)", Type: "text",
					Value: m.DKIMSelector, Placeholder: "google"})
		} else {
			fields = append(fields, f("inbox", "Inbox folder", "text", m.Inbox), f("sent", "Sent folder", "text", m.Sent))
		}
		out = append(out, senders.Fieldset{Legend: which + " server", Fields: fields})
	}
	return out
}

func providerOf(m *Server) string {
	if m.OAuth == nil {
		return ""
	}
	return m.OAuth.Provider
}

// readForm reads the console's form for a mailbox.
func readForm(v url.Values, name func(what string) string) (senders.Settings, map[string]string, error) {
	typed := map[string]string{}
	var servers [2]*Server
	for i, which := range []string{"smtp", "imap"} {
		get := func(field string) string { return strings.TrimSpace(v.Get(which + "." + field)) }
		m := &Server{Host: get("host"), Security: get("security"), Username: get("username"), Auth: get("auth"), CAFile: get("ca_file"),
			DisplayName: get("display_name"), DKIMSelector: get("dkim_selector"), Inbox: get("inbox"), Sent: get("sent")}
		if p := get("port"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil {
				return nil, nil, fmt.Errorf("%s port %q is not a number", which, p)
			}
			m.Port = n
		}
		env := get("secret_env")
		if secret := v.Get(which + ".secret"); secret != "" && m.Auth != "oauth" {
			if env == "" {
				env = name(strings.ToUpper(which) + "_SECRET")
			}
			typed[env] = secret
		}
		switch m.Auth {
		case "xoauth2":
			m.TokenEnv = env
		case "oauth":
			// The connected account's tokens are leadline's: no secret.
			m.OAuth = &OAuth{Provider: get("oauth_provider")}
		default:
			m.PasswordEnv = env
		}
		servers[i] = m
	}
	return Settings(servers[0], servers[1]), typed, nil
}
