package unipile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/leadline/leadline/senders"
)

// Name is the transport kind of LinkedIn accounts reached through
// Unipile's API.
const Name = "unipile"

// Account is a LinkedIn account connected through Unipile's API: the
// unipile section of a sender's settings.
type Account struct {
	AccountID        string `json:"account_id" yaml:"account_id"`
	APIKeyEnv        string `json:"api_key_env" yaml:"api_key_env"`
	WebhookSecretEnv string `json:"webhook_secret_env,omitempty" yaml:"webhook_secret_env"`
	// BaseURL is Unipile's API base; empty for the default.
	BaseURL string `json:"base_url,omitempty" yaml:"base_url"`
}

// Sections are the account's settings sections, as a setup's sender or a
// program gives them.
func (u *Account) Sections() map[string]any { return map[string]any{Name: u} }

// Settings are the account's settings.
func (u *Account) Settings() senders.Settings { return senders.Settings{}.With(Name, u) }

// accountOf is s's account (nil when its settings have none).
func accountOf(s *senders.Sender) *Account { return settingsAccount(s.Settings) }

func settingsAccount(set senders.Settings) *Account {
	u, _ := senders.Section[Account](set, Name)
	return u
}

// actions are what leadline performs through Unipile's API: a like needs
// a post reaction, whose request Unipile's v2 reference does not describe
// (docs/TRANSPORTS.md).
var actions = []senders.Action{senders.ProfileView, senders.Invite, senders.Message, senders.InMail, senders.Follow}

func init() {
	senders.Register(senders.Plugin{
		TransportKind: senders.TransportKind{Name: Name, Channel: senders.LinkedIn, Threads: true, Actions: actions,
			Sections: []string{Name}, Check: check, Secrets: func(set senders.Settings) []string {
				if u := settingsAccount(set); u != nil {
					return []string{u.APIKeyEnv, u.WebhookSecretEnv}
				}
				return nil
			}},
		New: func(env senders.Env) senders.Transport {
			return New(Config{Credentials: env.Credentials, Clock: env.Clock, Logger: env.Logger, Sink: env.Sink,
				Invitations: env.Invitations, HTTPClient: env.HTTPClient})
		},
		Form:    &senders.Form{Fieldsets: fieldsets, Read: readForm},
		Webhook: &webhook,
	})
}

func check(set senders.Settings) error {
	u, err := senders.Section[Account](set, Name)
	if err != nil {
		return err
	}
	if strings.TrimSpace(u.AccountID) == "" {
		return fmt.Errorf("unipile.account_id is required: the connected account's id in Unipile")
	}
	if err := senders.CheckEnv("unipile.api_key_env", u.APIKeyEnv, true); err != nil {
		return err
	}
	if err := senders.CheckEnv("unipile.webhook_secret_env", u.WebhookSecretEnv, false); err != nil {
		return err
	}
	if u.BaseURL != "" {
		if p, err := url.Parse(u.BaseURL); err != nil || p.Scheme != "https" || p.Host == "" {
			return fmt.Errorf("unipile.base_url %q must be an https URL", u.BaseURL)
		}
	}
	return nil
}

// fieldsets are the console's form for a Unipile account.
func fieldsets(set senders.Settings) []senders.Fieldset {
	u := settingsAccount(set)
	if u == nil {
		u = &Account{}
	}
	return []senders.Fieldset{{Legend: "Unipile account", Fields: []senders.Field{
		{Name: "unipile.account_id", Label: "Account id", Type: "text", Value: u.AccountID},
		{Name: "unipile.api_key", Label: "API key (typed in: stored sealed; leave empty to keep the stored one or use the variable)", Type: "password"},
		{Name: "unipile.api_key_env", Label: "…or the environment variable that holds it", Type: "text", Value: u.APIKeyEnv, Placeholder: "UNIPILE_API_KEY"},
		{Name: "unipile.webhook_secret", Label: "Webhook secret (optional; typed in: stored sealed)", Type: "password"},
		{Name: "unipile.webhook_secret_env", Label: "…or the environment variable that holds it", Type: "text", Value: u.WebhookSecretEnv},
		{Name: "unipile.base_url", Label: "API base URL (empty: Unipile's)", Type: "url", Value: u.BaseURL},
	}}}
}

// readForm reads the console's form for a Unipile account.
func readForm(v url.Values, name func(what string) string) (senders.Settings, map[string]string, error) {
	get := func(field string) string { return strings.TrimSpace(v.Get("unipile." + field)) }
	u := &Account{AccountID: get("account_id"), APIKeyEnv: get("api_key_env"), WebhookSecretEnv: get("webhook_secret_env"), BaseURL: get("base_url")}
	typed := map[string]string{}
	for _, s := range []struct {
		field, what string
		env         *string
	}{{"api_key", "UNIPILE_API_KEY", &u.APIKeyEnv}, {"webhook_secret", "UNIPILE_WEBHOOK_SECRET", &u.WebhookSecretEnv}} {
		if secret := v.Get("unipile." + s.field); secret != "" {
			if *s.env == "" {
				*s.env = name(s.what)
			}
			typed[*s.env] = secret
		}
	}
	return u.Settings(), typed, nil
}

// webhook is how Unipile reports: POST /inbound/unipile, signed with the
// webhook endpoint's secret.
var webhook = senders.Webhook{
	Account: func(set senders.Settings) (string, string) {
		if u := settingsAccount(set); u != nil {
			return u.AccountID, u.WebhookSecretEnv
		}
		return "", ""
	},
	Claim: func(body []byte) string {
		var claim struct {
			AccountID string `json:"account_id"`
		}
		_ = json.Unmarshal(body, &claim)
		return claim.AccountID
	},
	Verify: func(secret string, h http.Header, body []byte, now time.Time) error {
		return VerifyWebhook(secret, h, body, now)
	},
	Parse:  ParseWebhook,
	Source: Source,
	Dedupe: Dedupe,
	Doc: senders.WebhookDoc{Provider: "Unipile", OperationID: "receive-unipile-webhook", Summary: "Receive Unipile's webhook",
		Description: "Point Unipile's webhook endpoint (events `message.new`, `relation.request.accept` or `relation.new`, " +
			"`account.status.disconnected`, `account.status.errored`, `account.status.running`) here.",
		SignatureHeader: SignatureHeader,
		Signature:       "Unipile's t=<unix seconds>,v0=<hex HMAC-SHA256 of t.body> under the webhook endpoint's secret (the sender's webhook_secret_env), within 5 minutes of now."},
}
