package senders

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Settings are how a sender's transport connects: one typed value per
// transport kind, validated when a setup is applied, stored with the
// sender and read by the transport when it connects. They hold no secret:
// a password, token or API key is named (an environment variable), and the
// transport asks Credentials for it when it connects.
type Settings struct {
	SMTP    *MailServer `json:"smtp,omitempty" yaml:"smtp"`
	IMAP    *MailServer `json:"imap,omitempty" yaml:"imap"`
	Unipile *Unipile    `json:"unipile,omitempty" yaml:"unipile"`
}

// MailServer is an SMTP or IMAP server a mailbox uses.
type MailServer struct {
	Host string `json:"host" yaml:"host"`
	Port int    `json:"port" yaml:"port"`
	// Security is tls, starttls or none (a relay on the same host).
	Security string `json:"security" yaml:"security"`
	Username string `json:"username" yaml:"username"`
	// Auth is password (the default) or xoauth2.
	Auth        string `json:"auth,omitempty" yaml:"auth"`
	PasswordEnv string `json:"password_env,omitempty" yaml:"password_env"`
	TokenEnv    string `json:"token_env,omitempty" yaml:"token_env"`
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

// Unipile is a LinkedIn account connected through Unipile's API.
type Unipile struct {
	AccountID        string `json:"account_id" yaml:"account_id"`
	APIKeyEnv        string `json:"api_key_env" yaml:"api_key_env"`
	WebhookSecretEnv string `json:"webhook_secret_env,omitempty" yaml:"webhook_secret_env"`
	// BaseURL is Unipile's API base; empty for the default.
	BaseURL string `json:"base_url,omitempty" yaml:"base_url"`
}

// TransportKind declares one kind of transport a sender may choose: the
// channel it serves, whether this build has it, and what its settings
// must hold.
type TransportKind struct {
	Name    string
	Channel Channel // "" for both
	// Available: this build has the transport. A kind declared but not
	// available is refused by apply with a clear message.
	Available bool
	// Threads: the transport continues a conversation (Request.Thread is
	// filled for its senders' messages and emails).
	Threads bool
	// Actions are the actions the transport can perform; a sequence whose
	// step needs another one of a sender on this kind does not activate.
	Actions []Action
	check   func(set Settings) error
}

// Can reports whether senders on kind k can perform a.
func (k TransportKind) Can(a Action) bool { return slices.Contains(k.Actions, a) }

// unipileActions are what leadline performs through Unipile's API: a
// like needs a post reaction, whose request Unipile's v2 reference does
// not describe (docs/TRANSPORTS.md).
var unipileActions = []Action{ProfileView, Invite, Message, InMail, Follow}

// TransportKinds are every kind of transport, by name.
var TransportKinds = map[string]TransportKind{
	TransportSandbox: {Name: TransportSandbox, Available: true, Actions: actionList(), check: func(set Settings) error {
		if set != (Settings{}) {
			return errors.New("the sandbox takes no smtp, imap or unipile settings")
		}
		return nil
	}},
	TransportSMTP: {Name: TransportSMTP, Channel: Email, Available: true, Threads: true, Actions: []Action{SendEmail}, check: func(set Settings) error {
		if set.Unipile != nil {
			return errors.New("an smtp sender takes smtp and imap settings, not unipile")
		}
		if set.SMTP == nil || set.IMAP == nil {
			return errors.New("an smtp sender needs smtp (sending) and imap (replies) settings")
		}
		if err := set.SMTP.check("smtp"); err != nil {
			return err
		}
		return set.IMAP.check("imap")
	}},
	TransportUnipile: {Name: TransportUnipile, Channel: LinkedIn, Available: true, Threads: true, Actions: unipileActions, check: func(set Settings) error {
		if set.SMTP != nil || set.IMAP != nil {
			return errors.New("a unipile sender takes unipile settings, not smtp or imap")
		}
		if set.Unipile == nil {
			return errors.New("a unipile sender needs unipile settings (account_id, api_key_env)")
		}
		return set.Unipile.check()
	}},
}

// The transport kinds beside the sandbox.
const (
	TransportSMTP    = "smtp"
	TransportUnipile = "unipile"
)

// dkimSelector is a DKIM selector: one or more DNS labels (RFC 6376 3.1).
var dkimSelector = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// envName is an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkEnv(field, name string, required bool) error {
	if name == "" {
		if required {
			return fmt.Errorf("%s is required: the name of the environment variable that holds the secret", field)
		}
		return nil
	}
	if !envName.MatchString(name) {
		return fmt.Errorf("%s %q is not an environment variable's name (letters, digits and _); the secret itself never goes in the setup file", field, name)
	}
	return nil
}

func (m *MailServer) check(which string) error {
	if strings.TrimSpace(m.Host) == "" {
		return fmt.Errorf("%s.host is required", which)
	}
	if m.Port < 1 || m.Port > 65535 {
		return fmt.Errorf("%s.port must be 1 to 65535", which)
	}
	if !slices.Contains([]string{"tls", "starttls", "none"}, m.Security) {
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
		if err := checkEnv(which+".password_env", m.PasswordEnv, true); err != nil {
			return err
		}
	case "xoauth2":
		if m.PasswordEnv != "" {
			return fmt.Errorf("%s.password_env goes with password authentication, not xoauth2 (use token_env)", which)
		}
		if err := checkEnv(which+".token_env", m.TokenEnv, true); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s.auth is password or xoauth2, not %q", which, m.Auth)
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

func (u *Unipile) check() error {
	if strings.TrimSpace(u.AccountID) == "" {
		return errors.New("unipile.account_id is required: the connected account's id in Unipile")
	}
	if err := checkEnv("unipile.api_key_env", u.APIKeyEnv, true); err != nil {
		return err
	}
	if err := checkEnv("unipile.webhook_secret_env", u.WebhookSecretEnv, false); err != nil {
		return err
	}
	if u.BaseURL != "" {
		if p, err := url.Parse(u.BaseURL); err != nil || p.Scheme != "https" || p.Host == "" {
			return fmt.Errorf("unipile.base_url %q must be an https URL", u.BaseURL)
		}
	}
	return nil
}

// ErrCredentialsMissing is a secret whose environment variable is not set:
// a sender-level error that the sender's health shows
// (credentials_missing), never a crash.
var ErrCredentialsMissing = errors.New("credentials missing")

// Credentials give a transport a sender's secrets when it connects, by the
// name its settings give (an environment variable today; a secret a
// manager typed in the console, stored sealed, later).
type Credentials interface {
	// Secret returns the secret named name for sender s.
	// Returns an error wrapping ErrCredentialsMissing when it is not set.
	Secret(ctx context.Context, s *Sender, name string) (string, error)
}

// EnvCredentials reads secrets from the process's environment.
type EnvCredentials struct{}

// Secret returns the environment variable name.
func (EnvCredentials) Secret(_ context.Context, s *Sender, name string) (string, error) {
	if v := os.Getenv(name); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%w: sender %s needs the environment variable %s", ErrCredentialsMissing, s.Name, name)
}

// SecretNames are the environment variables a sender's settings name.
func (set Settings) SecretNames() []string {
	var out []string
	for _, m := range []*MailServer{set.SMTP, set.IMAP} {
		if m != nil {
			out = append(out, m.PasswordEnv, m.TokenEnv)
		}
	}
	if set.Unipile != nil {
		out = append(out, set.Unipile.APIKeyEnv, set.Unipile.WebhookSecretEnv)
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}
